"""Compression codecs of Kafka record batches: none, gzip, snappy, lz4, zstd.

Byte formats (record-format.md section 6):
  gzip   RFC 1952 stream (zlib with gzip wrapper); concatenated members are read.
  snappy snappy-java "xerial" framing on write: magic 82 53 4E 41 50 50 59 00, int32 version 1,
         int32 compat 1, then blocks of int32 BE compressed length + raw snappy block (32 KiB input per
         block). On read, input without the magic is one raw snappy block.
  lz4    LZ4 frame, written like Kafka's KafkaLZ4BlockOutputStream: independent blocks, 64 KB max block,
         no content size, no checksums. Read by our own frame walker so that magic-0 frames with the
         "broken" header checksum, block/content checksums and content size are all accepted.
  zstd   standard Zstandard frame(s); frames without content size are streamed.
Decompression streams (`iter_decompress`: chunks of about STREAM_CHUNK_BYTES, an lz4 block or a
snappy block at a time, zstd with a bounded window) and its output is capped (`max_output` bytes, default
MAX_DECOMPRESSED_BYTES) against bombs: passing it raises DecompressedSizeError as soon as it happens,
so no caller ever holds more than the cap. Pure functions, thread-safe.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Generator, Iterator
from enum import IntEnum
from typing import TYPE_CHECKING, Any

# The codec libraries are imported by the functions that use them, on first use (thread-safe: the import
# lock; afterwards a dict lookup per call): a broker that never sees a compressed batch never loads them,
# which is start-up time for every broker and tool.
if TYPE_CHECKING:
    import zstandard

__all__ = [
    "CompressionType",
    "compress",
    "decompress",
    "iter_decompress",
    "StreamCompressor",
    "DecompressionError",
    "DecompressedSizeError",
    "STREAM_CHUNK_BYTES",
    "MAX_DECOMPRESSED_BYTES",
    "XERIAL_HEADER",
]

MAX_DECOMPRESSED_BYTES = 1 << 30
STREAM_CHUNK_BYTES = 256 << 10
ZSTD_MAX_WINDOW_BYTES = 1 << 25
ZSTD_ONE_SHOT_BYTES = 1 << 20  # a single zstd frame declaring at most this is decoded in one piece


class DecompressionError(ValueError):
    """Corrupt compressed data, or output larger than the allowed maximum."""


class DecompressedSizeError(DecompressionError):
    """Decompressed output past the allowed maximum (the data may be well formed)."""


class CompressionType(IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @classmethod
    def from_name(cls, name: str) -> CompressionType:
        key = name.strip().lower()
        if key == "uncompressed":
            key = "none"
        try:
            return _BY_NAME[key]
        except KeyError:
            raise ValueError(f"unknown compression type {name!r}") from None

    @classmethod
    def from_id(cls, codec_id: int) -> CompressionType:
        try:
            return cls(codec_id)
        except ValueError:
            raise ValueError(f"unknown compression type id {codec_id}") from None

    @property
    def lower_name(self) -> str:
        """Kafka's config spelling: 'none', 'gzip', 'snappy', 'lz4', 'zstd'."""
        return self.name.lower()


_BY_NAME = {c.name.lower(): c for c in CompressionType}

XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
_XERIAL_MAGIC = XERIAL_HEADER[:8]
_XERIAL_BLOCK = 32 * 1024
_INT32_BE = struct.Struct(">i")
_UINT32_LE = struct.Struct("<I")
_LZ4_MAGIC = 0x184D2204
_LZ4_BLOCK_SIZES = {4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20}


def compress(codec: int, data: bytes | bytearray | memoryview, level: int | None = None) -> bytes:
    """Compress `data` with `codec` (a CompressionType or its id); `level` None = library default."""
    if codec == CompressionType.NONE:
        return bytes(data)
    if codec == CompressionType.GZIP:
        c = zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if codec == CompressionType.SNAPPY:
        return _xerial_compress(data)
    if codec == CompressionType.LZ4:
        import lz4.frame

        return lz4.frame.compress(
            data,
            compression_level=0 if level is None else level,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            store_size=False,
        )
    if codec == CompressionType.ZSTD:
        import zstandard

        return zstandard.ZstdCompressor(level=3 if level is None else level).compress(data)
    raise ValueError(f"unknown compression type id {codec}")


class StreamCompressor:
    """Compresses a stream chunk by chunk in `codec`'s Kafka framing: the same formats as `compress`
    (gzip member, xerial snappy in 32 KiB blocks, Kafka's lz4 frame), zstd as one frame without a content
    size. Holds at most one snappy block of input. Not thread-safe (one owner)."""

    def __init__(self, codec: int, level: int | None = None) -> None:
        self.codec = codec
        self._pending = bytearray()
        self._started = False
        self._obj: Any = None
        if codec == CompressionType.GZIP:
            self._obj = zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, 31)
        elif codec == CompressionType.LZ4:
            import lz4.frame

            self._obj = lz4.frame.LZ4FrameCompressor(
                block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False, content_checksum=False,
                compression_level=0 if level is None else level)
        elif codec == CompressionType.ZSTD:
            import zstandard

            self._obj = zstandard.ZstdCompressor(level=3 if level is None else level).compressobj()
        elif codec not in (CompressionType.NONE, CompressionType.SNAPPY):
            raise ValueError(f"unknown compression type id {codec}")

    def compress(self, chunk: bytes | bytearray | memoryview) -> bytes:
        codec = self.codec
        if codec == CompressionType.NONE:
            return bytes(chunk)
        if codec == CompressionType.SNAPPY:
            self._pending += chunk
            whole = len(self._pending) - len(self._pending) % _XERIAL_BLOCK
            out = self._header() + (_xerial_compress(self._pending[:whole])[len(XERIAL_HEADER):] if whole else b"")
            del self._pending[:whole]
            return out
        if codec == CompressionType.LZ4:
            head = b"" if self._started else self._obj.begin()
            self._started = True
            return bytes(head + self._obj.compress(chunk))
        return bytes(self._obj.compress(chunk))

    def flush(self) -> bytes:
        codec = self.codec
        if codec == CompressionType.NONE:
            return b""
        if codec == CompressionType.SNAPPY:
            rest = _xerial_compress(self._pending)[len(XERIAL_HEADER):] if self._pending else b""
            self._pending = bytearray()
            return self._header() + rest
        if codec == CompressionType.LZ4:
            head = b"" if self._started else self._obj.begin()
            self._started = True
            return bytes(head + self._obj.flush())
        return bytes(self._obj.flush())

    def _header(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        return XERIAL_HEADER


def decompress(
    codec: int, data: bytes | bytearray | memoryview, max_output: int = MAX_DECOMPRESSED_BYTES
) -> bytes:
    """Decompress `data`; raises DecompressionError on corrupt input or output over `max_output` bytes."""
    if codec == CompressionType.NONE:
        return bytes(data)
    return b"".join(iter_decompress(codec, data, max_output))


def iter_decompress(
    codec: int, data: bytes | bytearray | memoryview, max_output: int = MAX_DECOMPRESSED_BYTES,
    chunk_size: int = STREAM_CHUNK_BYTES, *, strict: bool = False,
) -> Iterator[bytes]:
    """Stream the decompressed bytes of `data` as chunks of at most about `chunk_size` bytes (an lz4 or
    snappy block is one chunk: at most 4 MiB, resp. its declared length, checked against the budget first).

    Raises DecompressedSizeError as soon as the output passes `max_output` bytes, DecompressionError on
    bytes that are not `codec`. Never holds more than one chunk of output. `strict` (produce validation of
    magic-2 batches) also requires lz4 frame header checksums to be right, as every client decoder does;
    otherwise they are not checked, since Kafka's magic-0 frames carry a wrong one."""
    if codec == CompressionType.NONE:
        yield bytes(data)
        return
    library_error: type[Exception]  # what the codec's library raises on bytes that are not its format
    if codec == CompressionType.GZIP:
        gen = _gzip_chunks(data, chunk_size)
        library_error = zlib.error
    elif codec == CompressionType.SNAPPY:
        import cramjam

        gen = _snappy_chunks(data, max_output)
        library_error = cramjam.DecompressionError
    elif codec == CompressionType.LZ4:
        import lz4.block

        gen = _lz4_chunks(data, strict)
        library_error = lz4.block.LZ4BlockError
    elif codec == CompressionType.ZSTD:
        import zstandard

        gen = _zstd_chunks(data, chunk_size, max_output)
        library_error = zstandard.ZstdError
    else:
        raise ValueError(f"unknown compression type id {codec}")
    name = CompressionType(codec).lower_name
    total = 0
    try:
        for chunk in gen:
            total += len(chunk)
            if total > max_output:
                raise DecompressedSizeError(f"{name} data decompresses to more than {max_output} bytes")
            yield chunk
    except DecompressionError:
        raise
    except (library_error, zlib.error, struct.error, IndexError, RuntimeError, ValueError) as e:
        raise DecompressionError(f"corrupt {name} data: {e}") from e


def _gzip_chunks(data: bytes | bytearray | memoryview, chunk_size: int) -> Iterator[bytes]:
    rest: bytes | bytearray | memoryview = data
    # Bounded: each outer iteration consumes one non-empty gzip member; each inner one makes progress.
    while rest:
        d = zlib.decompressobj(31)
        pending: bytes | bytearray | memoryview = rest
        while not d.eof:
            chunk = d.decompress(pending, chunk_size)
            pending = d.unconsumed_tail
            if not chunk and not pending:
                # All input is inside zlib: flush emits what it still holds (at most one window).
                chunk = d.flush()
                if not d.eof:
                    raise DecompressionError("truncated gzip data")
            if chunk:
                yield chunk
        rest = d.unused_data


def _xerial_compress(data: bytes | bytearray | memoryview) -> bytes:
    import cramjam

    mv = memoryview(data)
    parts = [XERIAL_HEADER]
    raw = cramjam.snappy.compress_raw
    for start in range(0, len(mv), _XERIAL_BLOCK):
        block = bytes(raw(mv[start:start + _XERIAL_BLOCK]))
        parts.append(_INT32_BE.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_block(block: bytes | bytearray | memoryview, budget: int, max_output: int) -> bytes:
    import cramjam

    n = cramjam.snappy.decompress_raw_len(block)
    if n > budget:
        raise DecompressedSizeError(f"snappy data decompresses to more than {max_output} bytes")
    return bytes(cramjam.snappy.decompress_raw(block))


def _snappy_chunks(data: bytes | bytearray | memoryview, max_output: int) -> Iterator[bytes]:
    mv = memoryview(data)
    if mv[:8] != _XERIAL_MAGIC:
        yield _snappy_block(mv, max_output, max_output)
        return
    if len(mv) < 16:
        raise DecompressionError("truncated xerial snappy header")
    pos, end = 16, len(mv)
    total = 0
    while pos < end:
        if pos + 4 > end:
            raise DecompressionError("truncated xerial snappy block length")
        (n,) = _INT32_BE.unpack_from(mv, pos)
        pos += 4
        if n < 0 or pos + n > end:
            raise DecompressionError(f"xerial snappy block length {n} exceeds the data")
        chunk = _snappy_block(mv[pos:pos + n], max_output - total, max_output)
        total += len(chunk)
        yield chunk
        pos += n


def _lz4_chunks(data: bytes | bytearray | memoryview, strict: bool = False) -> Iterator[bytes]:
    import lz4.block

    mv = memoryview(data)
    end = len(mv)
    pos = 0
    # A buffer may hold several frames (concatenated); each loop reads one.
    while pos < end:
        if end - pos < 7:
            raise DecompressionError("truncated lz4 frame header")
        (magic,) = _UINT32_LE.unpack_from(mv, pos)
        if magic != _LZ4_MAGIC:
            raise DecompressionError(f"bad lz4 frame magic 0x{magic:08x}")
        flg, bd = mv[pos + 4], mv[pos + 5]
        if flg >> 6 != 1:
            raise DecompressionError(f"unsupported lz4 frame version {flg >> 6}")
        if not flg & 0x20:
            raise DecompressionError("lz4 dependent blocks are not supported")
        block_checksum = bool(flg & 0x10)
        content_checksum = bool(flg & 0x04)
        if strict or block_checksum or content_checksum:
            # Checksums a client's LZ4F decoder verifies: let LZ4F read this frame (its header checksum must
            # then be right, as every magic-2 writer makes it), so a wrong one is refused here too.
            pos = yield from _lz4_checked_frame(mv, pos)
            continue
        max_block = _LZ4_BLOCK_SIZES.get((bd >> 4) & 0x07)
        if max_block is None:
            raise DecompressionError(f"unsupported lz4 block size id {(bd >> 4) & 0x07}")
        # Header checksum is not verified: Kafka's magic-0 frames carry a wrong one.
        pos += 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0) + 1
        while True:
            if pos + 4 > end:
                raise DecompressionError("truncated lz4 frame")
            (size,) = _UINT32_LE.unpack_from(mv, pos)
            pos += 4
            if size == 0:
                break
            stored = bool(size & 0x80000000)
            size &= 0x7FFFFFFF
            if size > max_block or pos + size > end:
                raise DecompressionError(f"lz4 block size {size} is invalid")
            block = mv[pos:pos + size]
            chunk = bytes(block) if stored else lz4.block.decompress(block, uncompressed_size=max_block)
            pos += size + (4 if block_checksum else 0)
            yield chunk
        if content_checksum:
            pos += 4
        if pos > end:
            raise DecompressionError("truncated lz4 frame")


# Decompression contexts reused for single small frames (creating one costs ~30 us, as much as decoding a
# small batch). list.pop/append are atomic under the GIL, so each context serves one caller at a time; only
# one-shot decodes into a buffer of the frame's declared size use them, so none keeps a large window.
_ZSTD_POOL: list[zstandard.ZstdDecompressor] = []


def _zstd_one_shot(data: bytes | bytearray | memoryview, max_output: int) -> bytes | None:
    """The frame's content when `data` is exactly one frame declaring a content size up to
    ZSTD_ONE_SHOT_BYTES (and max_output); None when the streaming path must decide."""
    import zstandard

    try:
        size = zstandard.frame_content_size(data)
    except zstandard.ZstdError:
        return None
    if not 0 <= size <= min(max_output, ZSTD_ONE_SHOT_BYTES):
        return None
    try:
        dctx = _ZSTD_POOL.pop()
    except IndexError:
        dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW_BYTES)
    try:
        out = dctx.decompress(data, max_output_size=size, allow_extra_data=False)
    except zstandard.ZstdError:
        return None  # more frames, or corrupt: the streaming path reads or rejects it
    _ZSTD_POOL.append(dctx)
    return out if len(out) == size else None


def _lz4_checked_frame(mv: memoryview, pos: int) -> Generator[bytes, None, int]:
    """Decode the frame at mv[pos] with LZ4F (block and content checksums verified), in bounded pieces;
    returns the position after it."""
    import lz4.frame

    dec = lz4.frame.LZ4FrameDecompressor()
    data: bytes | memoryview = mv[pos:]
    while True:  # bounded: each call consumes input or emits output, and the frame ends or the data does
        chunk = dec.decompress(data, max_length=_LZ4_BLOCK_SIZES[7])
        data = b""
        if chunk:
            yield chunk
        if dec.eof:
            return len(mv) - len(dec.unused_data or b"")
        if dec.needs_input:
            raise DecompressionError("truncated lz4 frame")


def _zstd_check_frames(data: bytes | bytearray | memoryview) -> None:
    """Walk the frames' block headers (RFC 8878: 3-byte header, last-block bit, type, size) without decoding:
    the data must be whole frames (or skippable frames) and nothing else. A stream decoder stops quietly at a
    truncated frame; a client's decoder does not."""
    import zstandard

    mv = memoryview(data)
    end = len(mv)
    pos = 0
    while pos < end:  # bounded: every frame or block moves pos forward
        if end - pos < 8:
            raise DecompressionError("truncated zstd frame")
        (magic,) = _UINT32_LE.unpack_from(mv, pos)
        if magic & 0xFFFFFFF0 == 0x184D2A50:  # skippable frame
            (size,) = _UINT32_LE.unpack_from(mv, pos + 4)
            pos += 8 + size
            continue
        frame = mv[pos:]
        params = zstandard.get_frame_parameters(frame)
        pos += zstandard.frame_header_size(frame)
        while True:
            if pos + 3 > end:
                raise DecompressionError("truncated zstd frame")
            header = mv[pos] | (mv[pos + 1] << 8) | (mv[pos + 2] << 16)
            block_type = (header >> 1) & 3
            if block_type == 3:
                raise DecompressionError("reserved zstd block type")
            pos += 3 + (1 if block_type == 1 else header >> 3)
            if header & 1:
                break
        pos += 4 if params.has_checksum else 0
    if pos != end:
        raise DecompressionError("truncated zstd frame")


def _zstd_chunks(data: bytes | bytearray | memoryview, chunk_size: int, max_output: int) -> Iterator[bytes]:
    import zstandard

    _zstd_check_frames(data)
    whole = _zstd_one_shot(data, max_output)
    if whole is not None:
        yield whole
        return
    # max_window_size bounds the decoder's own buffer whatever window a frame header declares.
    dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW_BYTES)
    reader = dctx.stream_reader(bytes(data), read_across_frames=True)
    # Bounded by the caller's max_output: every read returns data or ends the loop.
    while True:
        chunk = reader.read(chunk_size)
        if not chunk:
            return
        yield chunk
