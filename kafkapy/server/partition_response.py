"""PartitionResponse: one partition of a produce answer (Kafka's ProduceResponse.PartitionResponse).

Built by the Produce handler (requests refused before the log) and by the ReplicaManager (the append's
outcome; a DelayedProduce updates the error of acks=-1 answers). `partition_error_response` is the one
place a KafkaError becomes a partition answer: INVALID_RECORD and INVALID_TIMESTAMP carry their message,
as Kafka's RecordValidationException does; other errors carry none. No byte format.
Thread-safety: plain values, owned by one produce request at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.storage.errors import InvalidRecordsError, InvalidTimestampRecordsError

# Errors whose message Kafka returns in the produce response (RecordValidationException's).
_CUSTOM_MESSAGE_ERRORS = frozenset({ErrorCode.INVALID_RECORD, ErrorCode.INVALID_TIMESTAMP})


@dataclass(slots=True)
class PartitionResponse:
    """One partition of a produce answer."""

    error: int = 0
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    error_message: str | None = None
    record_errors: list[tuple[int, str | None]] = field(default_factory=list)


def partition_error_response(error: KafkaError) -> PartitionResponse:
    code = error.code
    if code not in _CUSTOM_MESSAGE_ERRORS:
        return PartitionResponse(code)
    record_errors = error.record_errors if isinstance(error, InvalidTimestampRecordsError | InvalidRecordsError) else []
    return PartitionResponse(code, -1, -1, -1, str(error), list(record_errors))
