"""MetadataCache: every broker's view of the cluster (alive brokers, controller, topics, partition states).

The controller feeds it with `update_metadata(...)` (Kafka's UpdateMetadata); API handlers read it
(Metadata, FindCoordinator, DescribeCluster, produce/fetch topic id lookups).
Thread-safety: the whole state is one immutable MetadataSnapshot; an update builds a new snapshot and
swaps the reference under a lock, readers take the current reference without locking and never see a
half-applied update. Use `snapshot()` when several reads must agree with each other. Deleted-partition
listeners run on the updating thread, after the swap, outside the lock.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from kafkapy.cluster.broker import Broker, Node
from kafkapy.cluster.leader_and_isr import LEADER_DURING_DELETE, UpdateMetadataPartitionState
from kafkapy.common.errors import ErrorCode
from kafkapy.common.internal_topics import is_internal_topic
from kafkapy.common.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class PartitionState:
    """A partition as the cache holds it."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    partition_epoch: int = 0
    controller_epoch: int = 0


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """One partition of a Metadata answer; broker ids only (the handler adds the Brokers array)."""

    error_code: int
    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int]


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    error_code: int
    name: str
    topic_id: uuid.UUID | None
    is_internal: bool
    partitions: list[PartitionMetadata]


@dataclass(frozen=True, slots=True)
class MetadataSnapshot:
    cluster_id: str | None = None
    controller_id: int | None = None
    controller_epoch: int = -1
    alive_brokers: Mapping[int, Broker] = field(default_factory=dict)
    partition_states: Mapping[str, Mapping[int, PartitionState]] = field(default_factory=dict)
    topic_ids: Mapping[str, uuid.UUID] = field(default_factory=dict)
    topic_names: Mapping[uuid.UUID, str] = field(default_factory=dict)


class MetadataCache:
    def __init__(self, broker_id: int, cluster_id: str | None = None) -> None:
        self.broker_id = broker_id
        self._lock = threading.Lock()
        self._snapshot = MetadataSnapshot(cluster_id=cluster_id)
        self._deleted_listeners: list[Callable[[list[TopicPartition]], None]] = []

    def add_deleted_partitions_listener(self, listener: Callable[[list[TopicPartition]], None]) -> None:
        """`listener(partitions)` after an update deletes partitions (Kafka's KafkaApis hands the deleted
        partitions of an UpdateMetadata to GroupCoordinator.handleDeletedPartitions)."""
        self._deleted_listeners.append(listener)

    # -- reads -----------------------------------------------------------------------------------------

    def snapshot(self) -> MetadataSnapshot:
        return self._snapshot

    def get_cluster_id(self) -> str | None:
        return self._snapshot.cluster_id

    def get_controller_id(self) -> int | None:
        return self._snapshot.controller_id

    def get_alive_brokers(self) -> list[Broker]:
        return sorted(self._snapshot.alive_brokers.values(), key=lambda b: b.id)

    def get_alive_broker(self, broker_id: int) -> Broker | None:
        return self._snapshot.alive_brokers.get(broker_id)

    def has_alive_broker(self, broker_id: int) -> bool:
        return broker_id in self._snapshot.alive_brokers

    def get_alive_broker_node(self, broker_id: int, listener_name: str | None = None) -> Node | None:
        broker = self._snapshot.alive_brokers.get(broker_id)
        return broker.node(listener_name) if broker is not None else None

    def get_alive_broker_nodes(self, listener_name: str | None = None) -> list[Node]:
        """Alive brokers that have the listener, sorted by id (the Metadata response `Brokers` array)."""
        nodes = (b.node(listener_name) for b in self.get_alive_brokers())
        return [n for n in nodes if n is not None]

    def get_all_topics(self) -> set[str]:
        return set(self._snapshot.partition_states)

    def contains_topic(self, topic: str) -> bool:
        return topic in self._snapshot.partition_states

    def contains(self, tp: TopicPartition) -> bool:
        parts = self._snapshot.partition_states.get(tp.topic)
        return parts is not None and tp.partition in parts

    def get_topic_id(self, topic: str) -> uuid.UUID | None:
        return self._snapshot.topic_ids.get(topic)

    def get_topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self._snapshot.topic_names.get(topic_id)

    def topic_names_to_ids(self) -> dict[str, uuid.UUID]:
        return dict(self._snapshot.topic_ids)

    def topic_ids_to_names(self) -> dict[uuid.UUID, str]:
        return dict(self._snapshot.topic_names)

    def num_partitions(self, topic: str) -> int | None:
        parts = self._snapshot.partition_states.get(topic)
        return len(parts) if parts is not None else None

    def get_partitions(self, topic: str) -> dict[int, PartitionState] | None:
        parts = self._snapshot.partition_states.get(topic)
        return dict(parts) if parts is not None else None

    def get_partition_state(self, tp: TopicPartition) -> PartitionState | None:
        parts = self._snapshot.partition_states.get(tp.topic)
        return parts.get(tp.partition) if parts is not None else None

    def get_partition_leader_endpoint(self, tp: TopicPartition, listener_name: str | None = None) -> Node | None:
        snap = self._snapshot
        parts = snap.partition_states.get(tp.topic)
        state = parts.get(tp.partition) if parts is not None else None
        if state is None:
            return None
        broker = snap.alive_brokers.get(state.leader)
        return broker.node(listener_name) if broker is not None else None

    def get_topic_metadata(self, topics: Iterable[str] | None, listener_name: str | None = None,
                           error_unavailable_endpoints: bool = False,
                           error_unavailable_listeners: bool = False) -> list[TopicMetadata]:
        """Metadata for the named topics that exist (all topics when topics is None), in request order.

        Missing topics are left out: the handler decides between auto-creation and UNKNOWN_TOPIC_OR_PARTITION.
        error_unavailable_endpoints (Metadata v0) drops replicas without an alive endpoint;
        error_unavailable_listeners reports LISTENER_NOT_FOUND when the leader lacks the listener.
        """
        snap = self._snapshot
        names = sorted(snap.partition_states) if topics is None else list(dict.fromkeys(topics))
        out: list[TopicMetadata] = []
        for name in names:
            parts = snap.partition_states.get(name)
            if parts is None:
                continue
            partitions = [self._partition_metadata(snap, parts[p], listener_name, error_unavailable_endpoints,
                                                   error_unavailable_listeners) for p in sorted(parts)]
            out.append(TopicMetadata(ErrorCode.NONE, name, snap.topic_ids.get(name), is_internal_topic(name),
                                     partitions))
        return out

    @staticmethod
    def _partition_metadata(snap: MetadataSnapshot, state: PartitionState, listener_name: str | None,
                            error_unavailable_endpoints: bool, error_unavailable_listeners: bool) -> PartitionMetadata:
        def has_endpoint(broker_id: int) -> bool:
            broker = snap.alive_brokers.get(broker_id)
            return broker is not None and broker.endpoint(listener_name) is not None

        replicas = list(state.replicas)
        isr = list(state.isr)
        if error_unavailable_endpoints:
            replicas = [r for r in replicas if has_endpoint(r)]
            isr = [r for r in isr if has_endpoint(r)]
        offline = list(state.offline_replicas)
        if not has_endpoint(state.leader):
            if state.leader in snap.alive_brokers and error_unavailable_listeners:
                error = ErrorCode.LISTENER_NOT_FOUND
            else:
                error = ErrorCode.LEADER_NOT_AVAILABLE
            return PartitionMetadata(error, state.partition, -1, state.leader_epoch, replicas, isr, offline)
        if len(replicas) < len(state.replicas) or len(isr) < len(state.isr):
            error = ErrorCode.REPLICA_NOT_AVAILABLE
        else:
            error = ErrorCode.NONE
        return PartitionMetadata(error, state.partition, state.leader, state.leader_epoch, replicas, isr, offline)

    # -- writes (the controller, or later the UpdateMetadata handler) -------------------------------------

    def set_cluster_id(self, cluster_id: str) -> None:
        with self._lock:
            old = self._snapshot
            self._snapshot = MetadataSnapshot(cluster_id, old.controller_id, old.controller_epoch,
                                              old.alive_brokers, old.partition_states, old.topic_ids,
                                              old.topic_names)

    def update_metadata(self, controller_id: int | None, controller_epoch: int,
                        alive_brokers: Iterable[Broker] | None = None,
                        partition_states: Iterable[UpdateMetadataPartitionState] = (),
                        topic_ids: Mapping[str, uuid.UUID] | None = None) -> list[TopicPartition]:
        """Apply one UpdateMetadata; returns the partitions it deleted (leader == LEADER_DURING_DELETE).

        alive_brokers None keeps the current broker list; topic_ids adds/overrides ids of the named topics.
        A topic whose last partition is deleted disappears with its id.
        """
        with self._lock:
            old = self._snapshot
            brokers = old.alive_brokers if alive_brokers is None else {b.id: b for b in alive_brokers}
            states: dict[str, Mapping[int, PartitionState]] = dict(old.partition_states)
            ids = dict(old.topic_ids)
            if topic_ids:
                ids.update(topic_ids)
            changed: dict[str, dict[int, PartitionState]] = {}
            deleted: list[TopicPartition] = []
            for ps in partition_states:
                parts = changed.get(ps.topic)
                if parts is None:
                    parts = changed[ps.topic] = dict(states.get(ps.topic, {}))
                if ps.leader == LEADER_DURING_DELETE:
                    if parts.pop(ps.partition, None) is not None:
                        deleted.append(TopicPartition(ps.topic, ps.partition))
                    continue
                parts[ps.partition] = PartitionState(ps.topic, ps.partition, ps.leader, ps.leader_epoch,
                                                     tuple(ps.replicas), tuple(ps.isr),
                                                     tuple(ps.offline_replicas), ps.partition_epoch,
                                                     ps.controller_epoch)
            for topic, parts in changed.items():
                if parts:
                    states[topic] = parts
                else:
                    states.pop(topic, None)
                    ids.pop(topic, None)
            names = {tid: name for name, tid in ids.items() if name in states}
            ids = {name: tid for name, tid in ids.items() if name in states}
            self._snapshot = MetadataSnapshot(old.cluster_id, controller_id, controller_epoch, brokers,
                                              states, ids, names)
        if deleted:
            for listener in self._deleted_listeners:
                listener(deleted)
        return deleted
