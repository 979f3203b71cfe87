"""Errors raised by record/ when bytes from a client or a log are not acceptable.

Each carries Kafka's error `code` and enum `name`, so the API error-mapping boundary can turn it into a
response code without knowing record/: CorruptRecordError -> 2 CORRUPT_MESSAGE,
InvalidRecordError -> 87 INVALID_RECORD,
UnsupportedCompressionTypeError -> 76 UNSUPPORTED_COMPRESSION_TYPE. Both are ValueErrors. No state; thread-safe.
"""

from __future__ import annotations

__all__ = [
    "RecordValidationError",
    "CorruptRecordError",
    "InvalidRecordError",
    "UnsupportedCompressionTypeError",
]


class RecordValidationError(ValueError):
    code: int = -1
    name: str = "UNKNOWN_SERVER_ERROR"
    retriable: bool = False

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class CorruptRecordError(RecordValidationError):
    """Bytes that do not parse as record batches (length, truncation, CRC, malformed record)."""

    code = 2
    name = "CORRUPT_MESSAGE"
    retriable = True  # Kafka marks CorruptRecordException retriable


class InvalidRecordError(RecordValidationError):
    """Well-formed batches that break a broker rule (wrong magic, bad offset range, control from client)."""

    code = 87
    name = "INVALID_RECORD"


class UnsupportedCompressionTypeError(RecordValidationError):
    """zstd in a Produce request older than v7."""

    code = 76
    name = "UNSUPPORTED_COMPRESSION_TYPE"
