"""AdminClient: Kafka's admin operations over the wire protocol (works with any Kafka broker).

One class carrying the whole public API; its requests go through one AdminCalls (admin_calls.py:
node routing, metadata refresh, retries). Topics, configs and cluster calls are implemented here;
the partition/replica, consumer group and quota/SCRAM calls delegate to the helper functions of
admin_replicas.py, admin_groups.py and admin_quotas.py (which also define their result types).

Routing follows Java's KafkaAdminClient: topic creation/deletion, partition creation, leader
election and reassignments go to the controller (as named by Metadata; NOT_CONTROLLER refreshes
and retries), BROKER / BROKER_LOGGER config resources go to that broker, offsets and
delete-records go to each partition's leader, everything else to the least loaded broker.
A request for a broker id the metadata snapshot does not name (the snapshot starts with the
bootstrap servers only) refreshes metadata first, as Java's node providers wait for a metadata
update; an id still unknown is retried until the timeout ("Timed out waiting for a node assignment").
Transport failures and retriable errors are retried with backoff until the call's timeout
(default.api.timeout.ms); per-item errors are raised as kafkapy.common.errors classes carrying
the broker's message (or returned in the results with `raise_errors=False`).

Thread-safety: calls may be made from several threads; each is a blocking request/response.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from kafkapy.client import admin_acls as acls
from kafkapy.client import admin_delegation_tokens as tokens
from kafkapy.client import admin_features as features
from kafkapy.client import admin_groups as groups
from kafkapy.client import admin_quotas as quotas
from kafkapy.client import admin_replicas as replicas
from kafkapy.client import admin_transactions as transactions
from kafkapy.client import admin_types as T
from kafkapy.client.admin_calls import AdminCalls, UnknownNodeError, error_or_none
from kafkapy.client.admin_groups import (
    ConsumerGroupDescription,
    ConsumerGroupListing,
    DeleteGroupOffsetsResult,
    MemberDescription,
)
from kafkapy.client.admin_quotas import (
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilterComponent,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
)
from kafkapy.client.admin_types import (
    AlterConfigOp,
    ClusterDescription,
    Config,
    ConfigEntry,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
    ConfigSynonym,
    ConfigType,
    CreateTopicResult,
    DeleteTopicResult,
    ElectionType,
    ListOffsetsResultInfo,
    LogDirDescription,
    NewPartitions,
    NewTopic,
    NodeApiVersions,
    PartitionReassignment,
    ReplicaInfo,
    TopicDescription,
    TopicListing,
    TopicPartitionInfo,
)
from kafkapy.client.config import AdminClientConfig
from kafkapy.client.connection import our_version_range
from kafkapy.client.errors import KafkaTimeoutError, error_from_code
from kafkapy.client.group_offsets import OffsetAndMetadata
from kafkapy.client.metadata import ZERO_UUID, Node
from kafkapy.client.network_client import NetworkClient
from kafkapy.common.acl import AclBinding, AclBindingFilter
from kafkapy.common.errors import ErrorCode, KafkaError, NotControllerError, UnsupportedVersionError
from kafkapy.common.kafka_principal import KafkaPrincipal
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol import messages as M

log = logging.getLogger(__name__)

__all__ = [
    "AdminClient", "KafkaAdminClient", "AlterConfigOp", "ClusterDescription", "Config", "ConfigEntry",
    "ConfigResource", "ConfigResourceType", "ConfigSource", "ConfigSynonym", "ConfigType", "CreateTopicResult",
    "DeleteTopicResult", "ElectionType", "ListOffsetsResultInfo", "LogDirDescription", "NewPartitions",
    "NewTopic", "NodeApiVersions", "PartitionReassignment", "ReplicaInfo", "TopicDescription", "TopicListing",
    "TopicPartitionInfo", "TopicPartition", "Node", "ClientQuotaAlteration", "ClientQuotaEntity",
    "ClientQuotaFilterComponent", "ScramCredentialInfo", "ScramMechanism", "UserScramCredentialDeletion",
    "UserScramCredentialsDescription", "UserScramCredentialUpsertion",
]
OffsetSpec = T.OffsetSpec
AlterConfigOpType = T.AlterConfigOpType


class AdminClient:
    def __init__(self, configs: Mapping[str, Any] | None = None, time: Time = SYSTEM, **overrides: Any) -> None:
        self.config = AdminClientConfig(configs, **overrides)
        if not self.config["client.id"]:
            self.config._values["client.id"] = "adminclient-1"
        self._time = time
        self.default_api_timeout_ms = int(self.config["default.api.timeout.ms"])
        self._calls = AdminCalls(NetworkClient(self.config, time), time, self.default_api_timeout_ms)

    @property
    def client(self) -> NetworkClient:
        return self._calls.client

    @client.setter
    def client(self, client: NetworkClient) -> None:
        self._calls.client = client

    @staticmethod
    def _raise_first(results: Iterable[Any], raise_errors: bool) -> None:
        if raise_errors:
            for r in results:
                if r.error is not None:
                    raise r.error

    # ------------------------------------------------------------------------------------------
    # topics

    def create_topics(
        self,
        new_topics: list[NewTopic],
        validate_only: bool = False,
        timeout_ms: float | None = None,
        raise_errors: bool = True,
    ) -> dict[str, CreateTopicResult]:
        timeout = self._calls.timeout(timeout_ms)

        def build(version: int) -> Any:
            R = M.CreateTopicsRequest
            return R(
                topics=[
                    R.CreatableTopic(
                        name=t.name,
                        num_partitions=-1 if t.replica_assignment else t.num_partitions,
                        replication_factor=-1 if t.replica_assignment else t.replication_factor,
                        assignments=[
                            R.CreatableReplicaAssignment(partition_index=p, broker_ids=list(b))
                            for p, b in sorted((t.replica_assignment or {}).items())
                        ],
                        configs=[R.CreatableTopicConfig(name=k, value=v) for k, v in t.configs.items()],
                    )
                    for t in new_topics
                ],
                timeout_ms=int(timeout),
                validate_only=validate_only,
            )

        def handle(resp: M.CreateTopicsResponse) -> dict[str, CreateTopicResult]:
            out: dict[str, CreateTopicResult] = {}
            for t in resp.topics:
                if t.error_code == ErrorCode.NOT_CONTROLLER:
                    raise NotControllerError()
                configs = [
                    ConfigEntry(c.name, c.value, ConfigSource(c.config_source) if c.config_source in
                                ConfigSource._value2member_map_ else ConfigSource.UNKNOWN, c.is_sensitive,
                                c.read_only)
                    for c in t.configs or []
                ]
                out[t.name] = CreateTopicResult(
                    t.name, None if t.topic_id == ZERO_UUID else t.topic_id, t.num_partitions,
                    t.replication_factor, configs, error_or_none(t.error_code, t.error_message),
                )
            return out

        result = self._calls.call(self._calls.controller, build, 19, timeout, handle, "createTopics")
        self._raise_first(result.values(), raise_errors)
        return result

    def delete_topics(
        self,
        topics: list[str],
        timeout_ms: float | None = None,
        raise_errors: bool = True,
        topic_ids: list[Any] | None = None,
    ) -> dict[str, DeleteTopicResult]:
        """Delete topics by name (or by id with topic_ids, DeleteTopics v6+). Keyed by name (or str(id))."""
        timeout = self._calls.timeout(timeout_ms)

        def build(version: int) -> Any:
            R = M.DeleteTopicsRequest
            if version >= 6:
                states = [R.DeleteTopicState(name=n, topic_id=ZERO_UUID) for n in topics]
                states += [R.DeleteTopicState(name=None, topic_id=i) for i in (topic_ids or [])]
                return R(topics=states, timeout_ms=int(timeout))
            if topic_ids:
                raise UnsupportedVersionError("deleting topics by id needs DeleteTopics v6")
            return R(topic_names=list(topics), timeout_ms=int(timeout))

        def handle(resp: M.DeleteTopicsResponse) -> dict[str, DeleteTopicResult]:
            out: dict[str, DeleteTopicResult] = {}
            for r in resp.responses:
                if r.error_code == ErrorCode.NOT_CONTROLLER:
                    raise NotControllerError()
                tid = r.topic_id
                key = r.name if r.name is not None else str(tid)
                out[key] = DeleteTopicResult(
                    r.name, None if tid == ZERO_UUID else tid, error_or_none(r.error_code, r.error_message),
                )
            return out

        result = self._calls.call(self._calls.controller, build, 20, timeout, handle, "deleteTopics")
        self._raise_first(result.values(), raise_errors)
        return result

    def list_topics(self, include_internal: bool = False, timeout_ms: float | None = None) -> dict[str, TopicListing]:
        deadline = self._time.milliseconds() + self._calls.timeout(timeout_ms)
        cluster = self._calls.metadata(None, deadline)
        return {
            name: TopicListing(name, t.topic_id, t.is_internal)
            for name, t in sorted(cluster.topics.items())
            if include_internal or not t.is_internal
        }

    def describe_topics(
        self, topics: list[str] | None = None, timeout_ms: float | None = None, raise_errors: bool = True
    ) -> dict[str, TopicDescription]:
        """Describe topics via Metadata (None = every topic)."""
        deadline = self._time.milliseconds() + self._calls.timeout(timeout_ms)
        cluster = self._calls.metadata(None if topics is None else list(topics), deadline)
        out: dict[str, TopicDescription] = {}
        for name in topics if topics is not None else sorted(cluster.topics):
            t = cluster.topic(name)
            if t is None:
                err: KafkaError | None = error_from_code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                         f"Topic '{name}' does not exist")
                out[name] = TopicDescription(name, False, [], ZERO_UUID, err)
                continue
            err = error_or_none(t.error_code, f"topic {name}") if t.error_code else None
            if t.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                err = error_from_code(t.error_code, "This server does not host this topic-partition.")
            parts = []
            for p in cluster.partitions_for_topic(name):
                def node(i: int) -> Node:
                    return cluster.node(i) or Node(i, "", -1, None)

                parts.append(TopicPartitionInfo(
                    p.partition, cluster.node(p.leader) if p.leader >= 0 else None,
                    [node(i) for i in p.replicas], [node(i) for i in p.isr], list(p.offline_replicas),
                    p.leader_epoch, list(p.replicas), list(p.isr), p.leader,
                ))
            out[name] = TopicDescription(name, t.is_internal, parts, t.topic_id, err)
        self._raise_first(out.values(), raise_errors)
        return out

    def create_partitions(
        self,
        new_partitions: Mapping[str, NewPartitions | int],
        validate_only: bool = False,
        timeout_ms: float | None = None,
        raise_errors: bool = True,
    ) -> dict[str, KafkaError | None]:
        timeout = self._calls.timeout(timeout_ms)
        items = {k: (v if isinstance(v, NewPartitions) else NewPartitions(int(v))) for k, v in new_partitions.items()}

        def build(version: int) -> Any:
            R = M.CreatePartitionsRequest
            return R(
                topics=[
                    R.CreatePartitionsTopic(
                        name=name, count=np.total_count,
                        assignments=None if np.new_assignments is None else [
                            R.CreatePartitionsAssignment(broker_ids=list(a)) for a in np.new_assignments
                        ],
                    )
                    for name, np in items.items()
                ],
                timeout_ms=int(timeout),
                validate_only=validate_only,
            )

        def handle(resp: M.CreatePartitionsResponse) -> dict[str, KafkaError | None]:
            out = {}
            for r in resp.results:
                if r.error_code == ErrorCode.NOT_CONTROLLER:
                    raise NotControllerError()
                out[r.name] = error_or_none(r.error_code, r.error_message)
            return out

        result = self._calls.call(self._calls.controller, build, 37, timeout, handle, "createPartitions")
        if raise_errors:
            for e in result.values():
                if e is not None:
                    raise e
        return result

    # ------------------------------------------------------------------------------------------
    # configs

    @staticmethod
    def _config_node(resource: ConfigResource) -> int | None:
        if resource.type in (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER) and resource.name:
            return int(resource.name)
        return None

    def _group_by_node(self, resources: Iterable[ConfigResource]) -> dict[int | None, list[ConfigResource]]:
        groups: dict[int | None, list[ConfigResource]] = {}
        for r in resources:
            groups.setdefault(self._config_node(r), []).append(r)
        return groups

    def describe_configs(
        self,
        resources: list[ConfigResource],
        include_synonyms: bool = False,
        include_documentation: bool = False,
        config_names: list[str] | None = None,
        timeout_ms: float | None = None,
        raise_errors: bool = True,
    ) -> dict[ConfigResource, Config]:
        out: dict[ConfigResource, Config] = {}
        for node, group in self._group_by_node(resources).items():
            def build(version: int, group: list[ConfigResource] = group) -> Any:
                R = M.DescribeConfigsRequest
                return R(
                    resources=[
                        R.DescribeConfigsResource(
                            resource_type=int(r.type), resource_name=r.name,
                            configuration_keys=None if config_names is None else list(config_names),
                        )
                        for r in group
                    ],
                    include_synonyms=include_synonyms,
                    include_documentation=include_documentation,
                )

            out.update(self._calls.call(node, build, 32, timeout_ms, self._handle_describe_configs, "describeConfigs"))
        self._raise_first(out.values(), raise_errors)
        return out

    @staticmethod
    def _handle_describe_configs(resp: M.DescribeConfigsResponse) -> dict[ConfigResource, Config]:
        out: dict[ConfigResource, Config] = {}
        for r in resp.results:
            res = ConfigResource(ConfigResourceType(r.resource_type), r.resource_name)
            entries: dict[str, ConfigEntry] = {}
            for c in r.configs:
                source = c.config_source
                if source in (None, -1) or source not in ConfigSource._value2member_map_:
                    source = ConfigSource.DEFAULT_CONFIG if c.is_default else ConfigSource.UNKNOWN
                synonyms = [
                    ConfigSynonym(s.name, s.value, ConfigSource(s.source) if s.source in
                                  ConfigSource._value2member_map_ else ConfigSource.UNKNOWN)
                    for s in c.synonyms
                ]
                ctype = c.config_type
                entries[c.name] = ConfigEntry(
                    c.name, c.value, ConfigSource(source), c.is_sensitive, c.read_only, synonyms,
                    ConfigType(ctype) if ctype in ConfigType._value2member_map_ else ConfigType.UNKNOWN,
                    c.documentation,
                )
            out[res] = Config(res, entries, error_or_none(r.error_code, r.error_message))
        return out

    def alter_configs(
        self,
        configs: Mapping[ConfigResource, Mapping[str, str]],
        validate_only: bool = False,
        timeout_ms: float | None = None,
        raise_errors: bool = True,
    ) -> dict[ConfigResource, KafkaError | None]:
        """Legacy AlterConfigs: replaces the resource's whole set of dynamic configs."""
        out: dict[ConfigResource, KafkaError | None] = {}
        for node, group in self._group_by_node(configs).items():
            def build(version: int, group: list[ConfigResource] = group) -> Any:
                R = M.AlterConfigsRequest
                return R(
                    resources=[
                        R.AlterConfigsResource(
                            resource_type=int(r.type), resource_name=r.name,
                            configs=[R.AlterableConfig(name=k, value=v) for k, v in configs[r].items()],
                        )
                        for r in group
                    ],
                    validate_only=validate_only,
                )

            out.update(self._calls.call(node, build, 33, timeout_ms, self._handle_alter_configs, "alterConfigs"))
        if raise_errors:
            for e in out.values():
                if e is not None:
                    raise e
        return out

    @staticmethod
    def _handle_alter_configs(resp: M.AlterConfigsResponse | M.IncrementalAlterConfigsResponse
                              ) -> dict[ConfigResource, KafkaError | None]:
        return {
            ConfigResource(ConfigResourceType(r.resource_type), r.resource_name): error_or_none(r.error_code, r.error_message)
            for r in resp.responses
        }

    def incremental_alter_configs(
        self,
        configs: Mapping[ConfigResource, Iterable[AlterConfigOp]],
        validate_only: bool = False,
        timeout_ms: float | None = None,
        raise_errors: bool = True,
    ) -> dict[ConfigResource, KafkaError | None]:
        out: dict[ConfigResource, KafkaError | None] = {}
        ops = {r: list(v) for r, v in configs.items()}
        for node, group in self._group_by_node(ops).items():
            def build(version: int, group: list[ConfigResource] = group) -> Any:
                R = M.IncrementalAlterConfigsRequest
                return R(
                    resources=[
                        R.AlterConfigsResource(
                            resource_type=int(r.type), resource_name=r.name,
                            configs=[
                                R.AlterableConfig(name=o.name, config_operation=int(o.op), value=o.value)
                                for o in ops[r]
                            ],
                        )
                        for r in group
                    ],
                    validate_only=validate_only,
                )

            out.update(self._calls.call(node, build, 44, timeout_ms, self._handle_alter_configs, "incrementalAlterConfigs"))
        if raise_errors:
            for e in out.values():
                if e is not None:
                    raise e
        return out

    # ------------------------------------------------------------------------------------------
    # cluster

    def describe_cluster(self, timeout_ms: float | None = None) -> ClusterDescription:
        """DescribeCluster where the broker supports it, otherwise Metadata."""
        timeout = self._calls.timeout(timeout_ms)
        deadline = self._time.milliseconds() + timeout
        node = self.client.least_loaded_node()
        try:
            versions = self.client.api_versions(node, self._calls.remaining(deadline))
        except KafkaError:
            versions = {}
        if 60 in versions:
            def build(version: int) -> Any:
                return M.DescribeClusterRequest(include_cluster_authorized_operations=False, endpoint_type=1)

            def handle(resp: M.DescribeClusterResponse) -> ClusterDescription:
                if resp.error_code:
                    raise error_from_code(resp.error_code, resp.error_message)
                nodes = [Node(b.broker_id, b.host, b.port, b.rack) for b in resp.brokers]
                controller = next((n for n in nodes if n.node_id == resp.controller_id), None)
                return ClusterDescription(resp.cluster_id, controller, nodes)

            return self._calls.call(None, build, 60, timeout, handle, "describeCluster")
        cluster = self._calls.metadata([], deadline)
        nodes = sorted(cluster.brokers.values(), key=lambda n: n.node_id)
        return ClusterDescription(cluster.cluster_id, cluster.controller(), nodes)

    def broker_api_versions(self, timeout_ms: float | None = None) -> dict[Node, NodeApiVersions]:
        """Every broker's ApiVersions (what broker-api-versions prints)."""
        deadline = self._time.milliseconds() + self._calls.timeout(timeout_ms)
        cluster = self._calls.metadata([], deadline)
        ours = {k: our_version_range(k) for k in M.REQUEST_CLASSES}
        out: dict[Node, NodeApiVersions] = {}
        for node in sorted(cluster.brokers.values(), key=lambda n: n.node_id):
            def ask(node_id: int = node.node_id) -> dict[int, tuple[int, int]]:
                return self.client.api_versions(node_id, self._calls.remaining(deadline))

            versions = self.client.with_retries(
                ask,
                self._calls.remaining(deadline), "apiVersions",
            )
            out[node] = NodeApiVersions(node, versions, ours)
        return out

    def api_versions(self, node_id: int | None = None, timeout_ms: float | None = None) -> dict[int, tuple[int, int]]:
        timeout = self._calls.timeout(timeout_ms)
        if node_id is None:
            return self.client.api_versions(self.client.least_loaded_node(), timeout)
        deadline = self._time.milliseconds() + timeout

        def attempt() -> dict[int, tuple[int, int]]:
            self._calls.ensure_node_known(node_id, deadline)
            return self.client.api_versions(node_id, self._calls.remaining(deadline))

        try:
            return self.client.with_retries(attempt, timeout, "apiVersions")
        except UnknownNodeError as e:
            raise KafkaTimeoutError("Timed out waiting for a node assignment. Call: apiVersions") from e

    # ------------------------------------------------------------------------------------------
    # partitions and replicas (admin_replicas.py)

    def list_offsets(
        self,
        specs: Mapping[TopicPartition, int | str],
        isolation_level: str = "read_uncommitted",
        timeout_ms: float | None = None,
        raise_errors: bool = True,
    ) -> dict[TopicPartition, ListOffsetsResultInfo | None | KafkaError]:
        """Offsets per partition for earliest (-2) / latest (-1) / max-timestamp (-3) / a timestamp: a
        ListOffsetsResultInfo, None (no such offset), or with raise_errors=False the partition's KafkaError
        (Java's per-partition ListOffsetsResult futures); raise_errors=True raises the first error."""
        return replicas.list_offsets(self._calls, specs, isolation_level, timeout_ms, raise_errors)

    def delete_records(
        self, offsets: Mapping[TopicPartition, int], timeout_ms: float | None = None, raise_errors: bool = True
    ) -> dict[TopicPartition, int | KafkaError]:
        """Delete records before each offset (-1 = high watermark); returns the new low watermarks (or, with
        raise_errors=False, a partition's KafkaError). Partitions of topics missing from fresh metadata fail
        at once with UnknownTopicOrPartitionError, as Kafka's admin client does."""
        return replicas.delete_records(self._calls, offsets, timeout_ms, raise_errors)

    def describe_log_dirs(
        self, brokers: Iterable[int] | None = None, topics: Mapping[str, list[int]] | None = None,
        timeout_ms: float | None = None,
    ) -> dict[int, dict[str, LogDirDescription]]:
        """Log dirs of each broker (all brokers by default), with replica sizes and lags."""
        return replicas.describe_log_dirs(self._calls, brokers, topics, timeout_ms)

    def alter_replica_log_dirs(self, assignment: Mapping[Any, str], timeout_ms: float | None = None
                               ) -> dict[Any, KafkaError | None]:
        """Move replicas ((topic, partition, broker_id) -> log dir) between a broker's log dirs (AlterReplicaLogDirs);
        the error of each replica (None: the move started, or the dir is remembered for a replica made later)."""
        return replicas.alter_replica_log_dirs(self._calls, assignment, timeout_ms)

    def elect_leaders(
        self,
        election_type: ElectionType = ElectionType.PREFERRED,
        partitions: Iterable[TopicPartition] | None = None,
        timeout_ms: float | None = None,
    ) -> dict[TopicPartition, KafkaError | None]:
        """Elect leaders (None = all partitions); per-partition errors are returned, not raised."""
        return replicas.elect_leaders(self._calls, election_type, partitions, timeout_ms)

    def alter_partition_reassignments(
        self, reassignments: Mapping[TopicPartition, list[int] | None], timeout_ms: float | None = None,
    ) -> dict[TopicPartition, KafkaError | None]:
        """Start (replicas list) or cancel (None) reassignments; per-partition errors are returned."""
        return replicas.alter_partition_reassignments(self._calls, reassignments, timeout_ms)

    def list_partition_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None, timeout_ms: float | None = None,
    ) -> dict[TopicPartition, PartitionReassignment]:
        return replicas.list_partition_reassignments(self._calls, partitions, timeout_ms)

    # ------------------------------------------------------------------------------------------
    # feature flags (admin_features.py)

    def describe_features(self, timeout_ms: float | None = None) -> features.FeatureMetadata:
        """Supported and finalized features with the epoch, from a broker's ApiVersions v3+."""
        return features.describe_features(self._calls, timeout_ms)

    def update_features(self, updates: Mapping[str, features.FeatureUpdate], validate_only: bool = False,
                        timeout_ms: float | None = None) -> dict[str, KafkaError | None]:
        """UpdateFeatures to the controller; the error of each feature (None: done)."""
        return features.update_features(self._calls, updates, validate_only, timeout_ms)

    # ------------------------------------------------------------------------------------------
    # consumer groups (admin_groups.py)

    def find_group_coordinator(self, group_id: str, timeout_ms: float | None = None) -> Node:
        """The broker coordinating `group_id` (FindCoordinator key type 0)."""
        return groups.find_group_coordinator(self._calls, group_id, timeout_ms)

    def list_consumer_groups(self, states: Iterable[str] = (), types: Iterable[str] = (),
                             timeout_ms: float | None = None) -> list[ConsumerGroupListing]:
        """Consumer groups on every broker (in the brokers' order), optionally only those in `states`."""
        return groups.list_consumer_groups(self._calls, states, types, timeout_ms)

    def describe_consumer_groups(self, group_ids: Iterable[str], include_authorized_operations: bool = False,
                                 timeout_ms: float | None = None, raise_errors: bool = True
                                 ) -> dict[str, ConsumerGroupDescription | KafkaError]:
        return groups.describe_consumer_groups(self._calls, group_ids, include_authorized_operations, timeout_ms,
                                               raise_errors)

    def list_consumer_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None = None,
                                    require_stable: bool = False, timeout_ms: float | None = None
                                    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """Committed offsets of `group_id` (None for a listed partition without one)."""
        return groups.list_consumer_group_offsets(self._calls, group_id, partitions, require_stable, timeout_ms)

    def alter_consumer_group_offsets(self, group_id: str, offsets: Mapping[TopicPartition, Any],
                                     timeout_ms: float | None = None, raise_errors: bool = True
                                     ) -> dict[TopicPartition, KafkaError | None]:
        """Commit `offsets` (ints or OffsetAndMetadata) for a group with no active members."""
        return groups.alter_consumer_group_offsets(self._calls, group_id, offsets, timeout_ms, raise_errors)

    def delete_consumer_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition],
                                      timeout_ms: float | None = None) -> DeleteGroupOffsetsResult:
        return groups.delete_consumer_group_offsets(self._calls, group_id, partitions, timeout_ms)

    def remove_members_from_consumer_group(self, group_id: str, members: Iterable[MemberDescription],
                                           timeout_ms: float | None = None) -> dict[str, KafkaError | None]:
        """Remove `members` (from describe_consumer_groups) from the group: LeaveGroup v3+ as an admin."""
        return groups.remove_members_from_consumer_group(self._calls, group_id, members, timeout_ms)

    def delete_consumer_groups(self, group_ids: Iterable[str], timeout_ms: float | None = None
                               ) -> dict[str, KafkaError | None]:
        return groups.delete_consumer_groups(self._calls, group_ids, timeout_ms)

    # ------------------------------------------------------------------------------------------
    # ACLs (admin_acls.py)

    def create_acls(self, bindings: Iterable[AclBinding], timeout_ms: float | None = None
                    ) -> dict[AclBinding, KafkaError | None]:
        """Create each binding; {binding: None or its error}."""
        return acls.create_acls(self._calls, bindings, timeout_ms)

    def describe_acls(self, acl_filter: AclBindingFilter, timeout_ms: float | None = None) -> list[AclBinding]:
        """The bindings matching the filter (SecurityDisabledError without an authorizer)."""
        return acls.describe_acls(self._calls, acl_filter, timeout_ms)

    def delete_acls(self, filters: Iterable[AclBindingFilter], timeout_ms: float | None = None
                    ) -> dict[AclBindingFilter, list[AclBinding] | KafkaError]:
        """Delete the bindings each filter matches; {filter: the deleted bindings or its error}."""
        return acls.delete_acls(self._calls, filters, timeout_ms)

    # ------------------------------------------------------------------------------------------
    # delegation tokens (admin_delegation_tokens.py)

    def create_delegation_token(self, renewers: Iterable[KafkaPrincipal] = (), max_lifetime_ms: int = -1,
                                owner: KafkaPrincipal | None = None, timeout_ms: float | None = None
                                ) -> tokens.DelegationToken:
        """A new token (owner: the caller unless given; max_lifetime_ms -1: the broker's maximum)."""
        return tokens.create_delegation_token(self._calls, renewers, max_lifetime_ms, owner, timeout_ms)

    def renew_delegation_token(self, hmac: bytes, renew_period_ms: int = -1, timeout_ms: float | None = None) -> int:
        """The token's new expiry timestamp."""
        return tokens.renew_delegation_token(self._calls, hmac, renew_period_ms, timeout_ms)

    def expire_delegation_token(self, hmac: bytes, expiry_period_ms: int = -1, timeout_ms: float | None = None
                                ) -> int:
        """The token's new expiry timestamp (a negative period expires it now)."""
        return tokens.expire_delegation_token(self._calls, hmac, expiry_period_ms, timeout_ms)

    def describe_delegation_token(self, owners: Iterable[KafkaPrincipal] | None = None,
                                  timeout_ms: float | None = None) -> list[tokens.DelegationToken]:
        return tokens.describe_delegation_token(self._calls, owners, timeout_ms)

    # ------------------------------------------------------------------------------------------
    # client quotas and SCRAM credentials (admin_quotas.py)

    def describe_client_quotas(
        self, components: Iterable[ClientQuotaFilterComponent], strict: bool = False, timeout_ms: float | None = None,
    ) -> dict[ClientQuotaEntity, dict[str, float]]:
        """Quotas of the entities matching every component (strict: entities with no other entity types),
        in the broker's order; ClientQuotaFilter.contains / containsOnly (strict) in Java."""
        return quotas.describe_client_quotas(self._calls, components, strict, timeout_ms)

    def alter_client_quotas(
        self, alterations: Iterable[ClientQuotaAlteration], validate_only: bool = False,
        timeout_ms: float | None = None, raise_errors: bool = True,
    ) -> dict[ClientQuotaEntity, KafkaError | None]:
        """Apply each alteration; {entity: None or its error} (raise_errors raises the first error)."""
        return quotas.alter_client_quotas(self._calls, alterations, validate_only, timeout_ms, raise_errors)

    def describe_user_scram_credentials(
        self, users: Iterable[str] | None = None, timeout_ms: float | None = None, raise_errors: bool = True,
    ) -> dict[str, UserScramCredentialsDescription | KafkaError]:
        """Credentials of `users` (None or empty: every user that has some); a user without credentials
        gets ResourceNotFoundError (raised unless raise_errors=False)."""
        return quotas.describe_user_scram_credentials(self._calls, users, timeout_ms, raise_errors)

    def alter_user_scram_credentials(
        self, alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion],
        timeout_ms: float | None = None, raise_errors: bool = True,
    ) -> dict[str, KafkaError | None]:
        """Upsert (salted here) or delete SCRAM credentials; {user: None or its error}."""
        return quotas.alter_user_scram_credentials(self._calls, alterations, timeout_ms, raise_errors)

    # ------------------------------------------------------------------------------------------
    # transactions (admin_transactions.py)

    def describe_transactions(self, transactional_ids: Iterable[str], timeout_ms: float | None = None
                              ) -> dict[str, transactions.TransactionDescription | KafkaError]:
        """Each id's state from its transaction coordinator (or the error, e.g. TransactionalIdNotFoundError)."""
        return transactions.describe_transactions(self._calls, transactional_ids, timeout_ms)

    def list_transactions(self, state_filters: Iterable[str] = (), producer_id_filters: Iterable[int] = (),
                          duration_filter_ms: int = -1, timeout_ms: float | None = None
                          ) -> dict[int, list[transactions.TransactionListing]]:
        """Every broker's transactions, by coordinator broker id."""
        return transactions.list_transactions(self._calls, state_filters, producer_id_filters, duration_filter_ms,
                                              timeout_ms)

    def describe_producers(self, partitions: Iterable[TopicPartition], broker_id: int | None = None,
                           timeout_ms: float | None = None
                           ) -> dict[TopicPartition, list[transactions.ProducerState] | KafkaError]:
        """The active producers of each partition, from its leader (or `broker_id`)."""
        return transactions.describe_producers(self._calls, partitions, broker_id, timeout_ms)

    def abort_transaction(self, spec: transactions.AbortTransactionSpec, timeout_ms: float | None = None) -> None:
        """Abort a hanging transaction on one partition (an ABORT marker written by its leader)."""
        transactions.abort_transaction(self._calls, spec, timeout_ms)

    # ------------------------------------------------------------------------------------------

    def close(self, timeout_ms: float | None = None) -> None:
        self.client.close()

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


KafkaAdminClient = AdminClient
