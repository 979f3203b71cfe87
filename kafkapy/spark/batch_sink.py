"""`ArrowBatchSink`: one write task's Arrow batches appended to a KafkaProducer a producer batch at a time.

For each Arrow batch from Spark's Python data source writer: the target topic (the `topic` option, or
the `topic` column), the partition (the `partition` column where given; otherwise Kafka's default
partitioner: murmur2 of the key, hashed once per distinct key of the batch; rows without a key stick
to one partition per `batch.size` bytes, then move to the next, as the sticky partitioner does),
then rows are grouped per partition (a stable sort, so a partition keeps the rows' order), cut into
chunks of about `batch.size` bytes, encoded column-wise (spark/record_encoder.py) and handed to
`KafkaProducer.send_batch` as finished batches; the producer compresses them with
`compression.type`, retries and acknowledges them as any batch. A partition's last partial chunk
waits up to `linger.ms` for rows of the next Arrow batch (everything is sent when the task's input
ends). The first delivery error fails the task (raised on the next Arrow batch or at close), as
Spark's KafkaWriteTask does.

Thread-safety: one sink per task, used from the task's thread; the delivery callback (Sender thread)
only appends to `failures`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkapy.client.partitioner import partition_for_key
from kafkapy.spark.errors import KafkaSinkError
from kafkapy.spark.record_encoder import (
    chunk_bounds,
    chunk_ids,
    data_buffer,
    encode_header_lists,
    encode_records,
    row_sizes,
)

_I64 = pa.int64()
NULL_TOPIC = "Null topic present in the data. Use the topic option for setting a default topic."


@dataclass
class _Rows:
    """Rows bound for one partition, not yet sent: binary keys (or None), values, encoded headers."""

    keys: pa.Array | None
    values: pa.Array
    headers: pa.Array | None
    since: float

    def __len__(self) -> int:
        return len(self.values)


def _concat(a: pa.Array | None, b: pa.Array | None, n_a: int, n_b: int, fill: bytes | None) -> pa.Array | None:
    if a is None and b is None:
        return None
    a = a if a is not None else pa.array([fill] * n_a, pa.binary())
    b = b if b is not None else pa.array([fill] * n_b, pa.binary())
    return pa.concat_arrays([a, b])


def _binary(col: pa.Array | None) -> pa.Array | None:
    if col is None:
        return None
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_large_binary(col.type):
        col = col.cast(pa.binary())
    return col


class ArrowBatchSink:
    def __init__(self, producer: Any, topic: str | None) -> None:
        self.producer = producer
        self.topic = topic
        self.batch_size = int(producer.config["batch.size"])
        self.linger_s = int(producer.config["linger.ms"]) / 1000
        self.pending: dict[tuple[str, int], _Rows] = {}
        self.failures: list[BaseException] = []
        self.records = 0
        self._sticky: dict[str, int] = {}
        self._partitions: dict[str, int] = {}
        self._by_key: dict[tuple[str, bytes], int] = {}  # murmur2 partition of keys seen (bounded)

    def _on_done(self, _metadata: Any, exc: BaseException | None) -> None:
        if exc is not None and not self.failures:
            self.failures.append(exc)

    def _check(self) -> None:
        if self.failures:
            raise self.failures[0]

    # -- routing ---------------------------------------------------------------------------------

    def add(self, batch: pa.RecordBatch) -> None:
        """Route and queue every row of one Arrow batch."""
        self._check()
        n = batch.num_rows
        if n == 0:
            return
        names = {name.lower(): i for i, name in enumerate(batch.schema.names)}

        def col(name: str) -> pa.Array | None:
            i = names.get(name)
            return None if i is None else batch.column(i)

        values = _binary(col("value"))
        assert values is not None  # validate_sink_schema requires it
        keys = _binary(col("key"))
        hcol = col("headers")
        headers = encode_header_lists(hcol) if hcol is not None else None
        parts = col("partition")
        if self.topic:
            self._add_topic(self.topic, keys, values, headers, parts)
            return
        topics = col("topic")
        if topics is None or topics.null_count:
            raise KafkaSinkError(NULL_TOPIC)
        distinct = pc.unique(topics).to_pylist()
        if len(distinct) == 1:
            self._add_topic(distinct[0], keys, values, headers, parts)
            return
        for t in distinct:
            mask = pc.equal(topics, pa.scalar(t, topics.type))
            self._add_topic(t, *(None if c is None else c.filter(mask) for c in (keys, values, headers, parts)))

    def _partition_count(self, topic: str) -> int:
        count = self._partitions.get(topic)
        if count is None:
            count = self._partitions[topic] = len(self.producer.partitions_for(topic))
        return count

    def _add_topic(self, topic: str, keys: pa.Array | None, values: pa.Array, headers: pa.Array | None,
                   given: pa.Array | None) -> None:
        count = self._partition_count(topic)
        n = len(values)
        part = given.cast(_I64) if given is not None else pa.nulls(n, _I64)
        if keys is not None and part.null_count and keys.null_count < n:
            encoded = keys.dictionary_encode()
            by_key = pa.array([self._key_partition(topic, k, count) for k in encoded.dictionary.to_pylist()], _I64)
            part = pc.coalesce(part, pc.take(by_key, encoded.indices))
        if part.null_count:
            part = self._sticky_partitions(topic, part, keys, values, headers, count)
        lo, hi = pc.min_max(part).values()
        if lo.as_py() == hi.as_py():
            self._append(topic, lo.as_py(), _Rows(keys, values, headers, time.monotonic()))
            return
        order = pc.sort_indices(part)
        sorted_part = pc.take(part, order)
        keys, values, headers = (None if c is None else pc.take(c, order) for c in (keys, values, headers))
        runs = pc.run_end_encode(sorted_part)
        ends = runs.run_ends.to_pylist()
        ids = runs.values.to_pylist()
        start = 0
        now = time.monotonic()
        for p, end in zip(ids, ends, strict=True):
            k, v, h = (None if c is None else c.slice(start, end - start) for c in (keys, values, headers))
            self._append(topic, p, _Rows(k, v, h, since=now))
            start = end

    def _key_partition(self, topic: str, key: bytes, count: int) -> int:
        cache = self._by_key
        p = cache.get((topic, key))
        if p is None:
            if len(cache) >= 100_000:
                cache.clear()
            p = cache[(topic, key)] = partition_for_key(key, count)
        return p

    def _sticky_partitions(self, topic: str, part: pa.Array, keys: pa.Array | None, values: pa.Array,
                           headers: pa.Array | None, count: int) -> pa.Array:
        """Rows with neither a partition nor a key: one partition per batch.size bytes, rotating."""
        mask = pc.is_null(part)
        where = pc.indices_nonzero(mask)
        sizes = pc.take(row_sizes(keys, values, headers), where)
        groups = chunk_ids(sizes, self.batch_size)
        first = self._sticky.get(topic, 0)
        chosen = pc.remainder(pc.add(groups, pa.scalar(first, _I64)), pa.scalar(count, _I64))
        self._sticky[topic] = (first + pc.max(groups).as_py() + 1) % count
        return pc.replace_with_mask(part, mask, chosen)

    # -- batching --------------------------------------------------------------------------------

    def _append(self, topic: str, partition: int, rows: _Rows) -> None:
        key = (topic, partition)
        held = self.pending.pop(key, None)
        if held is not None:
            nh, nr = len(held), len(rows)
            rows = _Rows(_concat(held.keys, rows.keys, nh, nr, None), pa.concat_arrays([held.values, rows.values]),
                         _concat(held.headers, rows.headers, nh, nr, b"\x00"), held.since)
        ids = chunk_ids(row_sizes(rows.keys, rows.values, rows.headers), self.batch_size)
        if self.linger_s > 0 and time.monotonic() - rows.since < self.linger_s:
            last = ids[len(ids) - 1]
            keep = pc.equal(ids, last)
            cut = len(rows) - pc.sum(keep.cast(_I64)).as_py()
            if cut < len(rows):
                k, v, h = (None if c is None else c.slice(cut) for c in (rows.keys, rows.values, rows.headers))
                self.pending[key] = _Rows(k, v, h, since=rows.since)
                if cut == 0:
                    return
                k, v, h = (None if c is None else c.slice(0, cut) for c in (rows.keys, rows.values, rows.headers))
                rows = _Rows(k, v, h, since=rows.since)
                ids = ids.slice(0, cut)
        self._send(topic, partition, rows, ids)

    def _send(self, topic: str, partition: int, rows: _Rows, ids: pa.Array) -> None:
        records, starts = encode_records(rows.keys, rows.values, rows.headers, ids)
        view = memoryview(data_buffer(records))
        ts = int(time.time() * 1000)
        producer = self.producer
        for first, end, count in chunk_bounds(records, starts):
            builder = producer.batch_builder()
            builder.append_encoded(view[first:end], count, ts, ts)
            producer.send_batch(topic, partition, builder, ts, self._on_done)
        self.records += len(rows)

    def close(self) -> int:
        """Send what is held, wait for every acknowledgement; the records written (or the first error)."""
        for (topic, partition), rows in list(self.pending.items()):
            ids = chunk_ids(row_sizes(rows.keys, rows.values, rows.headers), self.batch_size)
            self._send(topic, partition, rows, ids)
        self.pending.clear()
        self.producer.flush()
        self._check()
        return self.records
