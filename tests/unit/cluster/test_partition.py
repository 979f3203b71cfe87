"""Partition over a real Log in a temp dir: leadership, appends with acks/min.isr, reads bounded by HW,
follower tracking, ISR expansion / shrink through AlterPartition, HW = min LEO over the ISR."""

from __future__ import annotations

import os
import uuid
from concurrent.futures import Future

import pytest

from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderAndIsrPartitionState
from kafkapy.cluster.partition import FetchIsolation, Partition
from kafkapy.common.errors import (
    FencedLeaderEpochError,
    InvalidUpdateVersionError,
    NotEnoughReplicasAfterAppendError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    OffsetNotAvailableError,
    UnknownLeaderEpochError,
)
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.storage.log import Log
from kafkapy.storage.log_config import LogConfig

TP = TopicPartition("t", 0)
TID = uuid.UUID("0f0e0d0c-0b0a-4908-8706-050403020100")


def batch(*values: bytes) -> bytes:
    builder = MemoryRecordsBuilder()
    for i, v in enumerate(values):
        builder.append(1_700_000_000_000 + i, None, v)
    return builder.build()


def state(leader: int, epoch: int, isr=(0,), replicas=(0,), partition_epoch=0) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState("t", 0, TID, 1, leader, epoch, tuple(isr), partition_epoch, tuple(replicas))


class AlterPartitionStub:
    def __init__(self) -> None:
        self.requests: list[tuple[TopicPartition, LeaderAndIsr, Future]] = []

    def submit(self, tp: TopicPartition, proposed: LeaderAndIsr, controller_epoch: int) -> Future:
        fut: Future = Future()
        self.requests.append((tp, proposed, fut))
        return fut


@pytest.fixture
def env(tmp_path):
    time = MockTime()
    logs: list[Log] = []
    overrides: dict[str, str] = {}

    def provider(tp: TopicPartition, topic_id):
        log = Log.open(os.path.join(str(tmp_path), str(tp)), LogConfig.from_props(overrides, {}), time,
                       topic_id=topic_id)
        logs.append(log)
        return log

    yield time, provider, overrides
    for log in logs:
        log.close()


def values_of(info) -> list[bytes]:
    if info.fetched_data.records is None:
        return []
    data = info.fetched_data.records.read_bytes()
    return [r.value for b in MemoryRecords(data).batches() for r in b.records()]


def test_single_replica_leader_append_and_read(env) -> None:
    time, provider, _ = env
    p = Partition(TP, TID, provider, 0, time)
    assert p.make_leader(state(0, 0)) is True
    assert p.is_leader and p.leader_epoch == 0 and p.isr == (0,) and p.log.topic_id == TID
    info = p.append_records_to_leader(batch(b"a", b"b"), required_acks=-1)
    assert (info.first_offset, info.last_offset) == (0, 1)
    assert p.log_end_offset == 2 and p.high_watermark == 2  # one replica: HW follows the append
    p.append_records_to_leader(batch(b"c"), required_acks=1)
    read = p.read_records(0, 1 << 20)
    assert values_of(read) == [b"a", b"b", b"c"]
    assert (read.high_watermark, read.log_start_offset, read.last_stable_offset) == (3, 0, 3)
    assert values_of(p.read_records(2, 1 << 20)) == [b"c"]
    assert p.read_records(3, 1 << 20).fetched_data.records is None
    assert p.check_enough_replicas_reach_offset(3) == (True, None)
    # The batch carries the leader epoch.
    stored = next(MemoryRecords(read.fetched_data.records.read_bytes()).batches())
    assert stored.partition_leader_epoch == 0


def test_leader_epoch_recorded_and_stale_state_ignored(env) -> None:
    time, provider, _ = env
    p = Partition(TP, TID, provider, 0, time)
    p.make_leader(state(0, 0))
    p.append_records_to_leader(batch(b"x"), 1)
    assert p.make_leader(state(0, 3, partition_epoch=2)) is True
    assert p.leader_epoch == 3 and p.leader_epoch_start_offset == 1
    assert p.log.leader_epoch_cache.latest_epoch() == 3
    assert p.log.end_offset_for_epoch(0) == (0, 1)
    assert p.make_leader(state(0, 2)) is False and p.leader_epoch == 3
    assert p.make_leader(state(0, 3, partition_epoch=3)) is False  # same epoch: not a new leadership


def test_not_leader_and_epoch_checks(env) -> None:
    time, provider, _ = env
    p = Partition(TP, TID, provider, 0, time)
    with pytest.raises(NotLeaderOrFollowerError):
        p.append_records_to_leader(batch(b"a"), 1)
    p.make_follower(state(1, 4, isr=(1, 0), replicas=(1, 0)))
    assert not p.is_leader and p.leader_replica_id == 1 and p.log is not None
    with pytest.raises(NotLeaderOrFollowerError):
        p.append_records_to_leader(batch(b"a"), 1)
    with pytest.raises(NotLeaderOrFollowerError):
        p.read_records(0, 100)
    assert p.read_records(0, 100, FetchIsolation.LOG_END, fetch_only_from_leader=False).high_watermark == 0
    p.make_leader(state(0, 5, isr=(0,), replicas=(1, 0)))
    with pytest.raises(FencedLeaderEpochError):
        p.read_records(0, 100, current_leader_epoch=4)
    with pytest.raises(UnknownLeaderEpochError):
        p.read_records(0, 100, current_leader_epoch=6)
    assert p.read_records(0, 100, current_leader_epoch=5).high_watermark == 0


def test_min_insync_replicas(env) -> None:
    time, provider, overrides = env
    overrides["min.insync.replicas"] = "2"
    p = Partition(TP, TID, provider, 0, time)
    p.make_leader(state(0, 0, isr=(0,), replicas=(0, 1)))
    with pytest.raises(NotEnoughReplicasError, match="insufficient to satisfy the min.isr requirement of 2"):
        p.append_records_to_leader(batch(b"a"), -1)
    assert p.append_records_to_leader(batch(b"a"), 1).first_offset == 0
    assert p.append_records_to_leader(batch(b"b"), -1, min_isr=1).first_offset == 1
    assert p.check_enough_replicas_reach_offset(2) == (True, NotEnoughReplicasAfterAppendError)


def test_follower_fetches_move_hw_and_expand_isr(env) -> None:
    time, provider, _ = env
    alter = AlterPartitionStub()
    p = Partition(TP, TID, provider, 0, time, replica_lag_time_max_ms=10_000, alter_isr_manager=alter)
    p.make_leader(state(0, 1, isr=(0, 1), replicas=(0, 1, 2), partition_epoch=4))
    for v in (b"a", b"b", b"c"):
        p.append_records_to_leader(batch(v), -1)
    assert p.high_watermark == 0  # follower 1 is in the ISR and has fetched nothing
    assert p.check_enough_replicas_reach_offset(3) == (False, None)
    assert values_of(p.read_records(0, 1 << 20)) == []
    assert len(values_of(p.read_records(0, 1 << 20, FetchIsolation.LOG_END))) == 3

    assert p.update_follower_fetch_state(1, 2, 0) is True
    assert p.high_watermark == 2 and values_of(p.read_records(0, 1 << 20)) == [b"a", b"b"]
    assert p.update_follower_fetch_state(1, 3, 0) is True and p.high_watermark == 3
    assert p.update_follower_fetch_state(1, 3, 0) is False  # no progress, no HW move
    assert alter.requests == []

    # Replica 2 (not in the ISR) catches up to the HW: the leader proposes adding it.
    time.advance(20_000)
    p.update_follower_fetch_state(2, 3, 0)
    [(tp, proposed, fut)] = alter.requests
    assert tp == TP and proposed == LeaderAndIsr(0, 1, (0, 1, 2), partition_epoch=4)
    assert p.isr_change_pending and p.maximal_isr == (0, 1, 2) and p.isr == (0, 1)
    fut.set_result({TP: LeaderAndIsr(0, 1, (0, 1, 2), partition_epoch=5)})
    assert p.isr == (0, 1, 2) and p.partition_epoch == 5 and not p.isr_change_pending

    # Replica 1 stops fetching: after replica.lag.time.max.ms the leader proposes dropping it.
    p.update_follower_fetch_state(1, 3, 0)  # caught up with the leader's end now
    p.append_records_to_leader(batch(b"d"), 1)
    time.advance(5_000)
    p.update_follower_fetch_state(2, 4, 0)
    assert p.maybe_shrink_isr() is False
    time.advance(10_001)
    assert p.high_watermark == 3  # replica 1 still holds it back
    p.update_follower_fetch_state(2, 4, 0)
    assert p.maybe_shrink_isr() is True
    _, proposed, fut = alter.requests[-1]
    assert proposed.isr == (0, 2) and p.isr == (0, 1, 2)  # committed ISR unchanged until the answer
    fut.set_result(LeaderAndIsr(0, 1, (0, 2), partition_epoch=6))
    assert p.isr == (0, 2) and p.high_watermark == 4


def test_rejected_isr_change_keeps_committed_state(env) -> None:
    time, provider, _ = env
    alter = AlterPartitionStub()
    p = Partition(TP, TID, provider, 0, time, replica_lag_time_max_ms=100, alter_isr_manager=alter)
    p.make_leader(state(0, 1, isr=(0, 1), replicas=(0, 1), partition_epoch=4))
    time.advance(1_000)
    assert p.maybe_shrink_isr() is True
    assert p.maybe_shrink_isr() is False  # one proposal at a time
    alter.requests[-1][2].set_result(InvalidUpdateVersionError("stale"))
    # KIP-497: refused for a stale partition epoch, the proposal stays in flight (the HW keeps waiting for
    # the maximal ISR) until the controller's next LeaderAndIsr tells the truth.
    assert p.isr == (0, 1) and p.isr_change_pending and p.partition_epoch == 4
    assert p.maybe_shrink_isr() is False
    p.make_leader(state(0, 1, isr=(0, 1), replicas=(0, 1), partition_epoch=5))
    assert not p.isr_change_pending
    time.advance(1_000)
    # A new leadership makes the answer to an older proposal irrelevant.
    assert p.maybe_shrink_isr() is True
    p.make_leader(state(0, 2, isr=(0, 1), replicas=(0, 1), partition_epoch=6))
    alter.requests[-1][2].set_result(LeaderAndIsr(0, 1, (0,), partition_epoch=5))
    assert p.isr == (0, 1) and p.partition_epoch == 6


def test_follower_high_watermark(env) -> None:
    time, provider, _ = env
    p = Partition(TP, TID, provider, 1, time)
    p.make_follower(state(0, 2, isr=(0, 1), replicas=(0, 1)))
    p.log.append_as_follower(_with_offsets(batch(b"a", b"b")))
    assert p.update_follower_high_watermark(5) == 2
    assert p.update_follower_high_watermark(1) == 1


def _with_offsets(records: bytes) -> bytes:
    return records  # built with base offset 0, which a follower keeps


def test_fetch_offset_for_timestamp_bounded_by_hw(env) -> None:
    time, provider, _ = env
    p = Partition(TP, TID, provider, 0, time)
    p.make_leader(state(0, 2, isr=(0, 1), replicas=(0, 1)))
    builder = MemoryRecordsBuilder()
    builder.append(1000, None, b"a")
    p.append_records_to_leader(builder.build(), 1)
    builder = MemoryRecordsBuilder()
    builder.append(2000, None, b"b")
    p.append_records_to_leader(builder.build(), 1)
    p.update_follower_fetch_state(1, 1, 0)  # HW = 1
    assert p.fetch_offset_for_timestamp(-1) == (1, -1)
    assert p.fetch_offset_for_timestamp(-1).leader_epoch == 2
    assert p.fetch_offset_for_timestamp(-1, isolation_level=None).offset == 2
    assert p.fetch_offset_for_timestamp(-2).offset == 0
    assert p.fetch_offset_for_timestamp(500) == (0, 1000)
    assert p.fetch_offset_for_timestamp(1500) is None  # offset 1 is not below the HW yet
    assert p.fetch_offset_for_timestamp(1500, isolation_level=None) == (1, 2000)
    # A new leadership whose HW lags its epoch start: "latest" is not available yet.
    p.make_leader(state(0, 3, isr=(0, 1), replicas=(0, 1)))
    assert p.leader_epoch_start_offset == 2 and p.high_watermark == 1
    with pytest.raises(OffsetNotAvailableError):
        p.fetch_offset_for_timestamp(-1)
