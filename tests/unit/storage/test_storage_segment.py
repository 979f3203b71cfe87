"""LogSegment: exact .log/.index/.timeindex bytes, reads of whole batches, recovery of torn/corrupt tails."""

from __future__ import annotations

import os
import struct

from storage_helpers import START_MS, batch, config, with_offsets

from kafkapy.common.time import MockTime
from kafkapy.storage.log_segment import LogSegment, RollParams, TimestampAndOffset
from kafkapy.storage.offset_index import OffsetPosition


def _segment(tmp_path, base=0, **cfg):
    cfg.setdefault("index_interval_bytes", 100)
    return LogSegment.open(str(tmp_path), base, config(**cfg), MockTime(START_MS))


def _fill(seg, batches):
    """Append stored batches (offsets assigned from seg.base_offset); returns their bytes."""
    stored, offset = [], seg.base_offset
    for raw, n in batches:
        b = with_offsets(raw, offset, 3)
        last = offset + n - 1
        max_ts = struct.unpack_from(">q", b, 35)[0]
        seg.append(last, max_ts, last, b)
        stored.append(b)
        offset = last + 1
    return stored


def _expected_index(stored, base, interval):
    """Kafka's rule: an entry (last offset, position) when > interval bytes were appended since the last one."""
    entries, since, pos = [], 0, 0
    times, max_ts, max_off = [], -1, -1
    for b in stored:
        last = struct.unpack_from(">q", b, 0)[0] + struct.unpack_from(">i", b, 23)[0]
        ts = struct.unpack_from(">q", b, 35)[0]
        if ts > max_ts:
            max_ts, max_off = ts, last
        if since > interval:
            entries.append((last - base, pos))
            if not times or max_ts > times[-1][0]:
                times.append((max_ts, max_off - base))
            since = 0
        since += len(b)
        pos += len(b)
    if not times or max_ts > times[-1][0]:
        times.append((max_ts, max_off - base))  # written when the segment closes
    return (b"".join(struct.pack(">ii", *e) for e in entries), b"".join(struct.pack(">qi", *t) for t in times))


BATCHES = [(batch(3, START_MS + 10 * i, value_size=20 + i), 3) for i in range(12)]


def test_segment_file_names_and_exact_bytes(tmp_path):
    seg = _segment(tmp_path, base=42)
    stored = _fill(seg, BATCHES)
    seg.close()
    prefix = str(tmp_path / "00000000000000000042")
    assert sorted(os.listdir(tmp_path)) == ["00000000000000000042.index", "00000000000000000042.log",
                                            "00000000000000000042.timeindex"]
    assert open(prefix + ".log", "rb").read() == b"".join(stored)
    index, timeindex = _expected_index(stored, 42, 100)
    assert len(index) > 0
    assert open(prefix + ".index", "rb").read() == index
    assert open(prefix + ".timeindex", "rb").read() == timeindex


def test_translate_offset_and_reads_return_whole_batches(tmp_path):
    seg = _segment(tmp_path)
    stored = _fill(seg, BATCHES)
    sizes = [len(b) for b in stored]
    positions = [sum(sizes[:i]) for i in range(len(sizes))]
    found = seg.translate_offset(7)  # offsets 6..8 are batch 2
    assert (found.offset, found.position, found.size) == (8, positions[2], sizes[2])
    assert seg.translate_offset(36) is None

    whole = seg.read(7, 10_000)
    assert whole.records.position == positions[2]
    assert whole.records.read_bytes() == b"".join(stored[2:])

    # max_size cuts at the last whole batch that fits
    limit = sizes[2] + sizes[3] + sizes[4] // 2
    part = seg.read(6, limit)
    assert part.records.read_bytes() == stored[2] + stored[3]

    # a first batch larger than max_size: only with min_one_message
    assert seg.read(6, 10, min_one_message=True).records.read_bytes() == stored[2]
    small = seg.read(6, 10, min_one_message=False)
    assert small.records is None and small.first_entry_incomplete

    # max_position (e.g. the high watermark's batch) bounds the read
    bounded = seg.read(0, 10_000, max_position=positions[4])
    assert bounded.records.read_bytes() == b"".join(stored[:4])


def test_find_offset_by_timestamp_and_max_timestamp(tmp_path):
    seg = _segment(tmp_path)
    _fill(seg, BATCHES)  # batch i holds timestamps START+10i .. START+10i+2 at offsets 3i..3i+2
    assert seg.find_offset_by_timestamp(START_MS + 31) == (10, START_MS + 31)
    assert seg.find_offset_by_timestamp(START_MS + 33) == (12, START_MS + 40)
    assert seg.find_offset_by_timestamp(START_MS - 5) == (0, START_MS)
    assert seg.find_offset_by_timestamp(START_MS + 10_000) is None
    assert seg.find_offset_by_timestamp(START_MS, starting_offset=4) == (4, START_MS + 11)
    found = seg.offset_of_max_timestamp_record()
    assert found == TimestampAndOffset(35, START_MS + 112) and found.leader_epoch == 3


def _crash_and_recover(tmp_path, damage):
    clean_dir, crash_dir = tmp_path / "clean", tmp_path / "crash"
    clean_dir.mkdir()
    crash_dir.mkdir()
    seg = _segment(crash_dir)
    stored = _fill(seg, BATCHES)
    log_path = crash_dir / "00000000000000000000.log"
    assert os.path.getsize(crash_dir / "00000000000000000000.index") > 1000  # still preallocated: no close
    damage(log_path, stored)
    reopened = LogSegment.open(str(crash_dir), 0, config(index_interval_bytes=100), MockTime(START_MS),
                               file_already_exists=True)
    truncated = reopened.recover()
    reopened.close()
    good = _segment(clean_dir)
    _fill(good, BATCHES[:-1])
    good.close()
    for suffix in (".log", ".index", ".timeindex"):
        name = "00000000000000000000" + suffix
        assert (crash_dir / name).read_bytes() == (clean_dir / name).read_bytes(), suffix
    return truncated, stored


def test_recover_truncates_garbage_after_last_batch(tmp_path):
    def damage(path, stored):
        with open(path, "r+b") as f:  # replace the last batch by garbage of the same length
            f.seek(sum(len(b) for b in stored[:-1]))
            f.write(b"\xff" * len(stored[-1]))
    truncated, stored = _crash_and_recover(tmp_path, damage)
    assert truncated == len(stored[-1])


def test_recover_truncates_torn_last_batch(tmp_path):
    def damage(path, stored):
        os.truncate(path, sum(len(b) for b in stored) - len(stored[-1]) // 2)
    truncated, stored = _crash_and_recover(tmp_path, damage)
    assert truncated == len(stored[-1]) - len(stored[-1]) // 2


def test_recover_truncates_batch_with_flipped_byte(tmp_path):
    def damage(path, stored):
        pos = sum(len(b) for b in stored) - 3
        data = bytearray(path.read_bytes())
        data[pos] ^= 0x01
        path.write_bytes(bytes(data))
    truncated, stored = _crash_and_recover(tmp_path, damage)
    assert truncated == len(stored[-1])


def test_recover_of_clean_segment_keeps_everything(tmp_path):
    seg = _segment(tmp_path)
    stored = _fill(seg, BATCHES)
    seg.close()
    before = {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path)}
    again = LogSegment.open(str(tmp_path), 0, config(index_interval_bytes=100), MockTime(), file_already_exists=True)
    assert again.recover() == 0
    assert again.read_next_offset() == 36
    again.close()
    assert {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path)} == before
    assert (tmp_path / "00000000000000000000.log").read_bytes() == b"".join(stored)


def test_truncate_to_removes_batches_and_index_entries(tmp_path):
    seg = _segment(tmp_path)
    stored = _fill(seg, BATCHES)
    removed = seg.truncate_to(15)  # offsets 15..17 are batch 5: it and later go
    assert removed == sum(len(b) for b in stored[5:])
    assert seg.size == sum(len(b) for b in stored[:5])
    assert all(off < 15 for off, _ in seg.offset_index.read_entries())
    assert seg.read_next_offset() == 15
    assert seg.max_timestamp_so_far == START_MS + 42
    assert seg.offset_index.lookup(100) == OffsetPosition(*seg.offset_index.read_entries()[-1])


def test_should_roll_rules(tmp_path):
    seg = _segment(tmp_path, base=0, segment_index_bytes=8 * 3)
    raw = with_offsets(batch(1), 0, 0)
    params = RollParams(max_segment_ms=1000, max_segment_bytes=10_000, max_timestamp_in_messages=START_MS,
                        max_offset_in_messages=0, messages_size=len(raw), now=START_MS)
    assert not seg.should_roll(params)
    seg.append(0, START_MS, 0, raw)
    assert seg.should_roll(params._replace(max_segment_bytes=2 * len(raw) - 1))  # size
    assert not seg.should_roll(params._replace(max_timestamp_in_messages=START_MS + 1000))
    assert seg.should_roll(params._replace(max_timestamp_in_messages=START_MS + 1001))  # time, by batch timestamps
    assert seg.should_roll(params._replace(max_offset_in_messages=2**31))  # relative offset overflow
    seg.roll_jitter_ms = 500  # segment.jitter.ms takes up to this much off segment.ms
    assert seg.should_roll(params._replace(max_timestamp_in_messages=START_MS + 501))
    assert not seg.should_roll(params._replace(max_timestamp_in_messages=START_MS + 500))


def test_recover_rejects_batches_over_max_message_size(tmp_path):
    seg = _segment(tmp_path)
    stored = _fill(seg, BATCHES[:3])
    assert seg.recover(max_message_size=len(stored[1]) - 12) > 0
    assert seg.size < sum(len(b) for b in stored)
