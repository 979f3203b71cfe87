"""A Controller over a LocalMetadataStore in a temp dir, with recording callbacks (shared by the tests)."""

from __future__ import annotations

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState, StopReplicaPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.errors import InvalidConfigError
from kafkapy.common.time import MockTime
from kafkapy.controller.controller import Controller
from kafkapy.controller.local_store import LocalMetadataStore

TIMEOUT = 10


class Recorder:
    def __init__(self) -> None:
        self.leader_and_isr: list[tuple[int, int, list[LeaderAndIsrPartitionState]]] = []
        self.stop_replica: list[tuple[int, int, list[StopReplicaPartitionState]]] = []
        self.config_changes: list[tuple[str, str, dict]] = []

    def on_leader_and_isr(self, broker_id: int, epoch: int, states: list[LeaderAndIsrPartitionState]) -> None:
        self.leader_and_isr.append((broker_id, epoch, states))

    def on_stop_replica(self, broker_id: int, epoch: int, parts: list[StopReplicaPartitionState]) -> None:
        self.stop_replica.append((broker_id, epoch, parts))

    def on_config_change(self, entity_type: str, name: str, configs: dict) -> None:
        self.config_changes.append((entity_type, name, configs))

    def states(self) -> list[LeaderAndIsrPartitionState]:
        return [s for _, _, states in self.leader_and_isr for s in states]


def no_validation(configs) -> None:
    for k in configs:
        if k == "bad.config":
            raise InvalidConfigError(f"Unknown topic config name: {k}")


class Harness:
    def __init__(self, path: str, broker_ids=(0,), config=None, racks=None) -> None:
        self.path = path
        self.store = LocalMetadataStore(path)
        self.time = MockTime()
        for b in broker_ids:
            self.store.register_broker(Broker.simple(b, "127.0.0.1", 9092 + b, (racks or {}).get(b)), 1)
        self.cache = MetadataCache(broker_ids[0])
        self.rec = Recorder()
        self.controller = Controller(self.store, self.cache, broker_ids[0], self.time, config or {},
                                     self.rec.on_leader_and_isr, self.rec.on_stop_replica, self.rec.on_config_change,
                                     topic_config_validator=no_validation)
        assert self.controller.startup().result(TIMEOUT) is True

    def create(self, *topics, validate_only=False):
        return self.controller.create_topics(list(topics), validate_only).result(TIMEOUT)

    def stop(self) -> None:
        self.controller.shutdown()
        self.store.close()
