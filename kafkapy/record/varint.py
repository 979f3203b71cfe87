"""Zigzag varint/varlong and unsigned varint codecs used inside magic-2 records.

Byte format (record-format.md section 3): Protobuf base-128, least-significant 7-bit group first, top bit =
"more bytes follow". Signed values are zigzag-mapped first: (n << 1) ^ (n >> 63). A varint takes at most
5 bytes, a varlong at most 10. Unsigned varints skip the zigzag step.
Encoders return `bytes`; decoders take (buf, pos) and return (value, new_pos). Pure functions, thread-safe.
The 1- and 2-byte encodings are precomputed because the producer path encodes several varints per record.
"""

from __future__ import annotations

__all__ = [
    "encode_varint",
    "encode_varlong",
    "encode_unsigned_varint",
    "decode_varint",
    "decode_varlong",
    "decode_unsigned_varint",
    "size_of_varint",
    "size_of_varlong",
    "size_of_unsigned_varint",
    "write_varint",
    "VarintError",
]


class VarintError(ValueError):
    """Malformed (too long) or truncated varint."""


def _encode_raw(u: int) -> bytes:
    out = bytearray()
    while u > 0x7F:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


_CACHE_LIMIT = 1 << 14  # every value that fits in 1 or 2 bytes


def _small_encodings() -> list[bytes]:
    """The encodings of 0 .. _CACHE_LIMIT - 1 in order: one byte below 128, else (low 7 bits | 0x80, high 7 bits).
    Built from two 128-entry tables by concatenation: a tenth of the import time of encoding each value."""
    one_byte = [bytes((u,)) for u in range(0x80)]
    continued = [bytes((low | 0x80,)) for low in range(0x80)]
    return one_byte + [low + high for high in one_byte[1:] for low in continued]


_CACHE: list[bytes] = _small_encodings()


def encode_unsigned_varint(value: int) -> bytes:
    if 0 <= value < _CACHE_LIMIT:
        return _CACHE[value]
    if value < 0:
        raise ValueError(f"unsigned varint cannot encode {value}")
    return _encode_raw(value)


def encode_varint(value: int) -> bytes:
    """Zigzag varint (int32 range expected; larger values are encoded like a varlong)."""
    u = (value << 1) ^ (value >> 63)
    if u < _CACHE_LIMIT:
        return _CACHE[u]
    return _encode_raw(u)


encode_varlong = encode_varint  # same zigzag mapping for every value that fits in int64


def write_varint(out: bytearray, value: int) -> None:
    """Append the zigzag varint of `value` to `out`."""
    u = (value << 1) ^ (value >> 63)
    if u < _CACHE_LIMIT:
        out += _CACHE[u]
    else:
        out += _encode_raw(u)


def decode_unsigned_varint(buf: bytes | bytearray | memoryview, pos: int = 0, max_bytes: int = 5) -> tuple[int, int]:
    try:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        result = b & 0x7F
        shift = 7
        pos += 1
        for _ in range(max_bytes - 1):
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result, pos
            shift += 7
    except IndexError:
        raise VarintError("truncated varint") from None
    raise VarintError(f"varint longer than {max_bytes} bytes")


def decode_varint(buf: bytes | bytearray | memoryview, pos: int = 0) -> tuple[int, int]:
    """Zigzag varint (at most 5 bytes)."""
    b = buf[pos] if pos < len(buf) else -1
    if 0 <= b < 0x80:  # fast path: one byte
        return (b >> 1) ^ -(b & 1), pos + 1
    u, pos = decode_unsigned_varint(buf, pos, 5)
    return (u >> 1) ^ -(u & 1), pos


def decode_varlong(buf: bytes | bytearray | memoryview, pos: int = 0) -> tuple[int, int]:
    """Zigzag varlong (at most 10 bytes)."""
    u, pos = decode_unsigned_varint(buf, pos, 10)
    return (u >> 1) ^ -(u & 1), pos


def size_of_unsigned_varint(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


def size_of_varint(value: int) -> int:
    return size_of_unsigned_varint((value << 1) ^ (value >> 63))


size_of_varlong = size_of_varint
