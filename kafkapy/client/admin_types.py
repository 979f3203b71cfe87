"""The AdminClient's argument and result types (Java's NewTopic, ConfigResource, ConfigEntry, ...).

Plain dataclasses and enums carrying Kafka's names and wire codes (resource types, config
sources, config types, AlterConfigOp types, election types); no I/O. Immutable or owned by the
caller; thread-safe.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field

from kafkapy.client.metadata import Node
from kafkapy.common.config_types import ConfigSource, ConfigType
from kafkapy.common.errors import KafkaError
from kafkapy.common.topic_partition import TopicPartition


class ConfigResourceType(enum.IntEnum):
    UNKNOWN = 0
    TOPIC = 2
    GROUP = 3
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16


class AlterConfigOpType(enum.IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class ElectionType(enum.IntEnum):
    PREFERRED = 0
    UNCLEAN = 1


# ListOffsets specs: Kafka's OffsetSpec as the wire timestamps.
class OffsetSpec:
    EARLIEST = -2
    LATEST = -1
    MAX_TIMESTAMP = -3
    EARLIEST_LOCAL = -4
    LATEST_TIERED = -5

    @staticmethod
    def for_timestamp(ts: int) -> int:
        if ts < 0:
            raise ValueError("timestamp must be >= 0")
        return ts

    _NAMES = {"earliest": -2, "latest": -1, "max-timestamp": -3, "earliest-local": -4, "latest-tiered": -5}

    @classmethod
    def parse(cls, spec: str | int) -> int:
        if isinstance(spec, int):
            return spec
        s = spec.strip().lower()
        if s in cls._NAMES:
            return cls._NAMES[s]
        return int(s)


@dataclass
class NewTopic:
    name: str
    num_partitions: int = -1  # -1: broker default (num.partitions)
    replication_factor: int = -1  # -1: broker default (default.replication.factor)
    replica_assignment: dict[int, list[int]] | None = None
    configs: dict[str, str] = field(default_factory=dict)


@dataclass
class CreateTopicResult:
    name: str
    topic_id: uuid.UUID | None = None
    num_partitions: int = -1
    replication_factor: int = -1
    configs: list[ConfigEntry] = field(default_factory=list)
    error: KafkaError | None = None


@dataclass
class DeleteTopicResult:
    name: str | None
    topic_id: uuid.UUID | None = None
    error: KafkaError | None = None


@dataclass
class NewPartitions:
    total_count: int
    new_assignments: list[list[int]] | None = None


@dataclass(frozen=True)
class TopicListing:
    name: str
    topic_id: uuid.UUID
    is_internal: bool


@dataclass(frozen=True)
class TopicPartitionInfo:
    partition: int
    leader: Node | None
    replicas: list[Node]
    isr: list[Node]
    offline_replicas: list[int] = field(default_factory=list)
    leader_epoch: int = -1
    replica_ids: list[int] = field(default_factory=list)
    isr_ids: list[int] = field(default_factory=list)
    leader_id: int = -1


@dataclass(frozen=True)
class TopicDescription:
    name: str
    internal: bool
    partitions: list[TopicPartitionInfo]
    topic_id: uuid.UUID
    error: KafkaError | None = None


@dataclass(frozen=True)
class ConfigResource:
    type: ConfigResourceType
    name: str


@dataclass(frozen=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str | None
    source: ConfigSource = ConfigSource.UNKNOWN
    is_sensitive: bool = False
    is_read_only: bool = False
    synonyms: list[ConfigSynonym] = field(default_factory=list)
    type: ConfigType = ConfigType.UNKNOWN
    documentation: str | None = None

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG


@dataclass
class Config:
    resource: ConfigResource
    entries: dict[str, ConfigEntry] = field(default_factory=dict)
    error: KafkaError | None = None

    def get(self, name: str) -> ConfigEntry | None:
        return self.entries.get(name)


@dataclass(frozen=True)
class AlterConfigOp:
    name: str
    value: str | None
    op: AlterConfigOpType = AlterConfigOpType.SET


@dataclass(frozen=True)
class ClusterDescription:
    cluster_id: str | None
    controller: Node | None
    nodes: list[Node]


@dataclass(frozen=True)
class ListOffsetsResultInfo:
    offset: int
    timestamp: int
    leader_epoch: int | None


@dataclass(frozen=True)
class ReplicaInfo:
    size: int
    offset_lag: int
    is_future: bool


@dataclass
class LogDirDescription:
    path: str
    error: KafkaError | None
    replicas: dict[TopicPartition, ReplicaInfo] = field(default_factory=dict)
    total_bytes: int | None = None
    usable_bytes: int | None = None


@dataclass(frozen=True)
class PartitionReassignment:
    replicas: list[int]
    adding_replicas: list[int]
    removing_replicas: list[int]


@dataclass(frozen=True)
class NodeApiVersions:
    """One broker's ApiVersions answer plus the versions this client can use with it."""

    node: Node
    versions: dict[int, tuple[int, int]]
    ours: dict[int, tuple[int, int]]

    def usable(self, api_key: int) -> int | None:
        theirs = self.versions.get(api_key)
        mine = self.ours.get(api_key)
        if theirs is None or mine is None:
            return None
        v = min(theirs[1], mine[1])
        return v if v >= max(theirs[0], mine[0]) else None
