"""ReplicaManager over a real LogManager under MockTime: acks, min.insync.replicas, DelayedProduce and
DelayedFetch completion and expiry through the purgatories (no reaper thread: the test advances the clock
and fires due operations itself), follower fetches moving the HW, size limits, and error codes. Produces
first pass the Produce handler's version rules (apis/produce.apply_version_rules), as a request would."""

from __future__ import annotations

import uuid

import pytest

from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState, StopReplicaPartitionState
from kafkapy.cluster.leader_and_isr import UpdateMetadataPartitionState as UMState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.apis.produce import apply_version_rules
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.partition_response import partition_error_response
from kafkapy.server.replica_manager import FetchParams, FetchPartitionInfo, ReplicaManager
from kafkapy.storage.log_manager import LogManager

TP = TopicPartition("t", 0)
TOPIC_ID = uuid.UUID(int=0x1234)


def batch(*values: bytes, ts: int = 1_700_000_000_000) -> bytes:
    builder = MemoryRecordsBuilder()
    for v in values:
        builder.append(ts, None, v)
    return builder.build()


class Harness:
    def __init__(self, tmp_path, topic_configs=None, overrides=None) -> None:
        self.time = MockTime()
        props = {"log.dirs": str(tmp_path), "listeners": "PLAINTEXT://127.0.0.1:0"}
        props.update(overrides or {})
        self.config = KafkaConfig(props)
        self.log_manager = LogManager([str(tmp_path)], {}, self.time,
                                      topic_configs=topic_configs or (lambda topic: {}))
        self.log_manager.startup()
        self.cache = MetadataCache(0)
        self.rm = ReplicaManager(self.config, self.time, self.log_manager, self.cache, 0, reaper_enabled=False)
        self.rm.startup()

    def lead(self, tp: TopicPartition = TP, replicas=(0,), isr=(0,), leader_epoch: int = 0,
             partition_epoch: int = 0) -> None:
        state = LeaderAndIsrPartitionState(tp.topic, tp.partition, TOPIC_ID, 1, 0, leader_epoch, tuple(isr),
                                           partition_epoch, tuple(replicas))
        assert self.rm.become_leader_or_follower(0, 1, [state]) == {tp: 0}

    def produce(self, records: bytes, acks: int = 1, tp: TopicPartition = TP, timeout_ms: int = 1000,
                version: int | None = 9) -> list:
        out: list = []
        if version is not None:
            try:
                records = apply_version_rules(records, version)
            except KafkaError as e:
                return [{tp: partition_error_response(e)}]
        self.rm.append_records(timeout_ms, acks, {tp: records}, out.append)
        return out

    def fetch(self, offsets: dict, max_wait_ms: int = 0, min_bytes: int = 1, max_bytes: int = 1 << 20,
              replica_id: int = -1, partition_max_bytes: int = 1 << 20, hard: bool = False) -> list:
        out: list = []
        params = FetchParams(replica_id, max_wait_ms, min_bytes, max_bytes, 0,
                             {tp: FetchPartitionInfo(off, partition_max_bytes) for tp, off in offsets.items()},
                             hard_max_bytes_limit=hard)
        self.rm.fetch_messages(params, out.append)
        return out

    def expire(self, ms: int) -> None:
        self.time.advance(ms)
        self.rm.fetch_purgatory.advance_clock(0)
        self.rm.produce_purgatory.advance_clock(0)

    def close(self) -> None:
        self.rm.shutdown()
        self.log_manager.shutdown()


@pytest.fixture
def h(tmp_path):
    harness = Harness(tmp_path)
    yield harness
    harness.close()


def values(region) -> list[bytes]:
    return [r.value for b in MemoryRecords(region.read_bytes()).batches() for r in b.records()]


def test_acks_1_appends_and_answers_at_once(h) -> None:
    h.lead()
    [r] = h.produce(batch(b"a", b"b"))
    assert (r[TP].error, r[TP].base_offset, r[TP].log_start_offset) == (0, 0, 0)
    [r] = h.produce(batch(b"c"))
    assert r[TP].base_offset == 2
    [f] = h.fetch({TP: 0})
    assert f[TP].error == 0 and f[TP].high_watermark == 3 and values(f[TP].records) == [b"a", b"b", b"c"]


def test_acks_all_single_replica_completes_through_the_purgatory(h) -> None:
    h.lead()
    [r] = h.produce(batch(b"x"), acks=-1)
    assert r[TP].error == 0 and r[TP].base_offset == 0
    assert h.rm.produce_purgatory.num_delayed == 0


def test_acks_all_waits_for_the_follower_then_completes(h) -> None:
    h.lead(replicas=(0, 1), isr=(0, 1))
    out = h.produce(batch(b"one", b"two"), acks=-1, timeout_ms=5000)
    assert out == [] and h.rm.produce_purgatory.num_delayed == 1
    p = h.rm.get_partition(TP)
    assert p.high_watermark == 0 and p.log_end_offset == 2
    # A consumer fetch sees nothing above the HW; the follower reads up to the log end.
    [f] = h.fetch({TP: 0})
    assert f[TP].records is None and f[TP].high_watermark == 0
    [f] = h.fetch({TP: 0}, replica_id=1)
    assert values(f[TP].records) == [b"one", b"two"]
    assert out == []  # the follower fetched from 0: its log end is still 0
    [f] = h.fetch({TP: 2}, replica_id=1)  # it appended both: fetching at 2 moves the HW
    assert p.high_watermark == 2
    assert len(out) == 1 and out[0][TP].error == 0 and out[0][TP].base_offset == 0


def test_acks_all_times_out_with_request_timed_out(h) -> None:
    h.lead(replicas=(0, 1), isr=(0, 1))
    out = h.produce(batch(b"late"), acks=-1, timeout_ms=300)
    h.expire(299)
    assert out == []
    h.expire(2)
    assert len(out) == 1 and out[0][TP].error == ErrorCode.REQUEST_TIMED_OUT and out[0][TP].base_offset == 0


def test_min_insync_replicas(tmp_path) -> None:
    h = Harness(tmp_path, topic_configs=lambda topic: {"min.insync.replicas": "2"})
    try:
        h.lead(replicas=(0, 1), isr=(0,))
        [r] = h.produce(batch(b"x"), acks=-1)
        assert r[TP].error == ErrorCode.NOT_ENOUGH_REPLICAS
        assert h.rm.get_partition(TP).log_end_offset == 0
        [r] = h.produce(batch(b"x"), acks=1)  # acks=1 ignores min.insync.replicas
        assert r[TP].error == 0
        # ISR of two: the append waits; the ISR then shrinks to the leader alone -> after-append error.
        h.lead(replicas=(0, 1), isr=(0, 1), leader_epoch=1, partition_epoch=1)
        out = h.produce(batch(b"y"), acks=-1, timeout_ms=60_000)
        assert out == []
        h.time.advance(30_001)  # replica.lag.time.max.ms: the follower no longer holds the HW back
        h.lead(replicas=(0, 1), isr=(0,), leader_epoch=1, partition_epoch=2)
        assert len(out) == 1 and out[0][TP].error == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    finally:
        h.close()


def test_produce_errors_per_partition(h) -> None:
    h.lead()
    other = TopicPartition("t", 7)
    h.cache.update_metadata(0, 1, [], [UMState("t", 7, 1, 1, 0, (1,), 0, (1,))])
    corrupt = bytearray(batch(b"bad"))
    corrupt[20] ^= 0x01
    out: list = []
    h.rm.append_records(1000, 1, {TP: bytes(corrupt), TopicPartition("nope", 0): batch(b"a"), other: batch(b"b"),
                                  TopicPartition("__consumer_offsets", 0): batch(b"c")}, out.append)
    [r] = out
    assert r[TP].error == ErrorCode.CORRUPT_MESSAGE
    assert r[TopicPartition("nope", 0)].error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert r[other].error == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert r[TopicPartition("__consumer_offsets", 0)].error == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert h.rm.get_partition(TP).log_end_offset == 0
    two = batch(b"1") + batch(b"2")
    assert h.produce(two)[0][TP].error == ErrorCode.INVALID_RECORD
    assert h.produce(two, version=2)[0][TP].error == 0  # v0-2 may carry several batches
    assert h.produce(b"")[0][TP].error == ErrorCode.INVALID_RECORD
    legacy = bytearray(batch(b"z"))
    legacy[16] = 1
    [r] = h.produce(bytes(legacy))
    assert r[TP].error == ErrorCode.INVALID_RECORD and "magic" in r[TP].error_message
    from kafkapy.record.compression import CompressionType

    zstd = MemoryRecordsBuilder(compression=CompressionType.ZSTD)
    zstd.append(1, None, b"z")
    assert h.produce(zstd.build(), version=6)[0][TP].error == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert h.produce(zstd.build(), version=7)[0][TP].error == 0


def test_message_too_large(tmp_path) -> None:
    h = Harness(tmp_path, topic_configs=lambda topic: {"max.message.bytes": "1000"})
    try:
        h.lead()
        [r] = h.produce(batch(b"x" * 2000))
        assert r[TP].error == ErrorCode.MESSAGE_TOO_LARGE
        assert h.produce(batch(b"x" * 100))[0][TP].error == 0
    finally:
        h.close()


def test_delayed_fetch_completes_on_append(h) -> None:
    h.lead()
    out = h.fetch({TP: 0}, max_wait_ms=500)
    assert out == [] and h.rm.fetch_purgatory.num_delayed == 1
    h.produce(batch(b"wake"))
    assert len(out) == 1 and values(out[0][TP].records) == [b"wake"] and out[0][TP].high_watermark == 1


def test_delayed_fetch_expires_empty(h) -> None:
    h.lead()
    h.produce(batch(b"old"))
    out = h.fetch({TP: 1}, max_wait_ms=500)
    h.expire(499)
    assert out == []
    h.expire(1)
    assert len(out) == 1 and out[0][TP].error == 0 and out[0][TP].records is None
    assert out[0][TP].high_watermark == 1


def test_delayed_fetch_waits_for_min_bytes(h) -> None:
    h.lead()
    out = h.fetch({TP: 0}, max_wait_ms=1000, min_bytes=500)
    h.produce(batch(b"small"))
    assert out == []
    h.produce(batch(b"y" * 600))
    assert len(out) == 1 and values(out[0][TP].records) == [b"small", b"y" * 600]


def test_fetch_limits_and_out_of_range(h) -> None:
    t1 = TopicPartition("t", 1)
    h.lead()
    h.lead(t1)
    for i in range(5):
        h.produce(batch(b"%d" % i * 100))
        h.produce(batch(b"%d" % i * 100), tp=t1)
    size = len(batch(b"0" * 100))
    # max_bytes smaller than one batch: the first partition still gets one batch, the second nothing.
    [f] = h.fetch({TP: 0, t1: 0}, max_bytes=10)
    assert values(f[TP].records) == [b"0" * 100] and f[t1].records is None and f[t1].error == 0
    # partition_max_bytes bounds each partition; the response max bytes bounds the sum.
    [f] = h.fetch({TP: 0, t1: 0}, partition_max_bytes=2 * size, max_bytes=3 * size)
    assert f[TP].records.length == 2 * size and f[t1].records.length == size
    # v0-2 (hard limit): no oversized first batch.
    [f] = h.fetch({TP: 0}, max_bytes=10, hard=True)
    assert f[TP].records is None
    [f] = h.fetch({TP: 6})
    assert (f[TP].error, f[TP].high_watermark) == (ErrorCode.OFFSET_OUT_OF_RANGE, -1)
    [f] = h.fetch({TP: 5}, max_wait_ms=0)
    assert f[TP].error == 0 and f[TP].records is None


def test_follower_fetch_errors_and_stop_replica(h) -> None:
    h.lead()
    [f] = h.fetch({TP: 0}, replica_id=3)
    assert f[TP].error == ErrorCode.NOT_LEADER_OR_FOLLOWER
    [f] = h.fetch({TopicPartition("missing", 0): 0})
    assert f[TopicPartition("missing", 0)].error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    h.produce(batch(b"a"))
    log_dir = h.rm.get_partition(TP).log.dir
    h.rm.stop_replicas(0, 1, [StopReplicaPartitionState("t", 0, TOPIC_ID, 0, True)])
    assert h.rm.get_partition(TP) is None and h.log_manager.get_log(TP) is None
    assert log_dir != h.log_manager.log_dir_of(TP)


def test_list_offsets_epochs_and_delete_records(h) -> None:
    h.lead()
    h.produce(batch(b"a", b"b", ts=1000))
    h.produce(batch(b"c", ts=3000))
    h.produce(batch(b"d", ts=2000))
    rm = h.rm
    assert (rm.fetch_offset_for_timestamp(TP, -2, 0).offset, rm.fetch_offset_for_timestamp(TP, -1, 0).offset) == (0, 4)
    r = rm.fetch_offset_for_timestamp(TP, -3, 0)
    assert (r.offset, r.timestamp) == (2, 3000)
    r = rm.fetch_offset_for_timestamp(TP, 1500, 0)
    assert (r.error, r.offset, r.timestamp) == (0, 2, 3000)
    assert rm.fetch_offset_for_timestamp(TP, 9999, 0).offset == -1
    assert rm.fetch_offset_for_timestamp(TP, -1, 0, current_leader_epoch=5).error == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert rm.last_offset_for_leader_epoch(TP, -1, 0) == (0, 0, 4)
    assert rm.last_offset_for_leader_epoch(TP, -1, 7) == (0, -1, -1)
    h.lead(leader_epoch=1)
    h.produce(batch(b"e"))
    assert rm.last_offset_for_leader_epoch(TP, -1, 0) == (0, 0, 4)
    assert rm.last_offset_for_leader_epoch(TP, 0, 0)[0] == ErrorCode.FENCED_LEADER_EPOCH
    assert rm.delete_records(1000, {TP: 3}) == {TP: (3, 0)}
    assert rm.fetch_offset_for_timestamp(TP, -2, 0).offset == 3
    [f] = h.fetch({TP: 1})
    assert f[TP].error == ErrorCode.OFFSET_OUT_OF_RANGE
    assert rm.delete_records(1000, {TP: 99}) == {TP: (-1, ErrorCode.OFFSET_OUT_OF_RANGE)}
    assert rm.delete_records(1000, {TP: -1}) == {TP: (5, 0)}
