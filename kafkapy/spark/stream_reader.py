"""Streaming reads (`spark.readStream.format("kafkapy")`): Spark's KafkaMicroBatchStream over kafkapy.

Offsets are Spark's JSON partition-offset map (`{"topic": {"0": 42}}`), kept by Spark in the query's
checkpoint: a restarted query continues after the last committed micro-batch and never needs a
consumer group. initialOffset() resolves startingOffsets / startingTimestamp; latestOffset(start,
limit) asks the partition leaders for their latest offsets and applies maxOffsetsPerTrigger
(ReadMaxRows) the way Spark prorates it; partitions appearing later start at their earliest offset.
`trigger(availableNow=True)` (SupportsTriggerAvailableNow) reads up to the offsets that were latest
when the query started, in as many rate-limited micro-batches as needed, then stops.
read() runs in executors and is the batch reader's (batch_reader.read_partition).

Thread-safety: Spark drives one stream reader from one thread; the admin client it holds is created
lazily on the driver and never pickled to executors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.spark.batch_reader import KafkaInputPartition, range_read, read_partition
from kafkapy.spark.errors import spark_facing
from kafkapy.spark.offset_reader import KafkaOffsetReader, check_ranges, offset_ranges, rate_limit
from kafkapy.spark.offsets import from_partition_offsets_json, partition_offsets_json
from kafkapy.spark.options import SourceOptions


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: SourceOptions, schema: Any) -> None:
        self.options = options
        self.schema = schema
        self.spec = range_read(options)
        self._reader: KafkaOffsetReader | None = None
        self._available_now: dict[TopicPartition, int] | None = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_reader"] = None  # connections stay on the driver
        return state

    @property
    def offset_reader(self) -> KafkaOffsetReader:
        if self._reader is None:
            self._reader = KafkaOffsetReader(self.options)
        return self._reader

    # -- offsets (driver) ------------------------------------------------------------------------

    @spark_facing
    def initialOffset(self) -> dict:
        reader = self.offset_reader
        tps = reader.partitions()
        return partition_offsets_json(reader.resolve(self.options.starting, tps, starting=True))

    def getDefaultReadLimit(self) -> ReadLimit:
        n = self.options.max_offsets_per_trigger
        return ReadMaxRows(n) if n else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        reader = self.offset_reader
        self._available_now = reader.latest(reader.partitions())

    def _latest(self) -> dict[TopicPartition, int]:
        if self._available_now is not None:
            return dict(self._available_now)
        reader = self.offset_reader
        return reader.latest(reader.partitions())

    @spark_facing
    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = from_partition_offsets_json(start)
        latest = self._latest()
        new = set(latest) - set(begin)
        if new:
            begin.update(self.offset_reader.earliest(new))
        for tp in sorted(set(begin) - set(latest)):
            self.offset_reader.report_data_loss(f"{tp} is gone. Some data may have been missed.")
        # Never move backwards (e.g. a partition truncated under us): keep the start.
        until = {tp: max(off, begin.get(tp, off)) for tp, off in latest.items()}
        if isinstance(limit, ReadMaxRows):
            until = rate_limit(limit.max_rows, begin, until)
        return partition_offsets_json(until)

    def reportLatestOffset(self) -> dict | None:
        return partition_offsets_json(self._latest())

    @spark_facing
    def partitions(self, start: dict, end: dict) -> list[KafkaInputPartition]:
        begin = from_partition_offsets_json(start)
        until = from_partition_offsets_json(end)
        new = set(until) - set(begin)
        if new:
            begin.update(self.offset_reader.earliest(new))
        ranges = offset_ranges(check_ranges(begin, until), self.options.min_partitions)
        return [KafkaInputPartition(r.tp.topic, r.tp.partition, r.from_offset, r.until_offset) for r in ranges]

    def commit(self, end: dict) -> None:
        """Nothing to do: offsets live in Spark's checkpoint, not in a consumer group."""

    def stop(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # -- data (executors) ------------------------------------------------------------------------

    @spark_facing
    def read(self, partition: KafkaInputPartition) -> Iterator[Any]:
        return read_partition(self.spec, self.schema, partition)
