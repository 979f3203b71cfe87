"""The embedded broker's wiring of controller, store, LogManager and Partitions (what KafkaServer and the
ReplicaManager do), end to end across a restart: topics, ids, leadership and data survive."""

from __future__ import annotations

import os

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState, StopReplicaPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.cluster.partition import Partition
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller import Controller
from kafkapy.controller.local_store import METADATA_FILE_NAME, LocalMetadataStore
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.storage.log_manager import LogManager

TIMEOUT = 10


class EmbeddedBroker:
    def __init__(self, log_dir: str, time: MockTime) -> None:
        self.time = time
        self.store = LocalMetadataStore(log_dir)
        self.log_manager = LogManager([log_dir], {}, time, topic_configs=self.store.get_topic_config)
        self.log_manager.startup()
        self.checkpointed_hw = self.log_manager.read_high_watermarks()
        self.partitions: dict[TopicPartition, Partition] = {}
        self.cache = MetadataCache(0)
        self.store.register_broker(Broker.simple(0, "127.0.0.1", 9092), time.milliseconds())
        self.controller = Controller(self.store, self.cache, 0, time, {}, self.on_leader_and_isr,
                                     self.on_stop_replica, self.on_config_change)
        assert self.controller.startup().result(TIMEOUT)

    def provide_log(self, tp: TopicPartition, topic_id):
        log = self.log_manager.get_or_create_log(tp, None, topic_id)
        if tp in self.checkpointed_hw:
            log.update_high_watermark(self.checkpointed_hw[tp])
        return log

    def on_leader_and_isr(self, broker_id: int, epoch: int, states: list[LeaderAndIsrPartitionState]) -> None:
        for s in states:
            tp = TopicPartition(s.topic, s.partition)
            partition = self.partitions.get(tp)
            if partition is None:
                partition = self.partitions[tp] = Partition(tp, s.topic_id, self.provide_log, 0, self.time)
            if s.leader == broker_id:
                partition.make_leader(s)
            else:
                partition.make_follower(s)

    def on_stop_replica(self, broker_id: int, epoch: int, parts: list[StopReplicaPartitionState]) -> None:
        for s in parts:
            tp = TopicPartition(s.topic, s.partition)
            self.partitions.pop(tp, None)
            if s.delete_partition:
                self.log_manager.async_delete(tp)

    def on_config_change(self, entity_type: str, name: str, configs: dict) -> None:
        if entity_type == "topics":
            self.log_manager.update_topic_config(name, configs)

    def shutdown(self) -> None:
        self.controller.shutdown()
        self.log_manager.checkpoint_high_watermarks({tp: p.high_watermark for tp, p in self.partitions.items()})
        self.log_manager.shutdown()
        self.store.close()


def records(*values: bytes) -> bytes:
    builder = MemoryRecordsBuilder()
    for v in values:
        builder.append(1_700_000_000_000, None, v)
    return builder.build()


def read_values(partition: Partition) -> list[bytes]:
    info = partition.read_records(0, 1 << 20)
    if info.fetched_data.records is None:
        return []
    data = info.fetched_data.records.read_bytes()
    return [r.value for b in MemoryRecords(data).batches() for r in b.records()]


def test_embedded_broker_round_trip_and_restart(tmp_path) -> None:
    log_dir = str(tmp_path)
    time = MockTime()
    broker = EmbeddedBroker(log_dir, time)
    result = broker.controller.create_topics([("events", 2, 1, None, {"retention.ms": "86400000"}),
                                              ("gone", 1, 1, None, {})]).result(TIMEOUT)
    events_id = result["events"].topic_id
    p0 = broker.partitions[TopicPartition("events", 0)]
    assert p0.is_leader and p0.log.config.retention_ms == 86_400_000
    p0.append_records_to_leader(records(b"one", b"two"), -1)
    p0.append_records_to_leader(records(b"three"), -1)
    assert read_values(p0) == [b"one", b"two", b"three"] and p0.high_watermark == 3

    broker.controller.alter_topic_configs("events", {"retention.ms": "1000"}).result(TIMEOUT)
    assert p0.log.config.retention_ms == 1000
    assert broker.controller.delete_topics(["gone"]).result(TIMEOUT) == {"gone": None}
    assert TopicPartition("gone", 0) not in broker.partitions
    assert sorted(os.listdir(log_dir)).count(METADATA_FILE_NAME) == 1
    broker.shutdown()

    time.advance(1000)
    again = EmbeddedBroker(log_dir, time)
    try:
        assert again.cache.get_all_topics() == {"events"} and again.cache.get_topic_id("events") == events_id
        p0 = again.partitions[TopicPartition("events", 0)]
        assert p0.is_leader and p0.leader_epoch == 0 and p0.log.topic_id == events_id
        assert p0.log.config.retention_ms == 1000
        assert read_values(p0) == [b"one", b"two", b"three"] and p0.high_watermark == 3
        assert p0.append_records_to_leader(records(b"four"), -1).first_offset == 3
        assert not any(name.startswith("gone-0") and not name.endswith("-delete") for name in os.listdir(log_dir))
    finally:
        again.shutdown()
