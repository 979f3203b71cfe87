"""`LogSegmentsDataSource` ("kafkapy-log-segments"): a broker's log directories read offline by Spark.

`spark.read.format("kafkapy-log-segments").load("/var/lib/kafka/data")` (several dirs: comma-separated
path) lists `<topic>-<partition>/<base offset>.log` segment files written by Kafka or kafkapy; each
segment is one Spark input partition, decoded in an executor with kafkapy's record decoders (magic 2
columnar through record_columns; magic 0/1 through record.legacy_record). No broker is needed and the
files are only read. A partial batch at a segment's end (a torn write) is left out, as Kafka's
recovery would truncate it.

One row per record: topic string, partition int, segment string, batchBaseOffset long, batchBytes int
(the whole batch's size on disk), codec string (none/gzip/snappy/lz4/zstd), magic int, isControl
boolean, offset long, timestamp timestamp, key binary, valueSize int (-1 for a null value).

Thread-safety: partitions() on the driver, read() once per task; nothing shared.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.spark.errors import KafkaSourceError, spark_facing

NAME = "kafkapy-log-segments"
SCHEMA = (
    "topic string, partition int, segment string, batchBaseOffset long, batchBytes int, codec string, "
    "magic int, isControl boolean, offset long, timestamp timestamp, key binary, valueSize int"
)
_MIN_OFFSET = -(1 << 63)


class SegmentPartition(InputPartition):
    def __init__(self, path: str, topic: str, partition: int) -> None:
        super().__init__(path)
        self.path = path
        self.topic = topic
        self.partition = partition


def list_segments(log_dirs: list[str]) -> list[SegmentPartition]:
    """Every `<topic>-<partition>/*.log` under the log dirs, in topic, partition, offset order."""
    out = []
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
            for f in sorted(os.listdir(pdir)):
                if f.endswith(".log") and f[:-4].isdigit():
                    out.append(SegmentPartition(os.path.join(pdir, f), tp.topic, tp.partition))
    return sorted(out, key=lambda s: (s.topic, s.partition, s.path))


class _Columns:
    """Record columns of one segment plus the per-record batch facts, in the decoder's record order."""

    def __init__(self, part: SegmentPartition, kafka_schema: Any) -> None:
        from kafkapy.spark.record_columns import RecordColumns

        self.records = RecordColumns(part.topic, part.partition, False, kafka_schema)
        self.base: list[int] = []
        self.size: list[int] = []
        self.codec: list[str] = []
        self.magic: list[int] = []
        self.control: list[bool] = []

    def add(self, batch: Any) -> None:
        before = len(self.records)
        self.records.add_batch(batch)
        n = len(self.records) - before
        self.base += [batch.base_offset] * n
        self.size += [batch.size_in_bytes] * n
        self.codec += [batch.compression.lower_name] * n
        self.magic += [batch.magic] * n
        self.control += [bool(getattr(batch, "is_control_batch", False))] * n


def read_segment(part: SegmentPartition, kafka_schema: Any, out_schema: Any) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    from kafkapy.record.memory_records import MemoryRecords

    with open(part.path, "rb") as f:
        data = f.read()
    segment = os.path.basename(part.path)
    v2, legacy = _Columns(part, kafka_schema), _Columns(part, kafka_schema)
    for batch in MemoryRecords(data).batches():
        (v2 if batch.magic >= 2 else legacy).add(batch)
    for cols in (v2, legacy):
        for rb in cols.records.build(_MIN_OFFSET, None):
            n = rb.num_rows
            value_size = pc.fill_null(pc.binary_length(rb.column("value")), pa.scalar(-1, pa.int32()))
            yield pa.RecordBatch.from_arrays([
                rb.column("topic"), rb.column("partition"), pa.repeat(pa.scalar(segment), n),
                pa.array(cols.base, pa.int64()), pa.array(cols.size, pa.int32()), pa.array(cols.codec, pa.string()),
                pa.array(cols.magic, pa.int32()), pa.array(cols.control, pa.bool_()), rb.column("offset"),
                rb.column("timestamp"), rb.column("key"), value_size.cast(pa.int32()),
            ], schema=out_schema)


class LogSegmentsReader(DataSourceReader):
    def __init__(self, log_dirs: list[str], schema: Any) -> None:
        self.log_dirs = log_dirs
        self.schema = schema

    @spark_facing
    def partitions(self) -> list[SegmentPartition]:
        return list_segments(self.log_dirs) or [SegmentPartition("", "", -1)]

    @spark_facing
    def read(self, partition: SegmentPartition) -> Iterator[Any]:
        from kafkapy.spark.schema import arrow_schema, struct_type

        if not partition.path:
            return iter(())
        return read_segment(partition, arrow_schema(struct_type(False)), arrow_schema(self.schema))


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
