"""Test doubles for the group coordinator: an in-memory __consumer_offsets log behind a fake
ReplicaManager, real purgatories under MockTime, and synchronous executors."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group_coordinator import GroupCoordinator
from kafkapy.coordinator.group_membership import GroupConfig
from kafkapy.coordinator.group_metadata_manager import GroupMetadataManager, OffsetConfig
from kafkapy.record.batch_header import write_base_offset
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.server.purgatory import DelayedOperationPurgatory
from kafkapy.server.purgatory.group_delayed_operation import GroupDelayedOperation

TOPIC = "__consumer_offsets"


class FakeRegion:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.length = len(data)

    def read_bytes(self) -> bytes:
        return self.data


class FakeLog:
    def __init__(self) -> None:
        self.batches: list[tuple[int, bytes]] = []  # (base offset, batch bytes)
        self.log_start_offset = 0
        self.log_end_offset = 0

    def append(self, data: bytes) -> int:
        base = self.log_end_offset
        buf = bytearray(data)
        write_base_offset(buf, 0, base)
        batch = next(iter(MemoryRecords(bytes(buf)).batches()))
        self.batches.append((base, bytes(buf)))
        self.log_end_offset = batch.last_offset + 1
        return base

    def read(self, start: int, max_bytes: int, max_offset: int | None = None, min_one_message: bool = True) -> Any:
        data = b"".join(b for base, b in self.batches if base >= start)
        return SimpleNamespace(fetch_offset=start, records=FakeRegion(data) if data else None)

    def records(self) -> list[Any]:
        out = []
        for _, b in self.batches:
            out.extend(MemoryRecords(b).records())
        return out


@dataclass
class FakePartition:
    log: FakeLog = field(default_factory=FakeLog)
    is_leader: bool = True
    leader_epoch: int = 0


class FakeReplicaManager:
    def __init__(self, num_partitions: int) -> None:
        self._partitions = {TopicPartition(TOPIC, p): FakePartition() for p in range(num_partitions)}
        self.append_error = 0
        self.appends: list[tuple[TopicPartition, int, str]] = []

    @property
    def partitions(self) -> dict[TopicPartition, FakePartition]:
        return dict(self._partitions)

    def get_partition(self, tp: TopicPartition) -> FakePartition | None:
        return self._partitions.get(tp)

    def append_records(self, timeout_ms: int, required_acks: int, entries: dict, callback: Any, *,
                       internal_topics_allowed: bool = False, origin: str = "client") -> None:
        assert internal_topics_allowed and origin == "coordinator"
        results = {}
        for tp, data in entries.items():
            self.appends.append((tp, required_acks, origin))
            partition = self._partitions.get(tp)
            if self.append_error:
                results[tp] = SimpleNamespace(error=self.append_error, base_offset=-1)
            elif partition is None or not partition.is_leader:
                results[tp] = SimpleNamespace(error=ErrorCode.NOT_LEADER_OR_FOLLOWER, base_offset=-1)
            else:
                results[tp] = SimpleNamespace(error=0, base_offset=partition.log.append(data))
        callback(results)


class Harness:
    """A coordinator over FakeReplicaManager; `tick(ms)` advances MockTime and fires due expirations."""

    def __init__(self, num_partitions: int = 1, initial_delay_ms: int = 0, time: MockTime | None = None,
                 replica_manager: FakeReplicaManager | None = None, load_now: bool = True,
                 group_max_size: int = 2**31 - 1) -> None:
        self.time = time or MockTime()
        self.rm = replica_manager or FakeReplicaManager(num_partitions)
        self.loads: list[Any] = []
        self.heartbeat = DelayedOperationPurgatory("Heartbeat", self.time, reaper_enabled=False)
        self.rebalance = DelayedOperationPurgatory("Rebalance", self.time, reaper_enabled=False)
        offset_config = OffsetConfig(offsets_topic_num_partitions=num_partitions)
        load_executor = (lambda fn: fn()) if load_now else self.loads.append
        self.manager = GroupMetadataManager(0, offset_config, self.time, self.rm, None, lambda fn: fn(), load_executor)
        self.coordinator = GroupCoordinator(0, GroupConfig(6000, 1_800_000, initial_delay_ms, group_max_size),
                                            offset_config, self.manager, self.time, self.heartbeat, self.rebalance,
                                            GroupDelayedOperation)
        self.coordinator.startup(enable_scheduler=False)

    def tick(self, ms: int) -> None:
        self.time.advance(ms)
        self.heartbeat.advance_clock(0)
        self.rebalance.advance_clock(0)

    def join(self, group: str, member_id: str = "", protocols: list[tuple[str, bytes]] | None = None, *,
             instance_id: str | None = None, require_known: bool = False, session_ms: int = 10_000,
             rebalance_ms: int = 30_000, protocol_type: str = "consumer", client_id: str = "client",
             skip_assignment: bool = False) -> list:
        out: list = []
        self.coordinator.handle_join_group(group, member_id, instance_id, require_known, skip_assignment, client_id,
                                           "/127.0.0.1", rebalance_ms, session_ms, protocol_type,
                                           protocols or [("range", b"meta-" + client_id.encode())], out.append)
        return out

    def sync(self, group: str, member_id: str, generation: int, assignment: dict[str, bytes] | None = None, *,
             instance_id: str | None = None, protocol_type: str | None = None,
             protocol_name: str | None = None) -> list:
        out: list = []
        self.coordinator.handle_sync_group(group, generation, member_id, protocol_type, protocol_name, instance_id,
                                           assignment or {}, out.append)
        return out

    def heartbeat_(self, group: str, member_id: str, generation: int, instance_id: str | None = None) -> int:
        return self.coordinator.handle_heartbeat(group, member_id, instance_id, generation)

    def commit(self, group: str, offsets: dict, member_id: str = "", generation: int = -1,
               instance_id: str | None = None) -> dict:
        out: list = []
        self.coordinator.handle_commit_offsets(group, member_id, instance_id, generation, offsets, out.append)
        assert len(out) == 1
        return out[0]

    def stable_group(self, group: str, client_id: str = "c1", session_ms: int = 10_000) -> tuple[str, int]:
        """One member joined and synced: (member id, generation)."""
        joined = self.join(group, client_id=client_id, session_ms=session_ms)
        assert len(joined) == 1 and joined[0].error == 0, joined
        member, generation = joined[0].member_id, joined[0].generation_id
        synced = self.sync(group, member, generation, {member: b"assignment-" + client_id.encode()})
        assert synced and synced[0].error == 0
        return member, generation

    def shutdown(self) -> None:
        self.coordinator.shutdown()
