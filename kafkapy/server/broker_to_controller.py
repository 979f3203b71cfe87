"""BrokerToControllerChannel: requests a broker sends to the active controller in cluster mode, over the
controller's inter-broker listener: ControlledShutdown (v3, blocking, at shutdown) and AlterPartition (v1,
asynchronous: the ISR changes a partition leader proposes). AlterPartition is Kafka's AlterPartitionManager:
one proposal per partition at a time (a second one for the same partition is answered
OPERATION_NOT_ATTEMPTED), every waiting proposal goes in one request, and a proposal is sent again, with
backoff, until the controller answers it: a lost answer, a timeout, a refused connection, NOT_CONTROLLER or
any top-level error never ends it, since the controller may have applied it already and only its answer
tells the leader so. A partition missing from an answer is sent again too. Both go through one
BrokerBlockingSender whose destination is the active controller, looked up in ZooKeeper (/controller, then its
/brokers/ids registration), as Kafka 2.x's broker did for controlled shutdown; the sender connects, backs off
and reconnects, a new controller id makes it connect there, and a failed exchange makes the next one look the
controller's registration up again.
Bytes: Kafka's request frames (client.connection.BrokerConnection frames them).
Thread-safety: `alter_partition` may be called from any thread (requests go out on one sender thread);
`controlled_shutdown` is called by the shutting-down thread.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from typing import Any

from kafkapy.client.client_security import ClientSecurity
from kafkapy.client.errors import DisconnectError, KafkaTimeoutError
from kafkapy.cluster.broker import Node
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderRecoveryState
from kafkapy.common.errors import (
    ErrorCode,
    KafkaError,
    NotControllerError,
    OperationNotAttemptedError,
    error_for_code,
)
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.metadata_store import MetadataStore
from kafkapy.protocol.messages.alter_partition import AlterPartitionRequest
from kafkapy.protocol.messages.controlled_shutdown import ControlledShutdownRequest
from kafkapy.server.broker_blocking_sender import BrokerBlockingSender, SenderConfig

log = logging.getLogger("kafka.server.BrokerToControllerChannelManager")

ALTER_PARTITION_VERSION = 1
CONTROLLED_SHUTDOWN_VERSION = 3
# Backoff between AlterPartition attempts after an answered failure (a top-level error), doubling up to the max;
# after a refused or dropped connection the sender's reconnect backoff (the client's reconnect.backoff.ms ..
# reconnect.backoff.max.ms, exponential with jitter) paces the next attempt instead.
ALTER_PARTITION_RETRY_BACKOFF_MS = 50
ALTER_PARTITION_RETRY_BACKOFF_MAX_MS = 1000
RECONNECT_BACKOFF_MS = 50
RECONNECT_BACKOFF_MAX_MS = 1000

AlterPartitionAnswer = LeaderAndIsr | KafkaError


class BrokerToControllerChannel:
    def __init__(self, broker_id: int, store: MetadataStore, listener: str, broker_epoch: Any,
                 request_timeout_ms: int = 30000, time: Time = SYSTEM, security: ClientSecurity | None = None,
                 connection_setup_timeout_ms: int = 10_000, connection_setup_timeout_max_ms: int = 30_000) -> None:
        """broker_epoch: a callable giving this broker's current epoch (it changes after a session expiry)."""
        self.broker_id = broker_id
        self.store = store
        self.listener = listener
        self.broker_epoch = broker_epoch
        self.request_timeout_ms = request_timeout_ms
        self.time = time
        # The controller's address, looked up again when the controller id changes or an exchange fails.
        self._controller: Node | None = None
        self._sender = BrokerBlockingSender(self._controller_node, SenderConfig(
            f"broker-{broker_id}", request_timeout_ms, connection_setup_timeout_ms, connection_setup_timeout_max_ms,
            RECONNECT_BACKOFF_MS, RECONNECT_BACKOFF_MAX_MS), security)
        self._alter_cond = threading.Condition()
        self._unsent: dict[TopicPartition, tuple[LeaderAndIsr, Future[Any]]] = {}  # until answered
        self._closing = False
        self._thread = threading.Thread(target=self._run, name=f"broker-{broker_id}-to-controller-send-thread",
                                        daemon=True)
        self._thread.start()

    # -- the active controller --------------------------------------------------------------------------------

    def _controller_node(self) -> Node:
        """The sender's destination: the active controller's endpoint on the listener (ZooKeeper /controller,
        then its /brokers/ids registration). Raises NotControllerError while none is elected or registered."""
        controller_id = self.store.get_controller_id()
        if controller_id is None:
            raise NotControllerError("No controller is elected.")
        known = self._controller
        if known is not None and known.id == controller_id:
            return known
        broker = self.store.get_brokers().get(controller_id)
        ep = broker.endpoint(self.listener) or broker.endpoint() if broker is not None else None
        if ep is None:
            raise NotControllerError(f"Controller {controller_id} is not registered.")
        self._controller = Node(controller_id, ep.host, ep.port)
        return self._controller

    def _request(self, msg: Any, max_version: int) -> Any:
        try:
            return self._sender.send_and_receive(msg, max_version=max_version)
        except Exception:
            self._controller = None  # the controller may have moved or restarted elsewhere: look it up again
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
        """Send a leader's proposed ISR; the future gets the committed LeaderAndIsr or a KafkaError (never an
        exception: delivery is retried until answered). Never blocks."""
        future: Future[Any] = Future()
        with self._alter_cond:
            busy = tp in self._unsent
            if not busy:
                self._unsent[tp] = (proposed, future)
                self._alter_cond.notify_all()
        if busy:
            future.set_result(OperationNotAttemptedError(
                f"Failed to enqueue ISR change state {proposed} for partition {tp}: one is already in flight"))
        return future

    def pending_alter_partitions(self) -> dict[TopicPartition, LeaderAndIsr]:
        with self._alter_cond:
            return {tp: proposed for tp, (proposed, _) in self._unsent.items()}

    def _next_alter_batch(self, backoff_ms: int) -> dict[TopicPartition, tuple[LeaderAndIsr, Future[Any]]] | None:
        # Real time, not self.time: this paces network attempts of an I/O thread.
        with self._alter_cond:
            deadline = time.monotonic() + backoff_ms / 1000.0
            while not self._closing:
                wait_s = deadline - time.monotonic()
                if self._unsent and wait_s <= 0:
                    return dict(self._unsent)
                self._alter_cond.wait(wait_s if self._unsent else None)
            return None

    def _run(self) -> None:
        backoff_ms = 0
        while (batch := self._next_alter_batch(backoff_ms)) is not None:
            try:
                answers = self._send_alter_partition({tp: proposed for tp, (proposed, _) in batch.items()})
            except (DisconnectError, KafkaTimeoutError) as e:  # the sender's reconnect backoff paces the next try
                backoff_ms = 0
                log.warning("AlterPartition of %s failed (%r); sending it again", sorted(str(tp) for tp in batch), e)
                continue
            except Exception as e:  # noqa: BLE001 - sent again until answered
                backoff_ms = min(max(backoff_ms * 2, ALTER_PARTITION_RETRY_BACKOFF_MS),
                                 ALTER_PARTITION_RETRY_BACKOFF_MAX_MS)
                log.warning("AlterPartition of %s failed (%r); sending it again in %d ms",
                            sorted(str(tp) for tp in batch), e, backoff_ms)
                continue
            done: list[tuple[Future[Any], AlterPartitionAnswer]] = []
            with self._alter_cond:
                for tp, (_, future) in batch.items():
                    answer = answers.get(tp)
                    current = self._unsent.get(tp)
                    if answer is not None and current is not None and current[1] is future:
                        del self._unsent[tp]
                        done.append((future, answer))
            missing = len(batch) - len(done)
            if missing:
                log.warning("AlterPartition answer left out %d partitions; sending them again", missing)
            backoff_ms = ALTER_PARTITION_RETRY_BACKOFF_MS if missing else 0
            for future, answer in done:  # outside the lock: the callbacks take partition locks
                if not future.done():
                    future.set_result(answer)

    def _send_alter_partition(self, proposals: dict[TopicPartition, LeaderAndIsr]
                              ) -> dict[TopicPartition, AlterPartitionAnswer]:
        """One AlterPartition request; the answer per partition. Raises on a failed exchange or a top-level
        error (the whole request is sent again)."""
        by_topic: dict[str, list[Any]] = {}
        for tp, proposed in proposals.items():
            by_topic.setdefault(tp.topic, []).append(AlterPartitionRequest.PartitionData(
                partition_index=tp.partition, leader_epoch=proposed.leader_epoch, new_isr=list(proposed.isr),
                leader_recovery_state=int(proposed.leader_recovery_state), partition_epoch=proposed.partition_epoch))
        request = AlterPartitionRequest(broker_id=self.broker_id, broker_epoch=self.broker_epoch(), topics=[
            AlterPartitionRequest.TopicData(topic_name=t, partitions=ps) for t, ps in by_topic.items()])
        response = self._request(request, ALTER_PARTITION_VERSION)
        if response.error_code != ErrorCode.NONE:
            raise error_for_code(response.error_code)(f"AlterPartition: top-level error {response.error_code}")
        answers: dict[TopicPartition, AlterPartitionAnswer] = {}
        for topic in response.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.topic_name, p.partition_index)
                if tp not in proposals:
                    continue
                if p.error_code != ErrorCode.NONE:
                    answers[tp] = error_for_code(p.error_code)()
                else:
                    answers[tp] = LeaderAndIsr(p.leader_id, p.leader_epoch, tuple(p.isr),
                                               LeaderRecoveryState(p.leader_recovery_state), p.partition_epoch)
        return answers

    def shutdown(self) -> None:
        with self._alter_cond:
            self._closing = True
            self._alter_cond.notify_all()
        self._sender.close()
