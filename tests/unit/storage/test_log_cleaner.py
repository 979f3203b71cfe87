"""LogCleaner on real Log directories under MockTime: latest value per key, offsets kept, tombstones and
delete horizons, aborted transactions, the offset map bound, checkpoints, and the dirty-ratio choice."""

from __future__ import annotations

import os
import time as wall

import pytest

from kafkapy.common.time import MockTime
from kafkapy.record.control_record import ControlRecordType, build_end_txn_marker_batch
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.storage.checkpoint_file import CLEANER_OFFSET_CHECKPOINT_FILE, OffsetCheckpointFile
from kafkapy.storage.log import Log
from kafkapy.storage.log_cleaner import CleanerConfig, LogCleaner, Throttler
from kafkapy.storage.offset_map import SkimpyOffsetMap
from tests.unit.storage.storage_helpers import START_MS, config

COMPACT = dict(cleanup_policy="compact", internal_segment_bytes=2048, min_cleanable_dirty_ratio=0.01,
               delete_retention_ms=1000)


def keyed_batch(pairs: list[tuple[bytes | None, bytes | None]], ts: int = START_MS, compression: int = 0,
                **kw) -> bytes:
    b = MemoryRecordsBuilder(compression=compression, **kw)
    for i, (k, v) in enumerate(pairs):
        b.append(ts + i, k, v)
    return b.build()


def all_records(lg: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    out = []
    for seg in lg.segments:
        for b in MemoryRecords(seg.log.read(0, seg.size)).batches():
            if b.is_control_batch:
                continue
            out.extend((r.offset, r.key, r.value) for r in b.records())
    return out


def make_cleaner(lg: Log, time: MockTime, buffer: int = 1 << 20) -> LogCleaner:
    cfg = CleanerConfig(num_threads=1, dedupe_buffer_size=buffer, io_buffer_size=4096)
    return LogCleaner(cfg, [os.path.dirname(lg.dir)], lambda: [lg], time)


@pytest.fixture
def time() -> MockTime:
    return MockTime(START_MS)


def open_compacted(tmp_path, time: MockTime, **overrides) -> Log:
    props = dict(COMPACT)
    props.update(overrides)
    return Log.open(str(tmp_path / "t-0"), config(**props), time)


def fill(lg: Log, rounds: int = 20, keys: int = 10, compression: int = 0) -> dict[bytes, tuple[int, bytes]]:
    """Write `rounds` values for each key; returns key -> (offset, value) of the latest one."""
    latest: dict[bytes, tuple[int, bytes]] = {}
    for r in range(rounds):
        pairs = [(b"key-%d" % k, b"value-%d-%d" % (k, r)) for k in range(keys)]
        info = lg.append_as_leader(keyed_batch(pairs, compression=compression), 0)
        for i, (k, v) in enumerate(pairs):
            latest[k] = (info.first_offset + i, v)
    lg.roll()
    return latest


def test_offset_map_put_get_overwrite_and_bound() -> None:
    m = SkimpyOffsetMap(16 * 64, 0.5)
    assert m.slots == 64 and m.max_entries == 32
    for i in range(32):
        m.put(b"k%d" % i, i)
    m.put(b"k3", 100)
    assert m.get(b"k3") == 100 and m.get(b"k4") == 4 and m.get(b"nope") == -1
    assert m.is_full and m.latest_offset == 100
    with pytest.raises(OverflowError):
        m.put(b"another", 101)
    m.clear()
    assert m.size == 0 and m.get(b"k3") == -1


@pytest.mark.parametrize("compression", [0, 1, 4])
def test_keeps_latest_value_per_key_with_offsets(tmp_path, time, compression) -> None:
    lg = open_compacted(tmp_path, time)
    latest = fill(lg, compression=compression)
    before = all_records(lg)
    size_before = lg.size_in_bytes
    cleaner = make_cleaner(lg, time)
    assert cleaner.clean_once()
    after = all_records(lg)
    assert sorted(after) == sorted((off, k, v) for k, (off, v) in latest.items())
    assert [r[0] for r in after] == sorted(r[0] for r in after)  # offsets in order, unchanged
    assert set(after) <= set(before)
    assert lg.size_in_bytes < size_before
    assert lg.log_end_offset == 200
    # The checkpoint holds the new first dirty offset; nothing is left to clean.
    cp = OffsetCheckpointFile(str(tmp_path / CLEANER_OFFSET_CHECKPOINT_FILE)).read()
    assert list(cp.values()) == [200]
    assert not cleaner.clean_once()
    # Reads through the Log's index still find every kept offset.
    for off, _k, v in after:
        info = lg.read(off, 1 << 20)
        recs = [r for b in MemoryRecords(info.records.file.read(info.records.position, info.records.length)).batches()
                for r in b.records()] if info.records is not None else []
        assert any(r.offset == off and r.value == v for r in recs)
    assert not [n for n in os.listdir(lg.dir) if n.endswith((".cleaned", ".swap"))]


def test_reopen_after_cleaning_and_dirty_ratio(tmp_path, time) -> None:
    lg = open_compacted(tmp_path, time)
    fill(lg, rounds=30)
    cleaner = make_cleaner(lg, time)
    assert cleaner.clean_once()
    fill(lg, rounds=1)  # a little dirty data over a large clean part
    lg.update_config(config(**dict(COMPACT, min_cleanable_dirty_ratio=0.9)))
    assert not cleaner.clean_once()
    lg.update_config(config(**COMPACT))
    latest = fill(lg, rounds=2)
    assert cleaner.clean_once()
    expected = sorted((off, k, v) for k, (off, v) in latest.items())
    assert all_records(lg) == expected
    lg.close()
    reopened = Log.open(str(tmp_path / "t-0"), config(**COMPACT), time, had_clean_shutdown=False)
    assert all_records(reopened) == expected


def test_tombstones_kept_until_delete_horizon_then_removed(tmp_path, time) -> None:
    lg = open_compacted(tmp_path, time)
    lg.append_as_leader(keyed_batch([(b"a", b"1"), (b"b", b"1"), (b"c", b"1")]), 0)
    lg.append_as_leader(keyed_batch([(b"a", None), (b"b", b"2")]), 0)
    lg.roll()
    cleaner = make_cleaner(lg, time)
    assert cleaner.clean_once()
    assert all_records(lg) == [(2, b"c", b"1"), (3, b"a", None), (4, b"b", b"2")]
    # delete.retention.ms later (1 s) a new pass removes the tombstone; the timestamps stay.
    time.advance(1001)
    lg.append_as_leader(keyed_batch([(b"c", b"2")], ts=START_MS + 5000), 0)
    lg.roll()
    assert cleaner.clean_once()
    assert all_records(lg) == [(4, b"b", b"2"), (5, b"c", b"2")]
    stamps = [r.timestamp for seg in lg.segments for b in MemoryRecords(seg.log.read(0, seg.size)).batches()
              for r in b.records()]
    assert stamps == [START_MS + 1, START_MS + 5000]


def test_tombstone_survives_when_horizon_not_passed(tmp_path, time) -> None:
    lg = open_compacted(tmp_path, time, delete_retention_ms=60_000)
    lg.append_as_leader(keyed_batch([(b"a", b"1"), (b"a", None)]), 0)
    lg.roll()
    cleaner = make_cleaner(lg, time)
    assert cleaner.clean_once()
    time.advance(30_000)
    lg.append_as_leader(keyed_batch([(b"z", b"1")]), 0)
    lg.roll()
    assert cleaner.clean_once()
    assert all_records(lg) == [(1, b"a", None), (2, b"z", b"1")]


def test_aborted_transaction_records_removed_committed_kept(tmp_path, time) -> None:
    lg = open_compacted(tmp_path, time)
    lg.append_as_leader(keyed_batch([(b"x", b"plain")]), 0)
    lg.append_as_leader(keyed_batch([(b"a", b"aborted"), (b"b", b"aborted")], producer_id=7, producer_epoch=0,
                                    base_sequence=0, is_transactional=True), 0)
    lg.append_as_leader(build_end_txn_marker_batch(ControlRecordType.ABORT, 7, 0, 0, START_MS), 0,
                        origin="coordinator")
    lg.append_as_leader(keyed_batch([(b"c", b"committed")], producer_id=8, producer_epoch=0,
                                    base_sequence=0, is_transactional=True), 0)
    lg.append_as_leader(build_end_txn_marker_batch(ControlRecordType.COMMIT, 8, 0, 0, START_MS), 0,
                        origin="coordinator")
    lg.append_as_leader(keyed_batch([(b"y", b"plain")]), 0)
    lg.roll()
    assert make_cleaner(lg, time).clean_once()
    assert all_records(lg) == [(0, b"x", b"plain"), (4, b"c", b"committed"), (6, b"y", b"plain")]
    # Producer 7's last batch stays as an empty header (its sequence survives); markers keep their offsets.
    batches = [(b.base_offset, b.last_offset, b.producer_id, b.records_count, b.is_control_batch)
               for seg in lg.segments for b in MemoryRecords(seg.log.read(0, seg.size)).batches()]
    assert (1, 2, 7, 0, False) in batches
    assert any(b[0] == 3 and b[4] for b in batches) and any(b[0] == 5 and b[4] for b in batches)


def test_bounded_offset_map_cleans_in_several_passes(tmp_path, time) -> None:
    lg = open_compacted(tmp_path, time, internal_segment_bytes=4096)
    latest = fill(lg, rounds=4, keys=100)
    cleaner = make_cleaner(lg, time, buffer=16 * 64)  # 57 entries: fewer than the 100 keys
    passes = 0
    while cleaner.clean_once():
        passes += 1
        assert passes < 50
    assert passes > 1
    assert sorted(all_records(lg)) == sorted((off, k, v) for k, (off, v) in latest.items())


def test_null_key_records_are_removed_by_cleaning(tmp_path, time) -> None:
    lg = open_compacted(tmp_path, time, cleanup_policy="delete")  # written before the policy changed
    lg.append_as_leader(keyed_batch([(None, b"nokey"), (b"k", b"v")]), 0)
    lg.roll()
    lg.update_config(config(**COMPACT))
    assert make_cleaner(lg, time).clean_once()
    assert all_records(lg) == [(1, b"k", b"v")]


def test_throttler_sleeps_on_the_injected_time(time) -> None:
    t = Throttler(1000.0, time, check_interval_ms=100)
    start = time.milliseconds()
    t.maybe_throttle(500)
    time.advance(100)
    t.maybe_throttle(500)  # 1000 bytes in 100 ms at 1000 B/s: sleep 900 ms
    assert time.milliseconds() - start == 1000


def test_max_compaction_lag_forces_cleaning_below_the_dirty_ratio(tmp_path, time) -> None:
    lg = open_compacted(tmp_path, time)
    fill(lg, rounds=30)
    cleaner = make_cleaner(lg, time)
    assert cleaner.clean_once()
    fill(lg, rounds=1)
    lg.update_config(config(**dict(COMPACT, min_cleanable_dirty_ratio=0.9, max_compaction_lag_ms=10_000)))
    assert not cleaner.clean_once()
    time.advance(20_000)  # the dirty records' timestamps are START_MS..: older than max.compaction.lag.ms now
    assert cleaner.clean_once()


def test_min_compaction_lag_keeps_recent_segments_dirty(tmp_path, time) -> None:
    lg = open_compacted(tmp_path, time, min_compaction_lag_ms=60_000)
    fill(lg, rounds=10)
    cleaner = make_cleaner(lg, time)
    assert not cleaner.clean_once()  # every record is younger than min.compaction.lag.ms
    time.advance(120_000)
    assert cleaner.clean_once()
    assert len(all_records(lg)) == 10


def test_compacted_topic_refuses_records_without_key(tmp_path, time) -> None:
    from kafkapy.common.errors import InvalidRecordError

    lg = open_compacted(tmp_path, time)
    with pytest.raises(InvalidRecordError) as info:
        lg.append_as_leader(keyed_batch([(b"k", b"v"), (None, b"x"), (None, b"y")], compression=2), 0)
    msg = "Compacted topic cannot accept message without key in topic partition t-0"
    assert info.value.record_errors == [(1, msg), (2, msg)]
    assert str(info.value) == (
        "One or more records have been rejected due to 2 record errors in total, and only showing the first "
        f"three errors at most: [RecordError(batchIndex=1, message='{msg}'), RecordError(batchIndex=2, "
        f"message='{msg}')]")
    assert lg.log_end_offset == 0
    lg.append_as_leader(keyed_batch([(b"k", None)]), 0)  # a tombstone has a key: accepted
    assert lg.log_end_offset == 1


def test_log_manager_cleaner_threads_and_dynamic_reconfigure(tmp_path, time) -> None:
    from kafkapy.common.topic_partition import TopicPartition
    from kafkapy.storage.log_manager import LogManager

    lm = LogManager([str(tmp_path / "logs")], {"log.cleaner.backoff.ms": "10"}, time)
    lm.startup()
    try:
        cleaner = lm.start_log_cleaner()
        assert [t.name for t in cleaner._threads] == ["kafka-log-cleaner-thread-0"]
        lg = lm.get_or_create_log(TopicPartition("t", 0), config(**COMPACT))
        latest = fill(lg)
        deadline = wall.monotonic() + 30
        while len(all_records(lg)) != len(latest) and wall.monotonic() < deadline:
            wall.sleep(0.02)
        assert sorted(all_records(lg)) == sorted((off, k, v) for k, (off, v) in latest.items())
        lm.update_broker_defaults({"log.cleaner.backoff.ms": "10", "log.cleaner.io.max.bytes.per.second": "1000"})
        assert cleaner.throttler.rate == 1000.0 and len(cleaner._threads) == 1
        lm.update_broker_defaults({"log.cleaner.backoff.ms": "10", "log.cleaner.threads": "2"})
        assert [t.name for t in cleaner._threads] == ["kafka-log-cleaner-thread-0", "kafka-log-cleaner-thread-1"]
        assert cleaner.throttler.rate == float("inf")
    finally:
        lm.shutdown()
    assert not lm.cleaner._threads


def control_batches(lg: Log) -> list[int]:
    return [b.base_offset for seg in lg.segments for b in MemoryRecords(seg.log.read(0, seg.size)).batches()
            if b.is_control_batch]


def test_commit_marker_removed_after_its_data_and_delete_horizon(tmp_path, time) -> None:
    lg = open_compacted(tmp_path, time)
    lg.append_as_leader(keyed_batch([(b"a", b"in-txn")], producer_id=8, producer_epoch=0, base_sequence=0,
                                    is_transactional=True), 0)
    lg.append_as_leader(build_end_txn_marker_batch(ControlRecordType.COMMIT, 8, 0, 0, START_MS), 0,
                        origin="coordinator")
    lg.append_as_leader(keyed_batch([(b"a", b"newer"), (b"b", b"1")]), 0)
    lg.roll()
    lg.update_high_watermark(lg.log_end_offset)  # the transaction is complete below the HW: stable
    time.advance(10)
    assert lg.remove_expired_producers(time.milliseconds(), 1) == 1  # producer 8 is gone
    cleaner = make_cleaner(lg, time)
    assert cleaner.clean_once()
    # The transaction's data went; its marker stays until its delete horizon (now + delete.retention.ms).
    assert all_records(lg) == [(2, b"a", b"newer"), (3, b"b", b"1")]
    assert control_batches(lg) == [1]
    time.advance(1001)
    lg.append_as_leader(keyed_batch([(b"c", b"1")]), 0)
    lg.roll()
    lg.update_high_watermark(lg.log_end_offset)
    assert cleaner.clean_once()
    assert control_batches(lg) == []
    assert all_records(lg) == [(2, b"a", b"newer"), (3, b"b", b"1"), (4, b"c", b"1")]


def test_compact_delete_policy_also_applies_retention(tmp_path) -> None:
    # Retention of a cleaned-out (empty) segment falls back to its file's mtime: use a clock near the real one.
    time = MockTime(int(wall.time() * 1000))
    lg = open_compacted(tmp_path, time, cleanup_policy="compact,delete", retention_ms=60_000)
    now = time.milliseconds()
    for r in range(10):
        lg.append_as_leader(keyed_batch([(b"key-%d" % k, b"old-%d" % r) for k in range(10)], ts=now), 0)
    lg.roll()
    assert make_cleaner(lg, time).clean_once()
    assert len(all_records(lg)) == 10
    time.advance(120_000)
    info = lg.append_as_leader(keyed_batch([(b"key-1", b"new")], ts=time.milliseconds()), 0)
    lg.roll()
    from kafkapy.storage.log_retention import delete_old_segments

    assert delete_old_segments(lg, time.milliseconds()) > 0
    assert all_records(lg) == [(info.first_offset, b"key-1", b"new")]


@pytest.mark.parametrize("compression", [1, 3, 4])
def test_batches_larger_than_a_decompression_chunk_are_cleaned_as_streams(tmp_path, time, compression) -> None:
    """Each batch decompresses to ~1.2 MB (several 256 KiB chunks; one 300 KB value spans chunks): the cleaner
    reads it piece by piece and writes the kept records, a tombstone's delete horizon re-basing timestamps."""
    lg = open_compacted(tmp_path, time, internal_segment_bytes=20 << 20, max_message_bytes=4 << 20)
    big = b"B" * 300_000
    first = [(b"k%04d" % i, b"old-%04d" % i + bytes(100)) for i in range(4000)] + [(b"big", big)]
    second = [(b"k%04d" % i, b"new-%04d" % i) for i in range(0, 4000, 2)] + [(b"gone", None)]
    lg.append_as_leader(keyed_batch(first, compression=compression), 0)
    lg.append_as_leader(keyed_batch(second, ts=START_MS + 10_000, compression=compression), 0)
    lg.roll()
    assert make_cleaner(lg, time, buffer=8 << 20).clean_once()
    expected = ([(i, b"k%04d" % i, b"old-%04d" % i + bytes(100)) for i in range(1, 4000, 2)] + [(4000, b"big", big)]
                + [(4001 + j, b"k%04d" % i, b"new-%04d" % i) for j, i in enumerate(range(0, 4000, 2))]
                + [(6001, b"gone", None)])
    assert all_records(lg) == expected
    stamps = [(r.offset, r.timestamp) for seg in lg.segments for b in MemoryRecords(seg.log.read(0, seg.size)).batches()
              for r in b.records()]
    assert stamps[0] == (1, START_MS + 1) and stamps[-1] == (6001, START_MS + 10_000 + 2000)
