"""TransactionManager: the transactional producer's state machine (Kafka's client-side TransactionManager).

Owns `transactional.id`, the producer id/epoch handed out by InitProducerId, the partitions added to the
open transaction, the transaction and group coordinators, and the queue of transactional requests
(FindCoordinator, InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn), ordered
by Kafka's priorities: coordinator lookups first, EndTxn last, an epoch-bumping InitProducerId after it.

The producer's thread calls the API side (`initialize_transactions`, `begin_transaction`, `begin_commit`,
`begin_abort`, `send_offsets_to_transaction`, `maybe_add_partition`) which checks and moves the state and
enqueues request handlers; each returns a TransactionalRequestResult to wait on. The Sender thread takes
`next_request()`, sends it (the I/O is the Sender's) and hands the response to `handler.handle_response`.
AddPartitionsToTxn is batched: every partition first sent to since the last request goes in one request,
and the Sender only drains a partition's batches once `is_send_to_partition_allowed` says it was added.

States and transitions are Kafka's (UNINITIALIZED, INITIALIZING, READY, IN_TRANSACTION,
COMMITTING_TRANSACTION, ABORTING_TRANSACTION, ABORTABLE_ERROR, FATAL_ERROR); PRODUCER_FENCED and
INVALID_PRODUCER_EPOCH are fatal (ProducerFencedError), errors of one transaction are abortable.

Collaborators: client/transaction_state.py (State and its transition table, TransactionalRequestResult,
ConsumerGroupMetadata, the errors) and client/txn_request_handlers.py (one handler per request: building it,
reading its response). Byte format: none of its own (the handlers build protocol/messages requests).

Thread-safety: every method takes the manager's lock (the API thread and the Sender share it); results are
completed on the Sender thread and waited on from the caller's.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkapy.client.group_offsets import to_offset_and_metadata
from kafkapy.client.transaction_state import (
    ConsumerGroupMetadata,
    IllegalStateError,
    State,
    TransactionAbortedError,
    TransactionalRequestResult,
    is_transition_valid,
)
from kafkapy.client.txn_request_handlers import (
    FENCED_MESSAGE,
    GROUP,
    TRANSACTION,
    AddOffsetsToTxnHandler,
    AddPartitionsToTxnHandler,
    EndTxnHandler,
    FindCoordinatorHandler,
    InitProducerIdHandler,
    TxnOffsetCommitHandler,
    TxnRequestHandler,
)
from kafkapy.common.errors import (
    ClusterAuthorizationFailedError,
    InvalidProducerEpochError,
    KafkaError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
    UnsupportedVersionError,
)
from kafkapy.common.topic_partition import TopicPartition

__all__ = [
    "AddOffsetsToTxnHandler", "AddPartitionsToTxnHandler", "ConsumerGroupMetadata", "EndTxnHandler",
    "FindCoordinatorHandler", "IllegalStateError", "InitProducerIdHandler", "State", "TransactionAbortedError",
    "TransactionManager", "TransactionalRequestResult", "TxnOffsetCommitHandler", "TxnRequestHandler",
    "is_transition_valid",
]

log = logging.getLogger(__name__)


@dataclass
class _PendingTransition:
    result: TransactionalRequestResult
    state: State
    operation: str


class TransactionManager:
    def __init__(self, transactional_id: str | None, transaction_timeout_ms: int = 60000,
                 retry_backoff_ms: int = 100) -> None:
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self._lock = threading.RLock()
        self.state = State.UNINITIALIZED
        self.last_error: BaseException | None = None
        self.producer_id = -1
        self.producer_epoch = -1
        self.new_partitions: set[TopicPartition] = set()
        self.pending_partitions: set[TopicPartition] = set()
        self.partitions_in_transaction: set[TopicPartition] = set()
        self.transaction_started = False
        self.epoch_bump_required = False
        self.coordinators: dict[int, tuple[int, str, int] | None] = {GROUP: None, TRANSACTION: None}
        self._queue: list[tuple[int, int, TxnRequestHandler]] = []
        self._seq = itertools.count()
        self._pending_transition: _PendingTransition | None = None

    # ------------------------------------------------------------------------------------------
    # state

    def is_transactional(self) -> bool:
        return self.transactional_id is not None

    def has_producer_id(self) -> bool:
        return self.producer_id >= 0

    def has_error(self) -> bool:
        return self.state in (State.ABORTABLE_ERROR, State.FATAL_ERROR)

    def has_fatal_error(self) -> bool:
        return self.state is State.FATAL_ERROR

    def has_abortable_error(self) -> bool:
        return self.state is State.ABORTABLE_ERROR

    def is_completing(self) -> bool:
        return self.state in (State.COMMITTING_TRANSACTION, State.ABORTING_TRANSACTION)

    def is_aborting(self) -> bool:
        return self.state is State.ABORTING_TRANSACTION

    def has_ongoing_transaction(self) -> bool:
        return self.state is State.IN_TRANSACTION or self.is_completing() or self.has_abortable_error()

    def transition_to(self, target: State, error: BaseException | None = None) -> None:
        with self._lock:
            if not is_transition_valid(self.state, target):
                raise IllegalStateError(f"TransactionalId {self.transactional_id}: Invalid transition attempted "
                                        f"from state {self.state.value} to state {target.value}")
            if target in (State.FATAL_ERROR, State.ABORTABLE_ERROR):
                if error is None:
                    raise IllegalStateError(f"Cannot transition to {target.value} with a null exception")
                self.last_error = error
            log.debug("Transition from state %s to %s", self.state.value, target.value)
            self.state = target

    def transition_to_abortable_error(self, error: BaseException) -> None:
        with self._lock:
            if self.state is State.ABORTING_TRANSACTION:
                return
            log.info("Transiting to abortable error state due to %s", error)
            self.transition_to(State.ABORTABLE_ERROR, error)

    def transition_to_fatal_error(self, error: BaseException) -> None:
        with self._lock:
            log.info("Transiting to fatal error state due to %s", error)
            self.transition_to(State.FATAL_ERROR, error)
            if self._pending_transition is not None:
                self._pending_transition.result.fail(error)

    def _maybe_fail_with_error(self) -> None:
        if not self.has_error():
            return
        e = self.last_error
        if isinstance(e, ProducerFencedError):
            raise ProducerFencedError(f"Producer with transactionalId '{self.transactional_id}' and "
                                      f"ProducerIdAndEpoch(producerId={self.producer_id}, epoch={self.producer_epoch}) "
                                      "has been fenced by another producer with the same transactionalId")
        raise KafkaError(f"Cannot execute transactional method because we are in an error state: {e}") from e

    def _ensure_transactional(self) -> None:
        if not self.is_transactional():
            raise IllegalStateError("Transactional method invoked on a non-transactional producer.")

    def _throw_if_pending_state(self, operation: str) -> None:
        p = self._pending_transition
        if p is not None:
            if p.result.acked:
                self._pending_transition = None
            else:
                raise IllegalStateError(f"Cannot attempt operation `{operation}` because the previous call to "
                                        f"`{p.operation}` timed out and must be retried")

    def _cached_result(self, make: Callable[[], TransactionalRequestResult], next_state: State,
                       operation: str) -> TransactionalRequestResult:
        """A call retried after a timeout waits on the same result (Kafka's handleCachedTransactionRequestResult)."""
        self._ensure_transactional()
        p = self._pending_transition
        if p is not None:
            if p.result.acked:
                self._pending_transition = None
            elif p.state is not next_state:
                raise IllegalStateError(f"Cannot attempt operation `{operation}` because the previous call to "
                                        f"`{p.operation}` timed out and must be retried")
            else:
                return p.result
        result = make()
        self._pending_transition = _PendingTransition(result, next_state, operation)
        return result

    # ------------------------------------------------------------------------------------------
    # the producer's calls

    def initialize_transactions(self, producer_id: int = -1, epoch: int = -1) -> TransactionalRequestResult:
        with self._lock:
            self._maybe_fail_with_error()
            bump = producer_id >= 0

            def make() -> TransactionalRequestResult:
                if not bump:
                    self.transition_to(State.INITIALIZING)
                    log.info("Invoking InitProducerId for the first time in order to acquire a producer ID")
                handler = InitProducerIdHandler(self, producer_id, epoch)
                self._enqueue(handler)
                return handler.result

            return self._cached_result(make, State.INITIALIZING, "initTransactions")

    def begin_transaction(self) -> None:
        with self._lock:
            self._ensure_transactional()
            self._throw_if_pending_state("beginTransaction")
            self._maybe_fail_with_error()
            self.transition_to(State.IN_TRANSACTION)

    def begin_commit(self) -> TransactionalRequestResult:
        with self._lock:
            def make() -> TransactionalRequestResult:
                self._maybe_fail_with_error()
                self.transition_to(State.COMMITTING_TRANSACTION)
                return self._begin_completing(True)

            return self._cached_result(make, State.COMMITTING_TRANSACTION, "commitTransaction")

    def begin_abort(self) -> TransactionalRequestResult:
        with self._lock:
            def make() -> TransactionalRequestResult:
                if self.state is not State.ABORTABLE_ERROR:
                    self._maybe_fail_with_error()
                self.transition_to(State.ABORTING_TRANSACTION)
                self.new_partitions.clear()
                return self._begin_completing(False)

            return self._cached_result(make, State.ABORTING_TRANSACTION, "abortTransaction")

    def _begin_completing(self, committed: bool) -> TransactionalRequestResult:
        if self.new_partitions:
            self._enqueue(self._add_partitions_handler())
        handler = EndTxnHandler(self, committed)
        self._enqueue(handler)
        if not self.epoch_bump_required:
            return handler.result
        return self.initialize_transactions(self.producer_id, self.producer_epoch)

    def send_offsets_to_transaction(self, offsets: Mapping[TopicPartition, Any],
                                    group: ConsumerGroupMetadata) -> TransactionalRequestResult:
        with self._lock:
            self._ensure_transactional()
            self._throw_if_pending_state("sendOffsetsToTransaction")
            self._maybe_fail_with_error()
            if self.state is not State.IN_TRANSACTION:
                raise IllegalStateError("Cannot send offsets if a transaction is not in progress "
                                        f"(currentState= {self.state.value})")
            handler = AddOffsetsToTxnHandler(self, {tp: to_offset_and_metadata(v) for tp, v in offsets.items()},
                                             group)
            self._enqueue(handler)
            return handler.result

    def _fail_if_not_ready_for_send(self) -> None:
        """Kafka's failIfNotReadyForSend: what send() says before a record is buffered."""
        if self.has_error():
            raise KafkaError("Cannot perform send because at least one previous transactional or idempotent "
                             f"request has failed with errors: {self.last_error}") from self.last_error
        if self.is_transactional():
            if not self.has_producer_id():
                raise IllegalStateError("Cannot perform a 'send' before completing a call to initTransactions when "
                                        "transactions are enabled.")
            if self.state is not State.IN_TRANSACTION:
                raise IllegalStateError(f"Cannot call send in state {self.state.value}")

    def maybe_add_partition(self, tp: TopicPartition) -> None:
        # Per record on the sending thread: a partition already in the open transaction needs no lock.
        if (self.state is State.IN_TRANSACTION and self._pending_transition is None
                and (tp in self.partitions_in_transaction or tp in self.new_partitions or tp in self.pending_partitions)):
            return
        with self._lock:
            self._fail_if_not_ready_for_send()
            self._throw_if_pending_state("send")
            if not self.is_transactional():
                return
            if tp in self.partitions_in_transaction or tp in self.new_partitions or tp in self.pending_partitions:
                return
            log.debug("Begin adding new partition %s to transaction", tp)
            self.new_partitions.add(tp)

    # ------------------------------------------------------------------------------------------
    # the Sender's calls

    def is_send_to_partition_allowed(self, tp: TopicPartition) -> bool:
        with self._lock:
            if self.has_fatal_error():
                return False
            return not self.is_transactional() or tp in self.partitions_in_transaction

    def handle_failed_batch(self, error: BaseException, had_sequence: bool) -> None:
        """A produce batch failed for good: fenced or authorization errors are fatal, others abort the
        transaction (its sequence gap is closed by an epoch bump when the transaction ends)."""
        with self._lock:
            if self.has_fatal_error() or not self.is_transactional():
                return
            if isinstance(error, ProducerFencedError | InvalidProducerEpochError):
                self.transition_to_fatal_error(ProducerFencedError(FENCED_MESSAGE))
            elif isinstance(error, ClusterAuthorizationFailedError | TransactionalIdAuthorizationFailedError
                            | UnsupportedVersionError):
                self.transition_to_fatal_error(error)
            else:
                if had_sequence and not self.is_completing():
                    self.epoch_bump_required = True
                if self.state in (State.IN_TRANSACTION, State.COMMITTING_TRANSACTION, State.ABORTABLE_ERROR):
                    self.transition_to_abortable_error(error)

    def next_request(self, has_incomplete_batches: bool) -> TxnRequestHandler | None:
        with self._lock:
            if self.new_partitions:
                self._enqueue(self._add_partitions_handler())
            if not self._queue:
                return None
            handler = self._queue[0][2]
            if handler.is_end_txn and has_incomplete_batches:
                return None  # EndTxn only once every batch of the transaction is acknowledged
            heapq.heappop(self._queue)
            if self.has_error() and not (self.has_abortable_error() and isinstance(handler, FindCoordinatorHandler)):
                assert self.last_error is not None
                handler.result.fail(self.last_error)
                return None
            if handler.is_end_txn and not self.transaction_started:
                handler.result.done()
                if self.state is not State.FATAL_ERROR:
                    log.debug("Not sending EndTxn for completed transaction since no partitions or offsets were "
                              "successfully added")
                    self.complete_transaction()
                return heapq.heappop(self._queue)[2] if self._queue else None
            return handler

    def retry(self, handler: TxnRequestHandler) -> None:
        with self._lock:
            handler.is_retry = True
            self._enqueue(handler)

    def coordinator(self, key_type: int) -> tuple[int, str, int] | None:
        return self.coordinators[key_type]

    def set_coordinator(self, key_type: int, node: tuple[int, str, int]) -> None:
        with self._lock:
            self.coordinators[key_type] = node
        log.info("Discovered %s coordinator %s:%s (id: %s rack: null)", "group" if key_type == GROUP
                 else "transaction", node[1], node[2], node[0])

    def lookup_coordinator(self, key_type: int, key: str) -> None:
        with self._lock:
            self.coordinators[key_type] = None
            if not any(isinstance(h, FindCoordinatorHandler) and h.key_type == key_type and h.key == key
                       for _, _, h in self._queue):
                self._enqueue(FindCoordinatorHandler(self, key_type, key))

    def complete_transaction(self) -> None:
        with self._lock:
            self.transition_to(State.INITIALIZING if self.epoch_bump_required else State.READY)
            self.last_error = None
            self.epoch_bump_required = False
            self.transaction_started = False
            self.new_partitions.clear()
            self.pending_partitions.clear()
            self.partitions_in_transaction.clear()

    def _enqueue(self, handler: TxnRequestHandler) -> None:
        heapq.heappush(self._queue, (handler.priority, next(self._seq), handler))

    def _add_partitions_handler(self) -> AddPartitionsToTxnHandler:
        self.pending_partitions.update(self.new_partitions)
        handler = AddPartitionsToTxnHandler(self, sorted(self.new_partitions))
        self.new_partitions.clear()
        return handler
