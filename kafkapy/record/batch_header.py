"""The fixed 61-byte header of a magic-2 RecordBatch, and the 12-byte log overhead of every batch.

Byte format (big-endian), see record-format.md section 2:
  0 baseOffset int64 | 8 batchLength int32 | 12 partitionLeaderEpoch int32 | 16 magic int8 |
  17 crc uint32 | 21 attributes int16 | 23 lastOffsetDelta int32 | 27 baseTimestamp int64 |
  35 maxTimestamp int64 | 43 producerId int64 | 51 producerEpoch int16 | 53 baseSequence int32 |
  57 recordsCount int32 | 61 records...
Pure functions over bytes; thread-safe.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafkapy.record.crc import crc32c

LOG_OVERHEAD = 12  # baseOffset int64 + batchLength int32
BASE_OFFSET_OFFSET = 0
LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1  # Kafka's Records.HEADER_SIZE_UP_TO_MAGIC: any magic's header up to it
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
LAST_OFFSET_DELTA_OFFSET = 23
BASE_TIMESTAMP_OFFSET = 27
MAX_TIMESTAMP_OFFSET = 35
PRODUCER_ID_OFFSET = 43
PRODUCER_EPOCH_OFFSET = 51
BASE_SEQUENCE_OFFSET = 53
RECORDS_COUNT_OFFSET = 57
RECORD_BATCH_OVERHEAD = 61

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

NO_PRODUCER_ID = -1
NO_PARTITION_LEADER_EPOCH = -1

_HEADER = struct.Struct(">qiibIhiqqqhii")
_HEADER_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. recordsCount
_PREFIX = struct.Struct(">qiib")  # baseOffset, batchLength, partitionLeaderEpoch, magic
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")


class BatchHeader(NamedTuple):
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size_in_bytes(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def compression_codec(self) -> int:
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def timestamp_type(self) -> int:
        """0 CreateTime, 1 LogAppendTime."""
        return 1 if self.attributes & TIMESTAMP_TYPE_MASK else 0

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control_batch(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)


def read_batch_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Parse the magic-2 header at `pos`. Raises struct.error if fewer than 61 bytes remain."""
    return BatchHeader._make(_HEADER.unpack_from(buf, pos))


def read_offset_and_length(buf: bytes | bytearray | memoryview, pos: int = 0) -> tuple[int, int]:
    """(baseOffset, batchLength) of the batch at `pos`; works for every magic."""
    return _OFFSET_AND_LENGTH.unpack_from(buf, pos)


def write_base_offset(buf: bytearray | memoryview, pos: int, base_offset: int) -> None:
    _INT64.pack_into(buf, pos + BASE_OFFSET_OFFSET, base_offset)


def write_partition_leader_epoch(buf: bytearray | memoryview, pos: int, epoch: int) -> None:
    _INT32.pack_into(buf, pos + PARTITION_LEADER_EPOCH_OFFSET, epoch)


def write_batch(header: BatchHeader, attributes: int, base_timestamp: int, max_timestamp: int,
                records_count: int, records: bytes | bytearray | memoryview) -> bytes:
    """A magic-2 batch with `header`'s offsets, epoch and producer fields, the given attributes, timestamps
    and count, around an already encoded (and compressed, if the attributes say so) records section."""
    after_crc = _HEADER_AFTER_CRC.pack(attributes, header.last_offset_delta, base_timestamp, max_timestamp,
                                       header.producer_id, header.producer_epoch, header.base_sequence,
                                       records_count) + records
    batch_length = len(after_crc) + 4 + 1 + 4  # crc, magic, partitionLeaderEpoch
    return (_PREFIX.pack(header.base_offset, batch_length, header.partition_leader_epoch, 2)
            + crc32c(after_crc).to_bytes(4, "big") + after_crc)
