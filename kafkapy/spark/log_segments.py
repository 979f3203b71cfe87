"""`LogSegmentsDataSource` ("kafkapy-log-segments"): a broker's log directories read offline by Spark.

`spark.read.format("kafkapy-log-segments").load("/var/lib/kafka/data")` (several dirs: comma-separated
path) lists `<topic>-<partition>/<base offset>.log` segment files written by Kafka or kafkapy; each
segment (or the byte range of it that a query needs) is one Spark input partition, decoded in an
executor with kafkapy's record decoders (magic 2 columnar through record_columns; magic 0/1 through
record.legacy_record). No broker is needed and the files are only read. A partial batch at a segment's
end (a torn write) is left out, as Kafka's recovery would truncate it.

Filters on topic, partition, offset and timestamp are pushed down (`pushFilters`; Spark needs
spark.sql.python.filterPushdown.enabled=true, which `kafkapy.spark.register`/`install` and
`kafkapy spark-submit` set): only the matching topic-partitions and segments are listed and each
segment is narrowed to a byte range with its .index / .timeindex (spark/segment_ranges.py); rows are
filtered exactly after decoding and Spark re-checks the filters. A segment is read in chunks of about
16 MiB cut at batch boundaries, so memory stays bounded whatever the segment size.

One row per record: topic string, partition int, segment string, batchBaseOffset long, batchBytes int
(the whole batch's size on disk), codec string (none/gzip/snappy/lz4/zstd), magic int, isControl
boolean, offset long, timestamp timestamp, key binary, valueSize int (-1 for a null value),
producerId long (-1 without one).

Thread-safety: partitions() on the driver, read() once per task; nothing shared.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kafkapy.spark.errors import KafkaSourceError, spark_facing
from kafkapy.spark.segment_ranges import SegmentPredicate, SegmentRange, plan_segments

if TYPE_CHECKING:
    from kafkapy.record.legacy_record import LegacyRecordBatch
    from kafkapy.record.memory_records import DefaultRecordBatch

NAME = "kafkapy-log-segments"
SCHEMA = (
    "topic string, partition int, segment string, batchBaseOffset long, batchBytes int, codec string, "
    "magic int, isControl boolean, offset long, timestamp timestamp, key binary, valueSize int, producerId long"
)
_MIN_OFFSET = -(1 << 63)
CHUNK_BYTES = 16 << 20
_LENGTH = struct.Struct(">qi")  # baseOffset, batchLength (the first 12 bytes of every batch, any magic)


class SegmentPartition(InputPartition):
    def __init__(self, part: SegmentRange | None, pred: SegmentPredicate) -> None:
        super().__init__(part.path if part else "")
        self.range = part
        self.pred = pred


def complete_batches(data: bytes | bytearray | memoryview) -> int:
    """Length of the prefix of `data` made of whole batches (a batch is 12 + batchLength bytes)."""
    pos, n = 0, len(data)
    while pos + 12 <= n:
        _, length = _LENGTH.unpack_from(data, pos)
        if length <= 0 or pos + 12 + length > n:
            break
        pos += 12 + length
    return pos


class _Columns:
    """Record columns of one chunk plus each batch's facts, expanded per record at build time."""

    def __init__(self, part: SegmentRange, kafka_schema: Any) -> None:
        from kafkapy.spark.record_columns import RecordColumns

        self.records = RecordColumns(part.topic, part.partition, False, kafka_schema)
        self.counts: list[int] = []
        self.facts: list[tuple[int, int, str, int, bool, int]] = []

    def add(self, batch: DefaultRecordBatch | LegacyRecordBatch) -> None:
        before = len(self.records)
        self.records.add_batch(batch)
        n = len(self.records) - before
        if n:
            self.counts.append(n)
            self.facts.append((batch.base_offset, batch.size_in_bytes, batch.compression.lower_name, batch.magic,
                               batch.is_control_batch, batch.producer_id))

    def per_record(self, i: int, type_: Any) -> Any:
        """Column `i` of the batch facts, one value per record."""
        from kafkapy.spark.record_columns import repeat_per_batch

        return repeat_per_batch(self.counts, [f[i] for f in self.facts], type_)


def _filtered(rb: Any, pred: SegmentPredicate) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    keep = None
    if pred.offset_from > _MIN_OFFSET or pred.offset_until < (1 << 63) - 1:
        off = rb.column("offset")
        keep = pc.and_(pc.greater_equal(off, pa.scalar(pred.offset_from, pa.int64())),
                       pc.less(off, pa.scalar(pred.offset_until, pa.int64())))
    if pred.ts_from > _MIN_OFFSET or pred.ts_until < (1 << 63) - 1:
        us = rb.column("timestamp").cast(pa.int64())
        lo = pa.scalar(max(pred.ts_from, _MIN_OFFSET // 1000) * 1000, pa.int64())
        hi = pa.scalar(min(pred.ts_until, ((1 << 63) - 1) // 1000) * 1000, pa.int64())
        t = pc.and_(pc.greater_equal(us, lo), pc.less_equal(us, hi))
        keep = t if keep is None else pc.and_(keep, t)
    return rb if keep is None else rb.filter(keep)


def _decode(data: Any, part: SegmentRange, pred: SegmentPredicate, kafka_schema: Any,
            out_schema: Any) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    from kafkapy.record.memory_records import MemoryRecords

    segment = os.path.basename(part.path)
    v2, legacy = _Columns(part, kafka_schema), _Columns(part, kafka_schema)
    for batch in MemoryRecords(data).batches():
        (v2 if batch.magic >= 2 else legacy).add(batch)
    facts = [(0, pa.int64()), (1, pa.int32()), (2, pa.string()), (3, pa.int32()), (4, pa.bool_())]
    if len(v2.records):
        # Magic 2: fields straight from the walked positions; the values themselves are never gathered.
        f = v2.records.walked_fields(with_value=False)
        n = len(f["offset"])
        ts = pc.multiply(f["timestamp"], pa.scalar(1000, pa.int64())).cast(pa.timestamp("us", tz="UTC"))
        out = pa.RecordBatch.from_arrays([
            pa.repeat(pa.scalar(part.topic), n), pa.repeat(pa.scalar(part.partition, pa.int32()), n),
            pa.repeat(pa.scalar(segment), n), *(v2.per_record(i, t) for i, t in facts), f["offset"], ts, f["key"],
            f["value_length"].cast(pa.int32()), v2.per_record(5, pa.int64()),
        ], schema=out_schema)
        out = _filtered(out, pred)
        if out.num_rows:
            yield out
    for rb in legacy.records.build(_MIN_OFFSET, None):
        n = rb.num_rows
        value_size = pc.fill_null(pc.binary_length(rb.column("value")), pa.scalar(-1, pa.int32()))
        out = pa.RecordBatch.from_arrays([
            rb.column("topic"), rb.column("partition"), pa.repeat(pa.scalar(segment), n),
            *(legacy.per_record(i, t) for i, t in facts), rb.column("offset"),
            rb.column("timestamp"), rb.column("key"), value_size.cast(pa.int32()), legacy.per_record(5, pa.int64()),
        ], schema=out_schema)
        out = _filtered(out, pred)
        if out.num_rows:
            yield out


def read_segment(part: SegmentRange, pred: SegmentPredicate, kafka_schema: Any, out_schema: Any) -> Iterator[Any]:
    """The records of `part`'s byte range, in chunks of about CHUNK_BYTES cut at batch boundaries."""
    with open(part.path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        limit = size if part.end < 0 else min(part.end, size)
        f.seek(part.start)
        pos = part.start
        carry = b""
        while pos < limit:
            chunk = f.read(min(CHUNK_BYTES, limit - pos))
            if not chunk:
                break
            pos += len(chunk)
            data = carry + chunk if carry else chunk
            whole = complete_batches(data)
            if whole == 0 and len(data) >= 12:
                # One batch larger than the chunk: read the rest of it.
                _, length = _LENGTH.unpack_from(data, 0)
                if length > 0 and 12 + length <= len(data) + (limit - pos):
                    rest = f.read(12 + length - len(data))
                    pos += len(rest)
                    data += rest
                    whole = complete_batches(data)
            if whole:
                yield from _decode(memoryview(data)[:whole], part, pred, kafka_schema, out_schema)
            carry = data[whole:]
            if whole == 0 and len(carry) >= CHUNK_BYTES * 4:
                break  # not a batch boundary: a corrupt region; Kafka's recovery would truncate here


class LogSegmentsReader(DataSourceReader):
    def __init__(self, log_dirs: list[str], schema: Any) -> None:
        self.log_dirs = log_dirs
        self.schema = schema
        self.predicate = SegmentPredicate()

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        """Take topic / partition / offset / timestamp bounds; every filter is still returned to Spark,
        which re-checks the rows (the pruning here is by segment and index range)."""
        for f in filters:
            self.predicate.push(f)
            yield f

    @spark_facing
    def partitions(self) -> list[SegmentPartition]:
        parts = [SegmentPartition(r, self.predicate) for r in plan_segments(self.log_dirs, self.predicate)]
        return parts or [SegmentPartition(None, self.predicate)]

    @spark_facing
    def read(self, partition: SegmentPartition) -> Iterator[Any]:
        from kafkapy.spark.schema import arrow_schema, struct_type

        if partition.range is None:
            return iter(())
        return read_segment(partition.range, partition.pred, arrow_schema(struct_type(False)),
                            arrow_schema(self.schema))


class LogSegmentsDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return SCHEMA

    @spark_facing
    def reader(self, schema: Any) -> LogSegmentsReader:
        paths = self.options.get("path") or self.options.get("paths") or ""
        dirs = [p.strip() for p in str(paths).strip("[]").replace('"', "").split(",") if p.strip()]
        if not dirs:
            raise KafkaSourceError("A log directory is required: load('/path/to/log.dirs')")
        return LogSegmentsReader(dirs, schema)
