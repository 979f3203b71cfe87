"""BrokerToControllerChannel: requests a broker sends to the active controller in cluster mode, over the
controller's inter-broker listener: ControlledShutdown (v3, blocking, at shutdown) and AlterPartition (v1,
asynchronous: the ISR changes a partition leader proposes). The controller is looked up in ZooKeeper
(/controller, then its /brokers/ids registration), as Kafka 2.x's broker did for controlled shutdown;
a NOT_CONTROLLER answer or a dropped connection makes the next attempt look it up again.
Bytes: Kafka's request frames (client.connection.BrokerConnection frames them).
Thread-safety: `alter_partition` may be called from any thread (requests go out on one sender thread);
`controlled_shutdown` is called by the shutting-down thread.
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import Future
from typing import Any

from kafkapy.client.client_security import ClientSecurity
from kafkapy.client.connection import BrokerConnection
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderRecoveryState
from kafkapy.common.errors import ErrorCode, KafkaError, NotControllerError, error_for_code
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.metadata_store import MetadataStore
from kafkapy.protocol.messages.alter_partition import AlterPartitionRequest
from kafkapy.protocol.messages.controlled_shutdown import ControlledShutdownRequest

log = logging.getLogger("kafka.server.BrokerToControllerChannelManager")

ALTER_PARTITION_VERSION = 1
CONTROLLED_SHUTDOWN_VERSION = 3
ALTER_PARTITION_ATTEMPTS = 5
RETRY_BACKOFF_S = 0.2


class BrokerToControllerChannel:
    def __init__(self, broker_id: int, store: MetadataStore, listener: str, broker_epoch: Any,
                 request_timeout_ms: int = 30000, time: Time = SYSTEM, security: ClientSecurity | None = None) -> None:
        """broker_epoch: a callable giving this broker's current epoch (it changes after a session expiry)."""
        self.broker_id = broker_id
        self.store = store
        self.listener = listener
        self.broker_epoch = broker_epoch
        self.request_timeout_ms = request_timeout_ms
        self.time = time
        self.security = security
        self._conn: BrokerConnection | None = None
        self._conn_lock = threading.Lock()
        self._queue: queue.Queue[tuple[TopicPartition, LeaderAndIsr, Future[Any]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=f"broker-{broker_id}-to-controller-send-thread",
                                        daemon=True)
        self._thread.start()

    # -- connection to the controller ------------------------------------------------------------------------

    def _controller_connection(self) -> BrokerConnection:
        with self._conn_lock:
            controller_id = self.store.get_controller_id()
            if controller_id is None:
                raise NotControllerError("No controller is elected.")
            conn = self._conn
            if conn is not None and conn.node_id == controller_id and conn.is_ready():
                return conn
            if conn is not None:
                conn.close()
                self._conn = None
            broker = self.store.get_brokers().get(controller_id)
            ep = broker.endpoint(self.listener) or broker.endpoint() if broker is not None else None
            if ep is None:
                raise NotControllerError(f"Controller {controller_id} is not registered.")
            conn = BrokerConnection(controller_id, ep.host, ep.port, client_id=f"broker-{self.broker_id}",
                                    request_timeout_ms=self.request_timeout_ms, security=self.security)
            conn.connect(self.request_timeout_ms)
            self._conn = conn
            return conn

    def _request(self, msg: Any, max_version: int) -> Any:
        conn = self._controller_connection()
        try:
            return conn.request(msg, conn.pick_version(msg.API_KEY, max_version), self.request_timeout_ms)
        except Exception:
            with self._conn_lock:
                if self._conn is conn:
                    conn.close()
                    self._conn = None
            raise

    # -- ControlledShutdown ---------------------------------------------------------------------------------------

    def controlled_shutdown(self, max_retries: int, backoff_ms: int) -> bool:
        """Kafka's KafkaServer.controlledShutdown: ask the controller to move leadership away, retrying while
        partitions remain; True when it succeeded."""
        for attempt in range(1, max_retries + 1):
            try:
                response = self._request(ControlledShutdownRequest(broker_id=self.broker_id,
                                                                   broker_epoch=self.broker_epoch()),
                                         CONTROLLED_SHUTDOWN_VERSION)
                if response.error_code == ErrorCode.NONE and not response.remaining_partitions:
                    log.info("Controlled shutdown request returned successfully")
                    return True
                remaining = ", ".join(f"{p.topic_name}-{p.partition_index}" for p in response.remaining_partitions)
                log.info("Remaining partitions to move: [%s]; error %d", remaining, response.error_code)
            except Exception as e:  # noqa: BLE001 - retried as Kafka does
                log.info("Error during controlled shutdown, possibly because leader movement took longer than the "
                         "configured controller.socket.timeout.ms and/or request.timeout.ms: %s", e)
            if attempt < max_retries:
                log.info("Retrying controlled shutdown (%d/%d) after %d ms", attempt, max_retries, backoff_ms)
                self.time.sleep(backoff_ms)
        log.warning("Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed")
        return False

    # -- AlterPartition ---------------------------------------------------------------------------------------

    def alter_partition(self, tp: TopicPartition, proposed: LeaderAndIsr) -> Future[Any]:
        """Send a leader's proposed ISR; the future gets the committed LeaderAndIsr or a KafkaError."""
        future: Future[Any] = Future()
        self._queue.put((tp, proposed, future))
        return future

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            tp, proposed, future = item
            for attempt in range(ALTER_PARTITION_ATTEMPTS):
                try:
                    result = self._send_alter_partition(tp, proposed)
                except Exception as e:  # noqa: BLE001 - retried; the last error goes to the partition
                    result = e if isinstance(e, KafkaError) else NotControllerError(str(e))
                    if attempt + 1 < ALTER_PARTITION_ATTEMPTS:
                        threading.Event().wait(RETRY_BACKOFF_S)
                        continue
                break
            if not future.done():
                future.set_result(result)

    def _send_alter_partition(self, tp: TopicPartition, proposed: LeaderAndIsr) -> LeaderAndIsr | KafkaError:
        request = AlterPartitionRequest(broker_id=self.broker_id, broker_epoch=self.broker_epoch(), topics=[
            AlterPartitionRequest.TopicData(topic_name=tp.topic, partitions=[AlterPartitionRequest.PartitionData(
                partition_index=tp.partition, leader_epoch=proposed.leader_epoch, new_isr=list(proposed.isr),
                leader_recovery_state=int(proposed.leader_recovery_state),
                partition_epoch=proposed.partition_epoch)])])
        response = self._request(request, ALTER_PARTITION_VERSION)
        if response.error_code == ErrorCode.NOT_CONTROLLER:
            raise NotControllerError("The controller moved.")
        if response.error_code != ErrorCode.NONE:
            return error_for_code(response.error_code)()
        for topic in response.topics:
            for p in topic.partitions:
                if p.partition_index != tp.partition:
                    continue
                if p.error_code != ErrorCode.NONE:
                    return error_for_code(p.error_code)()
                return LeaderAndIsr(p.leader_id, p.leader_epoch, tuple(p.isr),
                                    LeaderRecoveryState(p.leader_recovery_state), p.partition_epoch)
        return error_for_code(ErrorCode.UNKNOWN_SERVER_ERROR)()

    def shutdown(self) -> None:
        self._queue.put(None)
        with self._conn_lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
