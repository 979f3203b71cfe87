"""RecordWalk (the one record walker) and streaming decompression: columns, chunked walks equal whole
walks, every malformed shape raises CorruptRecordError, and decompression stops at its cap."""

from __future__ import annotations

import zlib
from array import array

import pytest
import zstandard

from kafkapy.record import record_walker
from kafkapy.record.compression import (
    CompressionType,
    DecompressedSizeError,
    DecompressionError,
    compress,
    iter_decompress,
)
from kafkapy.record.default_record import encode_record
from kafkapy.record.errors import CorruptRecordError
from kafkapy.record.record_walker import (
    COLUMNS,
    HEADERS_COUNT,
    KEY_LEN,
    KEY_POS,
    OFFSET_DELTA,
    REC_END,
    REC_START,
    TIMESTAMP_DELTA,
    VALUE_LEN,
    VALUE_POS,
    RecordWalk,
)


@pytest.fixture(autouse=True, params=["compiled", "python"])
def walk_impl(request, monkeypatch):
    """Every test runs over the compiled walk (when built) and the pure-Python reference walk."""
    if request.param == "compiled" and record_walker._compiled_walk is None:
        pytest.skip("kafkapy.record._record_walk is not built")
    monkeypatch.setattr(record_walker, "use_compiled", request.param == "compiled")
    return request.param


ITEMS = [(b"k0", b"v" * 10, []), (None, b"x" * 300, [("h", b"1"), ("g", None)]), (b"k2" * 100, None, []),
         (b"", b"", [])]
DATA = b"".join(encode_record(i, i * 1000 - 5, k, v, h) for i, (k, v, h) in enumerate(ITEMS))


def test_columns_report_every_field_position() -> None:
    cols: array[int] = array("q")
    walk = RecordWalk(len(ITEMS), check_offsets=True, columns=cols)
    walk.walk_all(DATA)
    assert len(cols) == COLUMNS * len(ITEMS)
    assert walk.null_keys == [1] and walk.offset_gap is None
    assert (walk.min_ts, walk.max_ts, walk.min_ts_index, walk.max_ts_index) == (-5, 2995, 0, 3)
    for i, (k, v, h) in enumerate(ITEMS):
        row = cols[i * COLUMNS:(i + 1) * COLUMNS]
        assert row[OFFSET_DELTA] == i and row[TIMESTAMP_DELTA] == i * 1000 - 5
        assert (row[KEY_LEN], row[VALUE_LEN], row[HEADERS_COUNT]) == (
            -1 if k is None else len(k), -1 if v is None else len(v), len(h))
        if k is not None:
            assert DATA[row[KEY_POS]:row[KEY_POS] + row[KEY_LEN]] == k
        if v is not None:
            assert DATA[row[VALUE_POS]:row[VALUE_POS] + row[VALUE_LEN]] == v
    assert cols[REC_START] == 0 and cols[(len(ITEMS) - 1) * COLUMNS + REC_END] == len(DATA)


@pytest.mark.parametrize("size", [1, 2, 7, 64, 1000])
def test_chunked_walk_equals_the_whole_walk(size: int) -> None:
    whole, chunked = array("q"), array("q")
    RecordWalk(len(ITEMS), columns=whole).walk_all(DATA)
    walk = RecordWalk(len(ITEMS), check_offsets=True)
    walk.walk_chunks(DATA[i:i + size] for i in range(0, len(DATA), size))
    assert walk.index == len(ITEMS) and walk.null_keys == [1] and (walk.min_ts, walk.max_ts) == (-5, 2995)
    # Columns of a chunked walk are positions in each chunk's buffer; the deltas are the same.
    walk2 = RecordWalk(len(ITEMS), columns=chunked)
    walk2.walk_chunks(DATA[i:i + size] for i in range(0, len(DATA), size))
    assert chunked[OFFSET_DELTA::COLUMNS] == whole[OFFSET_DELTA::COLUMNS]


def test_offset_gap_is_reported_not_raised() -> None:
    data = encode_record(0, 0, b"a", b"1") + encode_record(3, 0, b"b", b"2") + encode_record(9, 0, b"c", b"3")
    walk = RecordWalk(3, check_offsets=True)
    walk.walk_all(data)
    assert walk.offset_gap == (1, 3)


def test_validation_walk_matches_the_columns_walk_on_random_bytes() -> None:
    """The compiled and the pure-Python walks, with and without columns, agree on any input."""
    import random

    rng = random.Random(7)
    base = DATA + encode_record(4, -(1 << 40), b"big-ts", b"v", [("a", b"b")])
    for trial in range(3000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        data = bytes(data[:rng.randint(len(data) - 20, len(data))]) if trial % 3 == 0 else bytes(data)
        outcomes = []
        for compiled, columns in ((True, None), (True, array("q")), (False, None), (False, array("q"))):
            record_walker.use_compiled = compiled
            walk = RecordWalk(5, check_offsets=True, columns=columns)
            try:
                walk.walk_all(data)
                outcomes.append(("ok", walk.index, walk.min_ts, walk.max_ts, walk.null_keys, walk.offset_gap,
                                 None if columns is None else list(columns)))
            except CorruptRecordError:
                outcomes.append(("error",))
        assert outcomes[0][:6] == outcomes[1][:6] == outcomes[2][:6] == outcomes[3][:6], (trial, data)
        assert outcomes[1] == outcomes[3], (trial, data)


ONE = encode_record(0, 0, b"k", b"v")


@pytest.mark.parametrize("data,count", [
    pytest.param(b"", 1, id="no-records"),
    pytest.param(ONE, 2, id="count-too-high"),
    pytest.param(ONE + ONE, 1, id="trailing-record"),
    pytest.param(ONE + b"\x00", 1, id="trailing-byte"),
    pytest.param(b"\xff\xff\xff\xff\xff\xff\x01", 1, id="length-varint-overflow"),
    pytest.param(b"\x0e\x00\x00\x00\x09\x02v\x00", 1, id="key-length-minus-5"),
    pytest.param(b"\x0e\x00\x00\x00\x00\x0bv\x00", 1, id="value-length-minus-6"),
    pytest.param(b"\x0c\x00\x00\x00\x02k\x7fv", 1, id="value-past-record"),
    pytest.param(b"\x0c\x00\x00\x00\x02k\x02v\x02", 1, id="header-count-past-record"),
    pytest.param(b"\x00", 1, id="zero-length"),
    pytest.param(b"\x01", 1, id="negative-length"),
    pytest.param(b"\x0e\x00\x00\x00\x02k\x02v\x00\x00", 1, id="record-shorter-than-fields"),
    pytest.param(b"\x0c\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 1, id="timestamp-varlong-overflow"),
])
def test_malformed_records_raise(data: bytes, count: int) -> None:
    with pytest.raises(CorruptRecordError):
        RecordWalk(count).walk_all(data)
    with pytest.raises(CorruptRecordError):
        RecordWalk(count).walk_chunks([data[:3], data[3:]])


def test_negative_count_raises() -> None:
    with pytest.raises(CorruptRecordError):
        RecordWalk(-1)


@pytest.mark.parametrize("codec", [c for c in CompressionType if c])
def test_iter_decompress_streams_and_stops_at_the_cap(codec: CompressionType) -> None:
    data = bytes(3 << 20)
    packed = compress(codec, data)
    chunks = list(iter_decompress(codec, packed, 4 << 20))
    assert b"".join(chunks) == data
    if codec != CompressionType.SNAPPY:  # xerial blocks are 32 KiB; gzip/zstd chunks <= 256 KiB, lz4 64 KiB
        assert max(len(c) for c in chunks) <= 256 << 10
    with pytest.raises(DecompressedSizeError):
        for _ in iter_decompress(codec, packed, 1 << 20):
            pass


def test_zstd_bomb_stops_after_the_cap_without_holding_it() -> None:
    c = zstandard.ZstdCompressor(level=3).compressobj()
    zeros = bytes(1 << 20)
    packed = b"".join(c.compress(zeros) for _ in range(400)) + c.flush()  # 400 MiB of zeros
    seen = 0
    with pytest.raises(DecompressedSizeError):
        for chunk in iter_decompress(CompressionType.ZSTD, packed, 1 << 20):
            seen += len(chunk)
    assert seen <= 1 << 20


def test_gzip_bomb_and_garbage() -> None:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    packed = b"".join(c.compress(bytes(1 << 20)) for _ in range(64)) + c.flush()
    with pytest.raises(DecompressedSizeError):
        for _ in iter_decompress(CompressionType.GZIP, packed, 1 << 20):
            pass
    with pytest.raises(DecompressionError):
        list(iter_decompress(CompressionType.GZIP, ONE))
    with pytest.raises(DecompressionError):
        list(iter_decompress(CompressionType.GZIP, packed[:100]))


def test_walk_takes_a_memoryview_of_the_request() -> None:
    frame = bytearray(b"xx" + DATA)
    walk = RecordWalk(len(ITEMS), check_offsets=True)
    walk.walk_all(memoryview(frame)[2:])
    assert walk.index == len(ITEMS) and walk.null_keys == [1]


def _chunks_of(data: bytes, size: int):
    return (data[i:i + size] for i in range(0, len(data), size))


def test_a_big_record_streams_past_without_being_gathered(monkeypatch) -> None:
    monkeypatch.setattr(record_walker, "BIG_RECORD_BYTES", 1000)
    big = [(b"k" * 3000, b"v" * 50_000, [("h", b"x" * 2000)]), (None, b"small", []), (b"key", None, []),
           (b"k2", b"w" * 5000, [])]
    data = b"".join(encode_record(i, 7 - i, k, v, h) for i, (k, v, h) in enumerate(big))
    for size in (1, 100, 999, 4096):
        walk = RecordWalk(len(big), check_offsets=True, columns=array("q"))
        walk.walk_chunks(_chunks_of(data, size))
        assert walk.index == 4 and walk.null_keys == [1] and walk.offset_gap is None
        assert (walk.min_ts, walk.max_ts, walk.min_ts_index, walk.max_ts_index) == (4, 7, 3, 0)
        assert walk.columns is not None and list(walk.columns[OFFSET_DELTA::COLUMNS]) == [0, 1, 2, 3]


@pytest.mark.parametrize("data,count", [
    pytest.param(encode_record(0, 0, b"k", b"v" * 5000)[:-1], 1, id="stream-ends-inside-the-value"),
    pytest.param(encode_record(0, 0, b"k", b"v" * 5000) + b"\x00", 1, id="trailing-byte-after-a-big-record"),
    pytest.param(encode_record(0, 0, b"k", b"v" * 5000), 2, id="count-past-a-big-record"),
    pytest.param(b"\x90\x4e\x00\x00\x00\x09" + b"x" * 5000, 1, id="big-record-key-length-minus-5"),
    pytest.param(b"\x90\x4e\x00\x00\x00\x02k\xfe\xff\x03" + b"x" * 5000, 1, id="big-record-value-past-its-length"),
])
def test_malformed_big_records_raise(monkeypatch, data: bytes, count: int) -> None:
    monkeypatch.setattr(record_walker, "BIG_RECORD_BYTES", 1000)
    with pytest.raises(CorruptRecordError):
        RecordWalk(count).walk_chunks(_chunks_of(data, 700))


def test_stream_compressor_matches_compress() -> None:
    from kafkapy.record.compression import StreamCompressor, decompress

    data = bytes(300_000) + b"kafka" * 20_000 + bytes(range(256)) * 100
    for codec in CompressionType:
        sc = StreamCompressor(codec)
        out = b"".join(sc.compress(c) for c in _chunks_of(data, 7000)) + sc.flush()
        assert decompress(codec, out) == data
        if codec not in (CompressionType.ZSTD,):  # zstd's streamed frame carries no content size
            whole = StreamCompressor(codec)
            assert whole.compress(data) + whole.flush() == compress(codec, data)


def test_zstd_single_small_frames_are_decoded_in_one_piece_and_several_frames_still_read() -> None:
    from kafkapy.record.compression import decompress

    one = compress(CompressionType.ZSTD, b"a" * 5000)
    assert list(iter_decompress(CompressionType.ZSTD, one, 1 << 20)) == [b"a" * 5000]
    two = one + compress(CompressionType.ZSTD, b"b" * 10)
    assert decompress(CompressionType.ZSTD, two) == b"a" * 5000 + b"b" * 10
    with pytest.raises(DecompressedSizeError):
        list(iter_decompress(CompressionType.ZSTD, one, 4999))
    with pytest.raises(DecompressionError):
        list(iter_decompress(CompressionType.ZSTD, one[:-3]))
    with pytest.raises(DecompressionError):
        list(iter_decompress(CompressionType.ZSTD, one + b"trailing garbage"))


@pytest.mark.parametrize("block_checksum,content_checksum", [(True, False), (False, True), (True, True)])
def test_lz4_frames_with_checksums_are_verified(block_checksum: bool, content_checksum: bool) -> None:
    import lz4.frame

    from kafkapy.record.compression import decompress

    data = bytes(range(256)) * 400 + bytes(300_000)
    frame = lz4.frame.compress(data, block_checksum=block_checksum, content_checksum=content_checksum,
                               block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False)
    assert decompress(CompressionType.LZ4, frame + compress(CompressionType.LZ4, b"next")) == data + b"next"
    bad = bytearray(frame)
    bad[-2] ^= 0xFF  # inside the content checksum, or the last block's checksum
    with pytest.raises(DecompressionError):
        decompress(CompressionType.LZ4, bytes(bad))
    with pytest.raises(DecompressionError):
        decompress(CompressionType.LZ4, frame[:-3])
    with pytest.raises(DecompressedSizeError):
        list(iter_decompress(CompressionType.LZ4, frame, 100_000))


def test_strict_lz4_requires_the_frame_header_checksum() -> None:
    frame = bytearray(compress(CompressionType.LZ4, b"hello" * 1000))
    assert b"".join(iter_decompress(CompressionType.LZ4, bytes(frame), strict=True)) == b"hello" * 1000
    frame[6] ^= 0xFF  # the header checksum (FLG 0x60: no content size)
    assert b"".join(iter_decompress(CompressionType.LZ4, bytes(frame))) == b"hello" * 1000  # magic-0 tolerance
    with pytest.raises(DecompressionError):
        list(iter_decompress(CompressionType.LZ4, bytes(frame), strict=True))
