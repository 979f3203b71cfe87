"""Log: leader/follower appends (exact bytes), reads, ListOffsets lookups, rolling, truncation, epochs."""

from __future__ import annotations

import os
import struct
import threading

import pytest
from storage_helpers import START_MS, batch, config, crc_ok, open_log, with_offsets

from kafkapy.common.time import MockTime
from kafkapy.record.batch_header import read_batch_header
from kafkapy.record.compression import CompressionType
from kafkapy.record.memory_records import CorruptRecordError, InvalidRecordError, MemoryRecords
from kafkapy.storage.errors import (
    InvalidTimestampError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
    UnexpectedAppendOffsetError,
)
from kafkapy.storage.log import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP
from kafkapy.storage.log_retention import delete_old_segments


def _log_bytes(log) -> bytes:
    return b"".join(open(s.log.path, "rb").read() for s in log.segments)


def test_leader_append_rewrites_offsets_and_epoch_per_batch(tmp_path):
    log = open_log(tmp_path / "t-0")
    raws = [batch(3, START_MS), batch(1, START_MS + 5), batch(4, START_MS + 9)]
    infos = [log.append_as_leader(r, leader_epoch=7) for r in raws]
    assert [(i.first_offset, i.last_offset) for i in infos] == [(0, 2), (3, 3), (4, 7)]
    assert infos[2].max_timestamp == START_MS + 12 and infos[2].offset_of_max_timestamp == 7
    assert infos[2].log_append_time == -1 and infos[2].num_batches == 1 and infos[2].num_records == 4
    assert log.log_end_offset == 8
    expected = with_offsets(raws[0], 0, 7) + with_offsets(raws[1], 3, 7) + with_offsets(raws[2], 4, 7)
    assert _log_bytes(log) == expected
    assert all(crc_ok(with_offsets(r, 0, 7)) for r in raws)  # offsets/epoch are outside the CRC
    assert log.leader_epoch_cache.epoch_entries() == [(7, 0)]


def test_leader_append_log_append_time_sets_bit_max_timestamp_and_crc(tmp_path):
    time = MockTime(START_MS + 5000)
    log = open_log(tmp_path / "t-0", time, config(message_timestamp_type="LogAppendTime"))
    info = log.append_as_leader(batch(2, START_MS), leader_epoch=1)
    assert info.log_append_time == START_MS + 5000 and info.max_timestamp == START_MS + 5000
    stored = _log_bytes(log)
    h = read_batch_header(stored)
    assert h.timestamp_type == 1 and h.max_timestamp == START_MS + 5000
    assert h.base_timestamp == START_MS  # untouched, as Kafka's setMaxTimestamp does
    assert crc_ok(stored)
    records = [r for b in MemoryRecords(stored).batches() for r in b.records()]
    assert [r.timestamp for r in records] == [START_MS + 5000] * 2


def test_leader_append_rejections(tmp_path):
    log = open_log(tmp_path / "t-0", cfg=config(max_message_bytes=200))
    with pytest.raises(MessageTooLargeError):
        log.append_as_leader(batch(1, value_size=300), 0)
    bad = bytearray(batch(2))
    bad[-1] ^= 1
    with pytest.raises(CorruptRecordError):
        log.append_as_leader(bytes(bad), 0)
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(with_offsets(batch(1), 5, 0), 0)  # clients send baseOffset 0
    small = open_log(tmp_path / "u-0", cfg=config(internal_segment_bytes=100))
    with pytest.raises(RecordListTooLargeError):
        small.append_as_leader(batch(3, value_size=50), 0)
    assert log.log_end_offset == 0 and log.size_in_bytes == 0


def test_compression_type_topic_config_recompresses(tmp_path):
    log = open_log(tmp_path / "t-0", cfg=config(compression_type="gzip"))
    log.append_as_leader(batch(5, value_size=100), 2)
    stored = _log_bytes(log)
    h = read_batch_header(stored)
    assert h.compression_codec == CompressionType.GZIP and h.records_count == 5 and h.base_offset == 0
    records = list(MemoryRecords(stored).records())
    assert [r.value for r in records] == [bytes([65 + i]) * 100 for i in range(5)]
    assert [r.offset for r in records] == [0, 1, 2, 3, 4]


def test_read_ranges_out_of_range_and_high_watermark(tmp_path):
    log = open_log(tmp_path / "t-0", cfg=config(internal_segment_bytes=600))  # 3 batches a segment
    raws = [batch(2, START_MS + i, value_size=40) for i in range(10)]
    for r in raws:
        log.append_as_leader(r, 0)
    assert log.num_segments > 2
    stored = [with_offsets(r, 2 * i, 0) for i, r in enumerate(raws)]
    # every read is whole batches from the batch holding the offset, within one segment
    got = log.read(5, 10_000)
    assert got.records.read_bytes().startswith(stored[2])
    everything = b""
    offset = 0
    while offset < log.log_end_offset:
        chunk = log.read(offset, 10_000).records.read_bytes()
        everything += chunk
        offset = read_batch_header(chunk, len(chunk) - len(stored[0])).last_offset + 1
    assert everything == b"".join(stored)
    # the high watermark bounds the read
    hw_read = log.read(0, 10_000, max_offset=4)
    assert hw_read.records.read_bytes() == stored[0] + stored[1]
    assert log.read(4, 10_000, max_offset=4).records is None
    assert log.read(20, 100).records is None  # at the log end offset: empty, not an error
    with pytest.raises(OffsetOutOfRangeError):
        log.read(21, 100)
    log.update_high_watermark(20)
    log.maybe_increment_log_start_offset(6)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(5, 100)


def test_list_offsets_lookups(tmp_path):
    log = open_log(tmp_path / "t-0", cfg=config(internal_segment_bytes=400, index_interval_bytes=50))
    # timestamps: batch i holds START + 100*i + (0, 1, 2), except batch 3 which is the newest
    stamps = [START_MS + 100 * i for i in range(8)]
    stamps[3] = START_MS + 5000
    for ts in stamps:
        log.append_as_leader(batch(3, ts, value_size=30), 4)
    assert log.num_segments > 1
    assert log.fetch_offset_by_timestamp(START_MS + 101) == (4, START_MS + 101)
    assert log.fetch_offset_by_timestamp(START_MS + 103) == (6, START_MS + 200)
    assert log.fetch_offset_by_timestamp(START_MS + 450) == (9, START_MS + 5000)
    assert log.fetch_offset_by_timestamp(START_MS + 6000) is None
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == (0, -1)
    latest = log.fetch_offset_by_timestamp(LATEST_TIMESTAMP)
    assert latest == (24, -1) and latest.leader_epoch == 4
    top = log.fetch_offset_by_timestamp(MAX_TIMESTAMP)
    assert top == (11, START_MS + 5002) and top.leader_epoch == 4


def test_roll_on_size_and_on_time(tmp_path):
    time = MockTime(START_MS)
    log = open_log(tmp_path / "t-0", time, config(internal_segment_bytes=250, segment_ms=1000))
    one = batch(1, START_MS, value_size=40)
    log.append_as_leader(one, 0)
    log.append_as_leader(one, 0)
    log.append_as_leader(one, 0)  # > 250 bytes would follow: rolls
    assert [s.base_offset for s in log.segments] == [0, 2]
    assert os.path.getsize(log.segments[0].offset_index_path) == 0  # trimmed on roll
    assert os.path.getsize(log.segments[0].time_index_path) == 12  # the roll-time entry
    # time: batch timestamps more than segment.ms after the segment's first batch
    log.append_as_leader(batch(1, START_MS + 1001, value_size=1), 0)
    assert [s.base_offset for s in log.segments] == [0, 2, 3]
    # segments without timestamps roll on wall-clock age (MockTime)
    log2 = open_log(tmp_path / "u-0", time, config(segment_ms=1000))
    log2.append_as_leader(batch(1, -1), 0)
    time.advance(1001)
    log2.append_as_leader(batch(1, -1), 0)
    assert [s.base_offset for s in log2.segments] == [0, 1]


def test_roll_when_index_is_full(tmp_path):
    # 24 bytes: 3 offset-index slots, 2 time-index slots (one kept for the roll-time entry)
    log = open_log(tmp_path / "t-0", cfg=config(segment_index_bytes=24, index_interval_bytes=0))
    for i in range(4):
        log.append_as_leader(batch(1, START_MS + i), 0)
    # entry per append after the first; the time index is full after one entry
    assert [s.base_offset for s in log.segments] == [0, 2]
    assert log.segments[0].time_index.read_entries() == [(START_MS + 1, 1)]
    assert log.segments[0].offset_index.read_entries() == [(1, len(batch(1)))]


def test_truncate_to_and_truncate_fully(tmp_path):
    log = open_log(tmp_path / "t-0", cfg=config(internal_segment_bytes=300))
    raws = [batch(2, START_MS + i, value_size=40) for i in range(8)]
    for i, r in enumerate(raws):
        log.append_as_leader(r, 1 if i < 4 else 2)
    assert log.leader_epoch_cache.epoch_entries() == [(1, 0), (2, 8)]
    assert log.truncate_to(16) is False
    assert log.truncate_to(6)
    assert log.log_end_offset == 6
    assert _log_bytes(log) == b"".join(with_offsets(r, 2 * i, 1) for i, r in enumerate(raws[:3]))
    assert log.leader_epoch_cache.epoch_entries() == [(1, 0)]
    assert all(s.base_offset <= 6 for s in log.segments)
    info = log.append_as_leader(raws[0], 3)
    assert info.first_offset == 6
    log.truncate_fully_and_start_at(100)
    assert (log.log_start_offset, log.log_end_offset, log.num_segments) == (100, 100, 1)
    assert log.leader_epoch_cache.epoch_entries() == []
    assert [n for n in os.listdir(log.dir) if n.endswith(".log")] == ["00000000000000000100.log"]
    assert log.append_as_leader(raws[1], 4).first_offset == 100


def test_follower_append_keeps_offsets_and_epochs(tmp_path):
    leader = open_log(tmp_path / "l-0")
    for epoch in (1, 1, 3):
        leader.append_as_leader(batch(2), epoch)
    fetched = leader.read(0, 100_000).records.read_bytes()
    follower = open_log(tmp_path / "f-0")
    info = follower.append_as_follower(fetched + fetched[:30])  # a partial trailing batch is dropped
    assert (info.first_offset, info.last_offset, info.num_batches) == (0, 5, 3)
    assert _log_bytes(follower) == fetched
    assert follower.leader_epoch_cache.epoch_entries() == [(1, 0), (3, 4)]
    with pytest.raises(UnexpectedAppendOffsetError):
        follower.append_as_follower(fetched)
    assert follower.end_offset_for_epoch(1) == (1, 4)
    assert follower.end_offset_for_epoch(2) == (1, 4)
    assert follower.end_offset_for_epoch(3) == (3, 6)
    assert follower.end_offset_for_epoch(0) == (0, 0)
    assert follower.end_offset_for_epoch(9) == (-1, -1)


def test_retention_by_time_and_size_and_delete_records(tmp_path):
    time = MockTime(START_MS)
    log = open_log(tmp_path / "t-0", time, config(internal_segment_bytes=350, retention_ms=10_000))
    for i in range(6):
        log.append_as_leader(batch(1, START_MS + i * 5000, value_size=90), 0)
    bases = [s.base_offset for s in log.segments]
    assert bases == [0, 2, 4]
    time.advance(16_000)  # now = START+16000: segment 0 (largest ts START+5000) is older than 10s
    assert delete_old_segments(log) == 1
    assert [s.base_offset for s in log.segments] == [2, 4]
    assert log.log_start_offset == 2
    assert not any(n.startswith("00000000000000000000") for n in os.listdir(log.dir))

    sized = open_log(tmp_path / "s-0", time, config(internal_segment_bytes=350, retention_bytes=600))
    for _ in range(6):
        sized.append_as_leader(batch(1, time.milliseconds(), value_size=90), 0)
    assert sized.size_in_bytes > 900
    assert delete_old_segments(sized) == 1  # drops whole segments while the rest still exceeds 600
    assert [s.base_offset for s in sized.segments] == [2, 4] and sized.log_start_offset == 2

    # DeleteRecords: bounded by the high watermark, whole segments below the new start go
    sized.update_high_watermark(5)
    with pytest.raises(OffsetOutOfRangeError):
        sized.maybe_increment_log_start_offset(6)
    assert sized.maybe_increment_log_start_offset(5)
    assert [s.base_offset for s in sized.segments] == [4]
    assert sized.log_start_offset == 5 and sized.read(5, 1000).records is not None


def test_delete_delay_renames_then_removes(tmp_path):
    time = MockTime(START_MS)
    log = open_log(tmp_path / "t-0", time, config(internal_segment_bytes=250, retention_ms=1000,
                                                   file_delete_delay_ms=60_000))
    for _ in range(3):
        log.append_as_leader(batch(1, START_MS, value_size=90), 0)
    time.advance(2000)
    assert delete_old_segments(log) == 3  # one batch a segment; the active one too (after a roll)
    assert [s.base_offset for s in log.segments] == [3]
    assert "00000000000000000000.log.deleted" in os.listdir(log.dir)
    time.advance(59_999)
    delete_old_segments(log)
    assert "00000000000000000000.log.deleted" in os.listdir(log.dir)
    time.advance(1)
    delete_old_segments(log)
    assert not any(n.endswith(".deleted") for n in os.listdir(log.dir))


def test_active_segment_deleted_by_retention_rolls_first(tmp_path):
    time = MockTime(START_MS)
    log = open_log(tmp_path / "t-0", time, config(retention_ms=1000))
    log.append_as_leader(batch(2, START_MS), 0)
    time.advance(5000)
    assert delete_old_segments(log) == 1
    assert [s.base_offset for s in log.segments] == [2]
    assert (log.log_start_offset, log.log_end_offset) == (2, 2)


def test_flush_advances_recovery_point_and_flush_messages(tmp_path):
    log = open_log(tmp_path / "t-0", cfg=config(flush_messages=3))
    log.append_as_leader(batch(2), 0)
    assert log.recovery_point == 0 and log.unflushed_messages == 2
    log.append_as_leader(batch(1), 0)
    assert log.recovery_point == 3  # flush.messages reached: flushed on append
    log.append_as_leader(batch(1), 0)
    log.flush()
    assert log.recovery_point == 4


def test_reopen_after_crash_recovers_and_keeps_offsets(tmp_path):
    time = MockTime(START_MS)
    cfg = config(internal_segment_bytes=300, index_interval_bytes=50)
    log = open_log(tmp_path / "t-0", time, cfg)
    raws = [batch(2, START_MS + i, value_size=40) for i in range(9)]
    for r in raws:
        log.append_as_leader(r, 5)
    expected = _log_bytes(log)
    active = log.active_segment.log.path
    with open(active, "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x00\x63\x00\x00\x01\x00garbage")  # a torn next batch
    # no close: a crash. Reopen as after an unclean shutdown with a stale recovery point.
    again = open_log(tmp_path / "t-0", time, cfg, recovery_point=0, had_clean_shutdown=False)
    assert again.log_end_offset == 18 and _log_bytes(again) == expected
    assert again.leader_epoch_cache.epoch_entries() == [(5, 0)]
    assert again.append_as_leader(raws[0], 6).first_offset == 18
    again.close()
    clean = open_log(tmp_path / "t-0", time, cfg)
    assert clean.log_end_offset == 20 and clean.recovery_point == 20
    assert struct.unpack_from(">q", _log_bytes(clean), len(expected))[0] == 18


def test_timestamp_bounds_reject_far_timestamps(tmp_path):
    time = MockTime(START_MS)
    log = open_log(tmp_path / "t-0", time, config(message_timestamp_before_max_ms=1000,
                                                   message_timestamp_after_max_ms=500))
    log.append_as_leader(batch(1, START_MS - 1000), 0)
    log.append_as_leader(batch(1, START_MS + 500), 0)
    with pytest.raises(InvalidTimestampError):
        log.append_as_leader(batch(1, START_MS - 1001), 0)
    with pytest.raises(InvalidTimestampError):
        log.append_as_leader(batch(2, START_MS + 500), 0)  # second record is 501 ms ahead
    assert log.log_end_offset == 2


def test_concurrent_reads_see_only_whole_valid_batches(tmp_path):
    log = open_log(tmp_path / "t-0", cfg=config(internal_segment_bytes=20_000, index_interval_bytes=200))
    raws = [batch(3, START_MS + i, value_size=20 + i % 50) for i in range(400)]
    errors: list[str] = []
    done = threading.Event()

    def reader() -> None:
        reads = 0
        while not done.is_set() and reads < 20_000:
            end = log.log_end_offset
            if end == 0:
                continue
            start = (reads * 7) % end
            try:
                info = log.read(start, 3000)
            except OffsetOutOfRangeError as exc:
                errors.append(str(exc))
                return
            reads += 1
            if info.records is None:
                continue
            data = info.records.read_bytes()
            pos = 0
            while pos < len(data):
                h = read_batch_header(data, pos)
                if not crc_ok(data[pos:pos + h.size_in_bytes]) or h.last_offset < start and pos == 0:
                    errors.append(f"bad batch at {pos} reading {start}")
                    return
                pos += h.size_in_bytes
            if pos != len(data):
                errors.append("partial batch returned")
                return

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for r in raws:
            log.append_as_leader(r, 0)
    finally:
        done.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    assert errors == []
    assert log.log_end_offset == 1200 and log.num_segments > 3
