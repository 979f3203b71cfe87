"""ControllerChannel: how the controller's decisions reach brokers (Kafka's ControllerChannelManager seen from
the controller). Cluster mode injects one that sends LeaderAndIsr / UpdateMetadata / StopReplica requests
to every live broker over the inter-broker listener (server/controller_channel_manager.py); the embedded
broker injects server/local_controller_channel.py, which applies them in-process through the same broker-side
path. CallbackControllerChannel hands them to plain functions (tests, tools embedding a controller).

Calls come from the controller's event thread only and must not block on the network: an implementation
queues each request per broker and sends it from its own thread, in order. A broker's LeaderAndIsr answer
goes back through `on_leader_and_isr_response(broker_id, {TopicPartition: error code})` (set by the
Controller; called from the sending thread).
"""

from __future__ import annotations

import logging
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import (
    LeaderAndIsrPartitionState,
    StopReplicaPartitionState,
    UpdateMetadataPartitionState,
)
from kafkapy.common.topic_partition import TopicPartition

log = logging.getLogger("kafka.controller.KafkaController")


class ControllerChannel(ABC):
    on_leader_and_isr_response: Callable[[int, dict[TopicPartition, int]], None] | None = None

    @abstractmethod
    def set_live_brokers(self, brokers: Mapping[int, Broker]) -> None:
        """The brokers requests may go to (start senders for new ones, stop those that left)."""

    @abstractmethod
    def send_leader_and_isr(self, broker_id: int, controller_id: int, controller_epoch: int,
                            states: Sequence[LeaderAndIsrPartitionState], live_leaders: Sequence[Broker]) -> None: ...

    @abstractmethod
    def send_update_metadata(self, broker_ids: Sequence[int], controller_id: int, controller_epoch: int,
                             live_brokers: Sequence[Broker], states: Sequence[UpdateMetadataPartitionState],
                             topic_ids: Mapping[str, uuid.UUID]) -> None: ...

    @abstractmethod
    def send_stop_replica(self, broker_id: int, controller_id: int, controller_epoch: int,
                          states: Sequence[StopReplicaPartitionState]) -> None: ...

    @abstractmethod
    def reset(self) -> None:
        """Drop queued requests and connections (the controller resigned)."""

    def shutdown(self) -> None:
        self.reset()


LeaderAndIsrCallback = Callable[[int, int, list[LeaderAndIsrPartitionState]], Any]
StopReplicaCallback = Callable[[int, int, list[StopReplicaPartitionState]], object]  # the result is not used


class CallbackControllerChannel(ControllerChannel):
    """Decisions handed to functions on the controller's event thread: on_leader_and_isr(broker_id,
    controller_epoch, states) returns {TopicPartition: error code} (anything else: no answer);
    on_stop_replica(broker_id, controller_epoch, states). UpdateMetadata needs nothing more: the controller
    has updated its broker's MetadataCache already. A callback that raises is logged; the controller goes on."""

    def __init__(self, on_leader_and_isr: LeaderAndIsrCallback | None = None,
                 on_stop_replica: StopReplicaCallback | None = None) -> None:
        self.on_leader_and_isr = on_leader_and_isr
        self.on_stop_replica = on_stop_replica

    def set_live_brokers(self, brokers: Mapping[int, Broker]) -> None:
        return None

    def send_leader_and_isr(self, broker_id: int, controller_id: int, controller_epoch: int,
                            states: Sequence[LeaderAndIsrPartitionState], live_leaders: Sequence[Broker]) -> None:
        if self.on_leader_and_isr is None:
            return
        errors = _call_safely(self.on_leader_and_isr, broker_id, controller_epoch, list(states))
        if isinstance(errors, dict) and self.on_leader_and_isr_response is not None:
            self.on_leader_and_isr_response(broker_id, errors)

    def send_update_metadata(self, broker_ids: Sequence[int], controller_id: int, controller_epoch: int,
                             live_brokers: Sequence[Broker], states: Sequence[UpdateMetadataPartitionState],
                             topic_ids: Mapping[str, uuid.UUID]) -> None:
        return None

    def send_stop_replica(self, broker_id: int, controller_id: int, controller_epoch: int,
                          states: Sequence[StopReplicaPartitionState]) -> None:
        if self.on_stop_replica is not None:
            _call_safely(self.on_stop_replica, broker_id, controller_epoch, list(states))

    def reset(self) -> None:
        return None


def _call_safely(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception:  # a broker failing to apply a decision must not stop the controller
        log.exception("Controller callback %s failed", getattr(fn, "__name__", fn))
        return None
