"""Magic 0/1 message sets ("MessageSet"): a reader for old log segments and a builder for tests.

Byte format (record-format.md section 5), after the 12-byte log overhead (offset int64, size int32):
  crc uint32 (CRC-32 IEEE of magic..end) | magic int8 | attributes int8 (bits 0-2 codec, bit 3 timestamp
  type in v1) | timestamp int64 (v1 only) | keyLength int32 (-1 null) | key | valueLength int32 | value.
A compressed entry is a wrapper whose value is the compressed inner message set. v0 inner offsets are
absolute; v1 inner offsets are relative and the wrapper carries the absolute offset of the last one
(wrapper offset 0 is accepted as "relative = absolute", as Kafka does for old librdkafka).
Kafka 4.x never writes these; Produce rejects them. Views over immutable buffers; thread-safe.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from kafkapy.record.batch_header import LOG_OVERHEAD
from kafkapy.record.compression import (
    MAX_DECOMPRESSED_BYTES,
    CompressionType,
    DecompressionError,
    compress,
    decompress,
)
from kafkapy.record.crc import crc32
from kafkapy.record.default_record import Record
from kafkapy.record.errors import CorruptRecordError, InvalidRecordError

__all__ = [
    "LegacyRecordBatch",
    "LegacyRecordBatchBuilder",
    "RECORD_OVERHEAD_V0",
    "RECORD_OVERHEAD_V1",
]

RECORD_OVERHEAD_V0 = 14
RECORD_OVERHEAD_V1 = 22
_CODEC_MASK = 0x07
_TIMESTAMP_TYPE_MASK = 0x08
_OFFSET_SIZE = struct.Struct(">qi")
_CRC_MAGIC_ATTR = struct.Struct(">IBb")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


class _Message:
    """Fields of one parsed legacy message (outer or inner)."""

    __slots__ = ("offset", "crc", "magic", "attributes", "timestamp", "key", "value", "body")

    def __init__(self, buf: memoryview, offset: int) -> None:
        # buf holds the message without its log overhead
        if len(buf) < RECORD_OVERHEAD_V0:
            raise CorruptRecordError(f"Legacy message size {len(buf)} is below the minimum {RECORD_OVERHEAD_V0}")
        self.offset = offset
        self.body = buf
        self.crc, self.magic, self.attributes = _CRC_MAGIC_ATTR.unpack_from(buf, 0)
        if self.magic > 1:
            raise CorruptRecordError(f"Invalid magic {self.magic} in a legacy message set")
        pos = 6
        if self.magic == 1:
            if len(buf) < RECORD_OVERHEAD_V1:
                raise CorruptRecordError(f"Legacy v1 message size {len(buf)} is below the minimum")
            (self.timestamp,) = _INT64.unpack_from(buf, pos)
            pos += 8
        else:
            self.timestamp = -1
        self.key, pos = self._read_bytes(buf, pos)
        self.value, pos = self._read_bytes(buf, pos)
        if pos != len(buf):
            raise CorruptRecordError(f"Legacy message has {len(buf) - pos} unexpected trailing bytes")

    @staticmethod
    def _read_bytes(buf: memoryview, pos: int) -> tuple[memoryview | None, int]:
        if pos + 4 > len(buf):
            raise CorruptRecordError("Truncated legacy message")
        (n,) = _INT32.unpack_from(buf, pos)
        pos += 4
        if n < 0:
            return None, pos
        if pos + n > len(buf):
            raise CorruptRecordError(f"Legacy message field length {n} exceeds the message")
        return buf[pos:pos + n], pos + n

    @property
    def compression(self) -> int:
        return self.attributes & _CODEC_MASK

    @property
    def timestamp_type(self) -> int:
        return 1 if self.magic == 1 and self.attributes & _TIMESTAMP_TYPE_MASK else 0

    def compute_checksum(self) -> int:
        return crc32(self.body[4:])


def _iter_messages(buf: memoryview) -> list[_Message]:
    """Parse a message set, dropping a partial trailing entry like Kafka's log input streams."""
    out: list[_Message] = []
    pos, end = 0, len(buf)
    while end - pos >= LOG_OVERHEAD:
        offset, size = _OFFSET_SIZE.unpack_from(buf, pos)
        if size < RECORD_OVERHEAD_V0:
            raise CorruptRecordError(f"Record size {size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})")
        if pos + LOG_OVERHEAD + size > end:
            break
        out.append(_Message(buf[pos + LOG_OVERHEAD:pos + LOG_OVERHEAD + size], offset))
        pos += LOG_OVERHEAD + size
    return out


class LegacyRecordBatch:
    """One magic 0/1 log entry (`buf` = log overhead + message): a plain message or a compressed wrapper."""

    __slots__ = ("_buf", "_msg", "_records")
    is_transactional = False
    is_control_batch = False
    has_delete_horizon_ms = False
    producer_id = -1
    producer_epoch = -1
    base_sequence = -1
    last_sequence = -1
    partition_leader_epoch = -1
    records_count = None

    def __init__(self, buf: bytes | bytearray | memoryview) -> None:
        self._buf = memoryview(buf)
        if len(self._buf) < LOG_OVERHEAD:
            raise CorruptRecordError("Legacy batch shorter than the log overhead")
        offset, _ = _OFFSET_SIZE.unpack_from(self._buf, 0)
        self._msg = _Message(self._buf[LOG_OVERHEAD:], offset)
        self._records: list[Record] | None = None

    @property
    def buffer(self) -> memoryview:
        return self._buf

    @property
    def magic(self) -> int:
        return self._msg.magic

    @property
    def offset(self) -> int:
        return self._msg.offset

    @property
    def last_offset(self) -> int:
        return self._msg.offset

    @property
    def next_offset(self) -> int:
        return self._msg.offset + 1

    @property
    def base_offset(self) -> int:
        """First offset; for a compressed wrapper this needs the inner messages (as in Kafka)."""
        if self._msg.compression == 0:
            return self._msg.offset
        return self.records()[0].offset

    @property
    def size_in_bytes(self) -> int:
        return len(self._buf)

    @property
    def crc(self) -> int:
        return self._msg.crc

    @property
    def attributes(self) -> int:
        return self._msg.attributes

    @property
    def compression(self) -> CompressionType:
        return CompressionType.from_id(self._msg.compression)

    @property
    def timestamp_type(self) -> int:
        return self._msg.timestamp_type

    @property
    def timestamp(self) -> int:
        return self._msg.timestamp

    @property
    def max_timestamp(self) -> int:
        return self._msg.timestamp

    @property
    def key(self) -> bytes | None:
        return None if self._msg.key is None else bytes(self._msg.key)

    @property
    def value(self) -> bytes | None:
        return None if self._msg.value is None else bytes(self._msg.value)

    def compute_checksum(self) -> int:
        return self._msg.compute_checksum()

    def is_valid(self) -> bool:
        return self.compute_checksum() == self._msg.crc

    def ensure_valid(self) -> None:
        computed = self.compute_checksum()
        if computed != self._msg.crc:
            raise CorruptRecordError(f"Record is corrupt (stored crc = {self._msg.crc}, computed crc = {computed})")

    def records(self, max_decompressed_bytes: int | None = None) -> list[Record]:
        """The message(s) of this entry; a compressed wrapper's inner set is decompressed up to
        `max_decompressed_bytes` (CorruptRecordError past it; MAX_DECOMPRESSED_BYTES when None)."""
        if self._records is None:
            self._records = self._load_records(max_decompressed_bytes)
        return self._records

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    def _load_records(self, max_decompressed_bytes: int | None) -> list[Record]:
        m = self._msg
        if m.compression == 0:
            return [Record(m.offset, m.timestamp, self.key, self.value, [])]
        if m.compression == CompressionType.ZSTD or m.compression > CompressionType.ZSTD:
            raise InvalidRecordError(f"Invalid wrapper compression type {m.compression} in a legacy message set")
        if m.value is None:
            raise InvalidRecordError(f"Found invalid compressed record set with null value (magic = {m.magic})")
        try:
            inner_buf = decompress(m.compression, m.value, max_decompressed_bytes or MAX_DECOMPRESSED_BYTES)
        except DecompressionError as e:
            raise CorruptRecordError(f"Legacy wrapper at offset {m.offset}: {e}") from e
        inner = _iter_messages(memoryview(inner_buf))
        if not inner:
            raise InvalidRecordError("Found invalid compressed record set with no inner records")
        base = 0
        if m.magic == 1 and m.offset != 0:
            last_inner = inner[-1].offset
            if m.offset < last_inner:
                raise InvalidRecordError(
                    f"Found invalid wrapper offset in compressed v1 message set, wrapper offset '{m.offset}' "
                    f"is less than the last inner message offset '{last_inner}' and it is not zero."
                )
            base = m.offset - last_inner
        log_append = m.timestamp_type == 1
        out: list[Record] = []
        for im in inner:
            if im.compression:
                raise InvalidRecordError("Inner messages must not be compressed")
            offset = base + im.offset if m.magic == 1 else im.offset
            ts = m.timestamp if (log_append and im.magic == 1) else im.timestamp
            out.append(Record(
                offset, ts,
                None if im.key is None else bytes(im.key),
                None if im.value is None else bytes(im.value),
                [],
            ))
        return out

    def __repr__(self) -> str:
        return (
            f"LegacyRecordBatch(magic={self.magic}, offset={self.offset}, "
            f"compression={self.compression.lower_name}, size={len(self._buf)})"
        )


def _encode_message(magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None) -> bytes:
    body = bytearray()
    body += struct.pack(">Bb", magic, attributes)
    if magic == 1:
        body += _INT64.pack(timestamp)
    for field in (key, value):
        if field is None:
            body += _INT32.pack(-1)
        else:
            body += _INT32.pack(len(field))
            body += field
    return struct.pack(">I", crc32(body)) + bytes(body)


def _entry(offset: int, message: bytes) -> bytes:
    return _OFFSET_SIZE.pack(offset, len(message)) + message


class LegacyRecordBatchBuilder:
    """Writes a magic 0/1 message set (tests of the reader only; Kafka 4.x never produces these).

    Uncompressed: one entry per record, offsets base_offset.. . Compressed: one wrapper entry.
    """

    def __init__(self, magic: int, compression: int = CompressionType.NONE, base_offset: int = 0,
                 timestamp_type: int = 0, wrapper_offset: int | None = None) -> None:
        if magic not in (0, 1):
            raise ValueError("legacy magic must be 0 or 1")
        if compression == CompressionType.ZSTD:
            raise ValueError("zstd needs magic 2")
        self.magic = magic
        self.compression = CompressionType(compression)
        self.base_offset = base_offset
        self.timestamp_type = timestamp_type
        self.wrapper_offset = wrapper_offset  # override, e.g. 0 as old librdkafka sends
        self._records: list[tuple[int, bytes | None, bytes | None]] = []

    def append(self, timestamp: int, key: bytes | None, value: bytes | None) -> None:
        self._records.append((timestamp, key, value))

    def build(self) -> bytes:
        ts_attr = _TIMESTAMP_TYPE_MASK if (self.magic == 1 and self.timestamp_type) else 0
        if self.compression == CompressionType.NONE:
            return b"".join(
                _entry(self.base_offset + i, _encode_message(self.magic, ts_attr, ts, k, v))
                for i, (ts, k, v) in enumerate(self._records)
            )
        inner = b"".join(
            _entry(i if self.magic == 1 else self.base_offset + i, _encode_message(self.magic, 0, ts, k, v))
            for i, (ts, k, v) in enumerate(self._records)
        )
        last = self.base_offset + len(self._records) - 1
        wrapper_ts = max((ts for ts, _, _ in self._records), default=-1)
        wrapper = _encode_message(
            self.magic, int(self.compression) | ts_attr, wrapper_ts, None, compress(self.compression, inner)
        )
        return _entry(last if self.wrapper_offset is None else self.wrapper_offset, wrapper)
