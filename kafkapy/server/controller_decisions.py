"""The broker-side end of the controller's decisions, one path for both modes: a LeaderAndIsr or StopReplica
request (over the wire in ZooKeeper mode, apis/leader_and_isr.py; in-process in embedded mode,
LocalControllerChannel) is applied by the ReplicaManager, then Kafka's single onLeadershipChange callback
tells both coordinators which of their partitions (__consumer_offsets, __transaction_state) this broker now
leads or follows, and StopReplica makes them resign the partitions it stops hosting.

No byte format (the requests are decoded by the caller). Thread-safety: called from a request handler
thread or the controller's event thread; the ReplicaManager and the coordinators serialise their own state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kafkapy.cluster.broker import Node
from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState, StopReplicaPartitionState
from kafkapy.common.internal_topics import GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME
from kafkapy.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafkapy.server.broker_services import BrokerServices
    from kafkapy.server.replica_manager import ReplicaManager


def on_leadership_change(services: BrokerServices | None, broker_id: int,
                         states: Sequence[LeaderAndIsrPartitionState]) -> None:
    """Kafka's onLeadershipChange: the coordinators load the partitions this broker now leads and unload
    those it follows. Before the coordinators exist (start-up), their own start-up reads the leadership."""
    if services is None:
        return
    if services.group_coordinator is not None and any(s.topic == GROUP_METADATA_TOPIC_NAME for s in states):
        services.group_coordinator.on_leader_and_isr(broker_id, states)
    if services.transaction_coordinator is not None and \
            any(s.topic == TRANSACTION_STATE_TOPIC_NAME for s in states):
        services.transaction_coordinator.on_leader_and_isr(broker_id, states)


def become_leader_or_follower(replica_manager: ReplicaManager, services: BrokerServices | None, broker_id: int,
                              controller_epoch: int, states: list[LeaderAndIsrPartitionState],
                              leader_endpoints: Mapping[int, Node] | None = None) -> dict[TopicPartition, int]:
    """Apply a LeaderAndIsr; per-partition error codes. Raises StaleControllerEpochError (an older controller)."""
    return replica_manager.become_leader_or_follower(
        broker_id, controller_epoch, states, leader_endpoints,
        on_leadership_change=lambda applied: on_leadership_change(services, broker_id, applied))


def stop_replicas(replica_manager: ReplicaManager, services: BrokerServices | None, broker_id: int,
                  controller_epoch: int, states: list[StopReplicaPartitionState]) -> dict[TopicPartition, int]:
    """Apply a StopReplica; per-partition error codes. Raises StaleControllerEpochError. The coordinators
    resign the partitions of their topics this broker stops hosting."""
    errors = replica_manager.stop_replicas(broker_id, controller_epoch, states)
    if services is None:
        return errors
    group, txn = services.group_coordinator, services.transaction_coordinator
    for s in states:
        epoch = None if s.leader_epoch < 0 else s.leader_epoch
        if s.topic == GROUP_METADATA_TOPIC_NAME and group is not None:
            group.on_resignation(s.partition, epoch)
        elif s.topic == TRANSACTION_STATE_TOPIC_NAME and txn is not None:
            txn.on_resignation(s.partition, epoch)
    return errors
