"""Errors raised by storage/: Kafka's error classes for codes the log returns, plus storage-internal ones.

Codes the broker maps to responses (OFFSET_OUT_OF_RANGE, MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE,
INVALID_TIMESTAMP, KAFKA_STORAGE_ERROR, INVALID_CONFIG) come from `kafkapy.common.errors` so the one
error-mapping boundary sees a single class per code. The internal ones (CorruptIndexError,
LogSegmentOffsetOverflowError, OffsetsOutOfOrderError, UnexpectedAppendOffsetError) are Kafka's
internal exceptions; they subclass KafkaStorageError (code 56) or ValueError as Kafka's do.
No state; thread-safe.
"""

from __future__ import annotations

from kafkapy.common.errors import (
    InconsistentClusterIdError,
    InconsistentTopicIdError,
    InvalidConfigError,
    InvalidTimestampError,
    KafkaError,
    KafkaStorageError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
)
from kafkapy.record.errors import InvalidRecordError

__all__ = [
    "KafkaError",
    "OffsetOutOfRangeError",
    "MessageTooLargeError",
    "RecordListTooLargeError",
    "InvalidTimestampError",
    "KafkaStorageError",
    "InvalidConfigError",
    "InvalidConfigurationError",
    "InconsistentTopicIdError",
    "InconsistentClusterIdError",
    "CorruptIndexError",
    "CorruptSnapshotError",
    "LogSegmentOffsetOverflowError",
    "OffsetsOutOfOrderError",
    "UnexpectedAppendOffsetError",
    "RecordError",
    "InvalidTimestampRecordsError",
    "InvalidRecordsError",
]

# Kafka's exception class for INVALID_CONFIG is InvalidConfigurationException; INTERNALS.md uses that name.
InvalidConfigurationError = InvalidConfigError

_STORAGE = {"code": 56, "name": "KAFKA_STORAGE_ERROR", "retriable": True}


class CorruptIndexError(KafkaStorageError, **_STORAGE):
    """An index file that fails its sanity check; the segment is rebuilt by recovery."""


class CorruptSnapshotError(KafkaStorageError, **_STORAGE):
    """A producer `.snapshot` file with a bad version, CRC or length; it is deleted and state is replayed."""


class LogSegmentOffsetOverflowError(KafkaStorageError, **_STORAGE):
    """An offset that cannot be stored as int32 relative to the segment's base offset."""


# Kafka's RecordError: the index of a rejected record in its batch and why (None: no message).
RecordError = tuple[int, str | None]


class InvalidTimestampRecordsError(InvalidTimestampError, code=32, name="INVALID_TIMESTAMP", retriable=False):
    """INVALID_TIMESTAMP with the per-record errors Kafka's RecordValidationException carries to the
    ProduceResponse (v8+ RecordErrors)."""

    def __init__(self, message: str, record_errors: list[RecordError]) -> None:
        super().__init__(message)
        self.record_errors = record_errors


class InvalidRecordsError(InvalidRecordError, code=87, name="INVALID_RECORD"):
    """INVALID_RECORD with its per-record errors (as InvalidTimestampRecordsError)."""

    def __init__(self, message: str, record_errors: list[RecordError]) -> None:
        super().__init__(message)
        self.record_errors = record_errors


class OffsetsOutOfOrderError(ValueError):
    """A follower append whose batches' offsets do not increase."""


class UnexpectedAppendOffsetError(ValueError):
    """A follower append whose first offset is below the log end offset."""

    def __init__(self, message: str, first_offset: int, last_offset: int) -> None:
        super().__init__(message)
        self.first_offset = first_offset
        self.last_offset = last_offset
