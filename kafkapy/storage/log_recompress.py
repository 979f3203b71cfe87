"""Re-encode produced batches whose codec differs from the topic's `compression.type` (Kafka's LogValidator).

Only runs when compression.type is not `producer` and a batch's codec differs; then that batch's records
are decoded and rebuilt (per-record work, as in Kafka) with the topic's codec and level, keeping the
producer id/epoch/sequence, transactional flag and timestamps. Control batches are never re-encoded.
Pure function over bytes; thread-safe.
"""

from __future__ import annotations

from kafkapy.record.batch_header import BatchHeader
from kafkapy.record.compression import CompressionType
from kafkapy.record.memory_records import DefaultRecordBatch, validate_produce_records
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.storage.log_config import LogConfig

__all__ = ["recompress_if_needed", "target_codec"]


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


def recompress_if_needed(records: bytes | bytearray | memoryview, headers: list[BatchHeader],
                         config: LogConfig) -> tuple[bytes | bytearray | memoryview, list[BatchHeader]]:
    target = target_codec(config)
    if target is None:
        return records, headers
    codec, level = target
    if all(h.compression_codec == codec or h.is_control_batch for h in headers):
        return records, headers
    mv = memoryview(records)
    out = bytearray()
    pos = 0
    for h in headers:
        view = mv[pos:pos + h.size_in_bytes]
        pos += h.size_in_bytes
        if h.compression_codec == codec or h.is_control_batch:
            out += view
            continue
        builder = MemoryRecordsBuilder(
            compression=codec, timestamp_type=h.timestamp_type, base_offset=0, producer_id=h.producer_id,
            producer_epoch=h.producer_epoch, base_sequence=h.base_sequence, is_transactional=h.is_transactional,
            partition_leader_epoch=h.partition_leader_epoch, compression_level=level,
        )
        for record in DefaultRecordBatch(view).records():
            builder.append(record.timestamp, record.key, record.value, record.headers)
        out += builder.build()
    return out, validate_produce_records(out)
