"""Control records: the key every control record carries, and transaction-marker (COMMIT/ABORT) values.

Byte format (record-format.md section 4): key = version int16 (0) + type int16; end-transaction marker
value = version int16 (0) + coordinatorEpoch int32. A marker batch is a control + transactional magic-2
batch, uncompressed, CreateTime, baseSequence -1, holding exactly one record.
KRaft control values (types 2-6) are protocol `data` messages and are not decoded here.
Pure functions; thread-safe.
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import NamedTuple

from kafkapy.record.batch_header import RECORD_BATCH_OVERHEAD, BatchHeader
from kafkapy.record.default_record import decode_records
from kafkapy.record.errors import InvalidRecordError
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

__all__ = [
    "ControlRecordType",
    "EndTransactionMarker",
    "CONTROL_KEY_VERSION",
    "encode_control_key",
    "parse_control_type",
    "parse_control_key",
    "build_end_txn_marker_batch",
    "read_end_txn_marker",
]

CONTROL_KEY_VERSION = 0
END_TXN_MARKER_VERSION = 0
_KEY = struct.Struct(">hh")
_MARKER_VALUE = struct.Struct(">hi")


class ControlRecordType(IntEnum):
    UNKNOWN = -1
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6

    @classmethod
    def from_id(cls, type_id: int) -> ControlRecordType:
        try:
            return cls(type_id)
        except ValueError:
            return cls.UNKNOWN


def encode_control_key(control_type: int, version: int = CONTROL_KEY_VERSION) -> bytes:
    return _KEY.pack(version, control_type)


def parse_control_key(key: bytes | bytearray | memoryview | None) -> tuple[int, ControlRecordType]:
    """(version, type) of a control record key; unknown types come back as UNKNOWN (readers skip them)."""
    if key is None or len(key) < 4:
        raise InvalidRecordError(f"Invalid value size found for control record key: {0 if key is None else len(key)}")
    version, type_id = _KEY.unpack_from(key, 0)
    if version < 0:
        raise InvalidRecordError(f"Invalid version found for control record: {version}")
    return version, ControlRecordType.from_id(type_id)


def parse_control_type(key: bytes | bytearray | memoryview | None) -> ControlRecordType:
    return parse_control_key(key)[1]


class EndTransactionMarker(NamedTuple):
    control_type: ControlRecordType  # ABORT or COMMIT
    coordinator_epoch: int

    def encode_key(self) -> bytes:
        return encode_control_key(self.control_type)

    def encode_value(self) -> bytes:
        return _MARKER_VALUE.pack(END_TXN_MARKER_VERSION, self.coordinator_epoch)

    @classmethod
    def decode(cls, key: bytes | None, value: bytes | None) -> EndTransactionMarker:
        _, ctype = parse_control_key(key)
        if ctype not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            raise InvalidRecordError(f"Invalid control record type {ctype.name} for an end transaction marker")
        if value is None or len(value) < 6:
            raise InvalidRecordError(
                f"Invalid value size found for end transaction marker: {0 if value is None else len(value)}"
            )
        version, epoch = _MARKER_VALUE.unpack_from(value, 0)
        if version < 0:
            raise InvalidRecordError(f"Invalid version found for end transaction marker: {version}")
        return cls(ctype, epoch)


def build_end_txn_marker_batch(
    control_type: int,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """A complete COMMIT/ABORT marker batch, as the transaction coordinator writes it."""
    ctype = ControlRecordType(control_type)
    if ctype not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise ValueError(f"not a transaction marker type: {ctype.name}")
    marker = EndTransactionMarker(ctype, coordinator_epoch)
    b = MemoryRecordsBuilder(
        base_offset=base_offset, producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=-1,
        is_transactional=True, is_control=True, partition_leader_epoch=partition_leader_epoch,
    )
    b.append(timestamp, marker.encode_key(), marker.encode_value())
    return b.build()


def read_end_txn_marker(buf: bytes | bytearray | memoryview, pos: int, header: BatchHeader) -> EndTransactionMarker | None:
    """The COMMIT/ABORT marker of the control batch at buf[pos] (None for other control types).

    Decodes the batch's one record (marker batches are uncompressed); called once per control batch."""
    end = pos + header.size_in_bytes
    records = decode_records(buf, header.records_count, header.base_offset, header.base_timestamp,
                             pos=pos + RECORD_BATCH_OVERHEAD, end=end)
    if not records:
        raise InvalidRecordError("Control batch has no record")
    record = records[0]
    _, ctype = parse_control_key(record.key)
    if ctype not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        return None
    return EndTransactionMarker.decode(record.key, record.value)
