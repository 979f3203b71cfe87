"""The transactional requests of the producer (Kafka's TransactionManager.TxnRequestHandler and its
subclasses): FindCoordinator, InitProducerId, AddPartitionsToTxn, EndTxn, AddOffsetsToTxn, TxnOffsetCommit.

Each handler knows its priority (Kafka's: coordinator lookup 0, InitProducerId 1, AddPartitions/AddOffsets/
TxnOffsetCommit 2, EndTxn 3, epoch-bump InitProducerId 4), the coordinator it goes to (None: any broker,
GROUP, TRANSACTION), how to build its request for a negotiated version and how the response moves the
TransactionManager: retry, look the coordinator up again, abortable or fatal error, or done.

Byte format: the request messages of protocol/messages (AddPartitionsToTxn at most v3, the client versions;
v4+ are broker-to-broker). Thread-safety: handlers run on the Sender thread and change the manager under its
lock.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from kafkapy.client.errors import error_from_code
from kafkapy.client.group_offsets import OffsetAndMetadata
from kafkapy.client.transaction_state import ConsumerGroupMetadata, State, TransactionalRequestResult
from kafkapy.common.errors import ErrorCode, KafkaError, ProducerFencedError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse
from kafkapy.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
)
from kafkapy.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from kafkapy.protocol.messages.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from kafkapy.protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from kafkapy.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest, TxnOffsetCommitResponse

if TYPE_CHECKING:
    import threading


class TransactionManager(Protocol):
    """What a handler reads and calls on the producer's TransactionManager (client/transaction_manager.py,
    which imports this module: the handlers see it through this interface, so the two stay acyclic)."""

    transactional_id: str | None
    transaction_timeout_ms: int
    retry_backoff_ms: int
    _lock: threading.RLock
    state: State
    last_error: BaseException | None
    producer_id: int
    producer_epoch: int
    pending_partitions: set[TopicPartition]
    partitions_in_transaction: set[TopicPartition]
    transaction_started: bool
    epoch_bump_required: bool

    def transition_to(self, target: State, error: BaseException | None = None) -> None: ...
    def transition_to_abortable_error(self, error: BaseException) -> None: ...
    def transition_to_fatal_error(self, error: BaseException) -> None: ...
    def set_coordinator(self, key_type: int, node: tuple[int, str, int]) -> None: ...
    def lookup_coordinator(self, key_type: int, key: str) -> None: ...
    def complete_transaction(self) -> None: ...
    def _enqueue(self, handler: TxnRequestHandler) -> None: ...

log = logging.getLogger(__name__)

GROUP, TRANSACTION = 0, 1  # FindCoordinator key types
_COORDINATOR_ERRORS = (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE)
_FENCED = (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED)
FENCED_MESSAGE = "There is a newer producer with the same transactionalId which fences the current one."
# Kafka's retry backoff for CONCURRENT_TRANSACTIONS on the first AddPartitionsToTxn of a transaction.
ADD_PARTITIONS_RETRY_BACKOFF_MS = 20


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
        return self.transactional_id

    @property
    def transactional_id(self) -> str:
        """The producer's transactional id: only a transactional producer queues these requests (its
        InitProducerIdHandler, which an idempotent producer also sends, reads tm.transactional_id itself)."""
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
            tm.lookup_coordinator(TRANSACTION, self.transactional_id)
            self.reenqueue()
        elif code in _FENCED:
            self.fatal_error(ProducerFencedError(FENCED_MESSAGE))
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

    def handle_response(self, resp: FindCoordinatorResponse) -> None:
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

    def handle_response(self, resp: InitProducerIdResponse) -> None:
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
            v3_and_below_transactional_id=self.transactional_id,
            v3_and_below_producer_id=self.tm.producer_id, v3_and_below_producer_epoch=self.tm.producer_epoch,
            v3_and_below_topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=t, partitions=p)
                                 for t, p in by_topic.items()])

    def handle_response(self, resp: AddPartitionsToTxnResponse) -> None:
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
        return EndTxnRequest(transactional_id=self.transactional_id, producer_id=self.tm.producer_id,
                             producer_epoch=self.tm.producer_epoch, committed=self.committed)

    def handle_response(self, resp: EndTxnResponse) -> None:
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
        return AddOffsetsToTxnRequest(transactional_id=self.transactional_id, producer_id=self.tm.producer_id,
                                      producer_epoch=self.tm.producer_epoch, group_id=self.group.group_id)

    def handle_response(self, resp: AddOffsetsToTxnResponse) -> None:
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
            transactional_id=self.transactional_id, group_id=g.group_id, producer_id=self.tm.producer_id,
            producer_epoch=self.tm.producer_epoch, generation_id=g.generation_id, member_id=g.member_id,
            group_instance_id=g.group_instance_id,
            topics=[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(name=t, partitions=p)
                    for t, p in by_topic.items()])

    def handle_response(self, resp: TxnOffsetCommitResponse) -> None:
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
                    self.fatal_error(ProducerFencedError(FENCED_MESSAGE))
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
