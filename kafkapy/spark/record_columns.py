"""Columnar decoding of Kafka record batches into Arrow arrays (the readers' per-batch hot path).

Reads the magic-2 record format (record-format.md section 3: length varint | attributes int8 |
timestampDelta varlong | offsetDelta varint | keyLength varint | key | valueLength varint | value |
headersCount varint | headers) and magic 0/1 message sets (through kafkapy.record's legacy decoder).

`RecordColumns` collects the record bytes of many batches of one topic-partition into one arena
(uncompressed batches are copied once, compressed ones decompressed once) and walks each batch with
the shared record walker (record/record_walker.RecordWalk, compiled when built), which checks the
length chain and leaves every record's field positions in one packed int64 array; each field then
becomes an Arrow column with one kernel, and the key and value columns are gathered straight from the
arena by `take` over a binary array whose offsets are the field boundaries. Without headers, the compiled
spark/_arrow_columns.c (when built) does the same in one pass: it copies each key and value once, straight
from the arena into Arrow buffers, and applies the offset range while building. Headers (rare) are decoded
per record, only for records that have any. `walker=False` keeps the former decoder (a Python walk of
the record lengths, the other fields decoded by vectorised varint kernels), selected by the reader's
`kafkapy.reader=per-task` for the benchmark's before/after.

Not thread-safe: one RecordColumns per reader task (the module's cache of repeated topic and partition
columns is a dict whose worst race builds a column twice).
"""

from __future__ import annotations

from array import array
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkapy.record.batch_header import COMPRESSION_CODEC_MASK, RECORD_BATCH_OVERHEAD, TIMESTAMP_TYPE_MASK
from kafkapy.record.compression import CompressionType, DecompressionError, decompress
from kafkapy.record.default_record import decode_headers
from kafkapy.record.errors import CorruptRecordError
from kafkapy.record.memory_records import DefaultRecordBatch
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
from kafkapy.record.varint import VarintError, decode_unsigned_varint

try:  # the compiled column build (kafkapy/spark/_arrow_columns.c), when the install built it
    from kafkapy.spark._arrow_columns import columns as _compiled_columns
except ImportError:  # pragma: no cover - walked_fields' Arrow kernels are the reference and the fallback
    _compiled_columns = None  # type: ignore[assignment]
use_compiled = True  # tests and the bench switch the compiled build off to compare it with the kernels

__all__ = ["RecordColumns", "scan_record_starts", "repeat_per_batch"]

_I64 = pa.int64()
_TIMESTAMP_US = pa.timestamp("us", tz="UTC")
_U8 = pa.uint8()
_U64 = pa.uint64()
_SCALARS: dict[tuple[int, pa.DataType], pa.Scalar] = {}


def _k(value: int, type_: pa.DataType = _I64) -> pa.Scalar:
    """A typed Arrow scalar: passing Python ints to compute functions costs ~0.1 ms each (a failed
    numpy import per call when numpy is absent), more than the kernels themselves."""
    s = _SCALARS.get((value, type_))
    if s is None:
        if len(_SCALARS) > 4096:
            _SCALARS.clear()
        s = _SCALARS[(value, type_)] = pa.scalar(value, type_)
    return s


_ZERO = _k(0)
_ONE = _k(1)


def scan_record_starts(data: Any, pos: int, end: int, count: int, starts: list[int], ends: list[int]) -> None:
    """Append to `starts` the position of each record's attributes byte and to `ends` its end.

    The one sequential step of decoding: each record's position depends on the previous length.
    """
    append_s = starts.append
    append_e = ends.append
    try:
        for _ in range(count):
            b = data[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                length = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                u, pos = decode_unsigned_varint(data, pos, 5)
                length = (u >> 1) ^ -(u & 1)
            if length <= 0 or pos + length > end:
                raise CorruptRecordError(f"Invalid record size {length} at position {pos}")
            append_s(pos)
            pos += length
            append_e(pos)
    except (IndexError, VarintError) as e:
        raise CorruptRecordError(f"Malformed record at position {pos}: {e}") from e
    if pos != end:
        raise CorruptRecordError(f"{end - pos} bytes left over after the last of {count} records")


def _varints(u8: pa.Array, pos: pa.Array, max_bytes: int) -> tuple[pa.Array, pa.Array]:
    """Zig-zag varints at every position of `pos` in `u8`: (values int64, positions after them)."""
    b = pc.take(u8, pos)
    more = pc.greater_equal(b, _k(128, _U8))
    if not pc.any(more).as_py():  # the common case: every value fits one byte
        u = b.cast(_I64)
        return pc.bit_wise_xor(pc.shift_right(u, _ONE), pc.negate(pc.bit_wise_and(u, _ONE))), pc.add(pos, _ONE)
    acc = pc.bit_wise_and(b, _k(0x7F, _U8)).cast(_U64)
    size = pa.repeat(_ONE, len(pos))
    active = more
    zero = _ZERO
    for k in range(1, max_bytes):
        if not pc.any(active).as_py():
            break
        idx = pc.if_else(active, pc.add(pos, _k(k)), zero)
        bk = pc.take(u8, idx)
        part = pc.shift_left(pc.bit_wise_and(bk, _k(0x7F, _U8)).cast(_U64), _k(7 * k, _U64))
        acc = pc.if_else(active, pc.bit_wise_or(acc, part), acc)
        size = pc.add(size, active.cast(_I64))
        active = pc.and_(active, pc.greater_equal(bk, _k(128, _U8)))
    if pc.any(active).as_py():
        raise CorruptRecordError(f"Varint longer than {max_bytes} bytes")
    half = pc.shift_right(acc, _k(1, _U64)).cast(_I64)
    sign = pc.negate(pc.bit_wise_and(acc, _k(1, _U64)).cast(_I64))
    return pc.bit_wise_xor(half, sign), pc.add(pos, size)


def _gather(perm: tuple[pa.Array, pa.Array], arena: pa.Buffer, starts: pa.Array, lens: pa.Array,
            nulls: pa.Array | None) -> pa.Array:
    """Binary column of arena[starts[i]:starts[i]+lens[i]] (null where `nulls`), one C++ copy.
    `perm` is RecordColumns._permutation(len(starts))."""
    n = len(starts)
    ends = pc.add(starts, lens)
    # offsets [s0, e0, s1, e1, ...]: monotonic because fields come in order in the arena.
    interleaved = pc.take(pa.concat_arrays([starts, ends]), perm[0])
    bounds = pa.concat_arrays([interleaved, pa.array([arena.size], _I64)]).cast(pa.int32())
    segments = pa.Array.from_buffers(pa.binary(), 2 * n, [None, bounds.buffers()[1], arena])
    idx = perm[1]
    if nulls is not None and nulls.true_count:
        idx = pc.if_else(nulls, pa.scalar(None, _I64), idx)
    return pc.take(segments, idx)


_REPEATED: dict[tuple[object, pa.DataType], pa.Array] = {}


def _repeated(value: object, type_: pa.DataType, n: int) -> pa.Array:
    """`value` n times: a slice of one column kept per (value, type) and grown as needed, so a read of one
    topic-partition builds its topic and partition columns once, not once per Fetch response (Arrow's IPC
    writer sends only the slice)."""
    key = (value, type_)
    col = _REPEATED.get(key)
    if col is None or len(col) < n:
        if len(_REPEATED) > 1024:
            _REPEATED.clear()
        col = _REPEATED[key] = pa.repeat(pa.scalar(value, type_), max(n, 1 << 16))
    return col.slice(0, n)


def repeat_per_batch(counts: list[int], values: list, type_: pa.DataType) -> pa.Array:
    """values[i] repeated counts[i] times, as one Arrow column (run-end decoded: no per-record objects)."""
    ends = pc.cumulative_sum(pa.array(counts, pa.int32()))
    return pc.run_end_decode(pa.RunEndEncodedArray.from_arrays(ends, pa.array(values, type_)))


class RecordColumns:
    """Records of one topic-partition, accumulated batch by batch, built into one Arrow RecordBatch."""

    def __init__(self, topic: str, partition: int, include_headers: bool, arrow_schema: pa.Schema,
                 walker: bool = True, compiled: bool = True, arena: bytearray | None = None) -> None:
        """`arena`: a buffer the caller reuses from one RecordColumns to the next (the batches built from the
        previous one no longer need it): the compiled build copies keys and values out, so the record bytes
        are written over the same memory instead of a new, growing bytearray per Fetch response. Used only
        where the compiled build runs."""
        self.topic = topic
        self.walker = walker
        # The compiled column build where it applies (built, walker path, no headers): decided once.
        self._compiled_build = (_compiled_columns is not None and use_compiled and compiled and walker
                                and not include_headers)
        self._walk_cols: array[int] = array("q")  # every walked record's RecordWalk columns (COLUMNS int64 each)
        self._walked = 0
        # per batch (walker path): record count, base offset, base timestamp, LogAppendTime, max timestamp
        self._facts: list[tuple[int, int, int, bool, int]] = []
        self.partition = partition
        self.include_headers = include_headers
        self.schema = arrow_schema
        self._arena = arena if arena is not None and self._compiled_build else bytearray()
        self._fill = 0  # bytes of _arena in use (a reused arena may be longer)
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._base_offsets: list[int] = []
        self._base_ts: list[int] = []
        self._append_ts: list[bool] = []  # LogAppendTime batch: every record carries maxTimestamp
        self._max_ts: list[int] = []
        self._ts_types: list[int] = []
        self._legacy: list[tuple] = []  # magic 0/1 records decoded per record (old formats only)
        self.bytes = 0

    def __len__(self) -> int:
        return self._v2_count() + len(self._legacy)

    def _v2_count(self) -> int:
        return self._walked if self.walker else len(self._starts)

    def add_batch(self, batch: Any) -> None:
        """Add every record of a data batch (control batches must be filtered by the caller)."""
        if not isinstance(batch, DefaultRecordBatch):
            ts_type = batch.timestamp_type
            for r in batch.records():
                self._legacy.append((r.offset, r.timestamp, ts_type, r.key, r.value, r.headers))
            return
        h = batch.header
        count = h.records_count
        if count <= 0:
            return
        codec = h.attributes & COMPRESSION_CODEC_MASK
        body: bytes | memoryview = batch.buffer[RECORD_BATCH_OVERHEAD:]
        if codec:
            try:
                body = decompress(CompressionType.from_id(codec), body)
            except (DecompressionError, ValueError) as e:
                raise CorruptRecordError(f"Batch at offset {h.base_offset}: {e}") from e
        arena = self._arena
        base = self._fill
        end = self._fill = base + len(body)
        if base == len(arena):
            arena += body
        else:  # a reused arena: written over in place, grown only past its end
            fit = min(len(body), len(arena) - base)
            whole = memoryview(body)  # slices without copying a decompressed body
            arena[base:base + fit] = whole[:fit]
            if fit < len(body):
                arena += whole[fit:]
        self.bytes += batch.size_in_bytes
        if self.walker:
            walk = RecordWalk(count, columns=self._walk_cols)
            if end == len(arena):
                walk.walk_all(arena, base)
            else:
                view = memoryview(arena)[:end]  # walk_all checks the records end where the data does
                try:
                    walk.walk_all(view, base)
                finally:
                    view.release()  # a live export would keep the arena from growing
            self._walked += count
            self._facts.append((count, h.base_offset, h.base_timestamp, bool(h.attributes & TIMESTAMP_TYPE_MASK),
                                h.max_timestamp))
            return
        scan_record_starts(arena, base, len(arena), count, self._starts, self._ends)
        self._base_offsets += [h.base_offset] * count
        self._base_ts += [h.base_timestamp] * count
        log_append = bool(h.attributes & TIMESTAMP_TYPE_MASK)
        self._append_ts += [log_append] * count
        self._max_ts += [h.max_timestamp] * count
        self._ts_types += [1 if log_append else 0] * count

    def build(self, start_offset: int = 0, end_offset: int | None = None) -> list[pa.RecordBatch]:
        """RecordBatches of the records with start_offset <= offset < end_offset: one for the magic-2
        records, one more for magic 0/1 records if any (empty batches are left out)."""
        out = [self._build_v2(start_offset, end_offset)]
        if self._legacy:
            out.append(self._build_legacy(start_offset, end_offset))
        return [b for b in out if b is not None]

    def _build_v2(self, start_offset: int, end_offset: int | None) -> pa.RecordBatch | None:
        n = self._v2_count()
        if n == 0:
            return None
        if self.walker:
            return self._build_walked(n, start_offset, end_offset)
        arena = pa.py_buffer(self._arena)
        u8 = pa.Array.from_buffers(pa.uint8(), len(self._arena), [None, arena])
        ends = pa.array(self._ends, _I64)
        try:
            pos = pc.add(pa.array(self._starts, _I64), _ONE)  # skip attributes
            ts_delta, pos = _varints(u8, pos, 10)
            offset_delta, pos = _varints(u8, pos, 5)
            klen, pos = _varints(u8, pos, 5)
            key_start = pos
            key_len = pc.max_element_wise(klen, _ZERO)
            vlen, pos = _varints(u8, pc.add(pos, key_len), 5)
            value_start = pos
            value_len = pc.max_element_wise(vlen, _ZERO)
            pos = pc.add(pos, value_len)
            hcount, pos = _varints(u8, pos, 5)
        except (pa.ArrowIndexError, IndexError) as e:
            raise CorruptRecordError(f"Malformed record: {e}") from e
        headers = None
        if pc.any(pc.not_equal(hcount, _ZERO)).as_py():
            headers, pos = self._decode_headers(hcount, pos)
        if not pc.all(pc.equal(pos, ends)).as_py():
            raise CorruptRecordError("Invalid record size: record fields do not end where the record does")
        perm = self._permutation(n)
        key = _gather(perm, arena, key_start, key_len, pc.less(klen, _ZERO))
        value = _gather(perm, arena, value_start, value_len, pc.less(vlen, _ZERO))
        offset = pc.add(pa.array(self._base_offsets, _I64), offset_delta)
        ts_ms = pc.if_else(pa.array(self._append_ts, pa.bool_()), pa.array(self._max_ts, _I64),
                           pc.add(pa.array(self._base_ts, _I64), ts_delta))
        columns = {
            "key": key,
            "value": value,
            "offset": offset,
            "timestamp": ts_ms,
            "timestampType": pa.array(self._ts_types, pa.int32()),
        }
        if self.include_headers:
            columns["headers"] = headers if headers is not None else pa.array([[]] * n, self._headers_type())
        return self._assemble(columns, n, start_offset, end_offset)

    def per_record(self, values: list, type_: pa.DataType) -> pa.Array:
        """A per-batch fact (one value per walked batch, in add order) repeated for each of its records."""
        return repeat_per_batch([f[0] for f in self._facts], values, type_)

    def walked_fields(self, with_value: bool = True) -> dict[str, pa.Array]:
        """The walked (magic 2) records as Arrow columns, from the shared RecordWalk's positions
        (record/record_walker.py): one kernel per field, keys and values gathered straight from the
        arena. Columns: key, value (with_value), value_length (-1 null), offset, timestamp (ms),
        timestampType, headers_count, headers_pos."""
        n = self._walked
        arena = pa.py_buffer(self._arena)
        flat = pa.Array.from_buffers(_I64, n * COLUMNS, [None, pa.py_buffer(self._walk_cols)])
        fields = pa.FixedSizeListArray.from_arrays(flat, COLUMNS)

        def col(k: int) -> pa.Array:
            return pc.list_element(fields, k)

        klen, vlen = col(KEY_LEN), col(VALUE_LEN)
        perm = self._permutation(n)
        out = {"key": _gather(perm, arena, col(KEY_POS), pc.max_element_wise(klen, _ZERO), pc.less(klen, _ZERO))}
        if with_value:
            out["value"] = _gather(perm, arena, col(VALUE_POS), pc.max_element_wise(vlen, _ZERO),
                                   pc.less(vlen, _ZERO))
        facts = self._facts
        out["value_length"] = vlen
        out["offset"] = pc.add(self.per_record([f[1] for f in facts], _I64), col(OFFSET_DELTA))
        base_ts = pc.add(self.per_record([f[2] for f in facts], _I64), col(TIMESTAMP_DELTA))
        if any(f[3] for f in facts):
            out["timestamp"] = pc.if_else(self.per_record([f[3] for f in facts], pa.bool_()),
                                          self.per_record([f[4] for f in facts], _I64), base_ts)
        else:
            out["timestamp"] = base_ts
        out["timestampType"] = self.per_record([1 if f[3] else 0 for f in facts], pa.int32())
        out["headers_count"] = col(HEADERS_COUNT)
        out["headers_pos"] = col(HEADERS_POS)
        return out

    def _build_walked(self, n: int, start_offset: int, end_offset: int | None) -> pa.RecordBatch | None:
        if self._compiled_build:
            return self._build_compiled(start_offset, end_offset)
        f = self.walked_fields()
        columns = {k: f[k] for k in ("key", "value", "offset", "timestamp", "timestampType")}
        if self.include_headers:
            if pc.any(pc.not_equal(f["headers_count"], _ZERO)).as_py():
                columns["headers"] = self._walked_headers(f["headers_count"], f["headers_pos"])
            else:
                columns["headers"] = pa.array([[]] * n, self._headers_type())
        return self._assemble(columns, n, start_offset, end_offset)

    def _build_compiled(self, start_offset: int, end_offset: int | None) -> pa.RecordBatch | None:
        """The walked records' columns in one compiled pass (spark/_arrow_columns.c): Arrow buffers built
        from the walk's positions, the offset range applied while building."""
        assert _compiled_columns is not None
        facts = array("q")
        for f in self._facts:
            facts.extend((f[0], f[1], f[2], 1 if f[3] else 0, f[4]))
        (rows, key_offsets, key_data, key_validity, key_nulls, value_offsets, value_data, value_validity,
         value_nulls, offsets, ts_us, ts_type) = _compiled_columns(
            self._arena, self._walk_cols, COLUMNS, (KEY_POS, KEY_LEN, VALUE_POS, VALUE_LEN, OFFSET_DELTA,
                                                    TIMESTAMP_DELTA),
            facts, start_offset, -1 if end_offset is None else end_offset)
        if not rows:
            return None

        def buf(b: bytes | None) -> pa.Buffer | None:
            return None if b is None else pa.py_buffer(b)

        columns = {
            "key": pa.Array.from_buffers(pa.binary(), rows, [buf(key_validity), buf(key_offsets), buf(key_data)],
                                         null_count=key_nulls),
            "value": pa.Array.from_buffers(pa.binary(), rows, [buf(value_validity), buf(value_offsets),
                                                               buf(value_data)], null_count=value_nulls),
            "offset": pa.Array.from_buffers(_I64, rows, [None, buf(offsets)]),
            "timestamp": pa.Array.from_buffers(_TIMESTAMP_US, rows, [None, buf(ts_us)]),
            "timestampType": pa.Array.from_buffers(pa.int32(), rows, [None, buf(ts_type)]),
            "topic": _repeated(self.topic, pa.string(), rows),
            "partition": _repeated(self.partition, pa.int32(), rows),
        }
        return pa.RecordBatch.from_arrays([columns[f.name] for f in self.schema], schema=self.schema)

    def _walked_headers(self, hcount: pa.Array, hpos: pa.Array) -> pa.Array:
        """Headers of the records that have any (per record: headers are rare and small)."""
        data = bytes(self._arena)
        out: list[list[dict]] = []
        for c, pos in zip(hcount.to_pylist(), hpos.to_pylist(), strict=True):
            if not c:
                out.append([])
                continue
            _, pos = decode_unsigned_varint(data, pos, 5)  # the count the walk already read
            hs, _ = decode_headers(data, pos, c)
            out.append([{"key": k, "value": v} for k, v in hs])
        return pa.array(out, self._headers_type())

    # -- helpers -----------------------------------------------------------------------------------

    _arange: pa.Array = pa.array([], _I64)

    @classmethod
    def _permutation(cls, n: int) -> tuple[pa.Array, pa.Array]:
        """(take indices interleaving [starts, ends] into s0, e0, s1, e1...; indices of the segments s_i..e_i)."""
        if len(cls._arange) < 2 * n:
            cls._arange = pa.array(range(max(4 * n, 1 << 16)), _I64)
        j = cls._arange.slice(0, 2 * n)
        inter = pc.add(pc.multiply(pc.bit_wise_and(j, _ONE), _k(n)), pc.shift_right(j, _ONE))
        return inter, pc.multiply(cls._arange.slice(0, n), _k(2))

    def _headers_type(self) -> pa.DataType:
        return self.schema.field("headers").type

    def _decode_headers(self, hcount: pa.Array, pos: pa.Array) -> tuple[pa.Array, pa.Array]:
        data = bytes(self._arena)
        counts = hcount.to_pylist()
        positions = pos.to_pylist()
        out: list[list[dict]] = []
        for i, c in enumerate(counts):
            if c == 0:
                out.append([])
                continue
            if c < 0:
                raise CorruptRecordError(f"Found invalid number of record headers {c}")
            hs, positions[i] = decode_headers(data, positions[i], c)
            out.append([{"key": k, "value": v} for k, v in hs])
        arr = pa.array(out, self._headers_type()) if self.include_headers else None
        return arr, pa.array(positions, _I64)

    def _assemble(self, columns: dict[str, pa.Array], n: int, start_offset: int,
                  end_offset: int | None) -> pa.RecordBatch | None:
        ts = columns["timestamp"]
        columns["timestamp"] = pc.multiply(ts, _k(1000)).cast(_TIMESTAMP_US)
        columns["topic"] = pa.repeat(pa.scalar(self.topic, pa.string()), n)
        columns["partition"] = pa.repeat(pa.scalar(self.partition, pa.int32()), n)
        batch = pa.RecordBatch.from_arrays([columns[f.name] for f in self.schema], schema=self.schema)
        offsets = columns["offset"]
        lo = pc.min(offsets).as_py()
        hi = pc.max(offsets).as_py()
        if lo < start_offset or (end_offset is not None and hi >= end_offset):
            keep = pc.greater_equal(offsets, start_offset)
            if end_offset is not None:
                keep = pc.and_(keep, pc.less(offsets, end_offset))
            batch = batch.filter(keep)
        return batch if batch.num_rows else None

    def _build_legacy(self, start_offset: int, end_offset: int | None) -> pa.RecordBatch | None:
        rows = self._legacy
        n = len(rows)
        offset, ts, ts_type, key, value, headers = (list(c) for c in zip(*rows, strict=True))
        columns = {
            "key": pa.array(key, pa.binary()),
            "value": pa.array(value, pa.binary()),
            "offset": pa.array(offset, _I64),
            "timestamp": pa.array(ts, _I64),
            "timestampType": pa.array(ts_type, pa.int32()),
        }
        if self.include_headers:
            columns["headers"] = pa.array([[{"key": k, "value": v} for k, v in h] for h in headers],
                                          self._headers_type())
        return self._assemble(columns, n, start_offset, end_offset)
