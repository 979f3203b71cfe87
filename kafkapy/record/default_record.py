"""One record inside a magic-2 batch: the `Record` value type and its byte encoding.

Byte format (record-format.md section 3): length varint (bytes after it) | attributes int8 (0) |
timestampDelta varlong | offsetDelta varint | keyLength varint (-1 null) | key | valueLength varint
(-1 null) | value | headersCount varint | headers: keyLength varint, key UTF-8, valueLength varint
(-1 null), value.
Decoding walks the records with record_walker.RecordWalk (the one length-chain walk) and builds the
Record values from the positions it reports. Pure functions; thread-safe. Malformed input raises
CorruptRecordError.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from kafkapy.record.errors import CorruptRecordError
from kafkapy.record.record_walker import (
    COLUMNS,
    HEADERS_COUNT,
    HEADERS_POS,
    KEY_LEN,
    KEY_POS,
    OFFSET_DELTA,
    TIMESTAMP_DELTA,
    VALUE_LEN,
    VALUE_POS,
    RecordWalk,
)
from kafkapy.record.varint import (
    decode_unsigned_varint,
    encode_varint,
    size_of_varint,
)

__all__ = [
    "Record",
    "Header",
    "write_record",
    "encode_record",
    "size_of_record",
    "estimate_record_size_upper_bound",
    "decode_records",
    "decode_headers",
    "MAX_RECORD_OVERHEAD",
]

Header = tuple[str, bytes | None]
MAX_RECORD_OVERHEAD = 21  # length 5 + attributes 1 + timestampDelta 10... bounded as Kafka does

_NULL = encode_varint(-1)  # b"\x01"
_ZERO = encode_varint(0)


class Record(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[Header] = []


def _encode_headers(headers: Iterable[tuple[str | bytes, bytes | bytearray | memoryview | None]]) -> bytes:
    out = bytearray()
    count = 0
    for hk, hv in headers:
        kb = hk.encode() if isinstance(hk, str) else bytes(hk)
        out += encode_varint(len(kb))
        out += kb
        if hv is None:
            out += _NULL
        else:
            out += encode_varint(len(hv))
            out += hv
        count += 1
    return encode_varint(count) + bytes(out)


def write_record(
    out: bytearray,
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | bytearray | memoryview | None,
    value: bytes | bytearray | memoryview | None,
    headers: Sequence[tuple[str | bytes, bytes | None]] = (),
) -> int:
    """Append one encoded record to `out`; returns the number of bytes written."""
    ev = encode_varint
    ts = ev(timestamp_delta)
    od = ev(offset_delta)
    if key is None:
        kl, klen = _NULL, 0
    else:
        klen = len(key)
        kl = ev(klen)
    if value is None:
        vl, vlen = _NULL, 0
    else:
        vlen = len(value)
        vl = ev(vlen)
    hb = _encode_headers(headers) if headers else _ZERO
    body = 1 + len(ts) + len(od) + len(kl) + klen + len(vl) + vlen + len(hb)
    start = len(out)
    out += ev(body)
    out += b"\x00"
    out += ts
    out += od
    out += kl
    if klen:
        out += key  # type: ignore[operator,arg-type]
    out += vl
    if vlen:
        out += value  # type: ignore[operator,arg-type]
    out += hb
    return len(out) - start


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str | bytes, bytes | None]] = (),
) -> bytes:
    out = bytearray()
    write_record(out, offset_delta, timestamp_delta, key, value, headers)
    return bytes(out)


def size_of_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str | bytes, bytes | None]] = (),
) -> int:
    body = 1 + size_of_varint(timestamp_delta) + size_of_varint(offset_delta)
    body += 1 if key is None else size_of_varint(len(key)) + len(key)
    body += 1 if value is None else size_of_varint(len(value)) + len(value)
    body += len(_encode_headers(headers)) if headers else 1
    return size_of_varint(body) + body


def estimate_record_size_upper_bound(
    key: bytes | None, value: bytes | None, headers: Sequence[tuple[str | bytes, bytes | None]] = ()
) -> int:
    """Kafka's DefaultRecord.recordSizeUpperBound: worst-case size whatever the deltas."""
    size = MAX_RECORD_OVERHEAD + 5 + 5  # overhead + key length + value length varints at most
    size += 0 if key is None else len(key)
    size += 0 if value is None else len(value)
    if headers:
        size += len(_encode_headers(headers))
    return size


def _slow_varint(data: bytes, pos: int, max_bytes: int) -> tuple[int, int]:
    u, pos = decode_unsigned_varint(data, pos, max_bytes)
    return (u >> 1) ^ -(u & 1), pos


def decode_records(
    buf: bytes | bytearray | memoryview,
    count: int,
    base_offset: int,
    base_timestamp: int,
    timestamp_override: int | None = None,
    pos: int = 0,
    end: int | None = None,
) -> list[Record]:
    """Decode `count` records from buf[pos:end]. `timestamp_override` is maxTimestamp for LogAppendTime.

    The record walker (record_walker.RecordWalk) checks the length chain and reports each record's
    fields as positions; this builds the Record values from them. Raises CorruptRecordError when a record
    is malformed, when fewer than `count` records are present, or when bytes are left over.
    """
    data = bytes(buf[pos:end]) if (pos or end is not None or not isinstance(buf, bytes)) else buf
    cols: array[int] = array("q")
    RecordWalk(count, columns=cols).walk_all(data)
    out: list[Record] = []
    append = out.append
    new_tuple = tuple.__new__  # skips NamedTuple's Python-level __new__
    try:
        for i in range(0, len(cols), COLUMNS):
            kl = cols[i + KEY_LEN]
            vl = cols[i + VALUE_LEN]
            kp = cols[i + KEY_POS]
            vp = cols[i + VALUE_POS]
            nh = cols[i + HEADERS_COUNT]
            append(new_tuple(Record, (
                base_offset + cols[i + OFFSET_DELTA],
                base_timestamp + cols[i + TIMESTAMP_DELTA] if timestamp_override is None else timestamp_override,
                None if kl < 0 else data[kp:kp + kl],
                None if vl < 0 else data[vp:vp + vl],
                decode_headers(data, _slow_varint(data, cols[i + HEADERS_POS], 5)[1], nh)[0] if nh else [],
            )))
    except UnicodeDecodeError as e:
        raise CorruptRecordError(f"Malformed record header key: {e}") from e
    return out


def decode_headers(data: bytes, pos: int, count: int) -> tuple[list[Header], int]:
    """Decode `count` record headers starting at data[pos]; returns them and the position after them."""
    headers: list[Header] = []
    for _ in range(count):
        hkl, pos = _slow_varint(data, pos, 5)
        if hkl < 0:
            raise CorruptRecordError("Invalid negative header key size")
        if pos + hkl > len(data):
            raise CorruptRecordError("Header key runs past the record")
        hk = data[pos:pos + hkl].decode("utf-8")
        pos += hkl
        hvl, pos = _slow_varint(data, pos, 5)
        if hvl < 0:
            headers.append((hk, None))
        else:
            if pos + hvl > len(data):
                raise CorruptRecordError("Header value runs past the record")
            headers.append((hk, data[pos:pos + hvl]))
            pos += hvl
    return headers, pos
