"""Primitive readers/writers of Kafka's wire types (big-endian), shared by the message runtime and headers.

Byte formats: int8..int64, uint16/uint32, float64 (IEEE-754), uuid (16 bytes), string (int16 length,
-1 = null), bytes (int32 length, -1 = null), compact string/bytes (unsigned varint N+1, 0 = null),
unsigned varint (7 bits per byte, low group first, at most 5 bytes), zig-zag varint/varlong, and
tagged-field sections (count, then tag/size/data triples).

Readers take `(data, pos)` over bytes or a 1-D byte memoryview and return `(value, new_pos)`;
writers return bytes.  Malformed or truncated input raises ProtocolDecodeError.  Pure functions and
immutable tables only: thread-safe.
"""

from __future__ import annotations

import base64
import struct
import uuid
from typing import Any

Buffer = Any  # bytes | bytearray | memoryview


class ProtocolDecodeError(ValueError):
    """Malformed or truncated protocol input."""


INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
UINT16 = struct.Struct(">H")
INT32 = struct.Struct(">i")
UINT32 = struct.Struct(">I")
INT64 = struct.Struct(">q")
FLOAT64 = struct.Struct(">d")
BOOL = struct.Struct(">?")

ZERO_UUID = uuid.UUID(int=0)

# One-byte unsigned varints, precomputed: most lengths and counts fit in 7 bits.
UVARINT1: tuple[bytes, ...] = tuple(bytes((i,)) for i in range(128))


def read_uvarint(data: Buffer, pos: int) -> tuple[int, int]:
    """Unsigned varint of at most 5 bytes (Kafka's int32 varints)."""
    value = 0
    shift = 0
    for i in range(5):
        try:
            b = data[pos + i]
        except IndexError:
            raise ProtocolDecodeError("truncated unsigned varint") from None
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos + i + 1
        shift += 7
    raise ProtocolDecodeError("unsigned varint longer than 5 bytes")


def write_uvarint(value: int) -> bytes:
    if value < 0x80:
        if value < 0:
            raise ValueError(f"unsigned varint cannot be negative: {value}")
        return UVARINT1[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data: Buffer, pos: int) -> tuple[int, int]:
    """Zig-zag signed varint (int32, at most 5 bytes)."""
    raw, pos = read_uvarint(data, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def write_varint(value: int) -> bytes:
    return write_uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def read_varlong(data: Buffer, pos: int) -> tuple[int, int]:
    """Zig-zag signed varlong (int64, at most 10 bytes)."""
    raw = 0
    shift = 0
    for i in range(10):
        try:
            b = data[pos + i]
        except IndexError:
            raise ProtocolDecodeError("truncated varlong") from None
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            return (raw >> 1) ^ -(raw & 1), pos + i + 1
        shift += 7
    raise ProtocolDecodeError("varlong longer than 10 bytes")


def write_varlong(value: int) -> bytes:
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    return write_uvarint(raw)


def _slice(data: Buffer, pos: int, n: int) -> tuple[Buffer, int]:
    end = pos + n
    if end > len(data):
        raise ProtocolDecodeError(f"need {n} bytes at {pos}, only {len(data) - pos} left")
    return data[pos:end], end


def _unpack(s: struct.Struct, data: Buffer, pos: int) -> tuple[Any, int]:
    try:
        return s.unpack_from(data, pos)[0], pos + s.size
    except struct.error:
        raise ProtocolDecodeError(f"truncated input at {pos}") from None


def read_int8(data: Buffer, pos: int) -> tuple[int, int]:
    return _unpack(INT8, data, pos)


def read_int16(data: Buffer, pos: int) -> tuple[int, int]:
    return _unpack(INT16, data, pos)


def read_uint16(data: Buffer, pos: int) -> tuple[int, int]:
    return _unpack(UINT16, data, pos)


def read_int32(data: Buffer, pos: int) -> tuple[int, int]:
    return _unpack(INT32, data, pos)


def read_uint32(data: Buffer, pos: int) -> tuple[int, int]:
    return _unpack(UINT32, data, pos)


def read_int64(data: Buffer, pos: int) -> tuple[int, int]:
    return _unpack(INT64, data, pos)


def read_float64(data: Buffer, pos: int) -> tuple[float, int]:
    return _unpack(FLOAT64, data, pos)


def read_uuid(data: Buffer, pos: int) -> tuple[uuid.UUID, int]:
    raw, pos = _slice(data, pos, 16)
    return uuid.UUID(bytes=bytes(raw)), pos


def write_uuid(value: uuid.UUID) -> bytes:
    return value.bytes


def read_nullable_string(data: Buffer, pos: int) -> tuple[str | None, int]:
    n, pos = read_int16(data, pos)
    if n < 0:
        return None, pos
    raw, pos = _slice(data, pos, n)
    return _utf8(raw), pos


def read_string(data: Buffer, pos: int) -> tuple[str, int]:
    s, pos = read_nullable_string(data, pos)
    if s is None:
        raise ProtocolDecodeError("null value for a non-nullable string")
    return s, pos


def read_compact_nullable_string(data: Buffer, pos: int) -> tuple[str | None, int]:
    n, pos = read_uvarint(data, pos)
    if n == 0:
        return None, pos
    raw, pos = _slice(data, pos, n - 1)
    return _utf8(raw), pos


def read_compact_string(data: Buffer, pos: int) -> tuple[str, int]:
    s, pos = read_compact_nullable_string(data, pos)
    if s is None:
        raise ProtocolDecodeError("null value for a non-nullable compact string")
    return s, pos


def _utf8(raw: Buffer) -> str:
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError as e:
        raise ProtocolDecodeError(f"invalid utf-8 string: {e}") from None


def write_nullable_string(value: str | None) -> bytes:
    if value is None:
        return b"\xff\xff"
    raw = value.encode("utf-8")
    return INT16.pack(len(raw)) + raw


def write_compact_nullable_string(value: str | None) -> bytes:
    if value is None:
        return b"\x00"
    raw = value.encode("utf-8")
    return write_uvarint(len(raw) + 1) + raw


def read_nullable_bytes(data: Buffer, pos: int) -> tuple[bytes | None, int]:
    n, pos = read_int32(data, pos)
    if n < 0:
        return None, pos
    raw, pos = _slice(data, pos, n)
    return bytes(raw), pos


def read_compact_nullable_bytes(data: Buffer, pos: int) -> tuple[bytes | None, int]:
    n, pos = read_uvarint(data, pos)
    if n == 0:
        return None, pos
    raw, pos = _slice(data, pos, n - 1)
    return bytes(raw), pos


def write_nullable_bytes(value: Buffer | None) -> bytes:
    if value is None:
        return b"\xff\xff\xff\xff"
    return INT32.pack(len(value)) + bytes(value)


def write_compact_nullable_bytes(value: Buffer | None) -> bytes:
    if value is None:
        return b"\x00"
    return write_uvarint(len(value) + 1) + bytes(value)


def read_tagged_fields(data: Buffer, pos: int) -> tuple[list[tuple[int, bytes]], int]:
    """A tagged-field section as [(tag, raw bytes)]."""
    count, pos = read_uvarint(data, pos)
    out: list[tuple[int, bytes]] = []
    for _ in range(count):
        tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        raw, pos = _slice(data, pos, size)
        out.append((tag, bytes(raw)))
    return out, pos


def skip_tagged_fields(data: Buffer, pos: int) -> int:
    count, pos = read_uvarint(data, pos)
    for _ in range(count):
        _tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        _raw, pos = _slice(data, pos, size)
    return pos


def write_tagged_fields(fields: list[tuple[int, bytes]] | None = None) -> bytes:
    if not fields:
        return b"\x00"
    parts = [write_uvarint(len(fields))]
    for tag, raw in sorted(fields, key=lambda t: t[0]):
        parts += [write_uvarint(tag), write_uvarint(len(raw)), raw]
    return b"".join(parts)


def uuid_to_str(value: uuid.UUID) -> str:
    """Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def uuid_from_str(text: str) -> uuid.UUID:
    """Kafka's Uuid.fromString() (also accepts the standard 8-4-4-4-12 hex form)."""
    if len(text) == 36 and text.count("-") == 4:
        return uuid.UUID(text)
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a Kafka uuid: {text!r}")
    return uuid.UUID(bytes=raw)
