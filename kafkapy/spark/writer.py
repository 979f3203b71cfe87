"""Batch and streaming writes (`df.write/writeStream.format("kafkapy")`): Spark's Kafka sink.

Columns (Spark's KafkaWriter): `value` (string or binary, required), `key` (string or binary),
`topic` (string; the `topic` option overrides it), `partition` (int), `headers`
(array<struct<key: string, value: binary>>); other columns are ignored. The schema is checked on the
driver with Spark's wording. Each task hands its Arrow batches to one kafkapy.client KafkaProducer
configured from the `kafka.*` options (`kafka.acks`, `kafka.compression.type`, `kafka.linger.ms`,
`kafka.batch.size`, ...) through spark/batch_sink.ArrowBatchSink: rows are encoded column-wise and
appended a whole producer batch at a time (batch.size defaults to SINK_BATCH_SIZE when not given), with
one producer per Python worker and option set, kept across tasks (dropped when a task fails). The option `kafkapy.writer=per-record` selects the former
path (one producer.send per row; kept for the benchmark's before/after). The task flushes and fails
on the first delivery error. Like Spark's sink, writes are at-least-once: a retried task produces its
rows again.

Thread-safety: a task uses the worker's producer from its own thread (Spark runs one task at a time in a
Python worker; the cache is locked); the delivery callback only records the first error.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage

from kafkapy.spark.errors import KafkaSinkError, spark_facing
from kafkapy.spark.options import PER_RECORD, SinkOptions

_HEADERS_TYPE = "array<struct<key:string,value:binary>>"


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    records: int


def validate_sink_schema(schema: Any, topic_option: str | None) -> None:
    """Spark's KafkaWriter.validateQuery, with its wording."""
    fields = {f.name.lower(): f.dataType.simpleString() for f in schema.fields}
    if "topic" not in fields and not topic_option:
        raise KafkaSinkError(
            "topic option required when no 'topic' attribute is present. Use the topic option for setting a topic."
        )
    if "topic" in fields and fields["topic"] != "string":
        raise KafkaSinkError(f"Topic type must be a string, got {fields['topic']}")
    if "value" not in fields:
        raise KafkaSinkError("Required attribute 'value' not found")
    for name in ("key", "value"):
        if name in fields and fields[name] not in ("string", "binary"):
            raise KafkaSinkError(f"{name} attribute type must be a string or binary, got {fields[name]}")
    if "headers" in fields and fields["headers"] != _HEADERS_TYPE:
        raise KafkaSinkError(f"headers attribute type must be {_HEADERS_TYPE}, got {fields['headers']}")
    if "partition" in fields and fields["partition"] != "int":
        raise KafkaSinkError(f"partition attribute type must be an int, got {fields['partition']}")


def _column(batch: Any, name: str) -> list | None:
    import pyarrow as pa

    idx = {n.lower(): i for i, n in enumerate(batch.schema.names)}.get(name)
    if idx is None:
        return None
    col = batch.column(idx)
    if name in ("key", "value") and pa.types.is_string(col.type):
        col = col.cast(pa.binary())
    return col.to_pylist()


# batch.size when the pipeline sets none: Kafka's 16 KiB default costs a Python producer one batch (and
# its share of a request) per ~150 rows of 100 B; 512 KiB stays under max.request.size and the broker's
# message.max.bytes defaults (1 MiB). A kafka.batch.size option is used as given.
SINK_BATCH_SIZE = 512 * 1024


def _producer(options: SinkOptions, batched: bool = False) -> Any:
    from kafkapy.client.producer import KafkaProducer

    params = dict(options.kafka)
    params.setdefault("client.id", "kafkapy-spark-writer")
    if batched:
        params.setdefault("batch.size", str(SINK_BATCH_SIZE))
    return KafkaProducer(params)


_producers: dict[tuple, Any] = {}
_producers_lock = threading.Lock()


def _worker_producer(options: SinkOptions) -> tuple[tuple, Any]:
    """The Python worker's producer for these options (Spark's JVM sink caches its producers per
    executor the same way): tasks that follow reuse its connections, metadata and Sender thread."""
    key = tuple(sorted(options.kafka.items()))
    with _producers_lock:
        producer = _producers.get(key)
        if producer is None:
            producer = _producers[key] = _producer(options, batched=True)
    return key, producer


def write_batches(options: SinkOptions, batches: Iterator[Any]) -> int:
    """Produce every row of `batches`; returns the number of records acknowledged."""
    if options.writer == PER_RECORD:
        return write_batches_per_record(options, batches)
    from kafkapy.spark.batch_sink import ArrowBatchSink

    key, producer = _worker_producer(options)
    done = False
    try:
        sink = ArrowBatchSink(producer, options.topic)
        for batch in batches:
            sink.add(batch)
        count = sink.close()
        done = True
        return count
    finally:
        if not done:  # a failed task drops the producer (and what it still buffers), as Spark's sink does
            with _producers_lock:
                if _producers.get(key) is producer:
                    del _producers[key]
            producer.close(0)


def write_batches_per_record(options: SinkOptions, batches: Iterator[Any]) -> int:
    """The former path: one producer.send per row (kafkapy.writer=per-record)."""
    producer = _producer(options)
    failures: list[BaseException] = []

    def on_done(_metadata: Any, exc: BaseException | None) -> None:
        if exc is not None and not failures:
            failures.append(exc)

    count = 0
    try:
        send = producer.send
        for batch in batches:
            n = batch.num_rows
            values = _column(batch, "value")
            keys = _column(batch, "key") or [None] * n
            topics = [options.topic] * n if options.topic else _column(batch, "topic")
            parts = _column(batch, "partition") or [None] * n
            headers = _column(batch, "headers") or [None] * n
            for value, key, topic, part, hdrs in zip(values, keys, topics, parts, headers, strict=True):  # type: ignore[arg-type]
                if topic is None:
                    raise KafkaSinkError(
                        "Null topic present in the data. Use the topic option for setting a default topic."
                    )
                send(topic, value, key, [(h["key"], h["value"]) for h in hdrs] if hdrs else None, part,
                     callback=on_done)
            count += n
            if failures:
                break
        producer.flush()
    finally:
        producer.close()
    if failures:
        raise failures[0]
    return count


class KafkaBatchWriter(DataSourceArrowWriter):
    def __init__(self, options: SinkOptions, schema: Any) -> None:
        validate_sink_schema(schema, options.topic)
        self.options = options

    @spark_facing
    def write(self, iterator: Iterator[Any]) -> KafkaCommitMessage:
        return KafkaCommitMessage(write_batches(self.options, iterator))

    def commit(self, messages: list) -> None:
        """Records are visible once acknowledged; nothing more to do (at-least-once, as Spark's sink)."""

    def abort(self, messages: list) -> None:
        """Acknowledged records cannot be taken back (Spark's Kafka sink does not either)."""


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: SinkOptions, schema: Any) -> None:
        validate_sink_schema(schema, options.topic)
        self.options = options

    @spark_facing
    def write(self, iterator: Iterator[Any]) -> KafkaCommitMessage:
        return KafkaCommitMessage(write_batches(self.options, iterator))

    def commit(self, messages: list, batchId: int) -> None:
        """Nothing to do: each task flushed its records before reporting success."""

    def abort(self, messages: list, batchId: int) -> None:
        """Acknowledged records stay; the micro-batch is retried by Spark (at-least-once)."""
