"""RecordWalk: the one walk over a magic-2 batch's records, used by every reader and by produce validation.

Byte format (record-format.md section 3), per record: length varint (bytes after it) | attributes int8 |
timestampDelta varlong | offsetDelta varint | keyLength varint (-1 null) | key | valueLength varint
(-1 null) | value | headersCount varint | per header: keyLength varint, key, valueLength varint (-1 null),
value. The walk follows this length chain and checks it: varints end within 5 (10 for the timestamp)
bytes, every length stays inside its record, a record's fields end exactly at its length, the
declared record count is present and no byte follows the last record.

It builds no Python object per record. What a caller needs is accumulated in the RecordWalk:
  - always: records walked, the smallest and largest timestampDelta (and the index of each), the
    indexes of records with a null key (a list that stays empty in the common case);
  - `check_offsets`: offsetDelta must be the record's index (0..n-1, Kafka's rule for produced batches);
  - `columns` (an array('q')): COLUMNS values per record appended flat, for decoders and columnar
    readers (positions are offsets in the buffer walked): record start, record end, offsetDelta,
    timestampDelta, key position, key length (-1 null), value position, value length (-1 null),
    headers position, headers count. Column k of record i is columns[i * COLUMNS + k].
A compressed batch is walked through its streaming decompressor (compression.iter_decompress) with
`walk_chunks`: complete records are walked where they lie, only the unfinished tail of a chunk is
carried to the next one, so the walk never holds more than that tail plus one chunk (the decompressor
bounds the total). Malformed bytes raise CorruptRecordError.

The walk loop below is the reference; kafkapy/record/_record_walk.c is the same walk compiled (built by
`pip install -e .` as an optional extension) and runs instead when present (`use_compiled`), with or
without columns. Both are run and fuzzed against each other in tests/unit/record/test_record_walker.py.

No I/O, no locks: a RecordWalk belongs to one caller; the functions are thread-safe.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

from kafkapy.record.errors import CorruptRecordError
from kafkapy.record.varint import VarintError, decode_unsigned_varint

__all__ = [
    "RecordWalk",
    "COLUMNS",
    "REC_START",
    "REC_END",
    "OFFSET_DELTA",
    "TIMESTAMP_DELTA",
    "KEY_POS",
    "KEY_LEN",
    "VALUE_POS",
    "VALUE_LEN",
    "HEADERS_POS",
    "HEADERS_COUNT",
]

COLUMNS = 10
(REC_START, REC_END, OFFSET_DELTA, TIMESTAMP_DELTA, KEY_POS, KEY_LEN, VALUE_POS, VALUE_LEN, HEADERS_POS,
 HEADERS_COUNT) = range(COLUMNS)

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

try:  # the compiled validation walk (kafkapy/record/_record_walk.c), when the install built it
    from kafkapy.record._record_walk import walk as _compiled_walk
except ImportError:  # pragma: no cover - the pure-Python walk below is the reference and the fallback
    _compiled_walk = None  # type: ignore[assignment]


def _varint(data: bytes | bytearray, pos: int, max_bytes: int) -> tuple[int, int]:
    u, pos = decode_unsigned_varint(data, pos, max_bytes)
    v = (u >> 1) ^ -(u & 1)
    if max_bytes == 5 and not _INT32_MIN <= v <= _INT32_MAX:
        raise VarintError(f"varint {v} out of the int32 range")
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise VarintError(f"varlong {v} out of the int64 range")
    return v, pos


class RecordWalk:
    """State of one batch's walk (see the module docstring); `walk` may be called once per buffer chunk."""

    __slots__ = ("count", "index", "check_offsets", "columns", "min_ts", "max_ts", "min_ts_index",
                 "max_ts_index", "null_keys", "offset_gap")

    def __init__(self, count: int, *, check_offsets: bool = False, columns: array[int] | None = None) -> None:
        if count < 0:
            raise CorruptRecordError(f"Found invalid record count {count} in magic v2 batch")
        self.count = count
        self.index = 0
        self.check_offsets = check_offsets
        self.columns = columns
        self.min_ts = _INT64_MAX
        self.max_ts = _INT64_MIN
        self.min_ts_index = -1
        self.max_ts_index = -1
        self.null_keys: list[int] = []
        self.offset_gap: tuple[int, int] | None = None  # (index, offsetDelta found) of the first gap

    @property
    def done(self) -> bool:
        return self.index >= self.count

    def walk_all(self, data: bytes | bytearray | memoryview, pos: int = 0) -> None:
        """Walk every record of an uncompressed records section data[pos:] (the whole rest of `data`)."""
        end = self.walk(data, pos, partial=False)
        if end != len(data):
            raise CorruptRecordError(
                f"Incorrect declared batch size, {len(data) - end} bytes remain after the last of "
                f"{self.count} records")

    def walk_chunks(self, chunks: Iterable[bytes]) -> None:
        """Walk the records of a decompressed stream given as chunks. Holds one chunk plus an unfinished
        record; a record longer than BIG_RECORD_BYTES is walked field by field as it streams past (its key,
        value and header bytes are skipped, never held), so memory stays bounded whatever the record size.
        Column positions of a chunked walk are relative to the buffer each record was found in (-1 for a
        streamed record): validation uses this walk, decoders use walk_all."""
        it = iter(chunks)
        tail = b""
        for chunk in it:
            if not chunk:
                continue
            if self.done:
                raise CorruptRecordError(
                    f"Incorrect declared batch size, bytes remain after the last of {self.count} records")
            data = tail + chunk if tail else chunk
            while True:  # bounded: each pass walks records or streams one, or stops
                used = self.walk(data, 0, partial=True)
                data = data[used:]
                if self.done or not data:
                    break
                length = _pending_length(data)
                if length is None or length <= BIG_RECORD_BYTES:
                    break
                data = self._stream_record(data, it, length)
            tail = data
        if tail:
            if self.done:
                raise CorruptRecordError(
                    f"Incorrect declared batch size, {len(tail)} bytes remain after the last of {self.count} records")
            self.walk(tail, 0, partial=False)  # raises: the stream ended inside a record
        if not self.done:
            raise CorruptRecordError(
                f"Incorrect declared batch size, premature end of records after {self.index} of {self.count}")

    def walk_chunk_columns(self, chunks: Iterable[bytes]) -> Iterator[tuple[bytes, array[int]]]:
        """Walk a decompressed stream and yield, per chunk, (buffer, columns) for the records that end in it,
        positions relative to that buffer. An unfinished record is gathered whole before it is walked (what
        a reader that needs each record's bytes, like the cleaner, must hold; Kafka's cleaner reads a record
        whole too): memory is one chunk, one record and the columns of one buffer."""
        buf = bytearray()
        need = 0  # bytes the pending record needs before a walk can make progress
        for chunk in chunks:
            if not chunk:
                continue
            if self.done:
                raise CorruptRecordError(
                    f"Incorrect declared batch size, bytes remain after the last of {self.count} records")
            buf += chunk
            if len(buf) < need:
                continue
            data = bytes(buf)
            cols: array[int] = array("q")
            self.columns = cols
            used = self.walk(data, 0, partial=True)
            self.columns = None
            del buf[:used]
            if cols:
                yield data, cols
            if buf and not self.done:
                length = _pending_length(bytes(buf[:5]))
                need = 0 if length is None else length + 1
        if buf:
            if self.done:
                raise CorruptRecordError(
                    f"Incorrect declared batch size, {len(buf)} bytes remain after the last of {self.count} records")
            self.walk(bytes(buf), 0, partial=False)  # raises: the stream ended inside a record
        if not self.done:
            raise CorruptRecordError(
                f"Incorrect declared batch size, premature end of records after {self.index} of {self.count}")

    def _stream_record(self, data: bytes, it: Iterator[bytes], length: int) -> bytes:
        """Walk the one record starting at data[0] whose body (`length` bytes) goes past data, pulling chunks
        from `it`; the same checks as walk(). Returns the bytes that follow the record in the last chunk."""
        i = self.index
        cur = _StreamCursor(data, it)
        cur.varint(5)  # the length, already known
        start = cur.consumed
        cur.skip(1)  # attributes
        ts_delta = cur.varint(10)
        od = cur.varint(5)
        klen = cur.varint(5)
        if klen >= 0:
            cur.skip(klen)
        elif klen == -1:
            self.null_keys.append(i)
        else:
            raise CorruptRecordError(f"Invalid negative key length {klen} in record {i}")
        if cur.consumed - start >= length:
            raise CorruptRecordError(f"Key of record {i} runs past the record's size {length}")
        vlen = cur.varint(5)
        if vlen >= 0:
            cur.skip(vlen)
        elif vlen != -1:
            raise CorruptRecordError(f"Invalid negative value length {vlen} in record {i}")
        if cur.consumed - start >= length:
            raise CorruptRecordError(f"Value of record {i} runs past the record's size {length}")
        nh = cur.varint(5)
        if nh < 0 or nh > length:
            raise CorruptRecordError(f"Found invalid number of record headers {nh}")
        for _ in range(nh):
            hkl = cur.varint(5)
            if hkl < 0:
                raise CorruptRecordError("Invalid negative header key size")
            cur.skip(hkl)
            hvl = cur.varint(5)
            if hvl >= 0:
                cur.skip(hvl)
            elif hvl != -1:
                raise CorruptRecordError(f"Invalid negative header value size {hvl}")
            if cur.consumed - start > length:
                raise CorruptRecordError(f"Header of record {i} runs past the record")
        if cur.consumed - start != length:
            raise CorruptRecordError(
                f"Invalid record size: expected to read {length} bytes in record payload, "
                f"but instead read {cur.consumed - start}")
        if ts_delta < self.min_ts:
            self.min_ts, self.min_ts_index = ts_delta, i
        if ts_delta > self.max_ts:
            self.max_ts, self.max_ts_index = ts_delta, i
        if self.check_offsets and od != i and self.offset_gap is None:
            self.offset_gap = (i, od)
        if self.columns is not None:
            self.columns.extend((-1, -1, od, ts_delta, -1, klen, -1, vlen, -1, nh))
        self.index = i + 1
        return cur.rest()

    def walk(self, data: bytes | bytearray | memoryview, pos: int, partial: bool) -> int:
        """Walk records from data[pos] until `count` records or (partial) a record that data does not
        hold entirely; returns the position after the last record walked."""
        if _compiled_walk is not None and use_compiled:
            return self._walk_compiled(data, pos, partial)
        if isinstance(data, memoryview):
            data = data.tobytes()  # indexing bytes is the fast path of this loop
        n = len(data)
        i = self.index
        count = self.count
        check_offsets = self.check_offsets
        cols = self.columns
        ext = cols.extend if cols is not None else None
        min_ts, max_ts = self.min_ts, self.max_ts
        null_keys = self.null_keys
        slow = _varint
        start = pos
        try:
            while i < count:
                start = pos
                if pos >= n:
                    if partial:
                        break
                    raise CorruptRecordError(
                        f"Incorrect declared batch size, premature end of records after {i} of {count}")
                b = data[pos]
                if b < 0x80:
                    length = (b >> 1) ^ -(b & 1)
                    pos += 1
                else:
                    try:
                        length, pos = slow(data, pos, 5)
                    except VarintError:
                        if partial and n - pos < 5:
                            break
                        raise
                rec_end = pos + length
                if length < 1:
                    raise CorruptRecordError(f"Invalid record size {length} at position {start}")
                if rec_end > n:
                    if partial:
                        pos = start
                        break
                    raise CorruptRecordError(
                        f"Record at position {start} of size {length} runs past the end of the records")
                pos += 1  # attributes: unused in magic 2
                b = data[pos]
                if b < 0x80:
                    ts_delta = (b >> 1) ^ -(b & 1)
                    pos += 1
                elif data[pos + 1] < 0x80:
                    u = (b & 0x7F) | (data[pos + 1] << 7)
                    ts_delta = (u >> 1) ^ -(u & 1)
                    pos += 2
                else:
                    ts_delta, pos = slow(data, pos, 10)
                b = data[pos]
                if b < 0x80:
                    od = (b >> 1) ^ -(b & 1)
                    pos += 1
                elif data[pos + 1] < 0x80:
                    u = (b & 0x7F) | (data[pos + 1] << 7)
                    od = (u >> 1) ^ -(u & 1)
                    pos += 2
                else:
                    od, pos = slow(data, pos, 5)
                b = data[pos]
                if b < 0x80:
                    klen = (b >> 1) ^ -(b & 1)
                    pos += 1
                elif data[pos + 1] < 0x80:
                    u = (b & 0x7F) | (data[pos + 1] << 7)
                    klen = (u >> 1) ^ -(u & 1)
                    pos += 2
                else:
                    klen, pos = slow(data, pos, 5)
                kpos = pos
                if klen >= 0:
                    pos += klen
                elif klen == -1:
                    null_keys.append(i)
                else:
                    raise CorruptRecordError(f"Invalid negative key length {klen} in record {i}")
                if pos >= rec_end:
                    raise CorruptRecordError(f"Key of record {i} runs past the record's size {length}")
                b = data[pos]
                if b < 0x80:
                    vlen = (b >> 1) ^ -(b & 1)
                    pos += 1
                elif data[pos + 1] < 0x80:
                    u = (b & 0x7F) | (data[pos + 1] << 7)
                    vlen = (u >> 1) ^ -(u & 1)
                    pos += 2
                else:
                    vlen, pos = slow(data, pos, 5)
                vpos = pos
                if vlen >= 0:
                    pos += vlen
                elif vlen != -1:
                    raise CorruptRecordError(f"Invalid negative value length {vlen} in record {i}")
                if pos >= rec_end:
                    raise CorruptRecordError(f"Value of record {i} runs past the record's size {length}")
                hpos = pos
                if data[pos] == 0:
                    nh = 0
                    pos += 1
                else:
                    nh, pos = slow(data, pos, 5)
                    if nh < 0:
                        raise CorruptRecordError(f"Found invalid number of record headers {nh}")
                    pos = _skip_headers(data, pos, nh, rec_end, i)
                if pos != rec_end:
                    raise CorruptRecordError(
                        f"Invalid record size: expected to read {length} bytes in record payload, "
                        f"but instead read {length - (rec_end - pos)}")
                if ts_delta < min_ts:
                    min_ts = ts_delta
                    self.min_ts_index = i
                if ts_delta > max_ts:
                    max_ts = ts_delta
                    self.max_ts_index = i
                if check_offsets and od != i and self.offset_gap is None:
                    self.offset_gap = (i, od)
                if ext is not None:
                    ext((start, rec_end, od, ts_delta, kpos, klen, vpos, vlen, hpos, nh))
                i += 1
        except (IndexError, VarintError) as e:
            raise CorruptRecordError(f"Found invalid record structure at position {start}: {e}") from e
        finally:
            self.index = i
            self.min_ts, self.max_ts = min_ts, max_ts
        return pos


    def _walk_compiled(self, data: bytes | bytearray | memoryview, pos: int, partial: bool) -> int:
        assert _compiled_walk is not None
        cols = self.columns
        (pos, self.index, self.min_ts, self.max_ts, min_i, max_i, gap_i, gap_delta, error, packed) = _compiled_walk(
            data, pos, self.index, self.count, self.check_offsets, partial, self.min_ts, self.max_ts, self.null_keys,
            cols is not None)
        if packed and cols is not None:
            cols.frombytes(packed)
        if min_i >= 0:
            self.min_ts_index = min_i
        if max_i >= 0:
            self.max_ts_index = max_i
        if gap_i >= 0 and self.offset_gap is None:
            self.offset_gap = (gap_i, gap_delta)
        if error is not None:
            raise CorruptRecordError(error)
        return pos


# Tests and the bench switch this off to run the pure-Python walk where the compiled one is built.
use_compiled = True


def _skip_headers(data: bytes | bytearray, pos: int, count: int, rec_end: int, index: int) -> int:
    """Position after `count` headers starting at data[pos], each inside the record ending at rec_end."""
    if count > rec_end - pos:  # every header takes at least 2 bytes
        raise CorruptRecordError(f"Found invalid number of record headers {count} in record {index}")
    for _ in range(count):
        hkl, pos = _varint(data, pos, 5)
        if hkl < 0:
            raise CorruptRecordError("Invalid negative header key size")
        pos += hkl
        if pos > rec_end:
            raise CorruptRecordError(f"Header key of record {index} runs past the record")
        hvl, pos = _varint(data, pos, 5)
        if hvl >= 0:
            pos += hvl
        elif hvl != -1:
            raise CorruptRecordError(f"Invalid negative header value size {hvl}")
        if pos > rec_end:
            raise CorruptRecordError(f"Header value of record {index} runs past the record")
    return pos


# A record longer than this is walked as it streams past instead of being gathered in one buffer.
BIG_RECORD_BYTES = 1 << 20


def _pending_length(data: bytes) -> int | None:
    """The length of the record starting at data[0], or None while its varint is incomplete."""
    try:
        return _varint(data, 0, 5)[0]
    except VarintError:
        if len(data) < 5:
            return None
        raise CorruptRecordError("Found invalid record structure: record length varint is too long") from None


class _StreamCursor:
    """Reads varints and skips bytes across the chunks of a decompressed stream (one chunk held)."""

    __slots__ = ("buf", "pos", "it", "consumed")

    def __init__(self, data: bytes, it: Iterator[bytes]) -> None:
        self.buf = data
        self.pos = 0
        self.it = it
        self.consumed = 0

    def _pull(self) -> None:
        while self.pos >= len(self.buf):  # bounded by the stream: each chunk is consumed or the stream ends
            nxt = next(self.it, None)
            if nxt is None:
                raise CorruptRecordError("Incorrect declared batch size, premature end of the records")
            self.buf, self.pos = nxt, 0

    def varint(self, max_bytes: int) -> int:
        u = 0
        shift = 0
        for _ in range(max_bytes):
            if self.pos >= len(self.buf):
                self._pull()
            b = self.buf[self.pos]
            self.pos += 1
            self.consumed += 1
            u |= (b & 0x7F) << shift
            if b < 0x80:
                v = (u >> 1) ^ -(u & 1)
                if (max_bytes == 5 and not _INT32_MIN <= v <= _INT32_MAX) or not _INT64_MIN <= v <= _INT64_MAX:
                    raise CorruptRecordError(f"Found invalid record structure: varint {v} out of range")
                return v
            shift += 7
        raise CorruptRecordError(f"Found invalid record structure: varint longer than {max_bytes} bytes")

    def skip(self, n: int) -> None:
        while n > 0:  # bounded: every pass consumes bytes or pulls a chunk (or raises at the end)
            if self.pos >= len(self.buf):
                self._pull()
            take = min(n, len(self.buf) - self.pos)
            self.pos += take
            self.consumed += take
            n -= take

    def rest(self) -> bytes:
        return self.buf[self.pos:]
