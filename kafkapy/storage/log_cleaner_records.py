"""Record-level work of the log cleaner on magic-2 batches: key scans, filtering and re-writing one batch.

Byte format (record-format.md sections 2-3): a batch is the 61-byte header followed by `recordsCount`
records (compressed as one block when the codec is not none); each record is `length varint,
attributes int8, timestampDelta varlong, offsetDelta varint, keyLength varint, key, valueLength varint,
value, headers`. A batch is read as a stream (record_chunks: the record walker's chunked walk over the
streaming decompressor, so one chunk and one record are held, never the whole batch nor an object per
record); a kept record's bytes are copied as they are into a FilteredBatchWriter, which compresses them
as they come: offsets never change (baseOffset, lastOffsetDelta and the
records' offset deltas are kept, as Kafka's MemoryRecords.filterTo keeps them). Only when a batch first
gets Kafka's delete horizon (KIP-534: attribute bit 6, baseTimestamp = horizon) are the records'
timestampDeltas re-encoded against the new base. Producer id, epoch, base sequence, partition leader
epoch, the transactional and control bits and the codec are kept.

Pure functions over bytes and single-owner writers; thread-safe.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

from kafkapy.record.batch_header import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    BatchHeader,
    write_batch,
)
from kafkapy.record.compression import MAX_DECOMPRESSED_BYTES, CompressionType, iter_decompress
from kafkapy.record.record_walker import REC_END, REC_START, TIMESTAMP_DELTA, RecordWalk
from kafkapy.record.varint import decode_varint, decode_varlong, encode_varint, encode_varlong
from kafkapy.storage.log_recompress import Recompressor

__all__ = ["record_chunks", "FilteredBatchWriter", "build_empty_batch", "has_delete_horizon",
           "CLEANER_MIN_PAYLOAD_CAP"]

# Decompressed bytes one batch may hold: produce validation keeps a batch within max.message.bytes of
# decompressed records; this floor tolerates a limit lowered since.
CLEANER_MIN_PAYLOAD_CAP = 16 << 20


def has_delete_horizon(header: BatchHeader) -> bool:
    return bool(header.attributes & DELETE_HORIZON_FLAG_MASK)


def record_chunks(batch: bytes | memoryview, header: BatchHeader,
                  max_bytes: int = MAX_DECOMPRESSED_BYTES) -> Iterator[tuple[bytes, array[int]]]:
    """The batch's records as (buffer, record-walker columns) pieces, decompressed as a stream that fails
    past `max_bytes`: one chunk, one record and one piece's columns are held at a time."""
    body = memoryview(batch)[RECORD_BATCH_OVERHEAD:header.batch_length + LOG_OVERHEAD]
    codec = header.attributes & COMPRESSION_CODEC_MASK
    chunks: Iterable[bytes] = iter_decompress(codec, body, max_bytes) if codec else (bytes(body),)
    return RecordWalk(header.records_count).walk_chunk_columns(chunks)


def _rebase_timestamp(data: bytes, start: int, end: int, timestamp_delta: int, shift: int) -> bytes:
    """The record at data[start:end] re-encoded with timestampDelta + shift (every other byte copied)."""
    _length, pos = decode_varint(data, start)
    attrs = data[pos:pos + 1]
    _, after_ts = decode_varlong(data, pos + 1)
    body = attrs + encode_varlong(timestamp_delta + shift) + data[after_ts:end]
    return encode_varint(len(body)) + body


class FilteredBatchWriter:
    """Builds a batch with `header`'s offsets and producer metadata holding the records added to it (their
    bytes copied as they are), compressed as they come with the batch's codec (log_recompress.Recompressor).

    `delete_horizon_ms` (not None) sets Kafka's delete horizon: baseTimestamp becomes it and the kept
    records' timestamp deltas are re-based so that every record keeps its timestamp."""

    def __init__(self, header: BatchHeader, delete_horizon_ms: int | None) -> None:
        self.header = header
        self.delete_horizon_ms = delete_horizon_ms
        self.shift = None if delete_horizon_ms is None else header.base_timestamp - delete_horizon_ms
        codec = header.attributes & COMPRESSION_CODEC_MASK
        self._sink = Recompressor(CompressionType(codec), None)
        self.count = 0
        self.max_delta: int | None = None

    def add(self, data: bytes, cols: array[int], rows: Iterable[int]) -> None:
        """Add the records at `rows` (row offsets i * COLUMNS into `cols`) of one `record_chunks` piece."""
        pieces = []
        shift = self.shift
        max_delta = self.max_delta
        for row in rows:
            start, end, ts_delta = cols[row + REC_START], cols[row + REC_END], cols[row + TIMESTAMP_DELTA]
            pieces.append(data[start:end] if shift is None else _rebase_timestamp(data, start, end, ts_delta, shift))
            if max_delta is None or ts_delta > max_delta:
                max_delta = ts_delta
        self.max_delta = max_delta
        self.count += len(pieces)
        if pieces:
            self._sink.feed(b"".join(pieces))

    def build(self) -> bytes:
        header = self.header
        attributes = header.attributes
        new_base = header.base_timestamp
        if self.delete_horizon_ms is not None:
            attributes |= DELETE_HORIZON_FLAG_MASK
            new_base = self.delete_horizon_ms
        if attributes & TIMESTAMP_TYPE_MASK or self.max_delta is None:
            max_ts = header.max_timestamp  # LogAppendTime: the batch's append time
        else:
            max_ts = header.base_timestamp + self.max_delta
        return write_batch(header, attributes, new_base, max_ts, self.count, self._sink.payload())


def build_empty_batch(header: BatchHeader) -> bytes:
    """Kafka's writeEmptyHeader: the batch header alone (no records, no codec) keeping a producer's last
    sequence and offsets (BatchRetention.RETAIN_EMPTY)."""
    attributes = header.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK
                                      | DELETE_HORIZON_FLAG_MASK)
    return write_batch(header, attributes, header.max_timestamp, header.max_timestamp, 0, b"")
