"""Which segment files, and which byte ranges of them, a `kafkapy-log-segments` read needs.

`SegmentPredicate` holds the filters Spark pushes down (topic, partition, offset and timestamp
ranges; spark/log_segments.LogSegmentsReader.pushFilters). `plan_segments` lists
`<topic>-<partition>/<base offset>.log` under the log dirs, drops topic-partitions and segments the
predicate excludes, and narrows each remaining segment to a byte range with its indexes, read
directly from the files (never opened for writing, so a copied log dir stays as it was):

- `.index` (8-byte entries: relative offset int32, position int32, big-endian): an entry (o, pos)
  says the batch at pos ends at offset o. The read starts at the last entry with o <= the lowest
  offset wanted and ends at the entry following the first one with o >= the end offset.
- `.timeindex` (12-byte entries: timestamp int64, relative offset int32): an entry (t, o) says no
  record up to offset o has a timestamp above t. For timestamp >= T the read starts after the last
  entry with t < T; a rolled segment whose last entry is below T is skipped entirely.
A preallocated (active) index ends with zero entries: entries stop where offsets stop increasing.
Rows are still filtered exactly after decoding; the index only narrows what is read.

Pure functions over files; thread-safe.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.spark.errors import KafkaSourceError

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_MAX = (1 << 63) - 1
_MIN = -(1 << 63)


@dataclass
class SegmentPredicate:
    """Conjunction of pushed-down bounds: offsets in [offset_from, offset_until), timestamps (ms) in
    [ts_from, ts_until], topic / partition membership (None: any)."""

    topics: set[str] | None = None
    partitions: set[int] | None = None
    partition_from: int = _MIN
    partition_until: int = _MAX
    offset_from: int = _MIN
    offset_until: int = _MAX
    ts_from: int = _MIN
    ts_until: int = _MAX
    pushed: list[str] = field(default_factory=list)

    def wants(self, tp: TopicPartition) -> bool:
        if self.topics is not None and tp.topic not in self.topics:
            return False
        if self.partitions is not None and tp.partition not in self.partitions:
            return False
        return self.partition_from <= tp.partition <= self.partition_until

    def push(self, f: Any) -> bool:
        """Take one of Spark's pushed filters if it bounds topic, partition, offset or timestamp."""
        from pyspark.sql.datasource import (
            EqualTo,
            GreaterThan,
            GreaterThanOrEqual,
            In,
            LessThan,
            LessThanOrEqual,
        )

        if not isinstance(f, EqualTo | In | GreaterThan | GreaterThanOrEqual | LessThan | LessThanOrEqual):
            return False  # Not, And, IsNull, StringStartsWith, ...: Spark evaluates them
        attr = f.attribute
        name = attr[0].lower() if len(attr) == 1 else ""
        if name not in ("topic", "partition", "offset", "timestamp"):
            return False
        values: list[Any] = list(f.value) if isinstance(f, In) else [f.value]
        if any(v is None for v in values):
            return False
        strict = 0 if name == "timestamp" else 1  # timestamps: bounds widened to whole ms, Spark re-checks
        lows = [_ms(v, ceil=False) for v in values] if name == "timestamp" else values
        highs = [_ms(v, ceil=True) for v in values] if name == "timestamp" else values
        if isinstance(f, EqualTo | In):
            if name == "topic":
                self.topics = set(values) if self.topics is None else self.topics & set(values)
            elif name == "partition":
                self.partitions = set(values) if self.partitions is None else self.partitions & set(values)
            else:
                self._bound(name, min(lows), max(highs) + 1)
        elif isinstance(f, GreaterThan | GreaterThanOrEqual) and name != "topic":
            self._bound(name, lows[0] + (strict if isinstance(f, GreaterThan) else 0), None)
        elif isinstance(f, LessThan | LessThanOrEqual) and name != "topic":
            self._bound(name, None, highs[0] + (1 - strict if isinstance(f, LessThan) else 1))
        else:
            return False
        self.pushed.append(repr(f))
        return True

    def _bound(self, name: str, lo: int | None, hi: int | None) -> None:
        """Narrow `name` to [lo, hi) (offsets, partitions) or [lo, hi - 1] (timestamps)."""
        if name == "offset":
            self.offset_from = max(self.offset_from, lo if lo is not None else _MIN)
            self.offset_until = min(self.offset_until, hi if hi is not None else _MAX)
        elif name == "partition":
            self.partition_from = max(self.partition_from, lo if lo is not None else _MIN)
            self.partition_until = min(self.partition_until, hi - 1 if hi is not None else _MAX)
        else:
            self.ts_from = max(self.ts_from, lo if lo is not None else _MIN)
            self.ts_until = min(self.ts_until, hi - 1 if hi is not None else _MAX)


def _ms(v: Any, ceil: bool) -> int:
    """A pushed timestamp literal in epoch ms, rounded outwards. Spark passes datetimes (naive ones in
    the worker's local time zone, as PySpark converts them)."""
    if not isinstance(v, datetime):
        return int(v)
    if v.tzinfo is None:
        v = v.astimezone(UTC)
    us = (v - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    return -(-us // 1000) if ceil else us // 1000


@dataclass(frozen=True)
class SegmentRange:
    """Bytes [start, end) of one segment file (end -1: to the end of the file)."""

    path: str
    topic: str
    partition: int
    base_offset: int
    start: int
    end: int


def _entries(path: str, entry: struct.Struct) -> list[tuple[int, int]]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    out: list[tuple[int, int]] = []
    for a, b in entry.iter_unpack(data[: len(data) - len(data) % entry.size]):
        rel = b if entry is _TIME_ENTRY else a
        if out and rel <= (out[-1][1] if entry is _TIME_ENTRY else out[-1][0]):
            break  # the zero-filled preallocated tail of an active segment's index
        out.append((a, b))
    return out


def _start_position(offsets: list[tuple[int, int]], relative: int) -> int:
    """Position of the last index entry whose offset is <= relative (0 if none)."""
    pos = 0
    for o, p in offsets:
        if o > relative:
            break
        pos = p
    return pos


def _end_position(offsets: list[tuple[int, int]], relative: int) -> int:
    """Position where batches ending at or after `relative` have all been passed: the entry after the
    first one with offset >= relative (-1: the end of the file)."""
    for i, (o, _p) in enumerate(offsets):
        if o >= relative:
            return offsets[i + 1][1] if i + 1 < len(offsets) else -1
    return -1


def narrow(path: str, base: int, next_base: int | None, pred: SegmentPredicate) -> SegmentRange | None:
    """The byte range of the segment at `path` the predicate needs (None: nothing in it)."""
    topic_partition = TopicPartition.parse(os.path.basename(os.path.dirname(path)))
    if next_base is not None and next_base <= pred.offset_from:
        return None
    if base >= pred.offset_until:
        return None
    stem = path[:-4]
    start_offset = max(pred.offset_from, base)
    if pred.ts_from != _MIN:
        times = _entries(stem + ".timeindex", _TIME_ENTRY)
        if times and next_base is not None and times[-1][0] < pred.ts_from:
            return None  # a rolled segment's last time entry is its largest timestamp
        below = [rel for t, rel in times if t < pred.ts_from]
        if below:
            start_offset = max(start_offset, base + below[-1] + 1)
    offsets = None
    start = 0
    if start_offset > base:
        offsets = _entries(stem + ".index", _OFFSET_ENTRY)
        start = _start_position(offsets, start_offset - base)
    end = -1
    if pred.offset_until != _MAX and (next_base is None or pred.offset_until < next_base):
        if offsets is None:
            offsets = _entries(stem + ".index", _OFFSET_ENTRY)
        end = _end_position(offsets, pred.offset_until - base)
    return SegmentRange(path, topic_partition.topic, topic_partition.partition, base, start, end)


def plan_segments(log_dirs: list[str], pred: SegmentPredicate) -> list[SegmentRange]:
    """Every needed segment range under the log dirs, in topic, partition, offset order."""
    out: list[SegmentRange] = []
    for log_dir in log_dirs:
        if not os.path.isdir(log_dir):
            raise KafkaSourceError(f"Log directory {log_dir} does not exist")
        for name in sorted(os.listdir(log_dir)):
            pdir = os.path.join(log_dir, name)
            if not os.path.isdir(pdir) or "-" not in name:
                continue
            try:
                tp = TopicPartition.parse(name)
            except ValueError:
                continue
            if not pred.wants(tp):
                continue
            bases = sorted(int(f[:-4]) for f in os.listdir(pdir) if f.endswith(".log") and f[:-4].isdigit())
            for i, base in enumerate(bases):
                nxt = bases[i + 1] if i + 1 < len(bases) else None
                r = narrow(os.path.join(pdir, f"{base:020d}.log"), base, nxt, pred)
                if r is not None:
                    out.append(r)
    return sorted(out, key=lambda r: (r.topic, r.partition, r.base_offset))
