"""ReplicaVerificationTool's per-partition check on real record batches: agreement moves the verified
offset to the end below every replica's HW, a CRC difference is reported, an offset difference stops."""

from __future__ import annotations

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.tools.replica_verification import (
    ReplicaFetch,
    ReplicaMismatchError,
    java_timestamp,
    verify_partition,
)

TP = TopicPartition("t", 0)


def batches(*specs: tuple[int, list[bytes]]) -> bytes:
    out = b""
    for base, values in specs:
        b = MemoryRecordsBuilder(base_offset=base)
        for v in values:
            b.append(1000, None, v)
        out += b.build()
    return out


def now() -> str:
    return "NOW"


def test_agreeing_replicas_advance_to_the_lowest_high_watermark() -> None:
    data = batches((0, [b"a", b"b"]), (2, [b"c"]), (3, [b"d", b"e"]))
    per = {1: ReplicaFetch(5, data), 2: ReplicaFetch(3, data)}  # replica 2's HW is behind
    assert verify_partition(TP, 0, per, now) == (3, [])
    assert verify_partition(TP, 2, per, now) == (3, [])  # restarts inside the fetched range
    per[2] = ReplicaFetch(5, data)
    assert verify_partition(TP, 3, per, now) == (5, [])


def test_checksum_difference_is_reported_and_offset_difference_stops() -> None:
    ours = batches((0, [b"a", b"b"]))
    theirs = batches((0, [b"a", b"X"]))
    offset, lines = verify_partition(TP, 0, {1: ReplicaFetch(2, ours), 2: ReplicaFetch(2, theirs)}, now)
    assert offset == 2 and len(lines) == 1
    assert lines[0].startswith("NOW: partition t-0 has unmatched checksum at offset 1; replica 1's checksum ")
    shorter = batches((0, [b"a"]), (1, [b"b"]))
    with pytest.raises(ReplicaMismatchError, match="^NOW: partition t-0: replica 1's offset 1 doesn't match "
                       "replica 2's offset 0$"):
        verify_partition(TP, 0, {1: ReplicaFetch(2, ours), 2: ReplicaFetch(2, shorter)}, now)


def test_java_timestamp_format() -> None:
    import re

    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,007", java_timestamp(1_700_000_000_007))
