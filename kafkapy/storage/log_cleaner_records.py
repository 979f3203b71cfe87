"""Record-level work of the log cleaner on magic-2 batches: key scans, filtering and re-writing one batch.

Byte format (record-format.md sections 2-3): a batch is the 61-byte header followed by `recordsCount`
records (compressed as one block when the codec is not none); each record is `length varint,
attributes int8, timestampDelta varlong, offsetDelta varint, keyLength varint, key, valueLength varint,
value, headers`. The scanner reads only the fields up to the value length and keeps each record's raw
bytes, so a kept record is copied as is: offsets never change (baseOffset, lastOffsetDelta and the
records' offset deltas are kept, as Kafka's MemoryRecords.filterTo keeps them). Only when a batch first
gets Kafka's delete horizon (KIP-534: attribute bit 6, baseTimestamp = horizon) are the records'
timestampDeltas re-encoded against the new base. Producer id, epoch, base sequence, partition leader
epoch, the transactional and control bits and the codec are kept.

Pure functions over bytes; thread-safe.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafkapy.record.batch_header import (
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    BatchHeader,
)
from kafkapy.record.compression import compress, decompress
from kafkapy.record.crc import crc32c
from kafkapy.record.errors import CorruptRecordError, InvalidRecordError
from kafkapy.record.varint import VarintError, decode_varint, decode_varlong, encode_varint, encode_varlong

__all__ = ["ScannedRecord", "scan_records", "records_payload", "build_filtered_batch", "build_empty_batch",
           "first_record_without_key", "has_delete_horizon", "check_compacted_topic_keys"]

_HEADER_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. recordsCount
_PREFIX = struct.Struct(">qiib")  # baseOffset, batchLength, partitionLeaderEpoch, magic


class ScannedRecord(NamedTuple):
    offset_delta: int
    timestamp_delta: int
    key: bytes | None
    has_value: bool
    start: int  # the record's bytes (length prefix included) in the records payload
    end: int


def has_delete_horizon(header: BatchHeader) -> bool:
    return bool(header.attributes & DELETE_HORIZON_FLAG_MASK)


def records_payload(batch: bytes | memoryview, header: BatchHeader) -> bytes:
    """The batch's records section, decompressed."""
    body = bytes(batch[RECORD_BATCH_OVERHEAD:header.batch_length + LOG_OVERHEAD])
    codec = header.attributes & COMPRESSION_CODEC_MASK
    return decompress(codec, body) if codec else body


def scan_records(data: bytes, count: int) -> list[ScannedRecord]:
    """Each record's offset delta, timestamp delta, key, whether it has a value, and its byte span.

    Varints of 1 and 2 bytes (nearly all lengths and deltas) are decoded inline: this loop is the
    cleaner's per-record cost."""
    out: list[ScannedRecord] = []
    append = out.append
    new_tuple = tuple.__new__
    slow = decode_varlong  # zigzag, up to 10 bytes
    pos = 0
    n = len(data)
    try:
        for _ in range(count):
            start = pos
            b = data[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                length = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                length, pos = slow(data, pos)
            end = pos + length
            if length < 0 or end > n:
                raise CorruptRecordError(f"Invalid record size {length} at position {start}")
            pos += 1  # attributes
            b = data[pos]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                ts_delta = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                ts_delta, pos = slow(data, pos)
            b = data[pos]
            if b < 0x80:
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                offset_delta = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                offset_delta, pos = slow(data, pos)
            b = data[pos]
            if b < 0x80:
                klen = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                klen, pos = slow(data, pos)
            key = None
            if klen >= 0:
                key = data[pos:pos + klen]
                pos += klen
            has_value = data[pos] != 1  # valueLength -1 is the one-byte varint 0x01
            append(new_tuple(ScannedRecord, (offset_delta, ts_delta, key, has_value, start, end)))
            pos = end
    except (IndexError, VarintError) as e:
        raise CorruptRecordError(f"Malformed record at position {pos}: {e}") from e
    if pos != n:
        raise CorruptRecordError(f"{n - pos} bytes left over after the last of {count} records")
    return out


def first_record_without_key(batch: bytes | memoryview, header: BatchHeader) -> int:
    """Index of the first record with a null key in a (non-control) magic-2 batch, or -1."""
    data = records_payload(batch, header)
    for i, rec in enumerate(scan_records(data, header.records_count)):
        if rec.key is None:
            return i
    return -1


def _rebase_timestamp(data: bytes, rec: ScannedRecord, shift: int) -> bytes:
    """The record re-encoded with timestampDelta + shift (every other byte copied)."""
    length, pos = decode_varint(data, rec.start)
    attrs = data[pos:pos + 1]
    _, after_ts = decode_varlong(data, pos + 1)
    body = attrs + encode_varlong(rec.timestamp_delta + shift) + data[after_ts:rec.end]
    return encode_varint(len(body)) + body


def _write_batch(header: BatchHeader, attributes: int, base_timestamp: int, max_timestamp: int,
                 records_count: int, records: bytes) -> bytes:
    after_crc = _HEADER_AFTER_CRC.pack(attributes, header.last_offset_delta, base_timestamp, max_timestamp,
                                       header.producer_id, header.producer_epoch, header.base_sequence,
                                       records_count) + records
    batch_length = len(after_crc) + 4 + 1 + 4  # crc, magic, partitionLeaderEpoch
    return (_PREFIX.pack(header.base_offset, batch_length, header.partition_leader_epoch, 2)
            + crc32c(after_crc).to_bytes(4, "big") + after_crc)


def build_filtered_batch(header: BatchHeader, data: bytes, kept: list[ScannedRecord],
                         delete_horizon_ms: int | None) -> bytes:
    """A batch with the same offsets and producer metadata holding only `kept` records of `data`.

    `delete_horizon_ms` (not None) sets Kafka's delete horizon: baseTimestamp becomes it and the kept
    records' timestamp deltas are re-based so that every record keeps its timestamp.
    """
    attributes = header.attributes
    base_ts = header.base_timestamp
    if delete_horizon_ms is not None:
        shift = base_ts - delete_horizon_ms
        payload = b"".join(_rebase_timestamp(data, r, shift) for r in kept)
        attributes |= DELETE_HORIZON_FLAG_MASK
        new_base = delete_horizon_ms
    else:
        payload = b"".join(data[r.start:r.end] for r in kept)
        new_base = base_ts
    if attributes & TIMESTAMP_TYPE_MASK:
        max_ts = header.max_timestamp  # LogAppendTime: the batch's append time
    else:
        max_ts = max(base_ts + r.timestamp_delta for r in kept) if kept else header.max_timestamp
    codec = attributes & COMPRESSION_CODEC_MASK
    if codec:
        payload = compress(codec, payload)
    return _write_batch(header, attributes, new_base, max_ts, len(kept), payload)


def build_empty_batch(header: BatchHeader) -> bytes:
    """Kafka's writeEmptyHeader: the batch header alone (no records, no codec) keeping a producer's last
    sequence and offsets (BatchRetention.RETAIN_EMPTY)."""
    attributes = header.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK
                                      | DELETE_HORIZON_FLAG_MASK)
    return _write_batch(header, attributes, header.max_timestamp, header.max_timestamp, 0, b"")



def check_compacted_topic_keys(buf: bytes | bytearray | memoryview, headers: list[BatchHeader],
                               topic_partition: object) -> None:
    """Kafka's LogValidator.validateKey for a compacted topic: every record of every (non-control) batch
    needs a key. Raises INVALID_RECORD carrying Kafka's record errors (record index in its batch, message)."""
    errors: list[tuple[int, str]] = []
    pos = 0
    view = memoryview(buf)
    for h in headers:
        size = h.batch_length + LOG_OVERHEAD
        if not h.attributes & CONTROL_FLAG_MASK and h.records_count > 0:
            data = records_payload(view[pos:pos + size], h)
            for i, rec in enumerate(scan_records(data, h.records_count)):
                if rec.key is None:
                    errors.append((i, f"Compacted topic cannot accept message without key in topic partition "
                                      f"{topic_partition}"))
        pos += size
    if errors:
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in errors[:3])
        exc = InvalidRecordError(f"One or more records have been rejected due to {len(errors)} record errors in "
                                 f"total, and only showing the first three errors at most: [{shown}]")
        exc.record_errors = errors  # type: ignore[attr-defined]
        raise exc
