"""Re-encode a produced batch whose codec differs from the topic's `compression.type` (Kafka's LogValidator).

Only when compression.type is not `producer` and a data batch's codec differs. The records section the
LogValidator has just walked (decompressed, so at most `max.message.bytes`) is compressed with the topic's
codec and level as it is: the records' own bytes (offset and timestamp deltas, keys, values, headers)
never change, so no record is decoded. The new batch keeps baseOffset, lastOffsetDelta, timestamps,
producer id/epoch/sequence, partition leader epoch, the timestamp type and transactional bits and the
count; attributes take the new codec and the CRC-32C is recomputed. Control batches are never re-encoded.
Pure functions over bytes; thread-safe.
"""

from __future__ import annotations

from kafkapy.record.batch_header import COMPRESSION_CODEC_MASK, BatchHeader, read_batch_header, write_batch
from kafkapy.record.compression import CompressionType, compress
from kafkapy.storage.log_config import LogConfig

__all__ = ["recompress_batch", "target_codec"]


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


def recompress_batch(header: BatchHeader, records: bytes, codec: CompressionType,
                     level: int | None) -> tuple[bytes, BatchHeader]:
    """The batch of `header` holding the uncompressed records section `records`, encoded with `codec`."""
    attributes = (header.attributes & ~COMPRESSION_CODEC_MASK) | int(codec)
    payload = compress(codec, records, level)
    batch = write_batch(header, attributes, header.base_timestamp, header.max_timestamp, header.records_count,
                        payload)
    return batch, read_batch_header(batch)
