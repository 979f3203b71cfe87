"""Batch reads (`spark.read.format("kafkapy")`): Spark's KafkaRelation / KafkaBatch over kafkapy.

`KafkaBatchReader.partitions()` runs on the driver: it resolves the subscription and the starting and
ending offsets (offset_reader), and returns one `KafkaInputPartition` per topic-partition offset range
(split further by `minPartitions`). `read(partition)` runs in executor workers (the reader is pickled
there): it opens its own connection and yields Arrow batches (partition_reader.read_range).

Thread-safety: Spark calls partitions() once per query on one thread; read() once per task.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSourceReader, InputPartition

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.spark.errors import spark_facing
from kafkapy.spark.offset_reader import KafkaOffsetReader, check_ranges, offset_ranges
from kafkapy.spark.options import SourceOptions
from kafkapy.spark.partition_reader import RangeRead, read_range
from kafkapy.spark.schema import arrow_schema


class KafkaInputPartition(InputPartition):
    """One offset range of one topic-partition: [from_offset, until_offset)."""

    def __init__(self, topic: str, partition: int, from_offset: int, until_offset: int) -> None:
        super().__init__((topic, partition, from_offset, until_offset))
        self.topic = topic
        self.partition = partition
        self.from_offset = from_offset
        self.until_offset = until_offset

    def __repr__(self) -> str:
        return f"KafkaInputPartition({self.topic}-{self.partition}, [{self.from_offset}, {self.until_offset}))"


def read_partition(spec: RangeRead, schema: Any, partition: KafkaInputPartition) -> Iterator[Any]:
    """The executor side shared by batch and streaming reads."""
    tp = TopicPartition(partition.topic, partition.partition)
    yield from read_range(spec, tp, partition.from_offset, partition.until_offset, arrow_schema(schema))


def range_read(options: SourceOptions) -> RangeRead:
    return RangeRead(options.kafka, options.include_headers, options.fail_on_data_loss, options.poll_timeout_ms,
                     options.reader)


class KafkaBatchReader(DataSourceReader):
    def __init__(self, options: SourceOptions, schema: Any) -> None:
        self.options = options
        self.schema = schema
        self.spec = range_read(options)

    @spark_facing
    def partitions(self) -> list[KafkaInputPartition]:
        reader = KafkaOffsetReader(self.options)
        try:
            tps = reader.partitions()
            starts = reader.resolve(self.options.starting, tps, starting=True)
            ends = reader.resolve(self.options.ending, tps, starting=False)
        finally:
            reader.close()
        ranges = offset_ranges(check_ranges(starts, ends), self.options.min_partitions)
        parts = [KafkaInputPartition(r.tp.topic, r.tp.partition, r.from_offset, r.until_offset) for r in ranges]
        # Spark needs at least one partition to run the read; an empty range yields nothing.
        return parts or [KafkaInputPartition("", -1, 0, 0)]

    @spark_facing
    def read(self, partition: KafkaInputPartition) -> Iterator[Any]:
        return read_partition(self.spec, self.schema, partition)
