"""The ZooKeeper-era admin path of Kafka 2.x's tools (`topics --zookeeper ...`): the subset of the
AdminClient interface kafkapy.tools.topics uses, answered by reading and writing Kafka's znodes directly
as Kafka 2.x's AdminZkClient did, so the same describe/list/filter logic serves both paths.

Znodes (Kafka's layout and JSON):
  /brokers/ids/<id>                          broker registration (read: live brokers and racks)
  /brokers/topics/<t>                        {"version":3,"partitions":{"0":[1,2]},"topic_id":"<b64>",
                                              "adding_replicas":{},"removing_replicas":{}}
  /brokers/topics/<t>/partitions/<p>/state   {"leader":1,"isr":[1,2],...} (read: Leader / Isr)
  /config/topics/<t>                         {"version":1,"config":{...}} (written before the topic)
  /admin/delete_topics/<t>                   a deletion request for the controller
  /admin/reassign_partitions                 {"version":1,"partitions":[{"topic","partition","replicas"}]}
  /config/<topics|brokers>/<name>            throttle configs, through kafkapy.tools.zk_configs
Placement is Kafka's AdminUtils algorithm (kafkapy.common.replica_assignment).
ZkAdmin implements kafkapy.client.admin_api.AdminApi (checked by mypy at the end of this module).
Thread-safety: one ZkAdmin per thread.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kafkapy.client.admin_types import (
    AlterConfigOp,
    ClusterDescription,
    Config,
    ConfigEntry,
    ConfigResource,
    CreateTopicResult,
    DeleteTopicResult,
    NewPartitions,
    NewTopic,
    PartitionReassignment,
    TopicDescription,
    TopicListing,
    TopicPartitionInfo,
)
from kafkapy.client.metadata import Node
from kafkapy.common.config_types import ConfigSource
from kafkapy.common.errors import (
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.internal_topics import is_internal_topic
from kafkapy.common.replica_assignment import (
    BrokerMetadata,
    RackAwareMode,
    apply_rack_aware_mode,
    assign_replicas_to_brokers,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools.zk_shell_client import ZkShellClient, ZkShellError
from kafkapy.zk import zk_data
from kafkapy.zk.zk_data import ZERO_UUID, decode_json, encode_json

DEFAULT_PARTITIONS = 1  # Kafka 2.x TopicCommand required --partitions with --zookeeper; num.partitions default
DEFAULT_REPLICATION_FACTOR = 1


class ZkAdmin:
    """The AdminApi over ZooKeeper (Kafka 2.x's AdminZkClient); errors are raised, never returned."""

    def __init__(self, connect: str) -> None:
        self.zk = ZkShellClient(connect)

    def close(self) -> None:
        self.zk.close()

    # --- reads ---------------------------------------------------------------------------------------

    def _children(self, path: str) -> list[str]:
        try:
            return self.zk.children(path)
        except ZkShellError:
            return []

    def _get_json(self, path: str) -> Any:
        try:
            return decode_json(self.zk.get(path)[0])
        except ZkShellError:
            return None

    def _brokers(self) -> list[BrokerMetadata]:
        out = []
        for child in self._children(zk_data.BROKER_IDS_PATH):
            data = self._get_json(zk_data.broker_path(int(child))) or {}
            out.append(BrokerMetadata(int(child), data.get("rack")))
        return out

    def _assignment(self, topic: str) -> tuple[dict[str, Any], dict[int, list[int]]]:
        data = self._get_json(zk_data.topic_path(topic))
        if data is None:
            raise UnknownTopicOrPartitionError(f"Topic '{topic}' does not exist")
        return data, {int(p): list(r) for p, r in data.get("partitions", {}).items()}

    def list_topics(self, include_internal: bool = True) -> dict[str, TopicListing]:
        out = {}
        for name in self._children(zk_data.TOPICS_PATH):
            if not include_internal and is_internal_topic(name):
                continue
            topic_id = zk_data.decode_topic(self._get_json(zk_data.topic_path(name)) or {})[0] or ZERO_UUID
            out[name] = TopicListing(name, topic_id, is_internal_topic(name))
        return out

    def describe_topics(self, topics: list[str], raise_errors: bool = True) -> dict[str, TopicDescription]:
        live = {b.id: b for b in self._brokers()}

        def node(broker_id: int) -> Node:
            return Node(broker_id, "", -1, live[broker_id].rack if broker_id in live else None)

        out = {}
        for name in topics:
            try:
                data, assignment = self._assignment(name)
            except UnknownTopicOrPartitionError as e:
                if raise_errors:
                    raise
                out[name] = TopicDescription(name, False, [], ZERO_UUID, e)
                continue
            partitions = []
            for p in sorted(assignment):
                state = self._get_json(zk_data.partition_state_path(name, p)) or {}
                leader = state.get("leader", -1)
                partitions.append(TopicPartitionInfo(
                    p, None if leader < 0 else node(leader), [node(r) for r in assignment[p]],
                    [node(r) for r in state.get("isr", [])], leader_epoch=state.get("leader_epoch", -1),
                    replica_ids=list(assignment[p])))
            topic_id = zk_data.decode_topic(data)[0] or ZERO_UUID
            out[name] = TopicDescription(name, is_internal_topic(name), partitions, topic_id)
        return out

    def describe_configs(self, resources: list[ConfigResource]) -> dict[ConfigResource, Config]:
        out = {}
        for res in resources:
            overrides = zk_data.decode_config(self._get_json(zk_data.entity_config_path("topics", res.name)))
            out[res] = Config(res, {k: ConfigEntry(k, v, ConfigSource.DYNAMIC_TOPIC_CONFIG)
                                    for k, v in overrides.items()})
        return out

    def describe_cluster(self) -> ClusterDescription:
        controller_data = self._get_json(zk_data.CONTROLLER_PATH)
        controller = zk_data.decode_controller(controller_data) if controller_data is not None else None
        nodes = [Node(b.id, "", -1, b.rack) for b in self._brokers()]
        by_id = {n.node_id: n for n in nodes}
        cluster_data = self._get_json(zk_data.CLUSTER_ID_PATH)
        cluster_id = zk_data.decode_cluster_id(cluster_data) if cluster_data is not None else None
        return ClusterDescription(cluster_id, by_id.get(controller) if controller is not None else None, nodes)

    def all_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(t, p) for t in sorted(self._children(zk_data.TOPICS_PATH))
                for p in sorted(zk_data.decode_topic(self._get_json(zk_data.topic_path(t)) or {})[1])]

    def _reassign_request(self) -> dict[TopicPartition, list[int]]:
        requested = zk_data.decode_reassignment(self._get_json(zk_data.REASSIGN_PARTITIONS_PATH))
        return {TopicPartition(t, p): list(r) for (t, p), r in requested.items()}

    def list_partition_reassignments(self, partitions: Iterable[TopicPartition] | None = None
                                     ) -> dict[TopicPartition, PartitionReassignment]:
        """Partitions with adding/removing replicas in their topic znode, plus those still listed in
        /admin/reassign_partitions (the controller has not picked them up yet)."""
        requested = self._reassign_request()
        out: dict[TopicPartition, PartitionReassignment] = {}
        for tp in self.all_partitions() if partitions is None else partitions:
            if tp in requested:
                current = zk_data.decode_topic(self._get_json(zk_data.topic_path(tp.topic)) or {})[1]
                replicas = list(current.get(tp.partition, ()))
                target = requested[tp]
                out[tp] = PartitionReassignment(replicas + [r for r in target if r not in replicas],
                                                [r for r in target if r not in replicas],
                                                [r for r in replicas if r not in target])
                continue
            _, assignment, adding, removing = zk_data.decode_topic(self._get_json(zk_data.topic_path(tp.topic)) or {})
            if adding.get(tp.partition) or removing.get(tp.partition):
                out[tp] = PartitionReassignment(list(assignment[tp.partition]), list(adding.get(tp.partition, ())),
                                                list(removing.get(tp.partition, ())))
        return out

    # --- writes --------------------------------------------------------------------------------------

    def alter_partition_reassignments(self, reassignments: Mapping[TopicPartition, list[int] | None]
                                      ) -> dict[TopicPartition, Exception | None]:
        """Kafka 2.x's ZooKeeper reassignment: one /admin/reassign_partitions request at a time."""
        targets = reassignments
        if any(replicas is None for replicas in targets.values()):
            raise ZkShellError("Cancelling a reassignment needs --bootstrap-server (Kafka 2.x's ZooKeeper path "
                               "cannot cancel)")
        if self.zk.exists(zk_data.REASSIGN_PARTITIONS_PATH) is not None:
            raise ZkShellError("There is an existing assignment running.")
        doc = zk_data.encode_reassignment({(tp.topic, tp.partition): list(r or []) for tp, r in targets.items()})
        self.zk.create(zk_data.REASSIGN_PARTITIONS_PATH, encode_json(doc), make_parents=True)
        return dict.fromkeys(targets)

    def incremental_alter_configs(self, configs: Mapping[ConfigResource, Iterable[AlterConfigOp]]
                                  ) -> dict[ConfigResource, Exception | None]:
        from kafkapy.client.admin_types import AlterConfigOpType, ConfigResourceType
        from kafkapy.tools.zk_configs import write_configs

        kinds = {ConfigResourceType.TOPIC: "topics", ConfigResourceType.BROKER: "brokers"}
        for res, ops in configs.items():
            op_list = list(ops)
            to_set = {op.name: op.value for op in op_list if op.op == AlterConfigOpType.SET and op.value is not None}
            to_delete = [op.name for op in op_list if op.op == AlterConfigOpType.DELETE]
            write_configs(self.zk, kinds[res.type], res.name or zk_data.DEFAULT_BROKER_ENTITY, to_set, to_delete)
        return dict.fromkeys(configs)

    def create_preferred_replica_election(self, partitions: list[TopicPartition]) -> None:
        """Kafka 2.x's PreferredReplicaLeaderElectionCommand: one /admin/preferred_replica_election at a time."""
        if self.zk.exists(zk_data.PREFERRED_REPLICA_ELECTION_PATH) is not None:
            raise ZkShellError("Preferred replica leader election currently in progress for "
                               + ", ".join(map(str, partitions)) + ". Aborting operation")
        doc = zk_data.encode_partitions([(tp.topic, tp.partition) for tp in partitions])
        self.zk.create(zk_data.PREFERRED_REPLICA_ELECTION_PATH, encode_json(doc), make_parents=True)

    def create_topics(self, new_topics: list[NewTopic]) -> dict[str, CreateTopicResult]:
        out = {}
        for t in new_topics:
            if self.zk.exists(zk_data.topic_path(t.name)) is not None:
                raise TopicAlreadyExistsError(f"Topic '{t.name}' already exists.")
            if t.replica_assignment:
                assignment = {p: list(r) for p, r in t.replica_assignment.items()}
            else:
                partitions = DEFAULT_PARTITIONS if t.num_partitions < 0 else t.num_partitions
                rf = DEFAULT_REPLICATION_FACTOR if t.replication_factor < 0 else t.replication_factor
                if partitions < 1:
                    raise InvalidPartitionsError("Number of partitions must be larger than 0.")
                if rf < 1:
                    raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
                brokers = apply_rack_aware_mode(self._brokers(), RackAwareMode.ENFORCED)
                assignment = assign_replicas_to_brokers(brokers, partitions, rf)
            # Kafka's AdminZkClient writes the config znode first: a broker seeing the topic finds its configs.
            config_path = zk_data.entity_config_path("topics", t.name)
            config = encode_json(zk_data.encode_config(dict(t.configs), sort_keys=False))
            if self.zk.exists(config_path) is None:
                self.zk.create(config_path, config, make_parents=True)
            else:
                self.zk.set(config_path, config)
            topic_id = zk_data.random_kafka_uuid()
            topic = zk_data.encode_topic(topic_id, assignment)
            try:
                self.zk.create(zk_data.topic_path(t.name), encode_json(topic), make_parents=True)
            except ZkShellError as e:
                raise TopicAlreadyExistsError(f"Topic '{t.name}' already exists.") from e
            out[t.name] = CreateTopicResult(t.name, topic_id, len(assignment), len(next(iter(assignment.values()))),
                                            [ConfigEntry(k, v, ConfigSource.DYNAMIC_TOPIC_CONFIG)
                                             for k, v in t.configs.items()])
        return out

    def create_partitions(self, new_partitions: Mapping[str, NewPartitions]) -> dict[str, Exception | None]:
        for name, np in new_partitions.items():
            data, assignment = self._assignment(name)
            current = len(assignment)
            if np.total_count <= current:
                raise InvalidPartitionsError(
                    f"The number of partitions for a topic can only be increased. Topic {name} currently has "
                    f"{current} partitions, {np.total_count} would not be an increase.")
            if np.new_assignments:
                extra = dict(zip(range(current, np.total_count), np.new_assignments, strict=False))
            else:
                brokers = apply_rack_aware_mode(self._brokers(), RackAwareMode.ENFORCED)
                rf = len(assignment[0])
                first = [b.id for b in brokers].index(assignment[0][0]) if assignment[0][0] in \
                    {b.id for b in brokers} else -1
                extra = assign_replicas_to_brokers(brokers, np.total_count - current, rf, first, current)
            data["partitions"] = {**data["partitions"], **{str(p): r for p, r in extra.items()}}
            self.zk.set(zk_data.topic_path(name), encode_json(data))
        return dict.fromkeys(new_partitions)

    def delete_topics(self, topics: list[str]) -> dict[str, DeleteTopicResult]:
        for name in topics:
            path = zk_data.delete_topic_path(name)
            if self.zk.exists(path) is None:
                self.zk.create(path, None, make_parents=True)
        return {name: DeleteTopicResult(name) for name in topics}


if TYPE_CHECKING:  # mypy: both admin paths implement the AdminApi protocol, and AdminClient the log-dir one
    from kafkapy.client.admin import AdminClient
    from kafkapy.client.admin_api import AdminApi, ReplicaLogDirsApi

    def _implements_admin_api(zk: ZkAdmin, client: AdminClient) -> tuple[AdminApi, AdminApi, ReplicaLogDirsApi]:
        return zk, client, client
