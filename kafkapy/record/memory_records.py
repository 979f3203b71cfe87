"""MemoryRecords: a read-only view of concatenated record batches, and Produce-time validation.

Byte format (record-format.md sections 1-2, 5): batches of any magic; each starts with baseOffset int64
and size int32; the magic byte is at offset 16. Magic 2 batches are viewed by DefaultRecordBatch, magic
0/1 message sets by legacy_record.LegacyRecordBatch. A partial trailing batch is dropped (Fetch
responses may end in one). `validate_produce_records` does per-batch work only (header + CRC-32C), never
decodes records: it is on the broker's produce path.
Views over immutable buffers; thread-safe as long as the buffer is not mutated.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

from kafkapy.record.batch_header import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    DELETE_HORIZON_FLAG_MASK,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAX_TIMESTAMP_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    BatchHeader,
    read_batch_header,
)
from kafkapy.record.compression import CompressionType, DecompressionError, decompress
from kafkapy.record.control_record import ControlRecordType, parse_control_type
from kafkapy.record.crc import crc32c
from kafkapy.record.default_record import Record, decode_records
from kafkapy.record.errors import (
    CorruptRecordError,
    InvalidRecordError,
    RecordValidationError,
    UnsupportedCompressionTypeError,
)
from kafkapy.record.legacy_record import RECORD_OVERHEAD_V0 as LEGACY_RECORD_OVERHEAD_V0

if TYPE_CHECKING:
    from kafkapy.record.legacy_record import LegacyRecordBatch

__all__ = [
    "MemoryRecords",
    "DefaultRecordBatch",
    "validate_produce_records",
    "set_max_timestamp",
    "CorruptRecordError",
    "InvalidRecordError",
    "RecordValidationError",
    "UnsupportedCompressionTypeError",
    "LEGACY_RECORD_OVERHEAD_V0",
]

_SIZE = struct.Struct(">i")
_ATTRIBUTES = struct.Struct(">h")
_INT64 = struct.Struct(">q")
_CRC = struct.Struct(">I")
_MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49


class DefaultRecordBatch:
    """View of one magic-2 batch (`buf` holds exactly the batch, log overhead included)."""

    __slots__ = ("_buf", "_header")
    magic = 2

    def __init__(self, buf: bytes | bytearray | memoryview) -> None:
        self._buf = memoryview(buf)
        if len(self._buf) < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(
                f"Record batch is corrupt (the size {len(self._buf)} is smaller than the minimum "
                f"allowed overhead {RECORD_BATCH_OVERHEAD})"
            )
        self._header = read_batch_header(self._buf, 0)

    # header fields
    @property
    def header(self) -> BatchHeader:
        return self._header

    @property
    def buffer(self) -> memoryview:
        return self._buf

    @property
    def base_offset(self) -> int:
        return self._header.base_offset

    @property
    def last_offset_delta(self) -> int:
        return self._header.last_offset_delta

    @property
    def last_offset(self) -> int:
        return self._header.base_offset + self._header.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def batch_length(self) -> int:
        return self._header.batch_length

    @property
    def size_in_bytes(self) -> int:
        return len(self._buf)

    @property
    def partition_leader_epoch(self) -> int:
        return self._header.partition_leader_epoch

    @property
    def crc(self) -> int:
        """The stored checksum."""
        return self._header.crc

    @property
    def attributes(self) -> int:
        return self._header.attributes

    @property
    def compression(self) -> CompressionType:
        return CompressionType.from_id(self._header.attributes & COMPRESSION_CODEC_MASK)

    @property
    def timestamp_type(self) -> int:
        """0 CreateTime, 1 LogAppendTime."""
        return 1 if self._header.attributes & TIMESTAMP_TYPE_MASK else 0

    @property
    def is_transactional(self) -> bool:
        return bool(self._header.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control_batch(self) -> bool:
        return bool(self._header.attributes & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon_ms(self) -> bool:
        return bool(self._header.attributes & DELETE_HORIZON_FLAG_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        return self._header.base_timestamp if self.has_delete_horizon_ms else None

    @property
    def base_timestamp(self) -> int:
        return self._header.base_timestamp

    @property
    def max_timestamp(self) -> int:
        return self._header.max_timestamp

    @property
    def producer_id(self) -> int:
        return self._header.producer_id

    @property
    def has_producer_id(self) -> bool:
        return self._header.producer_id >= 0

    @property
    def producer_epoch(self) -> int:
        return self._header.producer_epoch

    @property
    def base_sequence(self) -> int:
        return self._header.base_sequence

    @property
    def last_sequence(self) -> int:
        """baseSequence + lastOffsetDelta, wrapping past 2^31-1 to 0; -1 when there is no sequence."""
        base = self._header.base_sequence
        if base < 0:
            return -1
        return (base + self._header.last_offset_delta) & 0x7FFFFFFF

    @property
    def records_count(self) -> int:
        return self._header.records_count

    # validity
    def compute_checksum(self) -> int:
        return crc32c(self._buf[ATTRIBUTES_OFFSET:])

    def is_valid(self) -> bool:
        return self._header.batch_length + LOG_OVERHEAD == len(self._buf) and (
            self.compute_checksum() == self._header.crc
        )

    def ensure_valid(self) -> None:
        if self._header.batch_length + LOG_OVERHEAD != len(self._buf):
            raise CorruptRecordError(
                f"Record batch length {self._header.batch_length} does not match the {len(self._buf)} "
                "bytes of the batch"
            )
        computed = self.compute_checksum()
        if computed != self._header.crc:
            raise CorruptRecordError(
                f"Record is corrupt (stored crc = {self._header.crc}, computed crc = {computed})"
            )

    # records
    def records(self, max_decompressed_bytes: int | None = None) -> list[Record]:
        """Decode every record (decompressing if needed). Raises CorruptRecordError on malformed data."""
        h = self._header
        if h.records_count < 0:
            raise CorruptRecordError(f"Found invalid record count {h.records_count} in magic v2 batch")
        codec = h.attributes & COMPRESSION_CODEC_MASK
        data: bytes | memoryview = self._buf[RECORD_BATCH_OVERHEAD:]
        if codec:
            try:
                if max_decompressed_bytes is None:
                    data = decompress(CompressionType.from_id(codec), data)
                else:
                    data = decompress(CompressionType.from_id(codec), data, max_decompressed_bytes)
            except (DecompressionError, ValueError) as e:
                raise CorruptRecordError(f"Batch at offset {h.base_offset}: {e}") from e
        override = h.max_timestamp if h.attributes & TIMESTAMP_TYPE_MASK else None
        return decode_records(data, h.records_count, h.base_offset, h.base_timestamp, override)

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    def control_record_type(self) -> ControlRecordType | None:
        """The type (ABORT, COMMIT, ..., UNKNOWN) of a control batch's first record; None if not a control batch."""
        if not self.is_control_batch:
            return None
        for rec in self.records():
            return parse_control_type(rec.key)
        return None

    def __repr__(self) -> str:
        h = self._header
        return (
            f"DefaultRecordBatch(magic=2, offsets=[{h.base_offset}, {self.last_offset}], "
            f"count={h.records_count}, compression={self.compression.lower_name}, size={len(self._buf)})"
        )


class MemoryRecords:
    """Concatenated batches of any magic in one buffer (a Produce/Fetch `records` field or a log slice)."""

    __slots__ = ("_buf",)

    def __init__(self, buf: bytes | bytearray | memoryview) -> None:
        self._buf = memoryview(buf)

    @property
    def buffer(self) -> memoryview:
        return self._buf

    def size_in_bytes(self) -> int:
        return len(self._buf)

    def batches(self) -> Iterator[DefaultRecordBatch | LegacyRecordBatch]:
        """Yield each complete batch; stop at a partial trailing batch.

        Raises CorruptRecordError for a size below the smallest message (the walk cannot continue).
        """
        buf = self._buf
        end = len(buf)
        pos = 0
        while end - pos >= LOG_OVERHEAD:
            (size,) = _SIZE.unpack_from(buf, pos + 8)
            if size < LEGACY_RECORD_OVERHEAD_V0:
                raise CorruptRecordError(
                    f"Record size {size} is less than the minimum record overhead ({LEGACY_RECORD_OVERHEAD_V0})"
                )
            batch_end = pos + LOG_OVERHEAD + size
            if batch_end > end:
                return
            magic = buf[pos + MAGIC_OFFSET]
            if magic >= 2:
                yield DefaultRecordBatch(buf[pos:batch_end])
            else:
                from kafkapy.record.legacy_record import LegacyRecordBatch

                yield LegacyRecordBatch(buf[pos:batch_end])
            pos = batch_end

    def __iter__(self) -> Iterator[DefaultRecordBatch | LegacyRecordBatch]:
        return self.batches()

    def valid_bytes(self) -> int:
        """Bytes covered by complete batches (the partial tail excluded)."""
        return sum(b.size_in_bytes for b in self.batches())

    def records(self) -> Iterator[Record]:
        for batch in self.batches():
            yield from batch.records()


def validate_produce_records(
    buf: bytes | bytearray | memoryview,
    *,
    require_single_batch: bool = False,
    from_client: bool = False,
    produce_version: int | None = None,
) -> list[BatchHeader]:
    """Check a Produce `records` field batch by batch (header + CRC only) and return the headers.

    Always (any origin; Kafka 4.x accepts only magic 2):
      size field >= 14, batch fully inside `buf`, no trailing bytes -> CorruptRecordError;
      magic != 2 -> InvalidRecordError; batchLength >= 49, CRC-32C valid -> CorruptRecordError;
      recordsCount >= 0, lastOffsetDelta >= 0, known compression id -> InvalidRecordError.
    require_single_batch (ProduceRequest.validateRecords): at least one and exactly one batch, checked
      before the CRC as Kafka does -> else InvalidRecordError.
    produce_version: named in messages; zstd with a version < 7 -> UnsupportedCompressionTypeError.
    from_client (LogValidator.validateBatch / UnifiedLog rules for AppendOrigin.CLIENT): baseOffset 0,
      recordsCount > 0 and == lastOffsetDelta + 1, no control batch, baseSequence >= 0 when a
      producerId is set -> else InvalidRecordError.
    """
    mv = memoryview(buf)
    end = len(mv)
    pos = 0
    headers: list[BatchHeader] = []
    if end == 0 and require_single_batch:
        raise InvalidRecordError(f"{_what(produce_version)} must have at least one record batch per partition")
    while pos < end:
        # Inline _complete_batch_end: this loop runs once per produced batch.
        if end - pos < LOG_OVERHEAD:
            batch_end = -1
        else:
            (size,) = _SIZE.unpack_from(mv, pos + 8)
            if size < LEGACY_RECORD_OVERHEAD_V0:
                raise CorruptRecordError(
                    f"Record size {size} is less than the minimum record overhead ({LEGACY_RECORD_OVERHEAD_V0})"
                )
            batch_end = pos + LOG_OVERHEAD + size
            if batch_end > end:
                batch_end = -1
        if batch_end < 0:
            if not headers and require_single_batch:
                raise InvalidRecordError(f"{_what(produce_version)} must have at least one record batch per partition")
            _raise_incomplete(mv, pos, end)
        if mv[pos + MAGIC_OFFSET] != 2:
            raise InvalidRecordError(
                f"{_what(produce_version)} are only allowed to contain record batches with magic version 2")
        if size < _MIN_BATCH_LENGTH:
            raise CorruptRecordError(
                f"Record batch is corrupt (batchLength {size} is smaller than the minimum {_MIN_BATCH_LENGTH})"
            )
        h = read_batch_header(mv, pos)
        codec = h.attributes & COMPRESSION_CODEC_MASK
        if codec == CompressionType.ZSTD and produce_version is not None and produce_version < 7:
            raise UnsupportedCompressionTypeError(f"{_what(produce_version)} are not allowed to use ZStandard compression")
        if require_single_batch and batch_end < end and _complete_batch_end(mv, batch_end, end) >= 0:
            raise InvalidRecordError(
                f"{_what(produce_version)} are only allowed to contain exactly one record batch per partition")
        computed = crc32c(mv[pos + ATTRIBUTES_OFFSET:batch_end])
        if computed != h.crc:
            raise CorruptRecordError(f"Record is corrupt (stored crc = {h.crc}, computed crc = {computed})")
        if h.records_count < 0:
            raise InvalidRecordError(f"Invalid reported count for record batch: {h.records_count}")
        if h.last_offset_delta < 0:
            raise InvalidRecordError(f"Invalid lastOffsetDelta {h.last_offset_delta} in record batch")
        if codec > CompressionType.ZSTD:
            raise InvalidRecordError(f"Unknown compression type id {codec}")
        if from_client:
            _check_client_batch(h)
        headers.append(h)
        pos = batch_end
    return headers


def _what(produce_version: int | None) -> str:
    return "Produce requests" if produce_version is None else f"Produce requests with version {produce_version}"


def _complete_batch_end(mv: memoryview, pos: int, end: int) -> int:
    """End of the complete batch at `pos`, or -1 if it is partial. Raises for a size below 14 (as Kafka's stream)."""
    if end - pos < LOG_OVERHEAD:
        return -1
    (size,) = _SIZE.unpack_from(mv, pos + 8)
    if size < LEGACY_RECORD_OVERHEAD_V0:
        raise CorruptRecordError(
            f"Record size {size} is less than the minimum record overhead ({LEGACY_RECORD_OVERHEAD_V0})"
        )
    batch_end = pos + LOG_OVERHEAD + size
    return batch_end if batch_end <= end else -1


def _raise_incomplete(mv: memoryview, pos: int, end: int) -> NoReturn:
    remaining = end - pos
    if remaining < LOG_OVERHEAD:
        raise CorruptRecordError(f"{remaining} trailing bytes after the last record batch at position {pos}")
    (size,) = _SIZE.unpack_from(mv, pos + 8)
    raise CorruptRecordError(
        f"Record batch at position {pos} is truncated: batchLength {size} but only "
        f"{remaining - LOG_OVERHEAD} bytes follow"
    )


def set_max_timestamp(buf: bytearray | memoryview, pos: int, timestamp_type: int, max_timestamp: int) -> None:
    """Rewrite a magic-2 batch's timestamp type bit and maxTimestamp in place and recompute its CRC.

    What the leader does for LogAppendTime topics (timestamp_type 1, max_timestamp = append time); a no-op
    when both already hold those values, so the CRC is recomputed only when bytes change (as Kafka does).
    """
    h = read_batch_header(buf, pos)
    current_type = 1 if h.attributes & TIMESTAMP_TYPE_MASK else 0
    if current_type == timestamp_type and h.max_timestamp == max_timestamp:
        return
    attributes = (h.attributes & ~TIMESTAMP_TYPE_MASK) | (TIMESTAMP_TYPE_MASK if timestamp_type else 0)
    _ATTRIBUTES.pack_into(buf, pos + ATTRIBUTES_OFFSET, attributes)
    _INT64.pack_into(buf, pos + MAX_TIMESTAMP_OFFSET, max_timestamp)
    batch_end = pos + LOG_OVERHEAD + h.batch_length
    _CRC.pack_into(buf, pos + CRC_OFFSET, crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET:batch_end]))


def _check_client_batch(h: BatchHeader) -> None:
    if h.base_offset != 0:
        raise InvalidRecordError(f"The baseOffset of the record batch in the append should be 0, but it is {h.base_offset}")
    count_from_offsets = h.last_offset_delta + 1
    if h.records_count <= 0:
        raise InvalidRecordError(f"Invalid reported count for record batch: {h.records_count}")
    if count_from_offsets != h.records_count:
        raise InvalidRecordError(
            f"Inconsistent batch offset range [{h.base_offset}, {h.base_offset + h.last_offset_delta}] "
            f"and count of records {h.records_count}"
        )
    if h.attributes & CONTROL_FLAG_MASK:
        raise InvalidRecordError("Clients are not allowed to write control records")
    if h.producer_id >= 0 and h.base_sequence < 0:
        raise InvalidRecordError(
            f"Invalid sequence number {h.base_sequence} in record batch with producerId {h.producer_id}"
        )
