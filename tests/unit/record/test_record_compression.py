import gzip
import os
import struct

import cramjam
import lz4.frame
import pytest
import zstandard

from kafkapy.record.compression import (
    XERIAL_HEADER,
    CompressionType,
    DecompressionError,
    compress,
    decompress,
)

DATA = os.urandom(5000) * 20 + b"kafka" * 30000  # 250 KB, some of it compressible


def test_names():
    assert CompressionType.from_name("gzip") is CompressionType.GZIP
    assert CompressionType.from_name("SNAPPY") is CompressionType.SNAPPY
    assert CompressionType.from_name("lz4") == 3
    assert CompressionType.from_name("zstd") == 4
    assert CompressionType.from_name("none") == CompressionType.from_name("uncompressed") == 0
    assert [c.lower_name for c in CompressionType] == ["none", "gzip", "snappy", "lz4", "zstd"]
    with pytest.raises(ValueError):
        CompressionType.from_name("brotli")
    with pytest.raises(ValueError):
        CompressionType.from_id(5)


@pytest.mark.parametrize("codec", list(CompressionType))
@pytest.mark.parametrize("data", [b"", b"x", DATA])
def test_round_trip(codec, data):
    assert decompress(codec, compress(codec, data)) == data


def test_gzip_is_standard_gzip():
    assert gzip.decompress(compress(CompressionType.GZIP, DATA)) == DATA
    assert decompress(CompressionType.GZIP, gzip.compress(DATA)) == DATA
    # concatenated members, as Java's GZIPInputStream reads them
    assert decompress(CompressionType.GZIP, gzip.compress(b"ab") + gzip.compress(b"cd")) == b"abcd"
    with pytest.raises(DecompressionError, match="truncated"):
        decompress(CompressionType.GZIP, gzip.compress(DATA)[:-20])


def test_snappy_xerial_layout():
    out = compress(CompressionType.SNAPPY, DATA)
    assert out[:16] == b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01" == XERIAL_HEADER
    pos, blocks = 16, []
    while pos < len(out):
        (n,) = struct.unpack_from(">i", out, pos)
        blocks.append(bytes(cramjam.snappy.decompress_raw(out[pos + 4:pos + 4 + n])))
        pos += 4 + n
    assert pos == len(out)
    assert [len(b) for b in blocks[:-1]] == [32768] * (len(blocks) - 1)
    assert b"".join(blocks) == DATA


def test_snappy_raw_and_xerial_both_decode():
    raw = bytes(cramjam.snappy.compress_raw(DATA))
    assert decompress(CompressionType.SNAPPY, raw) == DATA
    assert decompress(CompressionType.SNAPPY, compress(CompressionType.SNAPPY, DATA)) == DATA
    assert decompress(CompressionType.SNAPPY, XERIAL_HEADER) == b""
    with pytest.raises(DecompressionError):
        decompress(CompressionType.SNAPPY, compress(CompressionType.SNAPPY, DATA)[:-3])
    with pytest.raises(DecompressionError):
        decompress(CompressionType.SNAPPY, b"\xff\xff\xff\xff\x0fgarbage")


def test_lz4_frame_flags_match_kafka():
    out = compress(CompressionType.LZ4, DATA)
    assert struct.unpack_from("<I", out, 0)[0] == 0x184D2204
    flg, bd = out[4], out[5]
    assert flg == 0x60  # version 01, independent blocks, no checksums, no content size, no dict id
    assert bd == 0x40  # 64 KB max block
    assert lz4.frame.decompress(out) == DATA


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(block_checksum=True),
        dict(content_checksum=True),
        dict(store_size=True),
        dict(block_size=lz4.frame.BLOCKSIZE_MAX4MB),
        dict(block_checksum=True, content_checksum=True, store_size=True),
    ],
)
def test_lz4_reads_frames_with_optional_fields(kwargs):
    frame = lz4.frame.compress(DATA, block_linked=False, **kwargs)
    assert decompress(CompressionType.LZ4, frame) == DATA


def test_lz4_broken_header_checksum_accepted_and_stored_blocks():
    frame = bytearray(lz4.frame.compress(os.urandom(70000), block_linked=False, store_size=False))
    frame[6] ^= 0xFF  # header checksum byte: Kafka's magic-0 frames carry a wrong one
    assert len(decompress(CompressionType.LZ4, bytes(frame))) == 70000


def test_lz4_dependent_blocks_rejected():
    frame = lz4.frame.compress(DATA, block_linked=True)
    with pytest.raises(DecompressionError, match="dependent"):
        decompress(CompressionType.LZ4, frame)


def test_zstd_without_content_size():
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(DATA)
    assert decompress(CompressionType.ZSTD, frame) == DATA
    cobj = zstandard.ZstdCompressor().compressobj()
    streamed = cobj.compress(DATA) + cobj.flush()
    assert decompress(CompressionType.ZSTD, streamed) == DATA


@pytest.mark.parametrize("codec", [c for c in CompressionType if c != CompressionType.NONE])
def test_decompression_bomb_is_capped(codec):
    bomb = compress(codec, b"\x00" * (4 << 20))
    assert len(bomb) < 300_000
    with pytest.raises(DecompressionError, match="more than 1048576 bytes"):
        decompress(codec, bomb, max_output=1 << 20)
    assert len(decompress(codec, bomb, max_output=4 << 20)) == 4 << 20


def test_raw_snappy_bomb_is_capped():
    raw = bytes(cramjam.snappy.compress_raw(b"\x00" * (4 << 20)))
    with pytest.raises(DecompressionError, match="more than"):
        decompress(CompressionType.SNAPPY, raw, max_output=1 << 20)


@pytest.mark.parametrize("codec", [c for c in CompressionType if c != CompressionType.NONE])
def test_garbage_raises_decompression_error(codec):
    with pytest.raises(DecompressionError):
        decompress(codec, b"\x00\x01\x02 definitely not compressed data \xff" * 3)
