"""Cluster metadata as the client sees it: brokers, controller, topics, partitions, leaders, topic ids.

`Cluster` is an immutable snapshot built from one MetadataResponse (any version 0-13); `Metadata`
holds the current snapshot plus the refresh policy (metadata.max.age.ms, explicit update requests
after NOT_LEADER_OR_FOLLOWER / UNKNOWN_TOPIC_OR_PARTITION / LEADER_NOT_AVAILABLE / disconnects)
and the set of topics the producer/consumer cares about. The request itself is sent by
NetworkClient. Like Java's Metadata it remembers which of those topics the last response called
invalid (INVALID_TOPIC_EXCEPTION) or unauthorized (TOPIC_AUTHORIZATION_FAILED), for the consumer's
poll() to raise once via `maybe_throw_any_exception()`: no retry makes such a topic appear.

Thread-safety: Cluster is immutable; Metadata swaps snapshots under a lock and notifies waiters.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafkapy.common.errors import InvalidTopicExceptionError, TopicAuthorizationFailedError
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafkapy.protocol.messages.metadata import MetadataResponse

ZERO_UUID = uuid.UUID(int=0)
INVALID_TOPIC_EXCEPTION, TOPIC_AUTHORIZATION_FAILED = 17, 29


@dataclass(frozen=True, slots=True)
class Node:
    node_id: int
    host: str
    port: int
    rack: str | None = None

    def __str__(self) -> str:
        # Kafka's Node.toString(), which broker-api-versions prints.
        return f"{self.host}:{self.port} (id: {self.node_id} rack: {self.rack or 'null'})"


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: int  # -1 when there is none
    leader_epoch: int = -1
    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] = ()
    offline_replicas: tuple[int, ...] = ()
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    name: str
    topic_id: uuid.UUID = ZERO_UUID
    is_internal: bool = False
    partitions: dict[int, PartitionInfo] = field(default_factory=dict)
    error_code: int = 0


class Cluster:
    """An immutable view of one MetadataResponse."""

    def __init__(
        self,
        brokers: dict[int, Node] | None = None,
        topics: dict[str, TopicMetadata] | None = None,
        controller_id: int = -1,
        cluster_id: str | None = None,
        unauthorized_topics: frozenset[str] = frozenset(),
        invalid_topics: frozenset[str] = frozenset(),
    ) -> None:
        self.brokers: dict[int, Node] = brokers or {}
        self.topics: dict[str, TopicMetadata] = topics or {}
        self.controller_id = controller_id
        self.cluster_id = cluster_id
        self.unauthorized_topics = unauthorized_topics
        self.invalid_topics = invalid_topics
        self._by_id = {t.topic_id: t.name for t in self.topics.values() if t.topic_id != ZERO_UUID}
        self._available: dict[str, list[int]] = {}  # memo: the snapshot is immutable

    @classmethod
    def from_response(cls, resp: MetadataResponse) -> Cluster:
        brokers = {b.node_id: Node(b.node_id, b.host, b.port, b.rack) for b in resp.brokers}
        topics: dict[str, TopicMetadata] = {}
        unauthorized, invalid = set(), set()
        for t in resp.topics:
            if t.name is None:
                continue
            if t.error_code == TOPIC_AUTHORIZATION_FAILED:
                unauthorized.add(t.name)
            elif t.error_code == INVALID_TOPIC_EXCEPTION:
                invalid.add(t.name)
            parts = {
                p.partition_index: PartitionInfo(
                    t.name,
                    p.partition_index,
                    p.leader_id,
                    p.leader_epoch,
                    tuple(p.replica_nodes),
                    tuple(p.isr_nodes),
                    tuple(p.offline_replicas),
                    p.error_code,
                )
                for p in t.partitions
            }
            topics[t.name] = TopicMetadata(t.name, t.topic_id, t.is_internal, parts, t.error_code)
        return cls(brokers, topics, resp.controller_id, resp.cluster_id, frozenset(unauthorized), frozenset(invalid))

    def merged_with(self, other: Cluster, replace_all_topics: bool) -> Cluster:
        """`other` (from a response for some topics) laid over this snapshot's topics."""
        topics = dict(other.topics) if replace_all_topics else {**self.topics, **other.topics}
        return Cluster(other.brokers, topics, other.controller_id, other.cluster_id, other.unauthorized_topics,
                       other.invalid_topics)

    def node(self, node_id: int) -> Node | None:
        return self.brokers.get(node_id)

    def controller(self) -> Node | None:
        return self.brokers.get(self.controller_id)

    def topic(self, name: str) -> TopicMetadata | None:
        return self.topics.get(name)

    def topic_id(self, name: str) -> uuid.UUID:
        t = self.topics.get(name)
        return t.topic_id if t else ZERO_UUID

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self._by_id.get(topic_id)

    def partitions_for_topic(self, topic: str) -> list[PartitionInfo]:
        t = self.topics.get(topic)
        return [t.partitions[p] for p in sorted(t.partitions)] if t else []

    def partition_count(self, topic: str) -> int | None:
        t = self.topics.get(topic)
        if t is None or t.error_code or not t.partitions:
            return None
        return len(t.partitions)

    def available_partitions(self, topic: str) -> list[int]:
        """Partitions of topic with a live leader (memoised; treat the list as read-only)."""
        avail = self._available.get(topic)
        if avail is None:
            t = self.topics.get(topic)
            if t is None:
                return []
            avail = sorted(p for p, info in t.partitions.items() if info.leader >= 0 and info.leader in self.brokers)
            self._available[topic] = avail
        return avail

    def partition_info(self, tp: TopicPartition) -> PartitionInfo | None:
        t = self.topics.get(tp.topic)
        return t.partitions.get(tp.partition) if t else None

    def leader_for(self, tp: TopicPartition) -> int | None:
        info = self.partition_info(tp)
        if info is None or info.leader < 0:
            return None
        return info.leader

    def leader_node(self, tp: TopicPartition) -> Node | None:
        leader = self.leader_for(tp)
        return None if leader is None else self.brokers.get(leader)


class Metadata:
    """The client's current Cluster plus when and for which topics it must be refreshed."""

    def __init__(self, metadata_max_age_ms: int = 300000, retry_backoff_ms: int = 100, time: Time = SYSTEM):
        self._time = time
        self.metadata_max_age_ms = metadata_max_age_ms
        self.retry_backoff_ms = retry_backoff_ms
        self._cluster = Cluster()
        self._lock = threading.Condition()
        self._need_update = True
        self._last_refresh_ms = -1
        self._last_attempt_ms = -1
        self._version = 0
        self._topics: set[str] = set()
        self.need_all_topics = False
        # tracked topics the latest response for them called invalid / unauthorized (Java's Metadata)
        self._invalid_topics: set[str] = set()
        self._unauthorized_topics: set[str] = set()

    @property
    def cluster(self) -> Cluster:
        return self._cluster

    @property
    def version(self) -> int:
        return self._version

    def add_topics(self, *topics: str) -> None:
        with self._lock:
            new = set(topics) - self._topics
            if new:
                self._topics |= new
                self._need_update = True

    def set_topics(self, topics: set[str]) -> None:
        with self._lock:
            if topics - self._topics:
                self._need_update = True
            self._topics = set(topics)

    @property
    def topics(self) -> set[str]:
        return set(self._topics)

    def request_update(self) -> int:
        """Ask for a refresh (after a leader error or a disconnect); returns the current version."""
        with self._lock:
            self._need_update = True
            return self._version

    def time_to_next_update_ms(self, now_ms: int | None = None) -> int:
        now = self._time.milliseconds() if now_ms is None else now_ms
        if self._need_update:
            expire = 0
        else:
            expire = max(self._last_refresh_ms + self.metadata_max_age_ms - now, 0)
        backoff = max(self._last_attempt_ms + self.retry_backoff_ms - now, 0) if self._last_attempt_ms >= 0 else 0
        return max(expire, backoff)

    def update_requested(self) -> bool:
        return self._need_update

    def record_attempt(self) -> None:
        self._last_attempt_ms = self._time.milliseconds()

    def update(self, response: MetadataResponse, requested_topics: list[str] | None) -> Cluster:
        """Install a new snapshot from a MetadataResponse for `requested_topics` (None = all)."""
        fresh = Cluster.from_response(response)
        with self._lock:
            self._cluster = self._cluster.merged_with(fresh, replace_all_topics=requested_topics is None)
            self._need_update = False
            # A requested topic whose leaders are missing needs another look soon.
            for name in requested_topics or ():
                t = fresh.topics.get(name)
                if t is None or t.error_code in (5, 3) or any(p.leader < 0 for p in t.partitions.values()):
                    self._need_update = True
            for t in fresh.topics.values():
                if t.name in self._topics:
                    for errors, code in ((self._invalid_topics, INVALID_TOPIC_EXCEPTION),
                                         (self._unauthorized_topics, TOPIC_AUTHORIZATION_FAILED)):
                        if t.error_code == code:
                            errors.add(t.name)
                        else:
                            errors.discard(t.name)
            self._last_refresh_ms = self._time.milliseconds()
            self._version += 1
            self._lock.notify_all()
            return self._cluster

    def maybe_throw_any_exception(self) -> None:
        """Raise (once, then forget) TopicAuthorizationFailedError or InvalidTopicExceptionError for
        tracked topics the latest metadata rejected; Java's Metadata.maybeThrowAnyException()."""
        with self._lock:
            unauthorized, invalid = sorted(self._unauthorized_topics), sorted(self._invalid_topics)
            self._unauthorized_topics.clear()
            self._invalid_topics.clear()
        if unauthorized:
            raise TopicAuthorizationFailedError(f"Not authorized to access topics: [{', '.join(unauthorized)}]")
        if invalid:
            raise InvalidTopicExceptionError(f"Invalid topics: [{', '.join(invalid)}]")

    def failed_update(self) -> None:
        with self._lock:
            self._need_update = True
            self._lock.notify_all()
