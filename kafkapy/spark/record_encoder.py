"""Columnar encoding of Arrow rows into Kafka's magic-2 record format (the sink's per-batch hot path).

Writes, for every row at once with Arrow compute kernels, record-format.md section 3:
length varint | attributes int8 (0) | timestampDelta varlong (0: one timestamp per batch) |
offsetDelta varint | keyLength varint (-1 null) | key | valueLength varint (-1 null) | value |
headersCount varint | headers. Varints come from two lookup tables (values below 2^14 in one `take`,
larger ones as a 2-byte continuation prefix joined to the high part; lengths up to 2^28), and the
fields of each record are joined with `binary_join_element_wise`, so the records of a chunk are one
contiguous byte range of the result's data buffer: no Python object per record. Headers (rare) are
encoded per row, only for the rows that carry any.

`chunk_ids` cuts rows into producer batches of about `batch.size` bytes (a record goes to the chunk
in which it ends), `encode_records` returns the encoded column and `chunk_bounds` each chunk's byte
range in it, ready for MemoryRecordsBuilder.append_encoded.

Thread-safety: the lookup tables are built once under the GIL and only read afterwards; functions are
otherwise pure.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkapy.record.varint import encode_unsigned_varint, encode_varint

__all__ = ["chunk_ids", "encode_records", "chunk_bounds", "encode_header_lists", "RECORD_OVERHEAD_ESTIMATE"]

_I64 = pa.int64()
_BIN = pa.binary()
_LOW = 1 << 14
# Upper bound of a record's bytes besides key and value: length(3) attributes(1) timestampDelta(1)
# offsetDelta(3) keyLength(2) valueLength(3) headersCount(1), rounded up.
RECORD_OVERHEAD_ESTIMATE = 14
_EMPTY = pa.scalar(b"", _BIN)
_PREFIX = pa.scalar(b"\x00\x00", _BIN)  # attributes 0, timestampDelta 0
_NO_HEADERS = pa.scalar(b"\x00", _BIN)
_tables: tuple[pa.Array, pa.Array] | None = None


def _lookup() -> tuple[pa.Array, pa.Array]:
    """(unsigned varint of u for u < 2^14, the 2-byte continuation form of u's low 14 bits)."""
    global _tables
    if _tables is None:
        whole = pa.array([encode_unsigned_varint(u) for u in range(_LOW)], _BIN)
        cont = pa.array([bytes(((u & 0x7F) | 0x80, ((u >> 7) & 0x7F) | 0x80)) for u in range(_LOW)], _BIN)
        _tables = (whole, cont)
    return _tables


_SCALARS: dict[int, pa.Scalar] = {}


def _k(v: int) -> pa.Scalar:
    s = _SCALARS.get(v)
    if s is None:
        if len(_SCALARS) > 1024:
            _SCALARS.clear()
        s = _SCALARS[v] = pa.scalar(v, _I64)
    return s


def unsigned_varints(u: pa.Array) -> pa.Array:
    """Binary column of the unsigned varints of `u` (int64, 0 <= u < 2^28)."""
    whole, cont = _lookup()
    small = pc.less(u, _k(_LOW))
    if pc.all(small).as_py():
        return pc.take(whole, u)
    low = pc.take(whole, pc.if_else(small, u, _k(0)))
    high = pc.binary_join_element_wise(
        pc.take(cont, pc.bit_wise_and(u, _k(_LOW - 1))),
        pc.take(whole, pc.min_element_wise(pc.shift_right(u, _k(14)), _k(_LOW - 1))),
        _EMPTY,
    )
    return pc.if_else(small, low, high)


def _length_varints(lengths: pa.Array) -> pa.Array:
    """Zig-zag varints of lengths >= -1 (a null field has length -1, zig-zag 1)."""
    zz = pc.if_else(pc.less(lengths, _k(0)), _k(1), pc.multiply(lengths, _k(2)))
    return unsigned_varints(zz)


def _lengths(col: pa.Array | None, n: int) -> pa.Array:
    if col is None:
        return pa.repeat(_k(-1), n)
    return pc.fill_null(pc.binary_length(col).cast(_I64), _k(-1))


def row_sizes(keys: pa.Array | None, values: pa.Array, headers: pa.Array | None) -> pa.Array:
    """Upper-bound encoded size of each row (int64), for cutting batches."""
    n = len(values)
    size = pc.add(pc.max_element_wise(_lengths(values, n), _k(0)), _k(RECORD_OVERHEAD_ESTIMATE))
    if keys is not None:
        size = pc.add(size, pc.max_element_wise(_lengths(keys, n), _k(0)))
    if headers is not None:
        size = pc.add(size, pc.binary_length(headers).cast(_I64))
    return size


def chunk_ids(sizes: pa.Array, batch_size: int) -> pa.Array:
    """Chunk number of each row: the batch.size window in which the row's bytes end (a row larger
    than batch.size is a chunk of its own, as a producer batch always takes its first record)."""
    ends = pc.subtract(pc.cumulative_sum(sizes), _k(1))
    return pc.divide(ends, _k(max(batch_size, 1)))


def _delta_within_runs(ids: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(index of each row within its run of equal ids, the row index where each run starts)."""
    n = len(ids)
    ones = pa.repeat(_k(1), n)
    index = pc.subtract(pc.cumulative_sum(ones), _k(1))
    previous = pa.concat_arrays([pa.array([-1], _I64), ids.slice(0, n - 1)]) if n else ids
    first = pc.not_equal(ids, previous)
    run_of_row = pc.subtract(pc.cumulative_sum(first.cast(_I64)), _k(1))
    starts = pc.indices_nonzero(first).cast(_I64)
    return pc.subtract(index, pc.take(starts, run_of_row)), starts


def encode_records(keys: pa.Array | None, values: pa.Array, headers: pa.Array | None,
                   ids: pa.Array) -> tuple[pa.Array, pa.Array]:
    """(the encoded records as one binary column, the row index where each chunk starts).

    `keys` / `values`: binary (nulls allowed); `headers`: binary column of encoded header sections
    (headersCount varint included) or None; `ids`: chunk_ids (non-decreasing); offset deltas restart
    at 0 in every chunk."""
    n = len(values)
    deltas, starts = _delta_within_runs(ids)
    body = pc.binary_join_element_wise(
        _PREFIX,
        unsigned_varints(pc.multiply(deltas, _k(2))),
        _length_varints(_lengths(keys, n)),
        keys if keys is not None else _EMPTY,
        _length_varints(_lengths(values, n)),
        values,
        headers if headers is not None else _NO_HEADERS,
        _EMPTY,
        null_handling="replace",
        null_replacement="",
    )
    records = pc.binary_join_element_wise(
        _length_varints(pc.binary_length(body).cast(_I64)), body, _EMPTY
    )
    return records, starts


def chunk_bounds(records: pa.Array, starts: pa.Array) -> list[tuple[int, int, int]]:
    """(first byte, end byte, record count) of each chunk in `records`' data buffer."""
    n = len(records)
    offsets = pa.Array.from_buffers(pa.int32(), n + 1, [None, records.buffers()[1]], offset=records.offset)
    rows = starts.to_pylist() + [n]
    pos = pc.take(offsets, pa.array(rows, _I64)).to_pylist()
    return [(pos[i], pos[i + 1], rows[i + 1] - rows[i]) for i in range(len(rows) - 1)]


def data_buffer(records: pa.Array) -> Any:
    return records.buffers()[2]


def encode_header_lists(headers: pa.Array) -> pa.Array | None:
    """Encoded header sections of an array<struct<key: string, value: binary>> column, or None when no
    row has a header (the common case: every row then takes headersCount 0)."""
    lengths = pc.fill_null(pc.list_value_length(headers), 0)
    if not pc.any(pc.greater(lengths, 0)).as_py():
        return None
    out = []
    for row in headers.to_pylist():  # per row only when headers are present
        if not row:
            out.append(b"\x00")
            continue
        parts = [encode_varint(len(row))]
        for h in row:
            k = (h["key"] or "").encode()
            parts += [encode_varint(len(k)), k]
            v = h["value"]
            parts += [encode_varint(-1)] if v is None else [encode_varint(len(v)), v]
        out.append(b"".join(parts))
    return pa.array(out, _BIN)
