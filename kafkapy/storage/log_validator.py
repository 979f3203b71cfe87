"""LogValidator: the record-level checks of a leader append from a client (Kafka's LogValidator).

Reads the magic-2 batches of a Produce partition (headers and CRCs already checked by
memory_records.validate_produce_records) and walks every record of every data batch with the one
record walker (record/record_walker.py): the length chain parses, varints are in range, key, value
and header lengths stay inside their record, the declared count is the count present, offset deltas
are 0..n-1 and nothing follows the last record. A compressed batch is walked through its streaming
decompressor: one chunk (<= 256 KiB, or one lz4/snappy block) plus an unfinished record at a time,
and the batch fails as soon as its decompressed records pass `max.message.bytes`
(MESSAGE_TOO_LARGE), so a few KB of request can never become gigabytes of memory. Bytes that are not
the batch's codec answer CORRUPT_MESSAGE; records that do not parse, INVALID_RECORD (Kafka's
InvalidRecordException). Per batch, as Kafka's processRecordErrors: records without a key on a
compacted topic (INVALID_RECORD) and, for CreateTime topics, timestamps outside
`message.timestamp.before.max.ms` / `after.max.ms` (INVALID_TIMESTAMP) carry Kafka's record errors
(batch index + message) for Produce v8+. When the topic's `compression.type` is a codec the batch
does not use, the records section is re-encoded with it as it streams past (log_recompress.py).

Pure functions of the bytes, the LogConfig and `now`; a LogValidator is immutable and thread-safe.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.batch_header import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
)
from kafkapy.record.compression import DecompressedSizeError, DecompressionError, iter_decompress
from kafkapy.record.errors import CorruptRecordError, InvalidRecordError
from kafkapy.record.record_walker import (
    COLUMNS,
    KEY_LEN,
    OFFSET_DELTA,
    TIMESTAMP_DELTA,
    VALUE_LEN,
    RecordWalk,
)
from kafkapy.storage.errors import (
    InvalidRecordsError,
    InvalidTimestampRecordsError,
    MessageTooLargeError,
    RecordError,
)
from kafkapy.storage.log_config import LogConfig
from kafkapy.storage.log_recompress import Recompressor, target_codec

__all__ = ["LogValidator", "VALIDATE_RECORDS"]

# Only bench/bench_produce_validation.py turns this off, to measure what the walk costs.
VALIDATE_RECORDS = True
_NO_LIMIT = 2**62
_NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP: never checked


class LogValidator:
    """The checks one topic's config asks for, resolved once (a Log keeps one per LogConfig)."""

    __slots__ = ("topic_partition", "max_bytes", "compact", "create_time", "before_ms", "after_ms", "target")

    def __init__(self, topic_partition: TopicPartition, config: LogConfig) -> None:
        self.topic_partition = topic_partition
        self.max_bytes = config.max_message_size
        self.compact = config.compact
        self.create_time = config.message_timestamp_type == 0
        self.before_ms = config.message_timestamp_before_max_ms
        self.after_ms = config.message_timestamp_after_max_ms
        self.target = target_codec(config)

    def validate(self, records: bytes | bytearray | memoryview, headers: list[BatchHeader],
                 now: int) -> tuple[bytes | bytearray | memoryview, list[BatchHeader]]:
        """Check every record of every data batch; returns the records (re-encoded batches when the topic's
        codec differs) and their headers. Raises the partition's KafkaError."""
        if not VALIDATE_RECORDS:
            return records, headers
        mv = memoryview(records)
        pos = 0
        out: bytearray | None = None
        new_headers: list[BatchHeader] = []
        check_ts = self.create_time and (self.before_ms < _NO_LIMIT or self.after_ms < _NO_LIMIT)
        for h in headers:
            size = h.size_in_bytes
            view = mv[pos:pos + size]
            rewritten = None
            if not h.attributes & CONTROL_FLAG_MASK:
                rewritten = self._validate_batch(view, h, now, check_ts)
            if rewritten is not None and out is None:
                out = bytearray(mv[:pos])  # new_headers already holds the batches before this one
            if out is not None:
                if rewritten is not None:
                    out += rewritten[0]
                    new_headers.append(rewritten[1])
                else:
                    out += view
                    new_headers.append(h)
            else:
                new_headers.append(h)
            pos += size
        if out is None:
            return records, headers
        return out, new_headers

    def _validate_batch(self, view: memoryview, h: BatchHeader, now: int,
                        check_ts: bool) -> tuple[bytes, BatchHeader] | None:
        codec = h.attributes & COMPRESSION_CODEC_MASK
        target = self.target
        recompress = target is not None and target[0] != codec
        walk = RecordWalk(h.records_count, check_offsets=True)
        body = view[RECORD_BATCH_OVERHEAD:]
        sink = Recompressor(target[0], target[1]) if recompress and target is not None else None
        try:
            if codec:
                chunks = iter_decompress(codec, body, self.max_bytes, strict=True)
                walk.walk_chunks(_fed(chunks, sink) if sink is not None else chunks)
            else:
                walk.walk_all(body)  # the request's bytes as they are (the compiled walk takes any buffer)
                if sink is not None:
                    sink.feed(body)
        except DecompressedSizeError as e:
            raise MessageTooLargeError(
                f"The decompressed records of the batch in the append to {self.topic_partition} exceed the "
                f"maximum configured value of {self.max_bytes} (max.message.bytes)") from e
        except DecompressionError as e:
            raise CorruptRecordError(f"Record batch in the append to {self.topic_partition} is corrupt: {e}") from e
        except CorruptRecordError as e:
            raise InvalidRecordError(f"{e.message} in topic partition {self.topic_partition}") from e
        if walk.offset_gap is not None:
            index, found = walk.offset_gap
            raise InvalidRecordError(
                f"Inner record with offset delta {found} at index {index} of the record batch does not have "
                f"incremental offsets, expected offset delta is {index} in topic partition {self.topic_partition}.")
        if (self.compact and walk.null_keys) or (walk.index and (
                h.attributes & TIMESTAMP_TYPE_MASK or (check_ts and not self._timestamps_in_range(h, walk, now)))):
            self._raise_record_errors(view, h, walk, now, check_ts)
        return None if sink is None else sink.batch(h)

    def _timestamps_in_range(self, h: BatchHeader, walk: RecordWalk, now: int) -> bool:
        base = h.base_timestamp
        return now - self.before_ms <= base + walk.min_ts and base + walk.max_ts <= now + self.after_ms

    def _raise_record_errors(self, view: memoryview, h: BatchHeader, walk: RecordWalk, now: int,
                             check_ts: bool) -> None:
        """Kafka's validateRecord per record (a key error first, else a timestamp error) and processRecordErrors:
        INVALID_TIMESTAMP when any timestamp error, else INVALID_RECORD, both carrying every record error.
        Rare, so the records are walked again with their columns."""
        null_keys = set(walk.null_keys) if self.compact else set()
        lo, hi = now - self.before_ms, now + self.after_ms
        log_append_time_batch = bool(h.attributes & TIMESTAMP_TYPE_MASK)
        errors: list[RecordError] = []
        timestamp_error = False
        for index, offset, ts, key_size, value_size in _records(view, h, self.max_bytes):
            if index in null_keys:
                errors.append((index, "Compacted topic cannot accept message without key in topic partition "
                                      f"{self.topic_partition}"))
            elif self.create_time and ts != _NO_TIMESTAMP:
                if check_ts and not lo <= ts <= hi:
                    timestamp_error = True
                    errors.append((index, f"Timestamp {ts} of message with offset {offset} is out of range. "
                                          f"The timestamp should be within [{_long(lo)}, {_long(hi)}]"))
            elif log_append_time_batch:
                timestamp_error = True
                errors.append((index, f"Invalid timestamp type in message DefaultRecord(offset={offset}, timestamp="
                                      f"{ts}, key={key_size} bytes, value={value_size} bytes). Producer should not "
                                      "set timestamp type to LogAppendTime."))
        if not errors:
            return
        if timestamp_error:
            raise InvalidTimestampRecordsError("One or more records have been rejected due to invalid timestamp",
                                               errors)
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in errors[:3])
        raise InvalidRecordsError(f"One or more records have been rejected due to {len(errors)} record errors in "
                                  f"total, and only showing the first three errors at most: [{shown}]", errors)


def _fed(chunks: Iterator[bytes], sink: Recompressor) -> Iterator[bytes]:
    for chunk in chunks:
        sink.feed(chunk)
        yield chunk


def _long(value: int) -> int:
    """`value` wrapped to a Java long, as Kafka prints now +/- a Long.MAX_VALUE bound."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def _records(view: memoryview, h: BatchHeader, max_bytes: int) -> Iterator[tuple[int, int, int, int, int]]:
    """(index, offset, timestamp, key size, value size) of each record, as Kafka's Record reports them."""
    codec = h.attributes & COMPRESSION_CODEC_MASK
    body = view[RECORD_BATCH_OVERHEAD:]
    data = b"".join(iter_decompress(codec, body, max_bytes)) if codec else bytes(body)
    cols: array[int] = array("q")
    RecordWalk(h.records_count, columns=cols).walk_all(data)
    log_append_time = h.attributes & TIMESTAMP_TYPE_MASK
    for i in range(len(cols) // COLUMNS):
        row = i * COLUMNS
        ts = h.max_timestamp if log_append_time else h.base_timestamp + cols[row + TIMESTAMP_DELTA]
        yield (i, h.base_offset + cols[row + OFFSET_DELTA], ts, max(cols[row + KEY_LEN], 0),
               max(cols[row + VALUE_LEN], 0))
