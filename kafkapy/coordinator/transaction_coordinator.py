"""TransactionCoordinator: Kafka's transaction coordinator for the transactional ids this broker owns.

Handles InitProducerId with a transactional id (new producer id, or an epoch bump that fences the previous
producer; an ongoing transaction is first aborted with a bumped epoch and the client told
CONCURRENT_TRANSACTIONS so it retries), AddPartitionsToTxn / AddOffsetsToTxn (Ongoing with more partitions),
EndTxn (PrepareCommit/PrepareAbort written, the client answered, then the markers sent by the
TransactionMarkerChannelManager and CompleteCommit/CompleteAbort written once all are in), the abort of
transactions open past their transaction.timeout.ms (fencing the producer: Kafka's
abortTimedOutTransactions) and the expiry of idle transactional ids, DescribeTransactions and
ListTransactions. Errors are Kafka's: INVALID_PRODUCER_ID_MAPPING for an unknown id or producer id,
PRODUCER_FENCED for an old epoch, CONCURRENT_TRANSACTIONS while a transition is in flight,
INVALID_TXN_STATE for an impossible request, NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS.

Follows leadership of __transaction_state like the group coordinator (on_leader_and_isr, refresh_ownership).
Background work (timeouts, expiry) is driven by the broker's scheduler through `abort_timed_out_transactions`
and `remove_expired_transactional_ids`, on the injected Time (tests use MockTime).
Thread-safety: each transactional id's state under its metadata lock; callbacks run on the log appender
thread or the marker sender thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kafkapy.common.errors import ErrorCode, ProducerFencedError
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.transaction_marker_channel_manager import (
    MarkerSender,
    PendingCompleteTxn,
    TransactionMarkerChannelManager,
)
from kafkapy.coordinator.transaction_metadata import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafkapy.coordinator.transaction_state_manager import (
    TRANSACTION_STATE_TOPIC_NAME,
    TransactionConfig,
    TransactionStateManager,
)

log = logging.getLogger("kafka.coordinator.transaction.TransactionCoordinator")

InitCallback = Callable[[int, int, int], None]  # error, producer id, producer epoch
ErrorCallback = Callable[[int], None]
_S = TransactionState
_RETRY_COMPLETE_ERRORS = frozenset({ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.UNKNOWN_SERVER_ERROR})
# How long AddPartitionsToTxn waits for the previous transaction's markers before answering
# CONCURRENT_TRANSACTIONS (the answer Kafka gives at once; waiting spares the client a retry backoff).
COMPLETION_WAIT_S = 0.2


class _CompletionWaiter:
    """A request parked until its transactional id's CompleteCommit/CompleteAbort is written: exactly one of
    `retry` (on completion) or `give_up` (after COMPLETION_WAIT_S) runs."""

    __slots__ = ("retry", "give_up", "_lock", "_fired")

    def __init__(self, retry: Callable[[], None], give_up: Callable[[], None]) -> None:
        self.retry = retry
        self.give_up = give_up
        self._lock = threading.Lock()
        self._fired = False

    def fire(self, completed: bool) -> None:
        with self._lock:
            if self._fired:
                return
            self._fired = True
        (self.retry if completed else self.give_up)()


@dataclass(frozen=True)
class TransactionDescription:
    transactional_id: str
    error_code: int
    state: str = ""
    transaction_timeout_ms: int = 0
    transaction_start_time_ms: int = -1
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    topic_partitions: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: str


class TransactionCoordinator:
    def __init__(self, broker_id: int, config: TransactionConfig, time: Time, state_manager: TransactionStateManager,
                 producer_id_manager: Any, marker_sender: MarkerSender, metadata_cache: Any,
                 close_marker_sender: Callable[[], None] | None = None) -> None:
        self.broker_id = broker_id
        self.config = config
        self.time = time
        self.state_manager = state_manager
        self.producer_id_manager = producer_id_manager
        self.marker_manager = TransactionMarkerChannelManager(
            broker_id, metadata_cache, time, marker_sender, self._on_markers_written,
            request_timeout_ms=config.request_timeout_ms, close=close_marker_sender)
        self.is_active = False
        self._waiters: dict[str, list[_CompletionWaiter]] = {}
        self._waiters_lock = threading.Lock()

    @classmethod
    def create(cls, broker_id: int, kafka_config: Any, time: Time, replica_manager: Any, metadata_cache: Any,
               producer_id_manager: Any, marker_sender: MarkerSender,
               close_marker_sender: Callable[[], None] | None = None) -> TransactionCoordinator:
        """close_marker_sender: the marker network's close, called by shutdown before the sender thread is joined."""
        config = TransactionConfig.from_config(kafka_config)
        manager = TransactionStateManager(broker_id, config, time, replica_manager, metadata_cache)
        return cls(broker_id, config, time, manager, producer_id_manager, marker_sender, metadata_cache,
                   close_marker_sender)

    def startup(self) -> None:
        log.info("Starting up.")
        self.is_active = True
        self.marker_manager.start()
        self.refresh_ownership()
        log.info("Startup complete.")

    def shutdown(self) -> None:
        log.info("Shutting down.")
        self.is_active = False
        self.marker_manager.shutdown()
        self.state_manager.shutdown()
        log.info("Shutdown complete.")

    def partition_for(self, transactional_id: str) -> int:
        return self.state_manager.partition_for(transactional_id)

    # -- leadership of __transaction_state ---------------------------------------------------------------

    def on_election(self, partition: int, coordinator_epoch: int) -> None:
        self.state_manager.load_transactions_for_partition(partition, coordinator_epoch, self._on_loaded)

    def on_resignation(self, partition: int, coordinator_epoch: int | None = None) -> None:
        ids = self.state_manager.transactional_ids_in(partition)
        self.state_manager.remove_transactions_for_partition(partition, coordinator_epoch)
        if ids:
            self.marker_manager.remove_markers_for_epoch(ids, 2**31 - 1 if coordinator_epoch is None
                                                         else coordinator_epoch)

    def on_leader_and_isr(self, broker_id: int, states: Iterable[Any]) -> None:
        for state in states:
            if state.topic != TRANSACTION_STATE_TOPIC_NAME:
                continue
            if state.leader == broker_id:
                self.on_election(state.partition, state.leader_epoch)
            else:
                self.on_resignation(state.partition, state.leader_epoch)

    def refresh_ownership(self) -> None:
        """Load the __transaction_state partitions this broker leads, unload those it no longer leads."""
        rm = self.state_manager.replica_manager
        owned = self.state_manager.owned_partitions()
        loading = self.state_manager.loading_partitions()
        hosted = {tp.partition: p for tp, p in rm.partitions.items() if tp.topic == TRANSACTION_STATE_TOPIC_NAME}
        for partition in sorted(set(hosted) | set(owned) | set(loading)):
            part = hosted.get(partition)
            known_epoch = owned.get(partition, loading.get(partition))
            if part is not None and part.is_leader:
                if known_epoch is None or known_epoch < part.leader_epoch:
                    self.on_election(partition, part.leader_epoch)
            elif known_epoch is not None:
                self.on_resignation(partition, None)

    def _on_loaded(self, coordinator_epoch: int, pending: list[TransactionMetadata]) -> None:
        now = self.time.milliseconds()
        for md in pending:
            with md.lock:
                if md.pending_state is not None:
                    continue
                transit = md.prepare_complete(now)
                self.marker_manager.add_txn_markers_to_send(coordinator_epoch, md.state == _S.PREPARE_COMMIT, md,
                                                            transit)

    # -- InitProducerId ---------------------------------------------------------------------------------

    def handle_init_producer_id(self, transactional_id: str, transaction_timeout_ms: int, producer_id: int,
                                producer_epoch: int, callback: InitCallback) -> None:
        def fail(error: int) -> None:
            callback(error, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

        if not transactional_id:
            fail(ErrorCode.INVALID_REQUEST)
            return
        if not 0 < transaction_timeout_ms <= self.config.transaction_max_timeout_ms:
            fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
            return
        error, existing = self.state_manager.get_transaction_state(transactional_id)
        if error:
            fail(error)
            return
        if existing is None:
            new_id = self.producer_id_manager.generate_producer_id()
            md = TransactionMetadata(transactional_id, new_id, txn_timeout_ms=transaction_timeout_ms,
                                     txn_last_update_timestamp=self.time.milliseconds())
            error, existing = self.state_manager.put_transaction_state_if_not_exists(md)
            if error or existing is None:
                fail(error or ErrorCode.NOT_COORDINATOR)
                return
        coordinator_epoch, md = existing.coordinator_epoch, existing.metadata
        expected = (producer_id, producer_epoch) if producer_id != NO_PRODUCER_ID else None
        with md.lock:
            result = self._prepare_init_producer_id_transit(md, transaction_timeout_ms, expected)
        if isinstance(result, int):
            fail(result)
            return
        if result.txn_state == _S.PREPARE_EPOCH_FENCE:
            def after_abort(error: int) -> None:
                fail(error or ErrorCode.CONCURRENT_TRANSACTIONS)

            self._end_transaction(transactional_id, result.producer_id, result.producer_epoch, False, False,
                                  after_abort)
            return

        def written(error: int) -> None:
            if error:
                fail(error)
            else:
                log.info("Initialized transactionalId %s with producerId %d and producer epoch %d on partition %s-%d",
                         transactional_id, result.producer_id, result.producer_epoch, TRANSACTION_STATE_TOPIC_NAME,
                         self.partition_for(transactional_id))
                callback(0, result.producer_id, result.producer_epoch)

        self.state_manager.append_transaction_to_log(transactional_id, coordinator_epoch, md, result, written)

    def _prepare_init_producer_id_transit(self, md: TransactionMetadata, timeout_ms: int,
                                          expected: tuple[int, int] | None) -> TxnTransitMetadata | int:
        if md.pending_state is not None:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if expected is not None and not (md.producer_id == expected[0] or (
                md.previous_producer_id == expected[0] and expected[1] >= 32766)):
            return ErrorCode.PRODUCER_FENCED
        state = md.state
        if state in (_S.PREPARE_ABORT, _S.PREPARE_COMMIT):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if state in (_S.COMPLETE_ABORT, _S.COMPLETE_COMMIT, _S.EMPTY):
            now = self.time.milliseconds()
            if md.is_producer_epoch_exhausted() and (expected is None or expected[1] == md.producer_epoch):
                return md.prepare_producer_id_rotation(self.producer_id_manager.generate_producer_id(), timeout_ms,
                                                       now, expected is not None)
            try:
                return md.prepare_increment_producer_epoch(timeout_ms, None if expected is None else expected[1], now)
            except ProducerFencedError:
                return ErrorCode.PRODUCER_FENCED
        if state == _S.ONGOING:
            return md.prepare_fence_producer_epoch()
        log.error("Found transactionalId %s with state %s. This is illegal as we should never have transitioned "
                  "to this state.", md.transactional_id, state)
        return ErrorCode.UNKNOWN_SERVER_ERROR

    # -- AddPartitionsToTxn / AddOffsetsToTxn -----------------------------------------------------------------

    def handle_add_partitions_to_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                             partitions: set[TopicPartition], callback: ErrorCallback,
                                             may_wait: bool = True) -> None:
        if not transactional_id:
            callback(ErrorCode.INVALID_REQUEST)
            return
        error, existing = self.state_manager.get_transaction_state(transactional_id)
        if error:
            callback(error)
            return
        if existing is None:
            callback(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
            return
        coordinator_epoch, md = existing.coordinator_epoch, existing.metadata
        with md.lock:
            if md.producer_id != producer_id:
                result: TxnTransitMetadata | int = ErrorCode.INVALID_PRODUCER_ID_MAPPING
            elif md.producer_epoch != producer_epoch:
                result = ErrorCode.PRODUCER_FENCED
            elif md.pending_state is not None or md.state in (_S.PREPARE_COMMIT, _S.PREPARE_ABORT):
                result = ErrorCode.CONCURRENT_TRANSACTIONS
                if may_wait and md.pending_state in (_S.COMPLETE_COMMIT, _S.COMPLETE_ABORT):
                    # The previous transaction's markers are on their way: answer once it completes.
                    def retry() -> None:
                        self.handle_add_partitions_to_transaction(transactional_id, producer_id, producer_epoch,
                                                                  partitions, callback, may_wait=False)

                    self._park(transactional_id, _CompletionWaiter(
                        retry, lambda: callback(ErrorCode.CONCURRENT_TRANSACTIONS)))
                    return
            elif md.state == _S.ONGOING and partitions <= md.topic_partitions:
                result = 0
            else:
                result = md.prepare_add_partitions(partitions, self.time.milliseconds())
        if isinstance(result, int):
            callback(result)
            return
        self.state_manager.append_transaction_to_log(transactional_id, coordinator_epoch, md, result, callback)

    def _park(self, transactional_id: str, waiter: _CompletionWaiter) -> None:
        """Call with the metadata lock held (its completion, applied under that lock, cannot slip past)."""
        with self._waiters_lock:
            self._waiters.setdefault(transactional_id, []).append(waiter)
        timer = threading.Timer(COMPLETION_WAIT_S, waiter.fire, (False,))
        timer.daemon = True
        timer.start()

    def _release_waiters(self, transactional_id: str) -> None:
        with self._waiters_lock:
            waiters = self._waiters.pop(transactional_id, [])
        for w in waiters:
            w.fire(True)

    def handle_verify_partitions_in_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                                partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        """AddPartitionsToTxn v4+ with verify_only (KIP-890): is each partition in the ongoing transaction?
        Missing ones get TRANSACTION_ABORTABLE, as Kafka 4.x answers."""
        error, existing = self.state_manager.get_transaction_state(transactional_id) if transactional_id else (
            ErrorCode.INVALID_REQUEST, None)
        if not error and existing is None:
            error = ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if error or existing is None:
            return dict.fromkeys(partitions, error)
        md = existing.metadata
        with md.lock:
            if md.producer_id != producer_id:
                code = ErrorCode.INVALID_PRODUCER_ID_MAPPING
            elif md.producer_epoch != producer_epoch:
                code = ErrorCode.PRODUCER_FENCED
            elif md.pending_state is not None or md.state in (_S.PREPARE_COMMIT, _S.PREPARE_ABORT):
                code = ErrorCode.CONCURRENT_TRANSACTIONS
            else:
                return {tp: 0 if tp in md.topic_partitions and md.state == _S.ONGOING
                        else ErrorCode.TRANSACTION_ABORTABLE for tp in partitions}
        return dict.fromkeys(partitions, code)

    # -- EndTxn -------------------------------------------------------------------------------------------

    def handle_end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool,
                               callback: ErrorCallback) -> None:
        self._end_transaction(transactional_id, producer_id, producer_epoch, commit, True, callback)

    def _end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool,
                         from_client: bool, callback: ErrorCallback) -> None:
        if not transactional_id:
            callback(ErrorCode.INVALID_REQUEST)
            return
        error, existing = self.state_manager.get_transaction_state(transactional_id)
        if error:
            callback(error)
            return
        if existing is None:
            callback(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
            return
        coordinator_epoch, md = existing.coordinator_epoch, existing.metadata
        fence_undo: tuple[int, int] | None = None
        with md.lock:
            state = md.state
            result: TxnTransitMetadata | int
            if md.producer_id != producer_id:
                result = ErrorCode.INVALID_PRODUCER_ID_MAPPING
            elif (from_client and producer_epoch != md.producer_epoch) or producer_epoch < md.producer_epoch:
                result = ErrorCode.PRODUCER_FENCED
            elif md.pending_state is not None and md.pending_state != _S.PREPARE_EPOCH_FENCE:
                result = ErrorCode.CONCURRENT_TRANSACTIONS
            elif state == _S.ONGOING:
                next_state = _S.PREPARE_COMMIT if commit else _S.PREPARE_ABORT
                if next_state == _S.PREPARE_ABORT and md.pending_state == _S.PREPARE_EPOCH_FENCE:
                    # The fence's bumped epoch goes into the PrepareAbort record.
                    fence_undo = (md.producer_epoch, md.last_producer_epoch)
                    md.pending_state = None
                    md.producer_epoch = producer_epoch
                    md.last_producer_epoch = NO_PRODUCER_EPOCH
                result = md.prepare_abort_or_commit(next_state, self.time.milliseconds())
            elif state == _S.COMPLETE_COMMIT:
                result = 0 if commit else ErrorCode.INVALID_TXN_STATE
            elif state == _S.COMPLETE_ABORT:
                result = ErrorCode.INVALID_TXN_STATE if commit else 0
            elif state == _S.PREPARE_COMMIT:
                result = ErrorCode.CONCURRENT_TRANSACTIONS if commit else ErrorCode.INVALID_TXN_STATE
            elif state == _S.PREPARE_ABORT:
                result = ErrorCode.INVALID_TXN_STATE if commit else ErrorCode.CONCURRENT_TRANSACTIONS
            else:
                result = ErrorCode.INVALID_TXN_STATE
            if md.pending_state == _S.PREPARE_EPOCH_FENCE and isinstance(result, int):
                md.pending_state = None  # the fence is abandoned with the abort
        if isinstance(result, int):
            callback(result)
            return
        transit = result

        def written(error: int) -> None:
            if error:
                if fence_undo is not None:
                    with md.lock:
                        md.producer_epoch, md.last_producer_epoch = fence_undo
                callback(error)
                return
            callback(0)
            with md.lock:
                if (md.state != transit.txn_state or md.producer_id != transit.producer_id
                        or md.producer_epoch != transit.producer_epoch or md.pending_state is not None):
                    log.info("The transaction %s changed before its markers were sent: %s", transactional_id, md)
                    return
                complete = md.prepare_complete(self.time.milliseconds())
                self.marker_manager.add_txn_markers_to_send(coordinator_epoch, commit, md, complete)

        self.state_manager.append_transaction_to_log(transactional_id, coordinator_epoch, md, transit, written)

    def _on_markers_written(self, pending: PendingCompleteTxn) -> None:
        """Every marker is in: write CompleteCommit/CompleteAbort (retried while the log is unavailable)."""
        md = pending.metadata
        error, current = self.state_manager.get_transaction_state(pending.transactional_id)
        if error or current is None or current.metadata is not md or current.coordinator_epoch != pending.coordinator_epoch:
            log.info("Not completing transaction %s: the coordinator moved on (%s)", pending.transactional_id,
                     ErrorCode(error).name if error else "epoch changed")
            with md.lock:
                if md.pending_state == pending.transit.txn_state:
                    md.pending_state = None
            return

        def retry(code: int) -> bool:
            if code not in _RETRY_COMPLETE_ERRORS or not self.is_active:
                return False
            timer = threading.Timer(0.1, self._on_markers_written, (pending,))
            timer.daemon = True
            timer.start()
            return True

        def written(code: int) -> None:
            if not code:
                log.debug("Completed transaction %s: %s", pending.transactional_id, pending.transit.txn_state)
            self._release_waiters(pending.transactional_id)

        self.state_manager.append_transaction_to_log(pending.transactional_id, pending.coordinator_epoch, md,
                                                     pending.transit, written, retry_on_error=retry)

    # -- timeouts and expiry (scheduled) --------------------------------------------------------------

    def abort_timed_out_transactions(self) -> int:
        """Abort (with a bumped epoch, fencing the producer) every Ongoing transaction past its timeout."""
        count = 0
        for t in self.state_manager.timed_out_transactions():
            error, existing = self.state_manager.get_transaction_state(t.transactional_id)
            if error or existing is None:
                continue
            md = existing.metadata
            with md.lock:
                if md.producer_id != t.producer_id or md.pending_state is not None or md.state != _S.ONGOING:
                    continue
                transit = md.prepare_fence_producer_epoch()
            log.info("Aborting transaction %s (producerId %d) after its timeout of %d ms", t.transactional_id,
                     t.producer_id, md.txn_timeout_ms)

            def done(error: int, tid: str = t.transactional_id) -> None:
                if error:
                    log.info("Aborting the timed-out transaction %s failed: %s", tid, ErrorCode(error).name)

            self._end_transaction(t.transactional_id, transit.producer_id, transit.producer_epoch, False, False, done)
            count += 1
        return count

    def remove_expired_transactional_ids(self) -> int:
        return self.state_manager.remove_expired_transactional_ids()

    # -- DescribeTransactions / ListTransactions --------------------------------------------------------------

    def handle_describe_transactions(self, transactional_ids: Iterable[str]) -> list[TransactionDescription]:
        out = []
        for tid in transactional_ids:
            if not tid:
                out.append(TransactionDescription(tid, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND))
                continue
            error, existing = self.state_manager.get_transaction_state(tid)
            if error:
                out.append(TransactionDescription(tid, error))
            elif existing is None:
                out.append(TransactionDescription(tid, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND))
            else:
                md = existing.metadata
                with md.lock:
                    state = _S.ONGOING if md.state == _S.PREPARE_EPOCH_FENCE else md.state
                    out.append(TransactionDescription(
                        tid, 0, state.state_name, md.txn_timeout_ms, md.txn_start_timestamp, md.producer_id,
                        md.producer_epoch, tuple(sorted(md.topic_partitions))))
        return out

    def handle_list_transactions(self, state_filters: Iterable[str], producer_id_filters: Iterable[int],
                                 duration_filter_ms: int = -1) -> tuple[int, list[str], list[TransactionListing]]:
        """(error, unknown state filters, listings)."""
        if not self.is_active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, [], []
        if self.state_manager.loading_partitions():
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [], []
        wanted_states: set[TransactionState] = set()
        unknown = []
        for name in state_filters:
            s = _S.from_name(name)
            if s is None:
                unknown.append(name)
            else:
                wanted_states.add(s)
        pids = set(producer_id_filters)
        now = self.time.milliseconds()
        out = []
        for md in self.state_manager.all_transactions():
            with md.lock:
                if md.state == _S.DEAD:
                    continue
                if wanted_states and md.state not in wanted_states:
                    continue
                if pids and md.producer_id not in pids:
                    continue
                if duration_filter_ms >= 0 and (md.txn_start_timestamp < 0
                                                or now - md.txn_start_timestamp < duration_filter_ms):
                    continue
                out.append(TransactionListing(md.transactional_id, md.producer_id, md.state.state_name))
        return 0, unknown, sorted(out, key=lambda listing: listing.transactional_id)
