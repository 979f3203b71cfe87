"""Controller events (what the event thread processes, one at a time) and the request/result values of the
Controller's public API.

Every event carries a concurrent.futures.Future that the event thread completes; callers (API handlers)
wait on it or chain a callback, and never touch controller state. Immutable inputs; the Future is the only
shared mutable part and is thread-safe.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.common.errors import KafkaError
from kafkapy.common.topic_partition import TopicPartition

NO_NUM_PARTITIONS = -1  # CreateTopics: use num.partitions
NO_REPLICATION_FACTOR = -1  # CreateTopics: use default.replication.factor


@dataclass(frozen=True, slots=True)
class CreatableTopic:
    """One topic of a CreateTopics request (Kafka's CreatableTopic)."""

    name: str
    num_partitions: int = NO_NUM_PARTITIONS
    replication_factor: int = NO_REPLICATION_FACTOR
    assignment: Mapping[int, Sequence[int]] | None = None  # partition -> broker ids; None/empty: computed
    configs: Mapping[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CreateTopicResult:
    """Outcome for one topic; error is None on success (or when validate_only found nothing wrong)."""

    name: str
    error: KafkaError | None
    topic_id: uuid.UUID | None = None  # None for validate_only and on error
    num_partitions: int = -1
    replication_factor: int = -1
    assignment: dict[int, list[int]] = field(default_factory=dict)
    configs: dict[str, str] = field(default_factory=dict)  # the topic's overrides


@dataclass(frozen=True, slots=True)
class AlterPartitionItem:
    """One partition of an AlterPartition request: the leader's proposed state."""

    topic_partition: TopicPartition
    leader_and_isr: LeaderAndIsr  # leader = the requesting broker; partition_epoch = the one it knows


class ElectionType:
    PREFERRED = 0
    UNCLEAN = 1


@dataclass(eq=False)
class ControllerEvent:
    future: Future[Any] = field(default_factory=Future, init=False)


@dataclass(eq=False)
class Startup(ControllerEvent):
    pass


@dataclass(eq=False)
class BrokerChange(ControllerEvent):
    pass


@dataclass(eq=False)
class TopicCreation(ControllerEvent):
    topics: list[CreatableTopic] = field(default_factory=list)
    validate_only: bool = False


@dataclass(eq=False)
class TopicDeletion(ControllerEvent):
    names: list[str] = field(default_factory=list)


@dataclass(eq=False)
class PartitionCreation(ControllerEvent):
    topic: str = ""
    new_total: int = 0
    assignment: list[list[int]] | None = None  # replicas of each new partition, in partition order
    validate_only: bool = False


@dataclass(eq=False)
class ConfigChange(ControllerEvent):
    entity_type: str = "topics"  # 'topics' or 'brokers'
    entity_name: str = ""  # topic name, broker id, or '<default>'
    configs: dict[str, str] = field(default_factory=dict)
    validate_only: bool = False


@dataclass(eq=False)
class IsrChange(ControllerEvent):
    """AlterPartition from a partition leader."""

    broker_id: int = -1
    broker_epoch: int = -1
    items: list[AlterPartitionItem] = field(default_factory=list)


@dataclass(eq=False)
class ControlledShutdown(ControllerEvent):
    broker_id: int = -1
    broker_epoch: int = -1


@dataclass(eq=False)
class ElectLeaders(ControllerEvent):
    partitions: list[TopicPartition] | None = None  # None: every partition
    election_type: int = ElectionType.PREFERRED


@dataclass(eq=False)
class Shutdown(ControllerEvent):
    pass


@dataclass(eq=False)
class LeaderAndIsrResponseReceived(ControllerEvent):
    """A broker's per-partition answer to a LeaderAndIsr request (KAFKA_STORAGE_ERROR: replica offline)."""

    broker_id: int = -1
    errors: dict[TopicPartition, int] = field(default_factory=dict)


# -- cluster mode: events enqueued by ZooKeeper watches (nobody waits on their futures) -----------------------

@dataclass(eq=False)
class WatchEvent(ControllerEvent):
    """Processed only while this broker is the active controller (ignored otherwise)."""


@dataclass(eq=False)
class ControllerChange(ControllerEvent):
    """/controller changed or went: resign if another broker holds it, run for election if nobody does."""


@dataclass(eq=False)
class SessionExpired(ControllerEvent):
    """The store's session expired (and a new one began): resign, then run for election again."""


@dataclass(eq=False)
class TopicChange(WatchEvent):
    """/brokers/topics children changed (topics created by tools or other brokers)."""


@dataclass(eq=False)
class PartitionModifications(WatchEvent):
    """/brokers/topics/<t> changed (partitions added by tools or other brokers)."""

    topic: str = ""


@dataclass(eq=False)
class TopicDeletionFlag(WatchEvent):
    """/admin/delete_topics children changed."""


@dataclass(eq=False)
class IsrChangeNotification(WatchEvent):
    """/isr_change_notification children changed (leaders wrote ISR changes to ZooKeeper themselves)."""


@dataclass(eq=False)
class LogDirEventNotification(WatchEvent):
    """/log_dir_event_notification children changed (a broker's log dir went offline, KIP-112)."""


@dataclass(eq=False)
class PreferredReplicaElection(WatchEvent):
    """/admin/preferred_replica_election was written."""


@dataclass(eq=False)
class PartitionReassignment(WatchEvent):
    """/admin/reassign_partitions was written."""


@dataclass(eq=False)
class AutoPreferredReplicaLeaderElection(WatchEvent):
    """The leader.imbalance.check.interval.seconds timer fired."""


@dataclass(eq=False)
class ConfigNotification(WatchEvent):
    """/config/changes named an entity whose overrides someone (maybe another broker) rewrote."""

    entity_type: str = "topics"
    entity_name: str = ""


@dataclass(eq=False)
class AlterReassignments(ControllerEvent):
    """AlterPartitionReassignments: (partition, target replica list or None to cancel) in request order."""

    reassignments: list[tuple[TopicPartition, tuple[int, ...] | None]] = field(default_factory=list)
