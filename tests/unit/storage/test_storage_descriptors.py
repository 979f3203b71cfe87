"""Descriptors per partition: a mapped index holds none (FileMapping), so a log with one segment costs
one descriptor (its .log file), as in Kafka; indexes are mapped on first use (LazyIndex)."""

from __future__ import annotations

import gc
import os

from storage_helpers import START_MS, batch

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.log_manager import LogManager
from kafkapy.storage.offset_index import OffsetIndex

PARTITIONS = 200


def open_descriptors() -> int:
    gc.collect()  # files other tests left to the garbage collector
    return len(os.listdir("/proc/self/fd"))


def test_mapped_index_holds_no_descriptor(tmp_path) -> None:
    before = open_descriptors()
    indexes = [OffsetIndex(str(tmp_path / f"{i:020d}.index"), i * 100, 10 * 1024 * 1024) for i in range(50)]
    for i, idx in enumerate(indexes):
        idx.append(i * 100 + 5, 4096)
    assert open_descriptors() == before
    assert [idx.lookup(i * 100 + 7) for i, idx in enumerate(indexes)] == [(i * 100 + 5, 4096) for i in range(50)]
    for idx in indexes:
        idx.flush()
        idx.close()
    assert [os.path.getsize(idx.path) for idx in indexes] == [8] * 50  # trimmed to the one entry
    reopened = OffsetIndex(indexes[3].path, 300, 10 * 1024 * 1024)
    assert reopened.read_entries() == [(305, 4096)] and open_descriptors() == before
    reopened.close()


def test_one_descriptor_per_single_segment_partition(tmp_path) -> None:
    before = open_descriptors()
    mgr = LogManager([str(tmp_path / "d")], {}, MockTime(START_MS))
    mgr.startup()
    try:
        tps = [TopicPartition("fd", p) for p in range(PARTITIONS)]
        for tp in tps:
            mgr.get_or_create_log(tp).append_as_leader(batch(3), 0)
        # The lock file, plus per partition its .log (no index descriptor; the txn index is not open).
        assert open_descriptors() - before <= PARTITIONS + 5
        assert all(mgr.get_log(tp).log_end_offset == 3 for tp in tps)
    finally:
        mgr.shutdown()
    mgr = LogManager([str(tmp_path / "d")], {}, MockTime(START_MS))
    mgr.startup()
    try:
        assert open_descriptors() - before <= PARTITIONS + 5
        assert all(mgr.get_log(tp).log_end_offset == 3 for tp in tps)
    finally:
        mgr.shutdown()
    assert open_descriptors() <= before
