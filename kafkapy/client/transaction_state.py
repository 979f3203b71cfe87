"""The transactional producer's states and results (Kafka's TransactionManager.State,
TransactionalRequestResult, ConsumerGroupMetadata) and its client-side errors.

`is_transition_valid(source, target)` is Kafka's transition table; a TransactionalRequestResult is completed
on the Sender thread and awaited by the producer's caller (`await_(timeout_ms)` raises the operation's error
or Kafka's "Timeout expired after Nms while awaiting <operation>").

Byte format: none. Thread-safety: results are a threading.Event plus fields written before it is set.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass

from kafkapy.client.errors import KafkaTimeoutError
from kafkapy.common.errors import KafkaError


class IllegalStateError(KafkaError):
    """Java's IllegalStateException: the call is not valid in the current state."""


class TransactionAbortedError(KafkaError):
    """A batch failed because its transaction is being aborted (Java's TransactionAbortedException)."""

    def __init__(self, message: str = "Failing batch since transaction was aborted") -> None:
        super().__init__(message)


class State(enum.Enum):
    UNINITIALIZED = "UNINITIALIZED"
    INITIALIZING = "INITIALIZING"
    READY = "READY"
    IN_TRANSACTION = "IN_TRANSACTION"
    COMMITTING_TRANSACTION = "COMMITTING_TRANSACTION"
    ABORTING_TRANSACTION = "ABORTING_TRANSACTION"
    ABORTABLE_ERROR = "ABORTABLE_ERROR"
    FATAL_ERROR = "FATAL_ERROR"


_VALID_SOURCES: dict[State, tuple[State, ...]] = {
    State.UNINITIALIZED: (State.READY, State.ABORTABLE_ERROR),
    State.INITIALIZING: (State.UNINITIALIZED, State.ABORTING_TRANSACTION),
    State.READY: (State.INITIALIZING, State.COMMITTING_TRANSACTION, State.ABORTING_TRANSACTION),
    State.IN_TRANSACTION: (State.READY,),
    State.COMMITTING_TRANSACTION: (State.IN_TRANSACTION,),
    State.ABORTING_TRANSACTION: (State.IN_TRANSACTION, State.ABORTABLE_ERROR),
    State.ABORTABLE_ERROR: (State.IN_TRANSACTION, State.COMMITTING_TRANSACTION, State.ABORTABLE_ERROR,
                            State.INITIALIZING),
}


def is_transition_valid(source: State, target: State) -> bool:
    """Kafka's TransactionManager.State.isTransitionValid (FATAL_ERROR is reachable from anywhere)."""
    return target is State.FATAL_ERROR or source in _VALID_SOURCES[target]


@dataclass(frozen=True)
class ConsumerGroupMetadata:
    """What TxnOffsetCommit needs of the consumer's group (Java's ConsumerGroupMetadata)."""

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


class TransactionalRequestResult:
    """Completion of one transactional operation, waited on by the producer's caller."""

    def __init__(self, operation: str) -> None:
        self.operation = operation
        self.error: BaseException | None = None
        self.acked = False
        self._event = threading.Event()

    def done(self) -> None:
        self._event.set()

    def fail(self, error: BaseException) -> None:
        if not self._event.is_set():
            self.error = error
            self._event.set()

    def is_completed(self) -> bool:
        return self._event.is_set()

    def await_(self, timeout_ms: float) -> None:
        """Wait up to timeout_ms; raise the operation's error, or KafkaTimeoutError as Kafka words it."""
        if not self._event.wait(max(timeout_ms, 0) / 1000.0):
            raise KafkaTimeoutError(f"Timeout expired after {int(timeout_ms)}ms while awaiting {self.operation}")
        self.acked = True
        if self.error is not None:
            raise self.error
