"""ControllerChannelManager (Kafka's): the active controller's connections to every live broker, one
RequestSendThread per broker, each with its own FIFO queue, sending LeaderAndIsr (v5), UpdateMetadata (v7)
and StopReplica (v3) requests over the broker's inter-broker listener (`inter.broker.listener.name`),
highest version both sides support up to those. A request that fails (broker not up yet, connection
dropped) is retried with a backoff while its broker stays live and the queue holds nothing newer for it;
a broker that left the live set has its thread stopped and its queue dropped.
Each thread sends through its own BrokerBlockingSender, which connects, times out (request.timeout.ms) and
reconnects; stopping a thread closes its sender, failing an exchange blocked on an unresponsive broker.
Bytes: Kafka's request frames, built by protocol/ (client.connection.BrokerConnection does the framing).
Thread-safety: the controller's event thread enqueues; each sender thread owns its BrokerBlockingSender.
"""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from kafkapy.client.client_security import ClientSecurity
from kafkapy.cluster.broker import Broker, Node
from kafkapy.cluster.leader_and_isr import (
    LeaderAndIsrPartitionState,
    StopReplicaPartitionState,
    UpdateMetadataPartitionState,
)
from kafkapy.common.errors import ErrorCode, UnsupportedVersionError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_channel import ControllerChannel
from kafkapy.protocol.messages.leader_and_isr import LeaderAndIsrRequest, LeaderAndIsrResponse
from kafkapy.protocol.messages.stop_replica import StopReplicaRequest, StopReplicaResponse
from kafkapy.protocol.messages.update_metadata import UpdateMetadataRequest, UpdateMetadataResponse
from kafkapy.server.broker_blocking_sender import BrokerBlockingSender, SenderConfig

log = logging.getLogger("kafka.controller.ControllerChannelManager")

LEADER_AND_ISR_VERSION = 5
UPDATE_METADATA_VERSION = 7
STOP_REPLICA_VERSION = 3
RETRY_BACKOFF_S = 0.1  # Kafka's RequestSendThread backoff(): 100 ms between attempts
# Kafka's SecurityProtocol ids (UpdateMetadataEndpoint.SecurityProtocol).
# every one carries a top-level error_code
ControllerResponse: TypeAlias = LeaderAndIsrResponse | StopReplicaResponse | UpdateMetadataResponse

SECURITY_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


def leader_and_isr_request(controller_id: int, controller_epoch: int, broker_epoch: int,
                           states: Sequence[LeaderAndIsrPartitionState], live_leaders: Sequence[Broker],
                           listener: str) -> LeaderAndIsrRequest:
    topics: dict[str, LeaderAndIsrRequest.LeaderAndIsrTopicState] = {}
    for s in states:
        topic = topics.get(s.topic)
        if topic is None:
            topic = topics[s.topic] = LeaderAndIsrRequest.LeaderAndIsrTopicState(
                topic_name=s.topic, topic_id=s.topic_id, partition_states=[])
        topic.partition_states.append(LeaderAndIsrRequest.LeaderAndIsrPartitionState(
            topic_name=s.topic, partition_index=s.partition, controller_epoch=s.controller_epoch, leader=s.leader,
            leader_epoch=s.leader_epoch, isr=list(s.isr), partition_epoch=s.partition_epoch,
            replicas=list(s.replicas), adding_replicas=list(s.adding_replicas),
            removing_replicas=list(s.removing_replicas), is_new=s.is_new,
            leader_recovery_state=int(s.leader_recovery_state)))
    leaders = []
    for b in live_leaders:
        ep = b.endpoint(listener) or b.endpoint()
        if ep is not None:
            leaders.append(LeaderAndIsrRequest.LeaderAndIsrLiveLeader(broker_id=b.id, host_name=ep.host,
                                                                       port=ep.port))
    # Type 0 (UNKNOWN) is a partial update: only the named partitions change (Kafka's incremental requests).
    return LeaderAndIsrRequest(controller_id=controller_id, controller_epoch=controller_epoch,
                               broker_epoch=broker_epoch, type=0, topic_states=list(topics.values()),
                               live_leaders=leaders)


def update_metadata_request(controller_id: int, controller_epoch: int, broker_epoch: int,
                            live_brokers: Sequence[Broker], states: Sequence[UpdateMetadataPartitionState],
                            topic_ids: Mapping[str, uuid.UUID]) -> UpdateMetadataRequest:
    topics: dict[str, UpdateMetadataRequest.UpdateMetadataTopicState] = {}
    for s in states:
        topic = topics.get(s.topic)
        if topic is None:
            topic = topics[s.topic] = UpdateMetadataRequest.UpdateMetadataTopicState(
                topic_name=s.topic, topic_id=topic_ids.get(s.topic) or uuid.UUID(int=0), partition_states=[])
        topic.partition_states.append(UpdateMetadataRequest.UpdateMetadataPartitionState(
            topic_name=s.topic, partition_index=s.partition, controller_epoch=s.controller_epoch, leader=s.leader,
            leader_epoch=s.leader_epoch, isr=list(s.isr), zk_version=s.partition_epoch, replicas=list(s.replicas),
            offline_replicas=list(s.offline_replicas)))
    brokers = [UpdateMetadataRequest.UpdateMetadataBroker(
        id=b.id, rack=b.rack,
        endpoints=[UpdateMetadataRequest.UpdateMetadataEndpoint(
            port=ep.port, host=ep.host, listener=ep.listener_name,
            security_protocol=SECURITY_PROTOCOL_IDS.get(ep.security_protocol, 0)) for ep in b.endpoints])
        for b in live_brokers]
    return UpdateMetadataRequest(controller_id=controller_id, controller_epoch=controller_epoch,
                                 broker_epoch=broker_epoch, topic_states=list(topics.values()),
                                 live_brokers=brokers)


def stop_replica_request(controller_id: int, controller_epoch: int, broker_epoch: int,
                         states: Sequence[StopReplicaPartitionState]) -> StopReplicaRequest:
    topics: dict[str, StopReplicaRequest.StopReplicaTopicState] = {}
    for s in states:
        topic = topics.get(s.topic)
        if topic is None:
            topic = topics[s.topic] = StopReplicaRequest.StopReplicaTopicState(topic_name=s.topic,
                                                                                partition_states=[])
        topic.partition_states.append(StopReplicaRequest.StopReplicaPartitionState(
            partition_index=s.partition, leader_epoch=s.leader_epoch, delete_partition=s.delete_partition))
    return StopReplicaRequest(controller_id=controller_id, controller_epoch=controller_epoch,
                              broker_epoch=broker_epoch, topic_states=list(topics.values()))


def leader_and_isr_errors(request: LeaderAndIsrRequest, response: Any) -> dict[TopicPartition, int]:
    """{partition: error code} of a LeaderAndIsr response (by topic id in v5+, by name before); a
    top-level error applies to every partition of the request."""
    if response.error_code:
        return {TopicPartition(t.topic_name, p.partition_index): response.error_code
                for t in request.topic_states for p in t.partition_states}
    names = {t.topic_id: t.topic_name for t in request.topic_states}
    out: dict[TopicPartition, int] = {}
    for e in response.partition_errors or []:
        out[TopicPartition(e.topic_name, e.partition_index)] = e.error_code
    for t in response.topics or []:
        name = names.get(t.topic_id)
        if name is not None:
            for e in t.partition_errors:
                out[TopicPartition(name, e.partition_index)] = e.error_code
    return out


class RequestSendThread:
    """One broker's queue and sender thread (Kafka's RequestSendThread): each request is sent through the
    broker's BrokerBlockingSender, again after RETRY_BACKOFF_S whenever the exchange fails, until it is
    answered or the broker leaves the live set (stop() closes the sender, which fails a blocked exchange)."""

    def __init__(self, controller_id: int, broker: Broker, listener: str, config: SenderConfig,
                 security: ClientSecurity | None = None,
                 on_response: Callable[[int, Any, Any], None] | None = None) -> None:
        self.broker = broker
        self._on_response = on_response  # (broker id, request, response) after each answered request
        ep = broker.endpoint(listener) or broker.endpoint()
        assert ep is not None
        node = Node(broker.id, ep.host, ep.port)
        self.sender = BrokerBlockingSender(lambda: node, config, security)
        self.queue: queue.Queue[tuple[Any, int] | None] = queue.Queue()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"Controller-{controller_id}-to-broker-{broker.id}-send-thread")
        self._thread.start()

    def enqueue(self, request: Any, max_version: int) -> None:
        self.queue.put((request, max_version))

    def stop(self) -> None:
        self._stopped.set()
        self.queue.put(None)
        self.sender.close()

    def _run(self) -> None:
        while not self._stopped.is_set():
            item = self.queue.get()
            if item is None:
                break
            request, max_version = item
            response: ControllerResponse | None = self._send_until_answered(request, max_version)
            if response is None:
                continue
            code = response.error_code
            if code != ErrorCode.NONE:
                log.warning("%s to broker %d answered error %d", request.NAME, self.broker.id, code)
            if self._on_response is not None:
                try:
                    self._on_response(self.broker.id, request, response)
                except Exception:
                    log.exception("Handling the answer to %s from broker %d failed", request.NAME, self.broker.id)
        self.sender.close()

    def _send_until_answered(self, request: Any, max_version: int) -> Any:
        """The response, or None when the request is dropped (no common version) or the thread stops."""
        while not self._stopped.is_set():
            try:
                return self.sender.send_and_receive(request, max_version=max_version)
            except UnsupportedVersionError as e:
                log.warning("Dropping %s to broker %d: %s", request.NAME, self.broker.id, e)
                return None
            except Exception as e:  # noqa: BLE001 - any failure: the sender reconnects; retried while live
                if not self._stopped.is_set():
                    log.debug("Sending %s to broker %d failed: %r; reconnecting", request.NAME, self.broker.id, e)
                    self._stopped.wait(RETRY_BACKOFF_S)
        return None


class ControllerChannelManager(ControllerChannel):
    def __init__(self, controller_id: int, listener: str, request_timeout_ms: int = 30000,
                 security: ClientSecurity | None = None, connection_setup_timeout_ms: int = 10_000,
                 connection_setup_timeout_max_ms: int = 30_000) -> None:
        self.controller_id = controller_id
        self.listener = listener
        self.request_timeout_ms = request_timeout_ms
        self.security = security
        # Kafka's controller-to-broker NetworkClient: the controller's id as client id, no reconnect backoff
        # (the send thread's own RETRY_BACKOFF_S paces retries), the OS's socket buffer sizes.
        self.sender_config = SenderConfig(str(controller_id), request_timeout_ms, connection_setup_timeout_ms,
                                          connection_setup_timeout_max_ms, reconnect_backoff_ms=0,
                                          reconnect_backoff_max_ms=0)
        self._lock = threading.Lock()
        self._senders: dict[int, RequestSendThread] = {}

    def set_live_brokers(self, brokers: Mapping[int, Broker]) -> None:
        with self._lock:
            for broker_id in list(self._senders):
                sender = self._senders[broker_id]
                current = brokers.get(broker_id)
                if current is None or current.epoch != sender.broker.epoch or current != sender.broker:
                    sender.stop()
                    del self._senders[broker_id]
            for broker_id, broker in brokers.items():
                if broker_id not in self._senders:
                    self._senders[broker_id] = RequestSendThread(self.controller_id, broker, self.listener,
                                                                 self.sender_config, self.security,
                                                                 self._on_response)

    def _on_response(self, broker_id: int, request: Any, response: Any) -> None:
        callback = self.on_leader_and_isr_response
        if callback is None or not isinstance(request, LeaderAndIsrRequest):
            return
        callback(broker_id, leader_and_isr_errors(request, response))

    def _enqueue(self, broker_id: int, request: Any, max_version: int) -> None:
        with self._lock:
            sender = self._senders.get(broker_id)
        if sender is None:
            log.debug("Not sending %s to broker %d: it is not live", request.NAME, broker_id)
            return
        request.broker_epoch = sender.broker.epoch
        sender.enqueue(request, max_version)

    def send_leader_and_isr(self, broker_id: int, controller_id: int, controller_epoch: int,
                            states: Sequence[LeaderAndIsrPartitionState], live_leaders: Sequence[Broker]) -> None:
        self._enqueue(broker_id, leader_and_isr_request(controller_id, controller_epoch, -1, states, live_leaders,
                                                        self.listener), LEADER_AND_ISR_VERSION)

    def send_update_metadata(self, broker_ids: Sequence[int], controller_id: int, controller_epoch: int,
                             live_brokers: Sequence[Broker], states: Sequence[UpdateMetadataPartitionState],
                             topic_ids: Mapping[str, uuid.UUID]) -> None:
        for broker_id in broker_ids:
            self._enqueue(broker_id, update_metadata_request(controller_id, controller_epoch, -1, live_brokers,
                                                             states, topic_ids), UPDATE_METADATA_VERSION)

    def send_stop_replica(self, broker_id: int, controller_id: int, controller_epoch: int,
                          states: Sequence[StopReplicaPartitionState]) -> None:
        self._enqueue(broker_id, stop_replica_request(controller_id, controller_epoch, -1, states),
                      STOP_REPLICA_VERSION)

    def reset(self) -> None:
        with self._lock:
            senders = list(self._senders.values())
            self._senders.clear()
        for sender in senders:
            sender.stop()
