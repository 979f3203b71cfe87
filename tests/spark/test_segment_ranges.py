"""spark/segment_ranges and spark/log_segments.read_segment without Spark: reading a segment in chunks
(batches straddling chunk ends, a batch larger than a chunk) yields exactly the records of a whole-file
decode; index narrowing by offset and timestamp never drops a wanted record and skips what it can; a
preallocated index's zero tail is ignored."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.spark import log_segments
from kafkapy.spark.log_segments import read_segment
from kafkapy.spark.schema import arrow_schema, struct_type
from kafkapy.spark.segment_ranges import _OFFSET_ENTRY, SegmentPredicate, _entries, plan_segments

OUT = pa.schema([("topic", pa.string()), ("partition", pa.int32()), ("segment", pa.string()),
                 ("batchBaseOffset", pa.int64()), ("batchBytes", pa.int32()), ("codec", pa.string()),
                 ("magic", pa.int32()), ("isControl", pa.bool_()), ("offset", pa.int64()),
                 ("timestamp", pa.timestamp("us", tz="UTC")), ("key", pa.binary()), ("valueSize", pa.int32()),
                 ("producerId", pa.int64())])
KAFKA = arrow_schema(struct_type(False))


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> str:
    from kafkapy.storage.log import Log
    from kafkapy.storage.log_config import LogConfig

    d = tmp_path_factory.mktemp("ranges")
    log = Log.open(str(d / "t-0"), LogConfig.from_props({"segment.bytes": 40_000, "index.interval.bytes": 1000}))
    try:
        for b in range(120):
            builder = MemoryRecordsBuilder(compression=2 if b % 3 == 0 else 0)  # some snappy batches
            rng = random.Random(b)
            for i in range(40 if b != 50 else 400):  # batch 50 is larger than the test's chunk sizes
                builder.append(1_700_000_000_000 + b * 1000 + i, b"k%d" % (i % 7), rng.randbytes(i % 90))
            log.append_as_leader(builder.build(), leader_epoch=0)
        log.flush()
    finally:
        log.close()
    return str(d)


def _all_records(log_dir: str) -> list[tuple[int, int, bytes | None, int]]:
    out = []
    for f in sorted(Path(log_dir, "t-0").glob("*.log")):
        for b in MemoryRecords(f.read_bytes()).batches():
            out += [(r.offset, r.timestamp, r.key, len(r.value or b"")) for r in b.records()]
    return out


def _read(log_dir: str, pred: SegmentPredicate) -> list[tuple[int, int, bytes | None, int]]:
    rows = []
    for part in plan_segments([log_dir], pred):
        for rb in read_segment(part, pred, KAFKA, OUT):
            d = rb.to_pydict()
            rows += [(o, int(t.timestamp() * 1000), k, v) for o, t, k, v in
                     zip(d["offset"], d["timestamp"], d["key"], d["valueSize"], strict=True)]
    return rows


def test_chunked_reads_equal_a_whole_decode(log_dir, monkeypatch) -> None:
    want = _all_records(log_dir)
    assert len(list(Path(log_dir, "t-0").glob("*.log"))) > 3
    for chunk in (1 << 24, 5000, 777):
        monkeypatch.setattr(log_segments, "CHUNK_BYTES", chunk)
        assert _read(log_dir, SegmentPredicate()) == want


def test_offset_and_timestamp_narrowing(log_dir) -> None:
    want = _all_records(log_dir)
    lo, hi = want[len(want) // 2][0], want[len(want) // 2 + 900][0]
    pred = SegmentPredicate(offset_from=lo, offset_until=hi)
    assert _read(log_dir, pred) == [r for r in want if lo <= r[0] < hi]
    parts = plan_segments([log_dir], pred)
    assert len(parts) < len(list(Path(log_dir, "t-0").glob("*.log")))
    assert parts[0].start > 0
    since = 1_700_000_000_000 + 90 * 1000
    pred = SegmentPredicate(ts_from=since)
    assert _read(log_dir, pred) == [r for r in want if r[1] >= since]
    assert len(plan_segments([log_dir], pred)) < len(list(Path(log_dir, "t-0").glob("*.log")))
    assert plan_segments([log_dir], SegmentPredicate(topics={"other"})) == []


def test_a_zero_filled_index_tail_is_ignored(log_dir, tmp_path) -> None:
    index = sorted(Path(log_dir, "t-0").glob("*.index"))[0]
    copy = tmp_path / index.name
    shutil.copy(index, copy)
    entries = _entries(str(copy), _OFFSET_ENTRY)
    assert entries and all(a[0] < b[0] for a, b in zip(entries, entries[1:], strict=False))
    with open(copy, "ab") as f:
        f.write(b"\0" * 8 * 100)
    assert _entries(str(copy), _OFFSET_ENTRY) == entries
    assert os.path.getsize(copy) == os.path.getsize(index) + 800
