"""TransactionMetadata: one transactional id's state and Kafka's transaction state machine.

States (ids as written to __transaction_state): Empty 0, Ongoing 1, PrepareCommit 2, PrepareAbort 3,
CompleteCommit 4, CompleteAbort 5, Dead 6, PrepareEpochFence 7, with Kafka's valid previous states.
A change is two steps, as in Kafka: `prepare_*` builds a TxnTransitMetadata and sets the pending state
(nothing else may start meanwhile: CONCURRENT_TRANSACTIONS), the transit is written to the log, and
`complete_transition_to` applies it once the write succeeded (or `pending_state = None` undoes it).
No byte format (transaction_log.py writes the records). Thread-safety: callers hold `lock`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from enum import Enum

from kafkapy.common.errors import ProducerFencedError
from kafkapy.common.topic_partition import TopicPartition

__all__ = ["TransactionState", "TransactionMetadata", "TxnTransitMetadata", "NO_PRODUCER_ID", "NO_PRODUCER_EPOCH",
           "MAX_PRODUCER_EPOCH"]

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_PRODUCER_EPOCH = 32767


class TransactionState(Enum):
    EMPTY = (0, "Empty")
    ONGOING = (1, "Ongoing")
    PREPARE_COMMIT = (2, "PrepareCommit")
    PREPARE_ABORT = (3, "PrepareAbort")
    COMPLETE_COMMIT = (4, "CompleteCommit")
    COMPLETE_ABORT = (5, "CompleteAbort")
    DEAD = (6, "Dead")
    PREPARE_EPOCH_FENCE = (7, "PrepareEpochFence")

    @property
    def id(self) -> int:
        return self.value[0]

    @property
    def state_name(self) -> str:
        return self.value[1]

    def __str__(self) -> str:
        return self.value[1]

    @classmethod
    def from_id(cls, state_id: int) -> TransactionState:
        for s in cls:
            if s.value[0] == state_id:
                return s
        raise ValueError(f"Unknown transaction state id {state_id}")

    @classmethod
    def from_name(cls, name: str) -> TransactionState | None:
        for s in cls:
            if s.value[1] == name:
                return s
        return None

    @property
    def valid_previous_states(self) -> frozenset[TransactionState]:
        return _VALID_PREVIOUS[self]


_S = TransactionState
_VALID_PREVIOUS: dict[TransactionState, frozenset[TransactionState]] = {
    _S.EMPTY: frozenset({_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.ONGOING: frozenset({_S.ONGOING, _S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT}),
    _S.PREPARE_COMMIT: frozenset({_S.ONGOING}),
    _S.PREPARE_ABORT: frozenset({_S.ONGOING, _S.PREPARE_EPOCH_FENCE}),
    _S.COMPLETE_COMMIT: frozenset({_S.PREPARE_COMMIT}),
    _S.COMPLETE_ABORT: frozenset({_S.PREPARE_ABORT}),
    _S.DEAD: frozenset({_S.EMPTY, _S.COMPLETE_ABORT, _S.COMPLETE_COMMIT}),
    _S.PREPARE_EPOCH_FENCE: frozenset({_S.ONGOING}),
}


@dataclass(frozen=True, slots=True)
class TxnTransitMetadata:
    """The next state of a transactional id, as written to __transaction_state."""

    producer_id: int
    previous_producer_id: int
    next_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    txn_state: TransactionState
    topic_partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int


class IllegalTransactionStateError(RuntimeError):
    """A transition the state machine does not allow (a coordinator bug, never a client's doing)."""


@dataclass(eq=False)
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    txn_timeout_ms: int = 60_000
    state: TransactionState = TransactionState.EMPTY
    topic_partitions: set[TopicPartition] = field(default_factory=set)
    txn_start_timestamp: int = -1
    txn_last_update_timestamp: int = -1
    pending_state: TransactionState | None = None
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @classmethod
    def from_transit(cls, transactional_id: str, t: TxnTransitMetadata) -> TransactionMetadata:
        return cls(transactional_id, t.producer_id, t.previous_producer_id, t.next_producer_id, t.producer_epoch,
                   t.last_producer_epoch, t.txn_timeout_ms, t.txn_state, set(t.topic_partitions),
                   t.txn_start_timestamp, t.txn_last_update_timestamp)

    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    def is_producer_epoch_exhausted(self) -> bool:
        return self.producer_epoch >= MAX_PRODUCER_EPOCH - 1

    def transit(self) -> TxnTransitMetadata:
        """The current state as a transit (no change)."""
        return TxnTransitMetadata(self.producer_id, self.previous_producer_id, self.next_producer_id,
                                  self.producer_epoch, self.last_producer_epoch, self.txn_timeout_ms, self.state,
                                  frozenset(self.topic_partitions), self.txn_start_timestamp,
                                  self.txn_last_update_timestamp)

    def _prepare(self, state: TransactionState, **changes: object) -> TxnTransitMetadata:
        if self.pending_state is not None:
            raise IllegalTransactionStateError(
                f"Preparing transaction state transition to {state} while it already a pending state "
                f"{self.pending_state}")
        if self.state not in state.valid_previous_states:
            raise IllegalTransactionStateError(
                f"Preparing transaction state transition to {state} failed since the target state {state} is not "
                f"a valid previous state of the current state {self.state}")
        self.pending_state = state
        return replace(self.transit(), txn_state=state, **changes)  # type: ignore[arg-type]

    # -- the prepare steps (Kafka's prepare*) ---------------------------------------------------------

    def prepare_fence_producer_epoch(self) -> TxnTransitMetadata:
        """Bump the epoch (unless exhausted) with PrepareEpochFence pending: the ongoing transaction is aborted
        with the new epoch, fencing the current producer."""
        bumped = self.producer_epoch if self.is_producer_epoch_exhausted() else self.producer_epoch + 1
        return self._prepare(TransactionState.PREPARE_EPOCH_FENCE, producer_epoch=bumped,
                             last_producer_epoch=NO_PRODUCER_EPOCH)

    def prepare_increment_producer_epoch(self, new_txn_timeout_ms: int, expected_epoch: int | None,
                                         now_ms: int) -> TxnTransitMetadata:
        """InitProducerId on an existing id: epoch + 1; a retry with the last epoch gets the current one again;
        any other expected epoch is a fenced producer (ProducerFencedError)."""
        if self.is_producer_epoch_exhausted():
            raise IllegalTransactionStateError(f"Cannot allocate any more producer epochs for {self.producer_id}")
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epoch, last = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last = self.producer_epoch, self.last_producer_epoch
        else:
            raise ProducerFencedError(
                f"The producer with epoch {expected_epoch} was fenced by a newer producer with epoch "
                f"{self.producer_epoch} for {self.transactional_id}")
        return self._prepare(TransactionState.EMPTY, producer_epoch=epoch, last_producer_epoch=last,
                             txn_timeout_ms=new_txn_timeout_ms, topic_partitions=frozenset(),
                             txn_start_timestamp=-1, txn_last_update_timestamp=now_ms)

    def prepare_producer_id_rotation(self, new_producer_id: int, new_txn_timeout_ms: int, now_ms: int,
                                     record_last_epoch: bool) -> TxnTransitMetadata:
        return self._prepare(TransactionState.EMPTY, producer_id=new_producer_id,
                             previous_producer_id=self.producer_id, producer_epoch=0,
                             last_producer_epoch=self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
                             txn_timeout_ms=new_txn_timeout_ms, topic_partitions=frozenset(),
                             txn_start_timestamp=-1, txn_last_update_timestamp=now_ms)

    def prepare_add_partitions(self, partitions: set[TopicPartition], now_ms: int) -> TxnTransitMetadata:
        if self.state in (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT):
            return self._prepare(TransactionState.ONGOING, topic_partitions=frozenset(partitions),
                                 txn_start_timestamp=now_ms, txn_last_update_timestamp=now_ms)
        return self._prepare(TransactionState.ONGOING, topic_partitions=frozenset(self.topic_partitions | partitions),
                             txn_last_update_timestamp=now_ms)

    def prepare_abort_or_commit(self, new_state: TransactionState, now_ms: int) -> TxnTransitMetadata:
        return self._prepare(new_state, txn_last_update_timestamp=now_ms)

    def prepare_complete(self, now_ms: int) -> TxnTransitMetadata:
        new_state = (TransactionState.COMPLETE_COMMIT if self.state == TransactionState.PREPARE_COMMIT
                     else TransactionState.COMPLETE_ABORT)
        return self._prepare(new_state, topic_partitions=frozenset(), txn_last_update_timestamp=now_ms)

    def prepare_dead(self) -> TxnTransitMetadata:
        return self._prepare(TransactionState.DEAD, topic_partitions=frozenset())

    # -- completing ------------------------------------------------------------------------------------

    def complete_transition_to(self, t: TxnTransitMetadata) -> None:
        """Apply a transit after its record was written (Kafka's completeTransitionTo)."""
        to = self.pending_state
        if to is None or to != t.txn_state:
            raise IllegalTransactionStateError(
                f"Completing transaction state transition to {t.txn_state} while its pending state is {to}")
        if self.state not in to.valid_previous_states:
            raise IllegalTransactionStateError(f"Cannot transition from {self.state} to {to}")
        self.producer_id = t.producer_id
        self.previous_producer_id = t.previous_producer_id
        self.next_producer_id = t.next_producer_id
        self.producer_epoch = t.producer_epoch
        self.last_producer_epoch = t.last_producer_epoch
        self.txn_timeout_ms = t.txn_timeout_ms
        self.topic_partitions = set(t.topic_partitions)
        self.txn_start_timestamp = t.txn_start_timestamp
        self.txn_last_update_timestamp = t.txn_last_update_timestamp
        self.state = to
        self.pending_state = None

    def __repr__(self) -> str:
        return (f"TransactionMetadata(transactionalId={self.transactional_id}, producerId={self.producer_id}, "
                f"producerEpoch={self.producer_epoch}, txnTimeoutMs={self.txn_timeout_ms}, state={self.state}, "
                f"pendingState={self.pending_state}, topicPartitions={sorted(map(str, self.topic_partitions))}, "
                f"txnStartTimestamp={self.txn_start_timestamp}, "
                f"txnLastUpdateTimestamp={self.txn_last_update_timestamp})")
