"""MemoryRecordsBuilder: accumulates records and writes one magic-2 RecordBatch.

Byte format: the 61-byte header of batch_header.py followed by the records of default_record.py, as one
compressed stream when `compression` is not NONE. CRC-32C covers bytes 21..end. This is the producer's
per-record path, so append() encodes straight into one growing bytearray (the header slot is reserved
in front of it) with locals bound and no per-record objects besides the varint bytes.
Not thread-safe: one builder belongs to one producer batch.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kafkapy.record.batch_header import (
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from kafkapy.record.compression import CompressionType, compress
from kafkapy.record.crc import crc32c
from kafkapy.record.default_record import _encode_headers, estimate_record_size_upper_bound
from kafkapy.record.varint import _CACHE, _CACHE_LIMIT, encode_varint

__all__ = ["MemoryRecordsBuilder"]

# baseOffset, batchLength, partitionLeaderEpoch, magic, crc (placeholder), attributes, lastOffsetDelta,
# baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordsCount
_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")
_NULL = b"\x01"
_NO_HEADERS = b"\x00"


class MemoryRecordsBuilder:
    def __init__(
        self,
        compression: int = CompressionType.NONE,
        timestamp_type: int = 0,
        base_offset: int = 0,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        is_transactional: bool = False,
        partition_leader_epoch: int = -1,
        is_control: bool = False,
        compression_level: int | None = None,
    ) -> None:
        self.compression = CompressionType(compression)
        self.timestamp_type = timestamp_type
        self.base_offset = base_offset
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = is_transactional
        self.partition_leader_epoch = partition_leader_epoch
        self.is_control = is_control
        self.compression_level = compression_level
        self._buf = bytearray(RECORD_BATCH_OVERHEAD)
        self._num_records = 0
        self._base_timestamp = 0
        self._max_timestamp = -1
        self._built: bytes | None = None

    @property
    def num_records(self) -> int:
        return self._num_records

    @property
    def uncompressed_bytes(self) -> int:
        """Bytes of header + encoded records before compression."""
        return len(self._buf)

    def estimated_size_in_bytes(self) -> int:
        """Upper-bound estimate of build() size (uncompressed size; compression only shrinks typical data)."""
        if self._built is not None:
            return len(self._built)
        return len(self._buf)

    def has_room_for(self, key: bytes | None, value: bytes | None,
                     headers: Sequence[tuple[str | bytes, bytes | None]] = (), limit: int = 1 << 20) -> bool:
        """True if the batch is empty (a first record always fits) or the record fits under `limit` bytes."""
        if self._num_records == 0:
            return True
        return len(self._buf) + estimate_record_size_upper_bound(key, value, headers) <= limit

    def append(
        self,
        timestamp: int,
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        headers: Sequence[tuple[str | bytes, bytes | None]] = (),
    ) -> None:
        """Append a record with the next offset delta. `timestamp` is epoch ms (-1 for none)."""
        if self._built is not None:
            raise RuntimeError("MemoryRecordsBuilder is closed")
        n = self._num_records
        cache = _CACHE
        limit = _CACHE_LIMIT
        if n == 0:
            self._base_timestamp = timestamp
            ts = b"\x00"
        else:
            d = timestamp - self._base_timestamp
            u = (d << 1) ^ (d >> 63)
            ts = cache[u] if u < limit else encode_varint(d)
        if timestamp > self._max_timestamp:
            self._max_timestamp = timestamp
        od = cache[n << 1] if n < 8192 else encode_varint(n)
        if key is None:
            kl = _NULL
            klen = 0
        else:
            klen = len(key)
            kl = cache[klen << 1] if klen < 8192 else encode_varint(klen)
        if value is None:
            vl = _NULL
            vlen = 0
        else:
            vlen = len(value)
            vl = cache[vlen << 1] if vlen < 8192 else encode_varint(vlen)
        hb = _encode_headers(headers) if headers else _NO_HEADERS
        body = 1 + len(ts) + len(od) + len(kl) + klen + len(vl) + vlen + len(hb)
        buf = self._buf
        buf += cache[body << 1] if body < 8192 else encode_varint(body)
        buf += b"\x00"
        buf += ts
        buf += od
        buf += kl
        if klen:
            buf += key  # type: ignore[operator,arg-type]
        buf += vl
        if vlen:
            buf += value  # type: ignore[operator,arg-type]
        buf += hb
        self._num_records = n + 1

    def append_encoded(self, records: bytes | bytearray | memoryview, count: int, min_timestamp: int,
                       max_timestamp: int) -> None:
        """Append `count` records already in the record format (record-format.md section 3), whose
        timestamp deltas are relative to `min_timestamp` (the base timestamp when the builder is empty)
        and whose offset deltas continue from num_records: a columnar encoder's whole column at once."""
        if self._built is not None:
            raise RuntimeError("MemoryRecordsBuilder is closed")
        if count <= 0:
            return
        if self._num_records == 0:
            self._base_timestamp = min_timestamp
        elif min_timestamp != self._base_timestamp:
            raise ValueError("encoded records must share the batch's base timestamp")
        if max_timestamp > self._max_timestamp:
            self._max_timestamp = max_timestamp
        self._buf += records
        self._num_records += count

    def build(self) -> bytes:
        """The finished batch (idempotent). An empty builder yields b"" (no batch), as Kafka's does."""
        if self._built is not None:
            return self._built
        n = self._num_records
        if n == 0:
            self._built = b""
            return self._built
        codec = self.compression
        if codec == CompressionType.NONE:
            out = self._buf
        else:
            payload = compress(codec, memoryview(self._buf)[RECORD_BATCH_OVERHEAD:], self.compression_level)
            out = bytearray(RECORD_BATCH_OVERHEAD)
            out += payload
        attributes = int(codec)
        if self.timestamp_type:
            attributes |= TIMESTAMP_TYPE_MASK
        if self.is_transactional:
            attributes |= TRANSACTIONAL_FLAG_MASK
        if self.is_control:
            attributes |= CONTROL_FLAG_MASK
        _HEADER.pack_into(
            out, 0,
            self.base_offset, len(out) - 12, self.partition_leader_epoch, 2, 0, attributes, n - 1,
            self._base_timestamp, self._max_timestamp, self.producer_id, self.producer_epoch,
            self.base_sequence, n,
        )
        _CRC.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[21:]))
        self._built = bytes(out)
        self._buf = bytearray()  # release the working buffer
        return self._built
