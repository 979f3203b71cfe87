"""ControllerChannel: how the controller's decisions reach brokers (Kafka's ControllerChannelManager seen from
the controller). Cluster mode injects one that sends LeaderAndIsr / UpdateMetadata / StopReplica requests
to every live broker over the inter-broker listener (server/controller_channel_manager.py); the embedded
broker has none and applies decisions through callbacks.

Calls come from the controller's event thread only and must not block on the network: an implementation
queues each request per broker and sends it from its own thread, in order. A broker's LeaderAndIsr answer
goes back through `on_leader_and_isr_response(broker_id, {TopicPartition: error code})` (set by the
Controller; called from the sending thread).
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import (
    LeaderAndIsrPartitionState,
    StopReplicaPartitionState,
    UpdateMetadataPartitionState,
)
from kafkapy.common.topic_partition import TopicPartition


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
