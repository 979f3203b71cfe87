"""MetadataStore: what the controller keeps durably, modelled on what Kafka keeps in ZooKeeper.

Cluster id, controller registration and epoch, broker registrations (ephemeral: they vanish when the
broker's session ends or the store is reopened), topics (id + replica assignment), partition states
(leader, leader epoch, ISR, controller epoch; the partition epoch is the version of the stored state),
topic / broker config overrides and topics marked for deletion. The JSON shapes are Kafka's (zk_data.py):
LocalMetadataStore (embedded) and a ZooKeeper store (later) map them onto a file or znodes.
Implementations are thread-safe; the controller thread is the only writer in practice.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafkapy.common.topic_partition import TopicPartition


class MetadataStoreError(Exception):
    """A store-level failure (not a Kafka protocol error; the controller maps these)."""


class NodeExistsError(MetadataStoreError):
    pass


class NoNodeError(MetadataStoreError):
    pass


class BadVersionError(MetadataStoreError):
    """A conditional write lost: the stored version is not the expected one."""


class ControllerMovedError(MetadataStoreError):
    """Kafka's ControllerMovedException: a controller write carried the zkVersion of the /controller_epoch this
    broker wrote when elected, and another controller has bumped it since (this one is a zombie)."""


@dataclass(frozen=True, slots=True)
class TopicReplicaAssignment:
    """One topic as stored under /brokers/topics/<t>."""

    name: str
    topic_id: uuid.UUID | None
    assignment: dict[int, tuple[int, ...]]
    adding_replicas: dict[int, tuple[int, ...]] = field(default_factory=dict)
    removing_replicas: dict[int, tuple[int, ...]] = field(default_factory=dict)
    version: int = 0  # the stored node's version


class MetadataStore(ABC):
    # -- cluster id ---------------------------------------------------------------------------------------

    @abstractmethod
    def get_cluster_id(self) -> str | None: ...

    @abstractmethod
    def get_or_create_cluster_id(self, proposed: str) -> str:
        """Store proposed unless a cluster id exists; return the stored one."""

    # -- controller ---------------------------------------------------------------------------------------

    @abstractmethod
    def get_controller_id(self) -> int | None: ...

    @abstractmethod
    def get_controller_epoch(self) -> int:
        """The last controller epoch (0 when no controller was ever elected)."""

    @abstractmethod
    def try_elect_controller(self, broker_id: int, timestamp_ms: int) -> int | None:
        """Register broker_id as controller and bump the controller epoch atomically.
        Returns the new controller epoch, or None when another broker is controller."""

    @abstractmethod
    def resign_controller(self, broker_id: int) -> None:
        """Drop the controller registration if broker_id holds it."""

    # -- brokers (ephemeral registrations) -----------------------------------------------------------------

    @abstractmethod
    def register_broker(self, broker: Broker, timestamp_ms: int) -> int:
        """Register (or re-register) a broker; returns its broker epoch, which grows with every registration."""

    @abstractmethod
    def unregister_broker(self, broker_id: int) -> None: ...

    @abstractmethod
    def get_brokers(self) -> dict[int, Broker]:
        """Registered (live) brokers by id, each with its broker epoch."""

    @abstractmethod
    def watch_brokers(self, callback: Callable[[], None]) -> None:
        """Call callback (from any thread) whenever the set of registered brokers changes."""

    # -- topics ---------------------------------------------------------------------------------------------

    @abstractmethod
    def create_topic(self, name: str, topic_id: uuid.UUID, assignment: Mapping[int, Iterable[int]],
                     configs: Mapping[str, str]) -> None:
        """Store the topic's config overrides and assignment. NodeExistsError if the topic exists."""

    @abstractmethod
    def get_all_topics(self) -> set[str]: ...

    @abstractmethod
    def get_topic(self, name: str) -> TopicReplicaAssignment | None: ...

    def get_topics(self, names: Iterable[str] | None = None) -> dict[str, TopicReplicaAssignment]:
        wanted = self.get_all_topics() if names is None else names
        out = {}
        for name in wanted:
            topic = self.get_topic(name)
            if topic is not None:
                out[name] = topic
        return out

    @abstractmethod
    def add_partitions(self, name: str, new_assignment: Mapping[int, Iterable[int]]) -> TopicReplicaAssignment:
        """Merge new partitions into the topic's assignment (existing partitions are kept as stored)."""

    @abstractmethod
    def mark_topics_for_deletion(self, names: Iterable[str]) -> None: ...

    @abstractmethod
    def get_topics_marked_for_deletion(self) -> set[str]: ...

    @abstractmethod
    def delete_topic(self, name: str) -> None:
        """Remove the topic, its partition states, its config overrides and its deletion mark."""

    # -- partition states ---------------------------------------------------------------------------------

    @abstractmethod
    def get_partition_states(self, topic: str) -> dict[int, LeaderIsrAndControllerEpoch]:
        """Stored states of one topic's partitions; leader_and_isr.partition_epoch is the stored version."""

    @abstractmethod
    def create_partition_states(self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]
                                ) -> dict[TopicPartition, LeaderAndIsr | MetadataStoreError]:
        """Create each state (partition epoch 0); per-partition NodeExistsError if one is already there."""

    @abstractmethod
    def update_partition_states(self, states: Mapping[TopicPartition, LeaderAndIsr], controller_epoch: int
                                ) -> dict[TopicPartition, LeaderAndIsr | MetadataStoreError]:
        """Conditionally overwrite each state: it must still be at leader_and_isr.partition_epoch.
        Returns, per partition, the written state (with its new partition epoch) or BadVersionError /
        NoNodeError. Partitions are independent: one failure does not stop the others."""

    # -- config overrides -----------------------------------------------------------------------------------

    @abstractmethod
    def get_entity_config(self, entity_type: str, entity_name: str) -> dict[str, str]:
        """Overrides of one entity ('topics' / 'brokers'; broker '<default>' for cluster-wide)."""

    @abstractmethod
    def set_entity_config(self, entity_type: str, entity_name: str, configs: Mapping[str, str]) -> None:
        """Replace the entity's overrides (an empty map clears them)."""

    @abstractmethod
    def entity_names(self, entity_type: str) -> list[str]:
        """Names of the entities of a type that have stored overrides (e.g. 'users')."""

    def get_topic_config(self, topic: str) -> dict[str, str]:
        return self.get_entity_config("topics", topic)

    def set_topic_config(self, topic: str, configs: Mapping[str, str]) -> None:
        self.set_entity_config("topics", topic, configs)

    def get_broker_config(self, broker_id: int | None) -> dict[str, str]:
        """Dynamic broker overrides: per broker, or the cluster-wide '<default>' when broker_id is None."""
        return self.get_entity_config("brokers", "<default>" if broker_id is None else str(broker_id))

    def set_broker_config(self, broker_id: int | None, configs: Mapping[str, str]) -> None:
        self.set_entity_config("brokers", "<default>" if broker_id is None else str(broker_id), configs)

    # -- lifecycle -------------------------------------------------------------------------------------------

    # -- producer id blocks (/latest_producer_id_block) --

    @abstractmethod
    def get_producer_id_block(self) -> tuple[dict[str, Any] | None, int]:
        """The latest producer-id block record and its version (-1 when there is none yet)."""

    @abstractmethod
    def set_producer_id_block(self, data: dict[str, Any], expected_version: int) -> bool:
        """Write the record if its version is still expected_version (-1: create it); False if another
        writer got there first."""

    def close(self) -> None:
        """Release resources; ephemeral registrations made through this store end."""
        return None

    # -- cluster mode (ZooKeeper): other writers share the store, so the controller also watches paths -----
    # The embedded store has a single writer (its own controller) and keeps these no-ops.

    cluster_mode = False
    # The zkVersion of /controller_epoch this broker wrote when elected (cluster mode fences writes with it).
    controller_epoch_zk_version: int | None = None

    def watch_path_children(self, path: str, callback: Callable[[], None]) -> None:
        """Call callback (from any thread, only to enqueue) whenever the children of path change."""
        return None

    def watch_path_node(self, path: str, callback: Callable[[], None]) -> None:
        """Call callback (from any thread, only to enqueue) whenever the node at path changes or goes."""
        return None

    def add_session_listener(self, listener: Callable[[], None]) -> None:
        """Call listener after the store's session expired and a new one began (ephemerals were lost)."""
        return None

    # -- admin paths (written by tools and non-controller brokers, read by the controller) ------------------

    @abstractmethod
    def children(self, path: str) -> list[str]: ...

    @abstractmethod
    def get_json(self, path: str) -> Any:
        """The node's JSON value, None when the node is missing or empty."""

    @abstractmethod
    def delete_children(self, parent: str, names: Iterable[str]) -> None: ...

    @abstractmethod
    def get_isr_change_notifications(self) -> tuple[list[str], set[TopicPartition]]:
        """-> (notification node names, the partitions they name)."""

    @abstractmethod
    def get_partition_reassignment(self) -> dict[TopicPartition, tuple[int, ...]]:
        """/admin/reassign_partitions: the target replicas per partition (empty when there is none)."""

    @abstractmethod
    def set_partition_reassignment(self, assignment: Mapping[TopicPartition, Iterable[int]]) -> None:
        """Write /admin/reassign_partitions (delete it when assignment is empty)."""

    @abstractmethod
    def get_preferred_replica_election(self) -> list[TopicPartition] | None: ...

    @abstractmethod
    def create_preferred_replica_election(self, partitions: Iterable[TopicPartition]) -> None:
        """NodeExistsError while an earlier election is still pending."""

    @abstractmethod
    def delete_preferred_replica_election(self) -> None: ...

    @abstractmethod
    def set_topic_assignment(self, topic: TopicReplicaAssignment) -> TopicReplicaAssignment:
        """Overwrite the topic's assignment (reassignment); guarded by topic.version."""
