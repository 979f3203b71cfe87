"""Follower truncation by leader epoch (KIP-101 / KIP-279) over real Partitions and Logs: a ReplicaFetcherThread
(not started; its rounds are run here) whose requests are answered in-process by the leader's Partition, as
the leader's handlers would. Each case rebuilds the log states of issue 20's case 2 (an in-sync follower
holding an epoch-0 batch at 1304 where the leader has the acknowledged epoch-3 batch) and checks the
log-prefix property: after truncation and catch-up the follower's log is byte-identical to the leader's."""

from __future__ import annotations

import os
import uuid
from types import SimpleNamespace
from typing import Any

import pytest

from kafkapy.cluster.broker import Node
from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState
from kafkapy.cluster.partition import FetchIsolation, Partition
from kafkapy.common.errors import KafkaError
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import FetchRequest, OffsetForLeaderEpochRequest
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.replica_fetcher_thread import FetchState, InitialFetchState, ReplicaFetcherThread
from kafkapy.server.replication_quota_manager import ReplicationQuotaManager
from kafkapy.storage.log import Log
from kafkapy.storage.log_config import LogConfig

TP = TopicPartition("t", 0)
TID = uuid.UUID("2f0e0d0c-0b0a-4908-8706-050403020100")
A, B, F = 0, 1, 2  # the epoch-0 leader, the epoch-3 leader, the follower under test
MAX_ROUNDS = 20


def records(count: int, tag: bytes) -> bytes:
    builder = MemoryRecordsBuilder()
    for i in range(count):
        builder.append(1_700_000_000_000 + i, None, b"%s-%d" % (tag, i))
    return builder.build()


def state(leader: int, epoch: int, partition_epoch: int | None = None) -> LeaderAndIsrPartitionState:
    pe = epoch if partition_epoch is None else partition_epoch
    return LeaderAndIsrPartitionState("t", 0, TID, 1, leader, epoch, (A, B, F), pe, (A, B, F))


@pytest.fixture
def make(tmp_path):
    time = MockTime()
    logs: list[Log] = []

    def partition(broker_id: int) -> Partition:
        def provider(tp: TopicPartition, topic_id: Any) -> Log:
            log = Log.open(os.path.join(str(tmp_path), str(broker_id), str(tp)), LogConfig.from_props({}, {}), time,
                           topic_id=topic_id)
            logs.append(log)
            return log
        return Partition(TP, TID, provider, broker_id, time)

    yield time, partition
    for log in logs:
        log.close()


class LeaderEndpoint:
    """Answers the fetcher's OffsetForLeaderEpoch and Fetch from the leader's Partition."""

    def __init__(self, leader: Partition) -> None:
        self.leader = leader
        self.epoch_requests: list[int] = []

    def __call__(self, request: Any, max_version: int | None = None) -> Any:
        if isinstance(request, OffsetForLeaderEpochRequest):
            topics = []
            for t in request.topics:
                parts = []
                for p in t.partitions:
                    self.epoch_requests.append(p.leader_epoch)
                    try:
                        local = self.leader._check_leader_epoch(p.current_leader_epoch, True)
                        epoch, end = local.end_offset_for_epoch(p.leader_epoch)
                        parts.append(SimpleNamespace(partition=p.partition, error_code=0, leader_epoch=epoch,
                                                     end_offset=end))
                    except KafkaError as e:
                        parts.append(SimpleNamespace(partition=p.partition, error_code=e.code, leader_epoch=-1,
                                                     end_offset=-1))
                topics.append(SimpleNamespace(topic=t.topic, partitions=parts))
            return SimpleNamespace(topics=topics)
        assert isinstance(request, FetchRequest)
        responses = []
        for t in request.topics:
            parts = []
            for p in t.partitions:
                info = self.leader.read_records(p.fetch_offset, p.partition_max_bytes, FetchIsolation.LOG_END,
                                                current_leader_epoch=p.current_leader_epoch)
                data = info.fetched_data.records.read_bytes() if info.fetched_data.records is not None else None
                self.leader.update_follower_fetch_state(request.replica_id, p.fetch_offset)
                parts.append(SimpleNamespace(partition_index=p.partition, error_code=0, records=data,
                                             high_watermark=self.leader.high_watermark,
                                             log_start_offset=self.leader.log_start_offset))
            responses.append(SimpleNamespace(topic=t.topic, partitions=parts))
        return SimpleNamespace(error_code=0, session_id=0, responses=responses)  # sessionless (KIP-227)


def fetcher(partition: Partition, leader: Partition, epoch: int) -> tuple[ReplicaFetcherThread, LeaderEndpoint]:
    config = KafkaConfig({"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": "/tmp/unused",
                          "replica.fetch.backoff.ms": "0"})
    node = Node(leader.local_broker_id, "127.0.0.1", 1)
    thread = ReplicaFetcherThread(0, node, partition.local_broker_id, config, lambda tp: partition,
                                  ReplicationQuotaManager())
    endpoint = LeaderEndpoint(leader)
    thread._send = endpoint  # type: ignore[method-assign]
    thread.add_partitions({TP: InitialFetchState(node, epoch, partition.log_end_offset)})
    return thread, endpoint


def run_until_caught_up(thread: ReplicaFetcherThread, follower: Partition, leader: Partition) -> int:
    for rounds in range(1, MAX_ROUNDS + 1):
        thread.do_work()
        s = thread.fetch_state(TP)
        assert s is not None
        if s.state is FetchState.FETCHING and follower.log_end_offset == leader.log_end_offset:
            return rounds
    raise AssertionError(f"not caught up after {MAX_ROUNDS} rounds: {thread.fetch_state(TP)}, "
                         f"{follower.log.leader_epoch_cache if follower.log else None}")


def log_bytes(p: Partition) -> bytes:
    assert p.log is not None
    region = p.log.read(0, 1 << 30, None).records
    return region.read_bytes() if region is not None else b""


def batch(base: int, epoch: int, count: int, tag: bytes) -> bytes:
    """A batch as a leader at `epoch` wrote it at `base` (the same bytes wherever the same batch is replicated)."""
    builder = MemoryRecordsBuilder(base_offset=base, partition_leader_epoch=epoch)
    for i in range(count):
        builder.append(1_700_000_000_000 + i, None, b"%s-%d" % (tag, i))
    return builder.build()


def replica_with(partition, broker_id: int, *batches: bytes) -> Partition:
    p = partition(broker_id)
    local = p.create_log_if_not_exists()
    for b in batches:
        local.append_as_follower(b)
    return p


def leader_b(partition, *prefix: bytes) -> Partition:
    """B, the epoch-3 leader: the prefix, then the acknowledged epoch-3 batch at 1304 and more after it."""
    b = replica_with(partition, B, *prefix, batch(1304, 3, 1, b"acked"), batch(1305, 3, 5, b"later"))
    b.make_leader(state(B, 3))
    return b


E0_1300 = batch(0, 0, 1300, b"e0")


def test_follower_that_led_an_epoch_without_appending_truncates_to_the_divergence(make) -> None:
    """F holds 0..1304 at epoch 0 (the last five never committed), then was elected for epoch 2 and lost it
    before appending: its cache ends with (2, 1305), an entry at its log end. B led epoch 1 from 1300. Asked
    about epoch 2, B answers epoch 1 ending at 1304; F does not know epoch 1, so it cuts to the end of its
    epoch 0 (1305) and asks again. Without cutting the cache at the log end the (2, 1305) entry answers
    every round and F never leaves Truncating; with it, F asks about epoch 0, truncates to 1300, copies B."""
    _, partition = make
    b = leader_b(partition, E0_1300, batch(1300, 1, 4, b"e1"))
    f = replica_with(partition, F, E0_1300, batch(1300, 0, 5, b"f0"))
    assert f.log is not None
    f.log.maybe_assign_epoch_start_offset(2, 1305)  # what make_leader at epoch 2 recorded
    f.make_follower(state(B, 3))
    thread, endpoint = fetcher(f, b, 3)
    run_until_caught_up(thread, f, b)
    assert endpoint.epoch_requests == [2, 0]
    assert f.log.leader_epoch_cache.epoch_entries() == [(0, 0), (1, 1300), (3, 1304)]
    assert log_bytes(f) == log_bytes(b)


def test_divergent_epoch_zero_batch_at_1304_is_truncated(make) -> None:
    """The issue's states: F has 0..1303 plus an epoch-0 batch at 1304; B has the acknowledged epoch-3 batch
    there (its epoch 3 starts at 1304). F asks about epoch 0, B answers that it ends at 1304, F truncates to
    1304 and copies B from there: never a fetch from its own log end, 1305."""
    _, partition = make
    e0 = batch(0, 0, 1304, b"e0")
    b = leader_b(partition, e0)
    f = replica_with(partition, F, e0, batch(1304, 0, 1, b"divergent"))
    f.make_follower(state(B, 3))
    thread, endpoint = fetcher(f, b, 3)
    run_until_caught_up(thread, f, b)
    assert endpoint.epoch_requests == [0]
    assert log_bytes(f) == log_bytes(b)
    assert f.log is not None and f.log.leader_epoch_cache.epoch_entries() == [(0, 0), (3, 1304)]


def test_answer_of_the_previous_leader_is_not_appended_after_the_epoch_moved(make) -> None:
    """F follows A at epoch 0 and has a fetch out at 1304 when the controller makes B the epoch-3 leader.
    A's answer (its epoch-0 batch at 1304) arrives after F's partition moved to epoch 3: it must not be
    appended, or F could sit on it at an offset B's truncation point has already been chosen for."""
    _, partition = make
    a = partition(A)
    a.make_leader(state(A, 0))
    a.append_records_to_leader(records(1304, b"e0"), 1)
    f = partition(F)
    f.make_follower(state(A, 0))
    old_thread, _ = fetcher(f, a, 0)
    run_until_caught_up(old_thread, f, a)
    a.append_records_to_leader(records(1, b"divergent"), 1)
    request, fetched = old_thread._build_fetch()
    f.make_follower(state(B, 3))  # LeaderAndIsr applied; the old fetcher is not removed yet
    old_thread._process_fetch(request, fetched)
    assert f.log_end_offset == 1304
    assert f.truncate_to(1000, fetch_leader_epoch=0) is False and f.log_end_offset == 1304


def test_epoch_cache_is_trusted_only_up_to_the_recovered_log(tmp_path) -> None:
    """After a crash the leader-epoch checkpoint (fsynced on every change, before the data it describes is
    flushed) may name epochs the log lost; the loader cuts it at the recovered log end, and an unclean start
    re-assigns epochs from the recovered batches past the recovery point, so OffsetsForLeaderEpoch answers
    come from the log as it is."""
    from kafkapy.storage.checkpoint_file import LEADER_EPOCH_CHECKPOINT_FILE, LeaderEpochCheckpointFile

    time = MockTime()
    path = os.path.join(str(tmp_path), "t-0")
    log = Log.open(path, LogConfig.from_props({}, {}), time)
    log.append_as_follower(batch(0, 0, 10, b"a"))
    log.append_as_follower(batch(10, 3, 5, b"b"))
    log.close()
    checkpoint = LeaderEpochCheckpointFile(os.path.join(path, LEADER_EPOCH_CHECKPOINT_FILE))
    checkpoint.write([(0, 0), (3, 10), (5, 40)])  # epoch 5's batches never reached the log
    log = Log.open(path, LogConfig.from_props({}, {}), time)
    try:
        assert log.leader_epoch_cache.epoch_entries() == [(0, 0), (3, 10)]
        assert log.end_offset_for_epoch(3) == (3, 15)
    finally:
        log.close()
    checkpoint.write([(0, 0)])  # the entry for epoch 3 was lost, the batches were not
    log = Log.open(path, LogConfig.from_props({}, {}), time, recovery_point=0, had_clean_shutdown=False)
    try:
        assert log.leader_epoch_cache.epoch_entries() == [(0, 0), (3, 10)]
    finally:
        log.close()
