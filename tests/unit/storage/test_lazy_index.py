"""Lazy indexes (Kafka's LazyIndex) at load: a loaded partition's `.index` / `.timeindex` are neither opened
nor mapped until first read, a resize asked for meanwhile is applied when they are, and a segment never
written has no index files to load or rebuild; recovery of an empty segment empties its indexes by path."""

from __future__ import annotations

import gc
import logging
import os

from storage_helpers import START_MS, batch, config, with_offsets

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.lazy_index import LazyIndex
from kafkapy.storage.log_manager import LogManager
from kafkapy.storage.meta_properties import CLEAN_SHUTDOWN_FILE
from kafkapy.storage.offset_index import OffsetIndex

PARTITIONS = 50
MAX_INDEX = 10 * 1024 * 1024


def open_descriptors() -> int:
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


def mapped_index_files(under: str) -> set[str]:
    """The index files under `under` that this process has mapped (/proc/self/maps)."""
    with open("/proc/self/maps") as f:
        paths = {line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6}
    return {p for p in paths if p.startswith(under) and p.endswith((".index", ".timeindex"))}


def manager(path: str) -> LogManager:
    mgr = LogManager([path], {}, MockTime(START_MS))
    mgr.startup()
    return mgr


def test_loaded_indexes_not_opened_or_mapped_until_first_read(tmp_path) -> None:
    data = str(tmp_path / "d")
    tps = [TopicPartition("lazy", p) for p in range(PARTITIONS)]
    mgr = manager(data)
    for tp in tps:
        mgr.get_or_create_log(tp).append_as_leader(batch(3), 0)
    mgr.shutdown()
    assert os.path.getsize(os.path.join(data, "lazy-7", f"{0:020d}.index")) == 0  # trimmed at close

    before = open_descriptors()
    mgr = manager(data)
    try:
        assert mapped_index_files(data) == set()
        # one descriptor per partition (its .log) plus the dir lock: no index is open
        assert open_descriptors() - before == PARTITIONS + 1
        segments = {tp: mgr.get_log(tp).segments[0] for tp in tps}
        assert not any(s.indexes_loaded for s in segments.values())
        assert {tp: mgr.get_log(tp).log_end_offset for tp in tps} == dict.fromkeys(tps, 3)

        read = mgr.get_log(tps[7]).read(0, 1 << 20)
        assert read.records is not None and read.records.read_bytes() == with_offsets(batch(3), 0, 0)
        offset_index = os.path.join(data, "lazy-7", f"{0:020d}.index")
        assert mapped_index_files(data) == {offset_index}  # the one index read, mapped
        assert open_descriptors() - before == PARTITIONS + 1  # and its descriptor closed once mapped
        # the active segment's resize asked for at load applies now, the entries it held are kept
        assert os.path.getsize(offset_index) == MAX_INDEX - MAX_INDEX % 8
        assert [s.indexes_loaded for s in segments.values()] == [tp == tps[7] for tp in tps]
    finally:
        mgr.shutdown()
    assert mapped_index_files(data) == set() and open_descriptors() <= before


def test_pending_resize_applied_when_made(tmp_path) -> None:
    path = str(tmp_path / f"{100:020d}.index")
    index = OffsetIndex(path, 100, 800)
    index.append(105, 4096)
    index.close()
    assert os.path.getsize(path) == 8

    lazy = LazyIndex(OffsetIndex, path, 100, 800)
    lazy.resize(800)
    assert not lazy.is_loaded and os.path.getsize(path) == 8  # not touched yet
    made = lazy.get()
    assert lazy.is_loaded and os.path.getsize(path) == 800
    assert made.read_entries() == [(105, 4096)] and made.lookup(110) == (105, 4096)
    lazy.close()
    assert os.path.getsize(path) == 8

    renamed = str(tmp_path / f"{100:020d}.index.deleted")
    never = LazyIndex(OffsetIndex, path, 100, 800)
    never.rename_to(renamed)  # by path: never opened
    assert not never.is_loaded and os.listdir(tmp_path) == [os.path.basename(renamed)]
    assert never.delete_if_exists() and os.listdir(tmp_path) == []


def test_segment_never_written_loads_without_index_files(tmp_path, caplog) -> None:
    data = str(tmp_path / "d")
    mgr = manager(data)
    mgr.get_or_create_log(TopicPartition("empty", 0))
    mgr.shutdown()
    files = sorted(os.listdir(os.path.join(data, "empty-0")))
    assert f"{0:020d}.index" not in files and f"{0:020d}.log" in files

    caplog.set_level(logging.WARNING, logger="kafka.log.LogLoader")
    mgr = manager(data)
    try:
        assert [r.getMessage() for r in caplog.records] == []  # nothing missing, nothing rebuilt
        lg = mgr.get_log(TopicPartition("empty", 0))
        assert lg.log_end_offset == 0
        info = lg.append_as_leader(batch(2), 0)
        assert (info.first_offset, info.last_offset) == (0, 1)
        assert lg.read(0, 1 << 20).records.read_bytes() == with_offsets(batch(2), 0, 0)
    finally:
        mgr.shutdown()
    assert os.path.getsize(os.path.join(data, "empty-0", f"{0:020d}.index")) == 0


def test_unclean_recovery_of_empty_segment_empties_its_indexes_unmapped(tmp_path) -> None:
    data = str(tmp_path / "d")
    mgr = manager(data)
    lg = mgr.get_or_create_log(TopicPartition("crash", 0), config(index_interval_bytes=1))
    lg.append_as_leader(batch(1), 0)
    mgr.shutdown()
    seg_dir = os.path.join(data, "crash-0")
    # A crash left an empty .log beside stale index entries (e.g. a truncation not yet trimmed).
    os.truncate(os.path.join(seg_dir, f"{0:020d}.log"), 0)
    with open(os.path.join(seg_dir, f"{0:020d}.index"), "wb") as f:
        f.write(b"\x00\x00\x00\x05\x00\x00\x10\x00")
    os.unlink(os.path.join(data, CLEAN_SHUTDOWN_FILE))

    mgr = manager(data)
    try:
        lg = mgr.get_log(TopicPartition("crash", 0))
        assert lg.log_end_offset == 0 and not lg.segments[0].indexes_loaded
        assert mapped_index_files(data) == set()
        assert os.path.getsize(os.path.join(seg_dir, f"{0:020d}.index")) == 0
        assert lg.segments[0].offset_index.read_entries() == []
    finally:
        mgr.shutdown()
