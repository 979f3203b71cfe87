"""AdminApi: the admin operations a tool may ask of either admin path, as one typing.Protocol.

Two classes implement it: kafkapy.client.admin.AdminClient (Kafka's wire protocol, any broker) and
kafkapy.tools.zk_admin.ZkAdmin (Kafka 2.x's `--zookeeper` path, reading and writing Kafka's znodes). A tool
function that serves both paths (topics, reassign-partitions) takes an AdminApi; one that needs an API only
the wire path has (ACLs, groups, transactions...) takes the AdminClient itself. ReplicaLogDirsApi is an
AdminApi that also places replicas across log directories (reassign-partitions' log-dir moves and progress),
which only AdminClient is: runtime-checkable, so a tool can ask an AdminApi whether it is one.

The protocol names only what both answer. Parameters a caller passes by keyword are keyword-only here,
because the two classes order their optional parameters differently; each class may take more optional
parameters (timeouts) than the protocol names. Results are read-only Mappings, so a class may answer with
a narrower error type (KafkaError) than the protocol's Exception.

mypy checks both implementations against the protocol (the TYPE_CHECKING block at the end of
kafkapy/tools/zk_admin.py, the one module that sees both classes). No byte format; no state, so no thread-safety concerns of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kafkapy.client.admin_types import (
        AlterConfigOp,
        ClusterDescription,
        Config,
        ConfigResource,
        CreateTopicResult,
        DeleteTopicResult,
        LogDirDescription,
        NewPartitions,
        NewTopic,
        PartitionReassignment,
        TopicDescription,
        TopicListing,
    )
    from kafkapy.common.topic_partition import TopicPartition


class AdminApi(Protocol):
    """Topics, topic and broker configs, the cluster and partition reassignments."""

    def list_topics(self, include_internal: bool = ...) -> Mapping[str, TopicListing]: ...

    def describe_topics(self, topics: list[str], *, raise_errors: bool = ...) -> Mapping[str, TopicDescription]:
        """Each topic's description; with raise_errors=False a missing topic's carries its error."""
        ...

    def describe_configs(self, resources: list[ConfigResource]) -> Mapping[ConfigResource, Config]: ...

    def describe_cluster(self) -> ClusterDescription: ...

    def create_topics(self, new_topics: list[NewTopic]) -> Mapping[str, CreateTopicResult]:
        """Create each topic; raises the first topic's error (TopicAlreadyExistsError...)."""
        ...

    def create_partitions(self, new_partitions: Mapping[str, NewPartitions]) -> Mapping[str, Exception | None]: ...

    def delete_topics(self, topics: list[str]) -> Mapping[str, DeleteTopicResult]: ...

    def incremental_alter_configs(self, configs: Mapping[ConfigResource, Iterable[AlterConfigOp]]
                                  ) -> Mapping[ConfigResource, Exception | None]: ...

    def list_partition_reassignments(self, partitions: Iterable[TopicPartition] | None = ...
                                     ) -> Mapping[TopicPartition, PartitionReassignment]: ...

    def alter_partition_reassignments(self, reassignments: Mapping[TopicPartition, list[int] | None]
                                      ) -> Mapping[TopicPartition, Exception | None]:
        """Start (a replica list) or cancel (None) each partition's reassignment; per-partition errors."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class ReplicaLogDirsApi(AdminApi, Protocol):
    """An AdminApi with replica placement across a broker's log directories (DescribeLogDirs /
    AlterReplicaLogDirs)."""

    def describe_log_dirs(self, brokers: Iterable[int] | None = ..., topics: Mapping[str, list[int]] | None = ...
                          ) -> Mapping[int, Mapping[str, LogDirDescription]]: ...

    def alter_replica_log_dirs(self, assignment: Mapping[Any, str]) -> Mapping[Any, Exception | None]: ...
