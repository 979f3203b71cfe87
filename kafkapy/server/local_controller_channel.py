"""LocalControllerChannel: the embedded broker's ControllerChannel. Its controller's LeaderAndIsr, UpdateMetadata
and StopReplica decisions reach this broker in-process, through the same broker-side path a request from a
ZooKeeper-mode controller takes (server/controller_decisions.py: the ReplicaManager, then Kafka's
onLeadershipChange for both coordinators), and each LeaderAndIsr answer goes back to the controller as the
network channel's response would.

UpdateMetadata: the controller's request sender has already applied the decision to this broker's
MetadataCache (it does so in both modes before sending), so there is nothing more to deliver here.
No byte format (decisions stay objects). Thread-safety: called on the controller's event thread only; it
runs the decision synchronously there (nothing crosses a network, nothing is queued).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import (
    LeaderAndIsrPartitionState,
    StopReplicaPartitionState,
    UpdateMetadataPartitionState,
)
from kafkapy.common.errors import ErrorCode, StaleControllerEpochError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_channel import ControllerChannel
from kafkapy.server.controller_decisions import become_leader_or_follower, stop_replicas

if TYPE_CHECKING:
    from kafkapy.server.broker_services import BrokerServices
    from kafkapy.server.replica_manager import ReplicaManager

log = logging.getLogger("kafka.controller.ControllerChannelManager")


class LocalControllerChannel(ControllerChannel):
    def __init__(self, broker_id: int, replica_manager: ReplicaManager,
                 services: Callable[[], BrokerServices | None]) -> None:
        """services: the broker's BrokerServices once built (None during start-up: the coordinators do not
        exist yet and read the leadership when they start)."""
        self.broker_id = broker_id
        self.replica_manager = replica_manager
        self.services = services

    def set_live_brokers(self, brokers: Mapping[int, Broker]) -> None:
        return None

    def send_leader_and_isr(self, broker_id: int, controller_id: int, controller_epoch: int,
                            states: Sequence[LeaderAndIsrPartitionState], live_leaders: Sequence[Broker]) -> None:
        if broker_id != self.broker_id:
            return
        try:
            # No live leaders passed: in-process, this broker's MetadataCache already knows every address.
            errors = become_leader_or_follower(self.replica_manager, self.services(), broker_id, controller_epoch,
                                               list(states))
        except StaleControllerEpochError as e:
            log.info("Ignoring LeaderAndIsr from controller %d: %s", controller_id, e)
            errors = {TopicPartition(s.topic, s.partition): ErrorCode.STALE_CONTROLLER_EPOCH for s in states}
        except Exception:  # the broker failing to apply a decision must not stop the controller
            log.exception("Could not apply LeaderAndIsr from controller %d", controller_id)
            return
        if self.on_leader_and_isr_response is not None:
            self.on_leader_and_isr_response(broker_id, errors)

    def send_update_metadata(self, broker_ids: Sequence[int], controller_id: int, controller_epoch: int,
                             live_brokers: Sequence[Broker], states: Sequence[UpdateMetadataPartitionState],
                             topic_ids: Mapping[str, uuid.UUID]) -> None:
        return None

    def send_stop_replica(self, broker_id: int, controller_id: int, controller_epoch: int,
                          states: Sequence[StopReplicaPartitionState]) -> None:
        if broker_id != self.broker_id:
            return
        try:
            stop_replicas(self.replica_manager, self.services(), broker_id, controller_epoch, list(states))
        except StaleControllerEpochError as e:
            log.info("Ignoring StopReplica from controller %d: %s", controller_id, e)
        except Exception:  # as above: the controller carries on
            log.exception("Could not apply StopReplica from controller %d", controller_id)

    def reset(self) -> None:
        return None
