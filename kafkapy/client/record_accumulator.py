"""RecordAccumulator: per-partition queues of ProducerBatches waiting to be sent (Kafka's design).

`append` adds a record to the last open batch of its partition (one MemoryRecordsBuilder per
batch, so the per-record work is one varint encode into a bytearray) or opens a new batch when
the last one has no room for batch.size. The Sender asks `ready()` which leaders have a sendable
batch (full, linger.ms expired, flushing, or closing) and `drain()`s at most one batch per
partition per node, up to max.request.size per request. Failed batches come back through
`reenqueue` in sequence order. `buffer.memory` bounds the bytes held; append blocks (up to
max.block.ms) when it is used up.

Futures: each batch has one ProduceRequestResult (an Event + base offset); a record's
FutureRecordMetadata reads its offset as base_offset + relative index, so completing a batch of N
records costs one Event.set() plus the user callbacks, not N Future completions.

Thread-safety: every method takes the accumulator's lock; batches are handed to the Sender
thread by drain and never mutated by append after that.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import dataclass
from typing import Any

from kafkapy.client.errors import KafkaTimeoutError
from kafkapy.client.metadata import Cluster
from kafkapy.common.errors import KafkaError
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.compression import CompressionType
from kafkapy.record.default_record import estimate_record_size_upper_bound
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

log = logging.getLogger(__name__)

Callback = Callable[[Any, BaseException | None], None]


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """What a successful send resolves to (Java's RecordMetadata)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    serialized_key_size: int = -1
    serialized_value_size: int = -1

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


class ProduceRequestResult:
    """The outcome of one batch: base offset, log-append time, or an error; waited on via an Event."""

    __slots__ = ("tp", "base_offset", "log_append_time", "error", "_event")

    def __init__(self, tp: TopicPartition) -> None:
        self.tp = tp
        self.base_offset = -1
        self.log_append_time = -1
        self.error: BaseException | None = None
        self._event = threading.Event()

    def set(self, base_offset: int, log_append_time: int, error: BaseException | None) -> None:
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self.error = error
        self._event.set()

    def done(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)


class FutureRecordMetadata:
    """A Future for one record's RecordMetadata (the concurrent.futures.Future API, batch-backed)."""

    __slots__ = ("_result", "_relative", "_timestamp", "_key_size", "_value_size", "_callbacks")

    def __init__(self, result: ProduceRequestResult, relative: int, timestamp: int, key_size: int, value_size: int):
        self._result = result
        self._relative = relative
        self._timestamp = timestamp
        self._key_size = key_size
        self._value_size = value_size
        self._callbacks: list[Callable[[FutureRecordMetadata], Any]] | None = None

    def _value(self) -> RecordMetadata:
        r = self._result
        offset = r.base_offset + self._relative if r.base_offset >= 0 else -1
        ts = r.log_append_time if r.log_append_time >= 0 else self._timestamp
        return RecordMetadata(r.tp.topic, r.tp.partition, offset, ts, self._key_size, self._value_size)

    def done(self) -> bool:
        return self._result.done()

    def running(self) -> bool:
        return not self._result.done()

    def cancelled(self) -> bool:
        return False

    def cancel(self) -> bool:
        return False

    def result(self, timeout: float | None = None) -> RecordMetadata:
        if not self._result.wait(timeout):
            raise FutureTimeoutError()
        if self._result.error is not None:
            raise self._result.error
        return self._value()

    def exception(self, timeout: float | None = None) -> BaseException | None:
        if not self._result.wait(timeout):
            raise FutureTimeoutError()
        return self._result.error

    def add_done_callback(self, fn: Callable[[FutureRecordMetadata], Any]) -> None:
        if self._result.done():
            fn(self)
            return
        if self._callbacks is None:
            self._callbacks = []
        self._callbacks.append(fn)


class ProducerBatch:
    __slots__ = (
        "tp", "builder", "result", "created_ms", "attempts", "last_attempt_ms", "records",
        "callbacks", "closed", "records_bytes", "in_retry", "base_sequence", "buffer_bytes", "built",
        "uncompressed_bytes",
    )

    def __init__(self, tp: TopicPartition, builder: MemoryRecordsBuilder, now_ms: int) -> None:
        self.tp = tp
        self.builder = builder
        self.result = ProduceRequestResult(tp)
        self.created_ms = now_ms
        self.attempts = 0
        self.last_attempt_ms = now_ms
        self.records: list[FutureRecordMetadata] = []
        self.callbacks: list[tuple[int, Callback]] = []
        self.closed = False
        self.in_retry = False
        self.base_sequence = -1
        self.buffer_bytes = 0
        self.built: bytes | None = None
        self.uncompressed_bytes = 0

    @property
    def record_count(self) -> int:
        return self.builder.num_records  # == len(records), except for a batch appended whole

    def try_append(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: Sequence, limit: int,
        size: int,
    ) -> FutureRecordMetadata | None:
        """Append if the batch is open and `size` (the record's upper-bound size) fits under limit
        (the first record always fits)."""
        builder = self.builder
        if self.closed or (self.records and builder.uncompressed_bytes + size > limit):
            return None
        builder.append(timestamp, key, value, headers)
        fut = FutureRecordMetadata(
            self.result, len(self.records), timestamp,
            -1 if key is None else len(key), -1 if value is None else len(value),
        )
        self.records.append(fut)
        return fut

    def close(self) -> bytes:
        """Freeze the batch and return its bytes (built once; sequence fixed by the caller first)."""
        self.closed = True
        if self.built is None:
            self.uncompressed_bytes = self.builder.uncompressed_bytes
            self.built = self.builder.build()
        return self.built

    def done(self, base_offset: int, log_append_time: int, error: BaseException | None) -> None:
        """Complete every record future and run callbacks (on the Sender thread)."""
        if self.result.done():
            return
        self.result.set(base_offset, log_append_time, error)
        meta_needed = self.callbacks or any(f._callbacks for f in self.records)
        if not meta_needed:
            return
        for i, cb in self.callbacks:
            fut = self.records[i]
            try:
                cb(None if error else fut._value(), error)
            except Exception:  # a user callback must not kill the Sender
                log.exception("Error executing user-provided callback")
        for fut in self.records:
            if fut._callbacks:
                for fn in fut._callbacks:
                    try:
                        fn(fut)
                    except Exception:
                        log.exception("Error executing future callback")


class RecordAccumulator:
    def __init__(
        self,
        batch_size: int = 16384,
        linger_ms: int = 5,
        compression: CompressionType = CompressionType.NONE,
        compression_level: int | None = None,
        retry_backoff_ms: int = 100,
        delivery_timeout_ms: int = 120000,
        buffer_memory: int = 33554432,
        time: Time = SYSTEM,
    ) -> None:
        self.batch_size = batch_size
        self.linger_ms = linger_ms
        self.compression = compression
        self.compression_level = compression_level
        self.retry_backoff_ms = retry_backoff_ms
        self.delivery_timeout_ms = delivery_timeout_ms
        self.buffer_memory = buffer_memory
        self._time = time
        self._batches: dict[TopicPartition, deque[ProducerBatch]] = {}
        self._lock = threading.Condition(threading.Lock())
        self._incomplete: set[ProducerBatch] = set()
        self._buffered_bytes = 0
        self._flushes_in_progress = 0
        self._closed = False
        self._drain_index: dict[int, int] = {}
        self.muted: set[TopicPartition] = set()
        # Compressed batches: fill up to batch.size / estimated ratio uncompressed bytes, so the
        # compressed batch lands near batch.size (Kafka's CompressionRatioEstimator, simplified).
        self._ratios: dict[str, float] = {}
        self._limits: dict[str, int] = {}
        self.max_uncompressed_bytes = 1048576

    # ------------------------------------------------------------------------------------------
    # append

    def append(
        self,
        tp: TopicPartition,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence,
        callback: Callback | None,
        max_block_ms: int,
        size: int | None = None,
    ) -> tuple[FutureRecordMetadata, bool, bool]:
        """Append a record (size: its encoded upper bound, computed if None); returns
        (future, batch_is_full, new_batch_created)."""
        if size is None:
            size = estimate_record_size_upper_bound(key, value, headers)
        with self._lock:
            dq = self._deque_locked(tp)
            if dq:
                last = dq[-1]
                limit = self._limits.get(tp.topic, self.batch_size)
                fut = last.try_append(timestamp, key, value, headers, limit, size)
                if fut is not None:
                    if callback is not None:
                        last.callbacks.append((fut._relative, callback))
                    full = len(dq) > 1 or last.builder.estimated_size_in_bytes() >= limit
                    return fut, full, False
                last.closed = True
            builder = MemoryRecordsBuilder(compression=self.compression, compression_level=self.compression_level)
            batch = self._enqueue_new_batch_locked(tp, dq, builder, max_block_ms)
            fut = batch.try_append(timestamp, key, value, headers, self._limits.get(tp.topic, self.batch_size), size)
            assert fut is not None  # the first record always fits
            if callback is not None:
                batch.callbacks.append((0, callback))
            return fut, len(dq) > 1, True

    def append_batch(
        self, tp: TopicPartition, builder: MemoryRecordsBuilder, timestamp: int, callback: Callback | None,
        max_block_ms: int,
    ) -> FutureRecordMetadata:
        """Queue a builder filled elsewhere (e.g. a columnar encoder) as one closed batch behind the
        partition's open batches; its future / callback carry the first record's metadata."""
        with self._lock:
            dq = self._deque_locked(tp)
            if dq:
                dq[-1].closed = True
            batch = self._enqueue_new_batch_locked(tp, dq, builder, max_block_ms)
            batch.closed = True
            fut = FutureRecordMetadata(batch.result, 0, timestamp, -1, -1)
            batch.records.append(fut)
            if callback is not None:
                batch.callbacks.append((0, callback))
            return fut

    def _deque_locked(self, tp: TopicPartition) -> deque[ProducerBatch]:
        if self._closed:
            raise KafkaError("Producer closed while send in progress")
        dq = self._batches.get(tp)
        if dq is None:
            dq = self._batches[tp] = deque()
        return dq

    def _enqueue_new_batch_locked(self, tp: TopicPartition, dq: deque[ProducerBatch], builder: MemoryRecordsBuilder,
                                  max_block_ms: int) -> ProducerBatch:
        """A new batch at the tail of dq, once batch.size bytes of buffer.memory are reserved (may block)."""
        self._reserve_memory(max_block_ms)
        batch = ProducerBatch(tp, builder, self._time.milliseconds())
        batch.buffer_bytes = self.batch_size
        dq.append(batch)
        self._incomplete.add(batch)
        return batch

    def _reserve_memory(self, max_block_ms: int) -> None:
        if self._buffered_bytes + self.batch_size <= self.buffer_memory or not self._incomplete:
            self._buffered_bytes += self.batch_size
            return
        deadline = self._time.milliseconds() + max_block_ms
        while self._buffered_bytes + self.batch_size > self.buffer_memory and self._incomplete:
            remaining = deadline - self._time.milliseconds()
            if remaining <= 0:
                raise KafkaTimeoutError(
                    f"Failed to allocate {self.batch_size} bytes within the configured max blocking "
                    f"time {max_block_ms} ms. Total memory: {self.buffer_memory} bytes."
                )
            self._time.wait_on(self._lock, min(remaining, 100))
            if self._closed:
                raise KafkaError("Producer closed while allocating memory")
        self._buffered_bytes += self.batch_size

    # ------------------------------------------------------------------------------------------
    # ready / drain

    def has_incomplete(self) -> bool:
        """True while any batch is queued or in flight (Kafka's hasIncomplete)."""
        with self._lock:
            return bool(self._incomplete)

    def abort_undrained_batches(self, error: BaseException) -> list[ProducerBatch]:
        """Fail every batch still queued (never sent, or waiting to be retried) with error; batches in
        flight complete from their responses (a transaction being aborted drops what it had not sent)."""
        with self._lock:
            batches = [b for dq in self._batches.values() for b in dq]
            for dq in self._batches.values():
                dq.clear()
        for b in batches:
            b.done(-1, -1, error)
            self.deallocate(b)
        return batches

    def has_undrained(self) -> bool:
        with self._lock:
            return any(self._batches.values())

    def ready(self, cluster: Cluster, now_ms: int) -> tuple[set[int], int, set[str]]:
        """(leader node ids with a sendable batch, ms until the next check, topics with no leader)."""
        ready_nodes: set[int] = set()
        unknown: set[str] = set()
        next_delay = self.linger_ms if self.linger_ms > 0 else 100
        with self._lock:
            exhausted = self._buffered_bytes + self.batch_size > self.buffer_memory
            flushing = self._flushes_in_progress > 0 or self._closed
            for tp, dq in self._batches.items():
                if not dq:
                    continue
                leader = cluster.leader_for(tp)
                if leader is None:
                    unknown.add(tp.topic)
                    continue
                if leader in ready_nodes or tp in self.muted:
                    continue
                batch = dq[0]
                backing_off = batch.attempts > 0 and now_ms - batch.last_attempt_ms < self.retry_backoff_ms
                wait = self.retry_backoff_ms if batch.attempts > 0 else self.linger_ms
                waited = now_ms - (batch.last_attempt_ms if batch.attempts > 0 else batch.created_ms)
                full = len(dq) > 1 or batch.closed
                if not backing_off and (full or waited >= wait or exhausted or flushing):
                    ready_nodes.add(leader)
                else:
                    next_delay = min(next_delay, max(wait - waited, 0))
        return ready_nodes, max(next_delay, 0), unknown

    def drain(
        self,
        cluster: Cluster,
        nodes: set[int],
        max_size: int,
        now_ms: int,
        can_send: Callable[[ProducerBatch], bool] | None = None,
    ) -> dict[int, list[ProducerBatch]]:
        """Take at most one batch per partition for each node, up to max_size bytes per node."""
        out: dict[int, list[ProducerBatch]] = {}
        with self._lock:
            by_leader: dict[int, list[TopicPartition]] = {}
            for tp, dq in self._batches.items():
                if dq and tp not in self.muted:
                    leader = cluster.leader_for(tp)
                    if leader in nodes:
                        by_leader.setdefault(leader, []).append(tp)
            for node, tps in by_leader.items():
                start = self._drain_index.get(node, 0) % len(tps)
                self._drain_index[node] = start + 1
                size = 0
                ready: list[ProducerBatch] = []
                for i in range(len(tps)):
                    tp = tps[(start + i) % len(tps)]
                    dq = self._batches[tp]
                    batch = dq[0]
                    if batch.attempts > 0 and now_ms - batch.last_attempt_ms < self.retry_backoff_ms:
                        continue
                    if can_send is not None and not can_send(batch):
                        continue
                    est = batch.builder.estimated_size_in_bytes() if batch.built is None else len(batch.built)
                    if ready and size + est > max_size:
                        break
                    dq.popleft()
                    batch.closed = True
                    size += est
                    ready.append(batch)
                if ready:
                    out[node] = ready
        return out

    def reenqueue(self, batch: ProducerBatch, now_ms: int) -> None:
        """Put a failed batch back at the front of its queue, ordered by sequence for idempotence."""
        with self._lock:
            batch.attempts += 1
            batch.last_attempt_ms = now_ms
            batch.in_retry = True
            dq = self._batches.setdefault(batch.tp, deque())
            if batch.base_sequence >= 0:
                i = 0
                while i < len(dq) and 0 <= dq[i].base_sequence < batch.base_sequence:
                    i += 1
                dq.insert(i, batch)
            else:
                dq.appendleft(batch)
            self._lock.notify_all()

    def record_compression(self, batch: ProducerBatch) -> None:
        """Update the topic's compression ratio estimate from a built batch."""
        if self.compression == CompressionType.NONE or not batch.built or batch.uncompressed_bytes <= 0:
            return
        observed = len(batch.built) / batch.uncompressed_bytes
        topic = batch.tp.topic
        est = self._ratios.get(topic, 1.0)
        # Worse ratios are adopted at once (never overfill); better ones are approached slowly.
        est = max(observed, est + 0.05) if observed > est else max(observed, est - 0.005)
        est = min(max(est, 0.05), 1.0)
        self._ratios[topic] = est
        self._limits[topic] = min(int(self.batch_size / est), self.max_uncompressed_bytes)

    def reset_sequences(self) -> None:
        """Forget the sequences of queued batches (a new producer id will assign fresh ones)."""
        with self._lock:
            for dq in self._batches.values():
                for b in dq:
                    b.base_sequence = -1

    def has_retry_before(self, batch: ProducerBatch) -> bool:
        """True when a batch of the same partition with a lower sequence is queued for retry."""
        with self._lock:
            dq = self._batches.get(batch.tp)
            return dq is not None and any(
                b.in_retry and 0 <= b.base_sequence < batch.base_sequence for b in dq
            )

    def expired_batches(self, now_ms: int) -> list[ProducerBatch]:
        """Remove and return queued batches older than delivery.timeout.ms."""
        expired: list[ProducerBatch] = []
        with self._lock:
            for dq in self._batches.values():
                while dq and now_ms - dq[0].created_ms >= self.delivery_timeout_ms:
                    expired.append(dq.popleft())
        return expired

    def deallocate(self, batch: ProducerBatch) -> None:
        with self._lock:
            if batch in self._incomplete:
                self._incomplete.discard(batch)
                self._buffered_bytes -= batch.buffer_bytes
                self._lock.notify_all()

    # ------------------------------------------------------------------------------------------
    # flush / close

    def begin_flush(self) -> None:
        with self._lock:
            self._flushes_in_progress += 1

    def end_flush(self) -> None:
        with self._lock:
            self._flushes_in_progress -= 1

    def incomplete_batches(self) -> list[ProducerBatch]:
        with self._lock:
            return list(self._incomplete)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    def abort_all(self, error: BaseException) -> None:
        with self._lock:
            batches = list(self._incomplete)
            for dq in self._batches.values():
                dq.clear()
        for b in batches:
            b.done(-1, -1, error)
            self.deallocate(b)
