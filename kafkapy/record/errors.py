"""Errors raised by record/ when bytes from a client or a log are not acceptable.

Each is both a ValueError (record/ is a parsing layer) and the matching generated KafkaError from
common/errors.py, so the API error-mapping boundary turns it into Kafka's code:
CorruptRecordError -> 2 CORRUPT_MESSAGE (retriable), InvalidRecordError -> 87 INVALID_RECORD,
UnsupportedCompressionTypeError -> 76 UNSUPPORTED_COMPRESSION_TYPE. `.message` holds the text.
No state; thread-safe.
"""

from __future__ import annotations

from kafkapy.common import errors as _kafka

__all__ = [
    "RecordValidationError",
    "CorruptRecordError",
    "InvalidRecordError",
    "UnsupportedCompressionTypeError",
]


class RecordValidationError(ValueError):
    """Common base of record/'s errors (every concrete one is also a KafkaError)."""


class CorruptRecordError(
    _kafka.CorruptMessageError, RecordValidationError, code=2, name="CORRUPT_MESSAGE", retriable=True
):
    """Bytes that do not parse as record batches (length, truncation, CRC, malformed record)."""


class InvalidRecordError(_kafka.InvalidRecordError, RecordValidationError, code=87, name="INVALID_RECORD"):
    """Well-formed batches that break a broker rule (wrong magic, bad offset range, control from client)."""


class UnsupportedCompressionTypeError(
    _kafka.UnsupportedCompressionTypeError, RecordValidationError, code=76, name="UNSUPPORTED_COMPRESSION_TYPE"
):
    """zstd in a Produce request older than v7."""
