"""Record-level work of the log cleaner on magic-2 batches: key scans, filtering and re-writing one batch.

Byte format (record-format.md sections 2-3): a batch is the 61-byte header followed by `recordsCount`
records (compressed as one block when the codec is not none); each record is `length varint,
attributes int8, timestampDelta varlong, offsetDelta varint, keyLength varint, key, valueLength varint,
value, headers`. The scanner is the record walker (record/record_walker.py) plus a copy of each key;
it keeps each record's raw byte span, so a kept record is copied as is: offsets never change (baseOffset, lastOffsetDelta and the
records' offset deltas are kept, as Kafka's MemoryRecords.filterTo keeps them). Only when a batch first
gets Kafka's delete horizon (KIP-534: attribute bit 6, baseTimestamp = horizon) are the records'
timestampDeltas re-encoded against the new base. Producer id, epoch, base sequence, partition leader
epoch, the transactional and control bits and the codec are kept.

Pure functions over bytes; thread-safe.
"""

from __future__ import annotations

from array import array
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
    write_batch,
)
from kafkapy.record.compression import MAX_DECOMPRESSED_BYTES, compress, decompress
from kafkapy.record.record_walker import (
    COLUMNS,
    KEY_LEN,
    KEY_POS,
    OFFSET_DELTA,
    REC_END,
    REC_START,
    TIMESTAMP_DELTA,
    VALUE_LEN,
    RecordWalk,
)
from kafkapy.record.varint import decode_varint, decode_varlong, encode_varint, encode_varlong

__all__ = ["ScannedRecord", "scan_records", "records_payload", "build_filtered_batch", "build_empty_batch",
           "has_delete_horizon"]



class ScannedRecord(NamedTuple):
    offset_delta: int
    timestamp_delta: int
    key: bytes | None
    has_value: bool
    start: int  # the record's bytes (length prefix included) in the records payload
    end: int


def has_delete_horizon(header: BatchHeader) -> bool:
    return bool(header.attributes & DELETE_HORIZON_FLAG_MASK)


def records_payload(batch: bytes | memoryview, header: BatchHeader,
                    max_bytes: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """The batch's records section, decompressed (streamed, failing past `max_bytes` of output)."""
    body = bytes(batch[RECORD_BATCH_OVERHEAD:header.batch_length + LOG_OVERHEAD])
    codec = header.attributes & COMPRESSION_CODEC_MASK
    return decompress(codec, body, max_bytes) if codec else body


def scan_records(data: bytes, count: int) -> list[ScannedRecord]:
    """Each record's offset delta, timestamp delta, key, whether it has a value, and its byte span:
    the record walker's columns, with the key copied out (the cleaner's offset map needs it)."""
    cols: array[int] = array("q")
    RecordWalk(count, columns=cols).walk_all(data)
    new_tuple = tuple.__new__
    out: list[ScannedRecord] = []
    append = out.append
    for i in range(0, len(cols), COLUMNS):
        kl = cols[i + KEY_LEN]
        kp = cols[i + KEY_POS]
        append(new_tuple(ScannedRecord, (cols[i + OFFSET_DELTA], cols[i + TIMESTAMP_DELTA],
                                         None if kl < 0 else data[kp:kp + kl], cols[i + VALUE_LEN] >= 0,
                                         cols[i + REC_START], cols[i + REC_END])))
    return out


def _rebase_timestamp(data: bytes, rec: ScannedRecord, shift: int) -> bytes:
    """The record re-encoded with timestampDelta + shift (every other byte copied)."""
    length, pos = decode_varint(data, rec.start)
    attrs = data[pos:pos + 1]
    _, after_ts = decode_varlong(data, pos + 1)
    body = attrs + encode_varlong(rec.timestamp_delta + shift) + data[after_ts:rec.end]
    return encode_varint(len(body)) + body


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
    return write_batch(header, attributes, new_base, max_ts, len(kept), payload)


def build_empty_batch(header: BatchHeader) -> bytes:
    """Kafka's writeEmptyHeader: the batch header alone (no records, no codec) keeping a producer's last
    sequence and offsets (BatchRetention.RETAIN_EMPTY)."""
    attributes = header.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK
                                      | DELETE_HORIZON_FLAG_MASK)
    return write_batch(header, attributes, header.max_timestamp, header.max_timestamp, 0, b"")
