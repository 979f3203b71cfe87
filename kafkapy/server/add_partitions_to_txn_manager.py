"""AddPartitionsToTxnManager: a partition leader asks another broker's transaction coordinator whether partitions are
in a producer's ongoing transaction (Kafka's AddPartitionsToTxnManager, KIP-890 part 1).

`verify(coordinator_id, transactional_id, producer_id, producer_epoch, partitions, callback)` queues one question;
the manager's sender thread sends it as an AddPartitionsToTxn v4+ request with `verify_only` (the brokers' batched
form, authorized by CLUSTER_ACTION) to the coordinator's endpoint on the inter-broker listener and calls
`callback({partition: error code})` from that thread. A connection or request failure answers every partition
NETWORK_EXCEPTION (the produce path turns that into a retriable NOT_ENOUGH_REPLICAS, as Kafka does); a full queue
answers at once the same way, so no produce request waits on a backlog without bound.
Bytes: Kafka's request frames (client.connection.BrokerConnection does the framing).

Thread-safety: `verify` may be called from any handler thread; the sender thread is started on first use and owns
the connections (one per coordinator broker); `shutdown` closes the connections (failing a blocked exchange), stops
the thread and fails what is still queued.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from kafkapy.client.errors import ClientUnsupportedVersionError
from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import AddPartitionsToTxnRequest
from kafkapy.server.inter_broker_connections import InterBrokerConnections

if TYPE_CHECKING:
    from kafkapy.client.client_security import ClientSecurity

log = logging.getLogger("kafka.server.AddPartitionsToTxnManager")

VerifyCallback = Callable[[dict[TopicPartition, int]], None]
MAX_QUEUED = 10_000


class _Question(NamedTuple):
    coordinator_id: int
    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: frozenset[TopicPartition]
    callback: VerifyCallback


def _all(partitions: Iterable[TopicPartition], code: int) -> dict[TopicPartition, int]:
    return dict.fromkeys(partitions, code)


class AddPartitionsToTxnManager:
    def __init__(self, broker_id: int, listener_name: str, metadata_cache: Any, request_timeout_ms: int = 30_000,
                 security: ClientSecurity | None = None) -> None:
        self.broker_id = broker_id
        self.request_timeout_ms = request_timeout_ms
        self._queue: queue.Queue[_Question | None] = queue.Queue(MAX_QUEUED)
        self._connections = InterBrokerConnections(broker_id, listener_name, metadata_cache,
                                                   f"broker-{broker_id}-add-partitions-to-txn", request_timeout_ms,
                                                   security)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def verify(self, coordinator_id: int, transactional_id: str, producer_id: int, producer_epoch: int,
               partitions: Iterable[TopicPartition], callback: VerifyCallback) -> None:
        question = _Question(coordinator_id, transactional_id, producer_id, producer_epoch, frozenset(partitions),
                             callback)
        with self._lock:
            if self._stopped:
                accepted = False
            else:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, daemon=True,
                                                    name=f"AddPartitionsToTxnSenderThread-{self.broker_id}")
                    self._thread.start()
                try:
                    self._queue.put_nowait(question)
                    accepted = True
                except queue.Full:
                    accepted = False
        if not accepted:
            callback(_all(question.partitions, ErrorCode.NETWORK_EXCEPTION))

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Close the connections first (an exchange blocked on a frozen coordinator fails at once, as Kafka's
        InterBrokerSendThread.shutdown closes its client before awaiting the thread), then join the thread."""
        with self._lock:
            self._stopped = True
            thread = self._thread
        self._connections.close()
        if thread is not None:
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                pass
            thread.join(timeout_s)
        for _ in range(MAX_QUEUED):  # whatever is left is answered, never dropped
            try:
                question = self._queue.get_nowait()
            except queue.Empty:
                break
            if question is not None:
                question.callback(_all(question.partitions, ErrorCode.NETWORK_EXCEPTION))

    # -- the sender thread ----------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            question = self._queue.get()
            if question is None or self._stopped:
                if question is not None:
                    question.callback(_all(question.partitions, ErrorCode.NETWORK_EXCEPTION))
                return
            try:
                codes = self._ask(question)
            except Exception as e:  # noqa: BLE001 - any failure is this question's answer, the thread goes on
                log.info("Verifying partitions of %s with broker %d failed: %s", question.transactional_id,
                         question.coordinator_id, e)
                self._connections.drop(question.coordinator_id)
                codes = _all(question.partitions, ErrorCode.NETWORK_EXCEPTION)
            try:
                question.callback(codes)
            except Exception:
                log.exception("A transaction verification callback failed")

    def _ask(self, q: _Question) -> dict[TopicPartition, int]:
        """Kafka's onComplete: per-partition codes (0 = verified); PRODUCER_FENCED is reported as
        INVALID_PRODUCER_EPOCH and a CLUSTER_AUTHORIZATION_FAILED refusal as INVALID_TXN_STATE (clients never see
        the former); a coordinator without the v4 form skips verification."""
        R = AddPartitionsToTxnRequest
        by_topic: dict[str, list[int]] = {}
        for tp in q.partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        request = R(transactions=[R.AddPartitionsToTxnTransaction(
            transactional_id=q.transactional_id, producer_id=q.producer_id, producer_epoch=q.producer_epoch,
            verify_only=True, topics=[R.AddPartitionsToTxnTopic(name=t, partitions=sorted(ps))
                                      for t, ps in by_topic.items()])])
        try:
            response = self._connections.get(q.coordinator_id).send_and_receive(request, min_version=4)
        except ClientUnsupportedVersionError:
            log.warning("AddPartitionsToTxnRequest failed for node %d with invalid version exception. This suggests "
                        "verification is not supported. Continuing handling the produce request.", q.coordinator_id)
            return _all(q.partitions, 0)
        if response.error_code:
            log.error("AddPartitionsToTxnRequest for node %d returned with error %s.", q.coordinator_id,
                      ErrorCode(response.error_code).name)
            code = response.error_code
            return _all(q.partitions, ErrorCode.INVALID_TXN_STATE if code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                        else code)
        codes = {TopicPartition(t.name, p.partition_index): p.partition_error_code
                 for r in response.results_by_transaction for t in r.topic_results for p in t.results_by_partition}
        return {tp: ErrorCode.INVALID_PRODUCER_EPOCH if codes.get(tp) == ErrorCode.PRODUCER_FENCED
                else codes.get(tp, ErrorCode.UNKNOWN_SERVER_ERROR) for tp in q.partitions}
