"""Re-encode a produced batch whose codec differs from the topic's `compression.type` (Kafka's LogValidator).

Only when compression.type is not `producer` and a data batch's codec differs. The records section the
LogValidator walks is fed here chunk by chunk as it is decompressed, and compressed with the topic's
codec and level as it is (streamed past 8 MiB, so never held whole): the records' own bytes (offset and timestamp deltas, keys, values, headers)
never change, so no record is decoded. The new batch keeps baseOffset, lastOffsetDelta, timestamps,
producer id/epoch/sequence, partition leader epoch, the timestamp type and transactional bits and the
count; attributes take the new codec and the CRC-32C is recomputed. Control batches are never re-encoded.
Pure functions over bytes; thread-safe.
"""

from __future__ import annotations

from kafkapy.record.batch_header import COMPRESSION_CODEC_MASK, BatchHeader, read_batch_header, write_batch
from kafkapy.record.compression import CompressionType, StreamCompressor, compress
from kafkapy.storage.log_config import LogConfig

__all__ = ["Recompressor", "target_codec"]


def target_codec(config: LogConfig) -> tuple[CompressionType, int | None] | None:
    """(codec, level) the topic forces, or None for `producer`."""
    name = config.compression_type
    if name == "producer":
        return None
    codec = CompressionType.from_name(name)
    level: int | None = None
    if codec == CompressionType.GZIP:
        level = config["compression.gzip.level"]
        level = None if level == -1 else level
    elif codec == CompressionType.LZ4:
        level = config["compression.lz4.level"]
    elif codec == CompressionType.ZSTD:
        level = config["compression.zstd.level"]
    return codec, level


class Recompressor:
    """Re-encodes one batch's records section, fed as the LogValidator walks it. Up to ONE_SHOT_BYTES the
    section is compressed in one call (the exact bytes `compress` gives); past that it streams through a
    StreamCompressor, so a large batch is never held decompressed (zstd's frame then has no content size)."""

    ONE_SHOT_BYTES = 8 << 20

    def __init__(self, codec: CompressionType, level: int | None) -> None:
        self.codec = codec
        self.level = level
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._stream: StreamCompressor | None = None

    def feed(self, chunk: bytes | bytearray | memoryview) -> None:
        if self._stream is not None:
            self._chunks.append(self._stream.compress(chunk))
            return
        self._chunks.append(bytes(chunk))
        self._buffered += len(chunk)
        if self._buffered > self.ONE_SHOT_BYTES:
            self._stream = StreamCompressor(self.codec, self.level)
            self._chunks = [self._stream.compress(c) for c in self._chunks]

    def payload(self) -> bytes:
        """The fed records section, encoded with the codec (ends the stream)."""
        if self._stream is None:
            return compress(self.codec, b"".join(self._chunks), self.level)
        return b"".join(self._chunks) + self._stream.flush()

    def batch(self, header: BatchHeader) -> tuple[bytes, BatchHeader]:
        """The batch of `header` holding the fed records, encoded with the codec."""
        payload = self.payload()
        attributes = (header.attributes & ~COMPRESSION_CODEC_MASK) | int(self.codec)
        batch = write_batch(header, attributes, header.base_timestamp, header.max_timestamp, header.records_count,
                            payload)
        return batch, read_batch_header(batch)
