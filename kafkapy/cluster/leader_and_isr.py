"""Leadership facts the controller decides and brokers apply: LeaderAndIsr and the per-partition states
carried by LeaderAndIsr / UpdateMetadata / StopReplica (as Python values, not protocol messages).

The field names follow LeaderAndIsrRequest's `LeaderAndIsrPartitionState` and StopReplicaRequest's
`StopReplicaPartitionState`, so the inter-broker handlers (later) map them one to one.
Immutable (frozen dataclasses): safe to share between threads.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from enum import IntEnum

from kafkapy.common.errors import InvalidRequestError

NO_LEADER = -1
LEADER_DURING_DELETE = -2  # UpdateMetadata marks partitions of a topic being deleted with this leader
NO_EPOCH = -1
INITIAL_LEADER_EPOCH = 0
INITIAL_PARTITION_EPOCH = 0


class LeaderRecoveryState(IntEnum):
    RECOVERED = 0
    RECOVERING = 1  # set by an unclean election while the new leader recovers (KIP-704)

    @classmethod
    def of(cls, value: int) -> LeaderRecoveryState:
        """Kafka's LeaderRecoveryState.of: a value off the wire that names no state is a bad request."""
        try:
            return cls(value)
        except ValueError:
            raise InvalidRequestError(f"unknown leader recovery state {value}") from None


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """Kafka's LeaderAndIsr: the leadership of one partition; partition_epoch versions the stored state."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED
    partition_epoch: int = INITIAL_PARTITION_EPOCH

    def new_leader(self, leader: int) -> LeaderAndIsr:
        return replace(self, leader=leader, leader_epoch=self.leader_epoch + 1)

    def new_leader_and_isr(self, leader: int, isr: tuple[int, ...] | list[int]) -> LeaderAndIsr:
        return replace(self, leader=leader, leader_epoch=self.leader_epoch + 1, isr=tuple(isr))

    def new_isr(self, isr: tuple[int, ...] | list[int]) -> LeaderAndIsr:
        # An ISR-only change keeps the leader epoch (Kafka bumps only the partition epoch).
        return replace(self, isr=tuple(isr))

    def with_partition_epoch(self, partition_epoch: int) -> LeaderAndIsr:
        return replace(self, partition_epoch=partition_epoch)

    def equals_allow_stale_partition_epoch(self, other: LeaderAndIsr) -> bool:
        return (self.leader == other.leader and self.leader_epoch == other.leader_epoch
                and tuple(self.isr) == tuple(other.isr)
                and self.leader_recovery_state == other.leader_recovery_state
                and self.partition_epoch <= other.partition_epoch)


@dataclass(frozen=True, slots=True)
class LeaderIsrAndControllerEpoch:
    """A stored partition state: the leadership plus the epoch of the controller that wrote it."""

    leader_and_isr: LeaderAndIsr
    controller_epoch: int


@dataclass(frozen=True, slots=True)
class LeaderAndIsrPartitionState:
    """One partition of a LeaderAndIsr decision for one broker (LeaderAndIsrRequest.PartitionState)."""

    topic: str
    partition: int
    topic_id: uuid.UUID
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED

    @property
    def leader_and_isr(self) -> LeaderAndIsr:
        return LeaderAndIsr(self.leader, self.leader_epoch, self.isr, self.leader_recovery_state,
                            self.partition_epoch)


@dataclass(frozen=True, slots=True)
class UpdateMetadataPartitionState:
    """One partition of an UpdateMetadata (what every broker's MetadataCache holds)."""

    topic: str
    partition: int
    controller_epoch: int
    leader: int  # LEADER_DURING_DELETE (-2) removes the partition from the cache
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class StopReplicaPartitionState:
    """One partition a broker must stop hosting (and delete when delete_partition)."""

    topic: str
    partition: int
    topic_id: uuid.UUID | None
    leader_epoch: int
    delete_partition: bool
