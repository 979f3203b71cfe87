"""OffsetIndex / TimeIndex: preallocation, exact entry bytes, lookups, truncation, reopen, sanity checks."""

from __future__ import annotations

import os
import struct

import pytest

from kafkapy.storage.errors import CorruptIndexError
from kafkapy.storage.offset_index import InvalidOffsetError, OffsetIndex, OffsetPosition
from kafkapy.storage.time_index import TimeIndex, TimestampOffset


def test_new_offset_index_is_preallocated_zero_filled_and_rounded_down(tmp_path):
    path = str(tmp_path / "00000000000000000100.index")
    idx = OffsetIndex(path, 100, max_index_size=1003)
    assert os.path.getsize(path) == 1000  # rounded down to a multiple of 8
    assert open(path, "rb").read() == b"\x00" * 1000
    assert idx.entries == 0 and idx.max_entries == 125
    idx.close()
    assert os.path.getsize(path) == 0  # trimmed to its (zero) entries


def test_offset_index_entries_bytes_and_lookup(tmp_path):
    path = str(tmp_path / "00000000000000000100.index")
    idx = OffsetIndex(path, 100, max_index_size=80)
    for offset, pos in [(103, 0), (110, 4200), (131, 8500)]:
        idx.append(offset, pos)
    assert idx.lookup(99) == OffsetPosition(100, 0)  # below the first entry
    assert idx.lookup(103) == OffsetPosition(103, 0)
    assert idx.lookup(109) == OffsetPosition(103, 0)
    assert idx.lookup(110) == OffsetPosition(110, 4200)
    assert idx.lookup(10_000) == OffsetPosition(131, 8500)
    assert idx.lookup_by_position(8499) == OffsetPosition(110, 4200)
    assert idx.lookup_by_position(-1) is None
    assert idx.fetch_upper_bound_offset(4200, 1) == OffsetPosition(131, 8500)
    assert idx.last_offset == 131
    with pytest.raises(InvalidOffsetError):
        idx.append(131, 9000)
    idx.close()
    assert open(path, "rb").read() == struct.pack(">iiiiii", 3, 0, 10, 4200, 31, 8500)


def test_offset_index_reopen_takes_whole_file_as_entries_and_resize(tmp_path):
    path = str(tmp_path / "00000000000000000000.index")
    idx = OffsetIndex(path, 0, max_index_size=800)
    idx.append(5, 100)
    idx.append(9, 200)
    idx.close()
    again = OffsetIndex(path, 0, max_index_size=800)
    assert again.entries == 2 and again.is_full()
    assert again.read_entries() == [(5, 100), (9, 200)]
    again.resize(800)  # an active segment's index grows back
    assert os.path.getsize(path) == 800 and not again.is_full()
    again.append(12, 300)
    again.close()
    assert open(path, "rb").read() == struct.pack(">iiiiii", 5, 100, 9, 200, 12, 300)


@pytest.mark.parametrize(("target", "remaining"), [(0, []), (5, []), (6, [(5, 100)]), (9, [(5, 100)]),
                                                   (10, [(5, 100), (9, 200)]), (100, [(5, 100), (9, 200)])])
def test_offset_index_truncate_to(tmp_path, target, remaining):
    idx = OffsetIndex(str(tmp_path / "0.index"), 0, max_index_size=800)
    idx.append(5, 100)
    idx.append(9, 200)
    idx.truncate_to(target)
    assert idx.read_entries() == remaining
    assert idx.last_offset == (remaining[-1][0] if remaining else 0)


def test_offset_index_full_and_overflow(tmp_path):
    idx = OffsetIndex(str(tmp_path / "0.index"), 10, max_index_size=16)
    idx.append(11, 0)
    idx.append(12, 10)
    assert idx.is_full()
    with pytest.raises(ValueError):
        idx.append(13, 20)
    assert idx.can_append_offset(10 + 2**31 - 1)
    assert not idx.can_append_offset(10 + 2**31)
    assert not idx.can_append_offset(9)


def test_offset_index_sanity_check(tmp_path):
    path = tmp_path / "00000000000000000050.index"
    path.write_bytes(struct.pack(">ii", 1, 0) + b"\x00\x00\x00")  # 11 bytes: not whole entries
    idx = OffsetIndex(str(path), 50)
    with pytest.raises(CorruptIndexError):
        idx.sanity_check()
    path2 = tmp_path / "00000000000000000060.index"
    path2.write_bytes(struct.pack(">ii", -5, 0))  # last offset below the base offset
    with pytest.raises(CorruptIndexError):
        OffsetIndex(str(path2), 60).sanity_check()


def test_time_index_bytes_lookup_and_growth_only(tmp_path):
    path = str(tmp_path / "00000000000000000100.timeindex")
    idx = TimeIndex(path, 100, max_index_size=125)
    assert os.path.getsize(path) == 120
    assert idx.last_entry() == TimestampOffset(-1, 100)
    idx.maybe_append(1000, 102)
    idx.maybe_append(1000, 105)  # same timestamp: ignored
    idx.maybe_append(2000, 110)
    assert idx.entries == 2
    assert idx.lookup(999) == TimestampOffset(-1, 100)
    assert idx.lookup(1500) == TimestampOffset(1000, 102)
    assert idx.lookup(2000) == TimestampOffset(2000, 110)
    with pytest.raises(ValueError):
        idx.maybe_append(1500, 120)  # timestamps never go back
    with pytest.raises(InvalidOffsetError):
        idx.maybe_append(3000, 109)
    idx.close()
    assert open(path, "rb").read() == struct.pack(">qiqi", 1000, 2, 2000, 10)


def test_time_index_reserves_last_slot(tmp_path):
    idx = TimeIndex(str(tmp_path / "0.timeindex"), 0, max_index_size=36)  # 3 slots
    idx.maybe_append(1, 1)
    idx.maybe_append(2, 2)
    assert idx.is_full()
    with pytest.raises(ValueError):
        idx.maybe_append(3, 3)
    idx.maybe_append(3, 3, skip_full_check=True)  # the roll-time entry
    assert idx.read_entries() == [(1, 1), (2, 2), (3, 3)]


def test_time_index_truncate_and_sanity(tmp_path):
    idx = TimeIndex(str(tmp_path / "00000000000000000000.timeindex"), 0, max_index_size=120)
    for ts, off in [(10, 1), (20, 5), (30, 9)]:
        idx.maybe_append(ts, off)
    idx.truncate_to(5)
    assert idx.read_entries() == [(10, 1)]
    assert idx.last_entry() == TimestampOffset(10, 1)
    idx.sanity_check()
    bad = tmp_path / "00000000000000000000.bad"
    bad.write_bytes(struct.pack(">qiqi", 50, 1, 40, 2))
    with pytest.raises(CorruptIndexError):
        TimeIndex(str(bad), 0).sanity_check()
