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

Byte format: none of its own; it builds the request messages of protocol/messages (AddPartitionsToTxn at
most v3, the client versions; v4+ are broker-to-broker).

Thread-safety: every method takes the manager's lock (the API thread and the Sender share it); results are
completed on the Sender thread and waited on from the caller's.
"""

from __future__ import annotations

import enum
import heapq
import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkapy.client.errors import KafkaTimeoutError, error_from_code
from kafkapy.client.group_offsets import OffsetAndMetadata, to_offset_and_metadata
from kafkapy.common.errors import (
    ClusterAuthorizationFailedError,
    ErrorCode,
    InvalidProducerEpochError,
    KafkaError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
    UnsupportedVersionError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from kafkapy.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest
from kafkapy.protocol.messages.end_txn import EndTxnRequest
from kafkapy.protocol.messages.find_coordinator import FindCoordinatorRequest
from kafkapy.protocol.messages.init_producer_id import InitProducerIdRequest
from kafkapy.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest

log = logging.getLogger(__name__)

GROUP, TRANSACTION = 0, 1  # FindCoordinator key types
_COORDINATOR_ERRORS = (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE)
_FENCED = (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED)
_FENCED_MESSAGE = "There is a newer producer with the same transactionalId which fences the current one."
# Kafka's retry backoff for CONCURRENT_TRANSACTIONS on the first AddPartitionsToTxn of a transaction.
ADD_PARTITIONS_RETRY_BACKOFF_MS = 20


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


class TxnRequestHandler:
    """One queued transactional request: its priority, target coordinator, request and response handling."""

    priority = 0
    api_key = 0
    max_version: int | None = None
    min_version: int | None = None
    coordinator_type: int | None = TRANSACTION
    is_end_txn = False

    def __init__(self, tm: TransactionManager, result: TransactionalRequestResult) -> None:
        self.tm = tm
        self.result = result
        self.is_retry = False
        self.retry_backoff_ms = tm.retry_backoff_ms

    @property
    def coordinator_key(self) -> str:
        return self.tm.transactional_id or ""

    def build(self, version: int) -> Any:
        raise NotImplementedError

    def handle_response(self, resp: Any) -> None:
        raise NotImplementedError

    def reenqueue(self) -> None:
        with self.tm._lock:
            self.is_retry = True
            self.tm._enqueue(self)

    def fatal_error(self, e: BaseException) -> None:
        self.tm.transition_to_fatal_error(e)
        self.result.fail(e)

    def abortable_error(self, e: BaseException) -> None:
        if self.tm.state is not State.ABORTING_TRANSACTION:
            self.tm.transition_to_abortable_error(e)
        self.result.fail(e)

    def abortable_error_if_possible(self, e: BaseException) -> None:
        # Brokers that bump the epoch on InitProducerId (KIP-360, every 2.5+ broker) let the producer
        # carry on after an abort with a new epoch.
        self.tm.epoch_bump_required = True
        self.abortable_error(e)

    def handle_common(self, code: int, what: str) -> bool:
        """The error handling every transaction-coordinator handler shares; True when handled."""
        tm = self.tm
        if code in _COORDINATOR_ERRORS:
            tm.lookup_coordinator(TRANSACTION, tm.transactional_id or "")
            self.reenqueue()
        elif code in _FENCED:
            self.fatal_error(ProducerFencedError(_FENCED_MESSAGE))
        elif code in (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ErrorCode.INVALID_TXN_STATE):
            self.fatal_error(error_from_code(code))
        elif code in (ErrorCode.UNKNOWN_PRODUCER_ID, ErrorCode.INVALID_PRODUCER_ID_MAPPING):
            self.abortable_error_if_possible(error_from_code(code))
        elif code == ErrorCode.TRANSACTION_ABORTABLE:
            self.abortable_error(error_from_code(code))
        elif error_from_code(code).retriable:
            self.reenqueue()
        else:
            return False
        return True


class FindCoordinatorHandler(TxnRequestHandler):
    priority = 0
    api_key = 10
    coordinator_type = None

    def __init__(self, tm: TransactionManager, key_type: int, key: str) -> None:
        super().__init__(tm, TransactionalRequestResult("FindCoordinator"))
        self.key_type = key_type
        self.key = key
        self.min_version = 1 if key_type == TRANSACTION else 0

    def build(self, version: int) -> Any:
        if version >= 4:
            return FindCoordinatorRequest(key_type=self.key_type, coordinator_keys=[self.key])
        return FindCoordinatorRequest(key=self.key, key_type=self.key_type)

    def handle_response(self, resp: Any) -> None:
        if resp.coordinators:
            c = resp.coordinators[0]
            code, message, node = c.error_code, c.error_message, (c.node_id, c.host, c.port)
        else:
            code, message, node = resp.error_code, resp.error_message, (resp.node_id, resp.host, resp.port)
        if code == ErrorCode.NONE:
            self.tm.set_coordinator(self.key_type, node)
            self.result.done()
        elif error_from_code(code).retriable:
            self.reenqueue()
        elif code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
            self.fatal_error(error_from_code(code, message))
        elif code == ErrorCode.GROUP_AUTHORIZATION_FAILED:
            self.abortable_error(error_from_code(code, f"Not authorized to access group: {self.key}"))
        else:
            kind = "GROUP" if self.key_type == GROUP else "TRANSACTION"
            self.fatal_error(KafkaError(f"Could not find a coordinator with type {kind} with key {self.key} due "
                                        f"to unexpected error: {message}"))


class InitProducerIdHandler(TxnRequestHandler):
    api_key = 22

    def __init__(self, tm: TransactionManager, producer_id: int, epoch: int) -> None:
        super().__init__(tm, TransactionalRequestResult("initTransactions"))
        self.producer_id, self.epoch = producer_id, epoch
        self.is_epoch_bump = producer_id >= 0
        self.priority = 4 if self.is_epoch_bump else 1

    def build(self, version: int) -> Any:
        return InitProducerIdRequest(transactional_id=self.tm.transactional_id,
                                     transaction_timeout_ms=self.tm.transaction_timeout_ms,
                                     producer_id=self.producer_id, producer_epoch=self.epoch)

    def handle_response(self, resp: Any) -> None:
        code = resp.error_code
        tm = self.tm
        if code == ErrorCode.NONE:
            with tm._lock:
                tm.producer_id, tm.producer_epoch = resp.producer_id, resp.producer_epoch
                log.info("ProducerId set to %s with epoch %s", resp.producer_id, resp.producer_epoch)
                tm.transition_to(State.READY)
                tm.last_error = None
            self.result.done()
        elif code in (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED):
            tm.last_error = error_from_code(code)
            self.abortable_error(error_from_code(code))
        elif not self.handle_common(code, "InitProducerId"):
            self.fatal_error(KafkaError(f"Unexpected error in InitProducerIdResponse; {error_from_code(code)}"))


class AddPartitionsToTxnHandler(TxnRequestHandler):
    priority = 2
    api_key = 24
    max_version = 3  # v4+ is the brokers' verify-only form

    def __init__(self, tm: TransactionManager, partitions: list[TopicPartition]) -> None:
        super().__init__(tm, TransactionalRequestResult("AddPartitionsToTxn"))
        self.partitions = partitions

    def build(self, version: int) -> Any:
        by_topic: dict[str, list[int]] = {}
        for tp in self.partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=self.tm.transactional_id,
            v3_and_below_producer_id=self.tm.producer_id, v3_and_below_producer_epoch=self.tm.producer_epoch,
            v3_and_below_topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=t, partitions=p)
                                 for t, p in by_topic.items()])

    def handle_response(self, resp: Any) -> None:
        tm = self.tm
        errors = {TopicPartition(t.name, p.partition_index): p.partition_error_code
                  for t in resp.results_by_topic_v3_and_below for p in t.results_by_partition}
        self.retry_backoff_ms = tm.retry_backoff_ms
        unauthorized: set[str] = set()
        failed = False
        for tp, code in errors.items():
            if code == ErrorCode.NONE:
                continue
            if code == ErrorCode.CONCURRENT_TRANSACTIONS:
                if not tm.partitions_in_transaction:  # the previous transaction is still completing
                    self.retry_backoff_ms = ADD_PARTITIONS_RETRY_BACKOFF_MS
                self.reenqueue()
                return
            if code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
                unauthorized.add(tp.topic)
            elif code == ErrorCode.OPERATION_NOT_ATTEMPTED:
                failed = True
            elif self.handle_common(code, "AddPartitionsToTxn"):
                return
            else:
                log.error("Could not add partition %s due to unexpected error %s", tp, error_from_code(code).name)
                failed = True
        with tm._lock:
            tm.pending_partitions.difference_update(errors)
            if unauthorized:
                self.abortable_error(error_from_code(ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                                     f"Not authorized to access topics: {sorted(unauthorized)}"))
            elif failed:
                self.abortable_error(KafkaError(
                    "Could not add partitions to transaction due to errors: "
                    + str({str(tp): error_from_code(c).name for tp, c in errors.items() if c})))
            else:
                tm.partitions_in_transaction.update(errors)
                tm.transaction_started = True
                self.result.done()


class EndTxnHandler(TxnRequestHandler):
    priority = 3
    api_key = 26
    is_end_txn = True

    def __init__(self, tm: TransactionManager, committed: bool) -> None:
        super().__init__(tm, TransactionalRequestResult("commitTransaction" if committed else "abortTransaction"))
        self.committed = committed

    def build(self, version: int) -> Any:
        return EndTxnRequest(transactional_id=self.tm.transactional_id, producer_id=self.tm.producer_id,
                             producer_epoch=self.tm.producer_epoch, committed=self.committed)

    def handle_response(self, resp: Any) -> None:
        if resp.error_code == ErrorCode.NONE:
            self.tm.complete_transaction()
            self.result.done()
        elif not self.handle_common(resp.error_code, "EndTxn"):
            self.fatal_error(KafkaError(f"Unhandled error in EndTxnResponse: {error_from_code(resp.error_code)}"))


class AddOffsetsToTxnHandler(TxnRequestHandler):
    priority = 2
    api_key = 25

    def __init__(self, tm: TransactionManager, offsets: dict[TopicPartition, OffsetAndMetadata],
                 group: ConsumerGroupMetadata) -> None:
        super().__init__(tm, TransactionalRequestResult("sendOffsetsToTransaction"))
        self.offsets, self.group = offsets, group

    def build(self, version: int) -> Any:
        return AddOffsetsToTxnRequest(transactional_id=self.tm.transactional_id, producer_id=self.tm.producer_id,
                                      producer_epoch=self.tm.producer_epoch, group_id=self.group.group_id)

    def handle_response(self, resp: Any) -> None:
        code = resp.error_code
        if code == ErrorCode.NONE:
            with self.tm._lock:
                self.tm._enqueue(TxnOffsetCommitHandler(self.tm, self.result, self.offsets, self.group))
                self.tm.transaction_started = True
        elif code == ErrorCode.GROUP_AUTHORIZATION_FAILED:
            self.abortable_error(error_from_code(code, f"Not authorized to access group: {self.group.group_id}"))
        elif not self.handle_common(code, "AddOffsetsToTxn"):
            self.fatal_error(KafkaError(f"Unexpected error in AddOffsetsToTxnResponse: {error_from_code(code)}"))


class TxnOffsetCommitHandler(TxnRequestHandler):
    priority = 2
    api_key = 28
    coordinator_type = GROUP

    def __init__(self, tm: TransactionManager, result: TransactionalRequestResult,
                 offsets: dict[TopicPartition, OffsetAndMetadata], group: ConsumerGroupMetadata) -> None:
        super().__init__(tm, result)
        self.pending = dict(offsets)
        self.group = group

    @property
    def coordinator_key(self) -> str:
        return self.group.group_id

    def build(self, version: int) -> Any:
        by_topic: dict[str, list[Any]] = {}
        for tp, om in self.pending.items():
            by_topic.setdefault(tp.topic, []).append(TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition(
                partition_index=tp.partition, committed_offset=om.offset,
                committed_leader_epoch=-1 if om.leader_epoch is None else om.leader_epoch,
                committed_metadata=om.metadata))
        g = self.group
        return TxnOffsetCommitRequest(
            transactional_id=self.tm.transactional_id, group_id=g.group_id, producer_id=self.tm.producer_id,
            producer_epoch=self.tm.producer_epoch, generation_id=g.generation_id, member_id=g.member_id,
            group_instance_id=g.group_instance_id,
            topics=[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(name=t, partitions=p)
                    for t, p in by_topic.items()])

    def handle_response(self, resp: Any) -> None:
        tm = self.tm
        reloaded = False
        for t in resp.topics:
            for p in t.partitions:
                tp, code = TopicPartition(t.name, p.partition_index), p.error_code
                if code == ErrorCode.NONE:
                    self.pending.pop(tp, None)
                elif code in (*_COORDINATOR_ERRORS, ErrorCode.REQUEST_TIMED_OUT):
                    if not reloaded:
                        reloaded = True
                        tm.lookup_coordinator(GROUP, self.group.group_id)
                elif error_from_code(code).retriable:
                    continue
                elif code in (ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.FENCED_INSTANCE_ID,
                              ErrorCode.TRANSACTION_ABORTABLE):
                    self.abortable_error(error_from_code(code))
                    break
                elif code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
                    self.abortable_error(KafkaError("Transaction offset Commit failed due to consumer group "
                                                    f"metadata mismatch: {error_from_code(code)}"))
                    break
                elif code in _FENCED:
                    self.fatal_error(ProducerFencedError(_FENCED_MESSAGE))
                    break
                else:
                    self.fatal_error(KafkaError(f"Unexpected error in TxnOffsetCommitResponse: "
                                                f"{error_from_code(code)}"))
                    break
        if self.result.is_completed():
            return
        if not self.pending:
            self.result.done()
        else:
            self.reenqueue()


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

    def maybe_add_partition(self, tp: TopicPartition) -> None:
        # Per record on the sending thread: a partition already in the open transaction needs no lock.
        if (self.state is State.IN_TRANSACTION and self._pending_transition is None
                and (tp in self.partitions_in_transaction or tp in self.new_partitions or tp in self.pending_partitions)):
            return
        with self._lock:
            self._maybe_fail_with_error()
            self._throw_if_pending_state("send")
            if not self.is_transactional():
                return
            if not self.has_producer_id():
                raise IllegalStateError(f"Cannot add partition {tp} to transaction before completing a call to "
                                        "initTransactions")
            if self.state is not State.IN_TRANSACTION:
                raise IllegalStateError(f"Cannot add partition {tp} to transaction while in state  "
                                        f"{self.state.value}")
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
                self.transition_to_fatal_error(ProducerFencedError(_FENCED_MESSAGE))
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
