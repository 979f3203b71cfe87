"""TransactionMarkerChannelManager: sends COMMIT/ABORT markers to the partition leaders (Kafka's).

For a transaction in PrepareCommit/PrepareAbort, one marker per partition goes to the partition's
current leader in a WriteTxnMarkers request (api key 27, the Kafka protocol, even when the leader is
this broker), grouped per destination broker. Per partition: NONE is done; a stale producer epoch or
coordinator epoch (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED) stops the sending (a newer
coordinator or producer took over); a deleted topic or UNSUPPORTED_FOR_MESSAGE_FORMAT counts as done; any
other error (no leader yet, NOT_LEADER_OR_FOLLOWER, timeouts, a broken connection) is retried after
`retry_backoff_ms`. When every partition is done, `on_complete(pending)` writes CompleteCommit/CompleteAbort.

The network is injected: `send(broker_id, WriteTxnMarkersRequest) -> Future[WriteTxnMarkersResponse]` (the
server wires an inter-broker client) and optionally its `close()`, which `shutdown` calls before joining the
sender thread (Kafka's InterBrokerSendThread.shutdown: initiateClose, then awaitShutdown), so a send blocked on a
frozen broker fails at once instead of holding shutdown; coordinator/ never opens sockets. No byte format.
Thread-safety: one sender thread drains the per-broker queues; `add_txn_markers_to_send` may be called from
any thread (it takes the manager's lock only).
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.transaction_metadata import TransactionMetadata, TxnTransitMetadata
from kafkapy.protocol.messages import WriteTxnMarkersRequest, WriteTxnMarkersResponse

log = logging.getLogger("kafka.coordinator.transaction.TransactionMarkerChannelManager")

MarkerSender = Callable[[int, WriteTxnMarkersRequest], "Future[WriteTxnMarkersResponse]"]

_RETRY = frozenset({ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER,
                    ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                    ErrorCode.REQUEST_TIMED_OUT, ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NETWORK_EXCEPTION,
                    ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                    ErrorCode.UNKNOWN_SERVER_ERROR})
_ABORT_SENDING = frozenset({ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED})


@dataclass(eq=False)
class PendingCompleteTxn:
    transactional_id: str
    coordinator_epoch: int
    metadata: TransactionMetadata
    transit: TxnTransitMetadata  # the prepared CompleteCommit / CompleteAbort
    commit: bool
    producer_id: int
    producer_epoch: int
    pending_partitions: set[TopicPartition] = field(default_factory=set)
    aborted: bool = False
    completed: bool = False


class TransactionMarkerChannelManager:
    def __init__(self, broker_id: int, metadata_cache: Any, time: Time, send: MarkerSender,
                 on_complete: Callable[[PendingCompleteTxn], None], request_timeout_ms: int = 30_000,
                 retry_backoff_ms: int = 100, close: Callable[[], None] | None = None) -> None:
        self.broker_id = broker_id
        self.metadata_cache = metadata_cache
        self.time = time
        self._send = send
        self._close_network = close
        self._on_complete = on_complete
        self.request_timeout_ms = request_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self._cond = threading.Condition()
        # (pending txn, partition) waiting for a destination; retried ones come back here after a backoff.
        self._unsent: list[tuple[PendingCompleteTxn, TopicPartition]] = []
        self._retry_at: list[tuple[int, PendingCompleteTxn, TopicPartition]] = []
        self._running = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        # The sender thread itself starts with the first markers to send (start-up time: a broker whose
        # producers never commit or abort a transaction runs no sender thread).
        with self._cond:
            self._running = True
            if self._unsent or self._retry_at:  # markers queued before start
                self._start_thread_locked()

    def _start_thread_locked(self) -> None:
        if self._thread is None and self._running:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name=f"TxnMarkerSenderThread-{self.broker_id}")
            self._thread.start()

    def shutdown(self) -> None:
        with self._cond:
            self._running = False
            self._cond.notify_all()
            thread = self._thread
        if self._close_network is not None:  # first: fails a send blocked on a frozen broker
            try:
                self._close_network()
            except Exception:
                log.exception("Closing the marker sender's connections failed")
        if thread is not None and thread is not threading.current_thread():
            thread.join(5)

    @property
    def num_retrying(self) -> int:
        """Markers held back until their broker can be reached (Kafka's UnknownDestinationQueueSize)."""
        with self._cond:
            return len(self._retry_at)

    @property
    def num_pending(self) -> int:
        with self._cond:
            return len(self._unsent) + len(self._retry_at)

    def add_txn_markers_to_send(self, coordinator_epoch: int, commit: bool, metadata: TransactionMetadata,
                                transit: TxnTransitMetadata) -> None:
        """Queue the markers of `metadata`'s partitions (call with the metadata lock held: its partitions and
        epoch are read here); `transit` is written once they are all done."""
        pending = PendingCompleteTxn(metadata.transactional_id, coordinator_epoch, metadata, transit, commit,
                                     metadata.producer_id, metadata.producer_epoch, set(metadata.topic_partitions))
        if not pending.pending_partitions:
            self._on_complete(pending)
            return
        with self._cond:
            self._unsent.extend((pending, tp) for tp in sorted(pending.pending_partitions))
            self._start_thread_locked()
            self._cond.notify_all()

    def remove_markers_for_epoch(self, transactional_ids: set[str] | None, coordinator_epoch: int) -> None:
        """A coordinator partition was unloaded: stop sending its markers (a newer coordinator will)."""
        with self._cond:
            def keep(p: PendingCompleteTxn) -> bool:
                stale = p.coordinator_epoch <= coordinator_epoch and (
                    transactional_ids is None or p.transactional_id in transactional_ids)
                if stale:
                    p.aborted = True
                return not stale

            self._unsent = [(p, tp) for p, tp in self._unsent if keep(p)]
            self._retry_at = [(t, p, tp) for t, p, tp in self._retry_at if keep(p)]

    # -- the sender thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._running and not self._unsent and not self._due_retries():
                    self._cond.wait(self.retry_backoff_ms / 1000.0 if self._retry_at else 1.0)
                if not self._running:
                    return
                batch, self._unsent = self._unsent, []
            try:
                self._send_batch(batch)
            except Exception:
                log.exception("Sending transaction markers failed; retrying")
                self._retry(batch)

    def _due_retries(self) -> bool:
        if not self._retry_at:
            return False
        now = self.time.hi_res_clock_ms()
        due = [(p, tp) for t, p, tp in self._retry_at if t <= now]
        if due:
            self._retry_at = [(t, p, tp) for t, p, tp in self._retry_at if t > now]
            self._unsent.extend(due)
        return bool(due)

    def _retry(self, entries: list[tuple[PendingCompleteTxn, TopicPartition]]) -> None:
        at = self.time.hi_res_clock_ms() + self.retry_backoff_ms
        with self._cond:
            self._retry_at.extend((at, p, tp) for p, tp in entries if not p.aborted)

    def _send_batch(self, batch: list[tuple[PendingCompleteTxn, TopicPartition]]) -> None:
        by_broker: dict[int, list[tuple[PendingCompleteTxn, TopicPartition]]] = defaultdict(list)
        retry: list[tuple[PendingCompleteTxn, TopicPartition]] = []
        for pending, tp in batch:
            if pending.aborted:
                continue
            leader = self._leader_of(tp)
            if leader is None:
                if not self.metadata_cache.contains_topic(tp.topic):
                    log.info("Topic %s was deleted: no marker for %s of %s", tp.topic, tp, pending.transactional_id)
                    self._partition_done(pending, tp)
                else:
                    retry.append((pending, tp))
                continue
            by_broker[leader].append((pending, tp))
        if retry:
            self._retry(retry)
        futures = []
        for broker_id, entries in by_broker.items():
            request = _build_request(entries)
            try:
                futures.append((entries, self._send(broker_id, request)))
            except Exception as e:
                log.info("Sending WriteTxnMarkers to broker %d failed: %s", broker_id, e)
                self._retry(entries)
        for entries, future in futures:
            try:
                response = future.result(timeout=self.request_timeout_ms / 1000.0)
            except Exception as e:
                log.info("WriteTxnMarkers failed: %r; retrying", e)
                self._retry(entries)
                continue
            self._handle_response(entries, response)

    def _leader_of(self, tp: TopicPartition) -> int | None:
        state = self.metadata_cache.get_partition_state(tp)
        if state is None or state.leader < 0:
            return None
        return int(state.leader)

    def _handle_response(self, entries: list[tuple[PendingCompleteTxn, TopicPartition]],
                         response: WriteTxnMarkersResponse) -> None:
        errors: dict[tuple[int, TopicPartition], int] = {}
        for marker in response.markers:
            for topic in marker.topics:
                for p in topic.partitions:
                    errors[(marker.producer_id, TopicPartition(topic.name, p.partition_index))] = p.error_code
        retry = []
        for pending, tp in entries:
            code = errors.get((pending.producer_id, tp), ErrorCode.UNKNOWN_SERVER_ERROR)
            if code == 0 or code == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT:
                self._partition_done(pending, tp)
            elif code in _ABORT_SENDING:
                log.info("Stopped sending markers of %s: %s on %s", pending.transactional_id, ErrorCode(code).name, tp)
                pending.aborted = True
            else:
                if code not in _RETRY:
                    log.warning("Unexpected error %s writing a marker of %s to %s; retrying",
                                ErrorCode(code).name, pending.transactional_id, tp)
                retry.append((pending, tp))
        if retry:
            self._retry(retry)

    def _partition_done(self, pending: PendingCompleteTxn, tp: TopicPartition) -> None:
        with self._cond:
            pending.pending_partitions.discard(tp)
            finished = not pending.pending_partitions and not pending.aborted and not pending.completed
            if finished:
                pending.completed = True
        if finished:
            self._on_complete(pending)


def _build_request(entries: list[tuple[PendingCompleteTxn, TopicPartition]]) -> WriteTxnMarkersRequest:
    by_txn: dict[int, tuple[PendingCompleteTxn, dict[str, list[int]]]] = {}
    for pending, tp in entries:
        _, topics = by_txn.setdefault(id(pending), (pending, defaultdict(list)))
        topics[tp.topic].append(tp.partition)
    R = WriteTxnMarkersRequest
    return R(markers=[R.WritableTxnMarker(
        producer_id=p.producer_id, producer_epoch=p.producer_epoch, transaction_result=p.commit,
        coordinator_epoch=p.coordinator_epoch,
        topics=[R.WritableTxnMarkerTopic(name=t, partition_indexes=sorted(ps)) for t, ps in sorted(topics.items())])
        for p, topics in by_txn.values()])
