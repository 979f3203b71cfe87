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
Thread-safety: one ZkAdmin per thread.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from kafkapy.client.admin_types import (
    ClusterDescription,
    Config,
    ConfigEntry,
    ConfigResource,
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
from kafkapy.protocol.types import uuid_from_str, uuid_to_str
from kafkapy.tools.zk_shell_client import ZkShellClient, ZkShellError

ZERO_UUID = uuid.UUID(int=0)
REASSIGN_PATH = "/admin/reassign_partitions"
PREFERRED_PATH = "/admin/preferred_replica_election"
DEFAULT_PARTITIONS = 1  # Kafka 2.x TopicCommand required --partitions with --zookeeper; num.partitions default
DEFAULT_REPLICATION_FACTOR = 1


def _json(raw: bytes | None) -> Any:
    return json.loads(raw.decode("utf-8")) if raw else None


def _encode(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode("utf-8")


class ZkAdmin:
    """Duck-types the AdminClient methods kafkapy.tools.topics calls."""

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
            return _json(self.zk.get(path)[0])
        except ZkShellError:
            return None

    def _brokers(self) -> list[BrokerMetadata]:
        out = []
        for child in self._children("/brokers/ids"):
            data = self._get_json(f"/brokers/ids/{child}") or {}
            out.append(BrokerMetadata(int(child), data.get("rack")))
        return out

    def _assignment(self, topic: str) -> tuple[dict[str, Any], dict[int, list[int]]]:
        data = self._get_json(f"/brokers/topics/{topic}")
        if data is None:
            raise UnknownTopicOrPartitionError(f"Topic '{topic}' does not exist")
        return data, {int(p): list(r) for p, r in data.get("partitions", {}).items()}

    def list_topics(self, include_internal: bool = True) -> dict[str, TopicListing]:
        out = {}
        for name in self._children("/brokers/topics"):
            if not include_internal and is_internal_topic(name):
                continue
            data = self._get_json(f"/brokers/topics/{name}") or {}
            topic_id = uuid_from_str(data["topic_id"]) if data.get("topic_id") else ZERO_UUID
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
                state = self._get_json(f"/brokers/topics/{name}/partitions/{p}/state") or {}
                leader = state.get("leader", -1)
                partitions.append(TopicPartitionInfo(
                    p, None if leader < 0 else node(leader), [node(r) for r in assignment[p]],
                    [node(r) for r in state.get("isr", [])], leader_epoch=state.get("leader_epoch", -1),
                    replica_ids=list(assignment[p])))
            topic_id = uuid_from_str(data["topic_id"]) if data.get("topic_id") else ZERO_UUID
            out[name] = TopicDescription(name, is_internal_topic(name), partitions, topic_id)
        return out

    def describe_configs(self, resources: list[ConfigResource]) -> dict[ConfigResource, Config]:
        out = {}
        for res in resources:
            overrides = (self._get_json(f"/config/topics/{res.name}") or {}).get("config", {})
            out[res] = Config(res, {k: ConfigEntry(k, v, ConfigSource.DYNAMIC_TOPIC_CONFIG)
                                    for k, v in overrides.items()})
        return out

    def describe_cluster(self) -> ClusterDescription:
        controller = (self._get_json("/controller") or {}).get("brokerid")
        nodes = [Node(b.id, "", -1, b.rack) for b in self._brokers()]
        by_id = {n.node_id: n for n in nodes}
        cluster_id = (self._get_json("/cluster/id") or {}).get("id")
        return ClusterDescription(cluster_id, by_id.get(controller), nodes)

    def all_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(t, p) for t in sorted(self._children("/brokers/topics"))
                for p in sorted(int(x) for x in (self._get_json(f"/brokers/topics/{t}") or {}).get("partitions", {}))]

    def _reassign_request(self) -> dict[TopicPartition, list[int]]:
        data = self._get_json(REASSIGN_PATH) or {}
        return {TopicPartition(p["topic"], p["partition"]): list(p["replicas"]) for p in data.get("partitions", [])}

    def list_partition_reassignments(self, tps: list[Any] | None = None) -> dict[Any, PartitionReassignment]:
        """Partitions with adding/removing replicas in their topic znode, plus those still listed in
        /admin/reassign_partitions (the controller has not picked them up yet)."""
        requested = self._reassign_request()
        if tps is None:
            tps = self.all_partitions()
        out: dict[Any, PartitionReassignment] = {}
        for tp in tps:
            if tp in requested:
                current = (self._get_json(f"/brokers/topics/{tp.topic}") or {}).get("partitions", {})
                replicas = list(current.get(str(tp.partition), []))
                target = requested[tp]
                out[tp] = PartitionReassignment(replicas + [r for r in target if r not in replicas],
                                                [r for r in target if r not in replicas],
                                                [r for r in replicas if r not in target])
                continue
            data = self._get_json(f"/brokers/topics/{tp.topic}") or {}
            adding = data.get("adding_replicas", {}).get(str(tp.partition), [])
            removing = data.get("removing_replicas", {}).get(str(tp.partition), [])
            if adding or removing:
                out[tp] = PartitionReassignment(list(data["partitions"][str(tp.partition)]), adding, removing)
        return out

    # --- writes --------------------------------------------------------------------------------------

    def alter_partition_reassignments(self, targets: dict[Any, list[int] | None]) -> dict[Any, Exception | None]:
        """Kafka 2.x's ZooKeeper reassignment: one /admin/reassign_partitions request at a time."""
        if any(replicas is None for replicas in targets.values()):
            raise ZkShellError("Cancelling a reassignment needs --bootstrap-server (Kafka 2.x's ZooKeeper path "
                               "cannot cancel)")
        if self.zk.exists(REASSIGN_PATH) is not None:
            raise ZkShellError("There is an existing assignment running.")
        doc = {"version": 1, "partitions": [{"topic": tp.topic, "partition": tp.partition, "replicas": list(r or [])}
                                            for tp, r in targets.items()]}
        self.zk.create(REASSIGN_PATH, _encode(doc), make_parents=True)
        return dict.fromkeys(targets)

    def incremental_alter_configs(self, changes: dict[ConfigResource, list[Any]]) -> None:
        from kafkapy.client.admin_types import AlterConfigOpType, ConfigResourceType
        from kafkapy.tools.zk_configs import write_configs

        kinds = {ConfigResourceType.TOPIC: "topics", ConfigResourceType.BROKER: "brokers"}
        for res, ops in changes.items():
            to_set = {op.name: op.value for op in ops if op.op == AlterConfigOpType.SET}
            to_delete = [op.name for op in ops if op.op == AlterConfigOpType.DELETE]
            write_configs(self.zk, kinds[res.type], res.name or "<default>", to_set, to_delete)

    def create_preferred_replica_election(self, partitions: list[TopicPartition]) -> None:
        """Kafka 2.x's PreferredReplicaLeaderElectionCommand: one /admin/preferred_replica_election at a time."""
        if self.zk.exists(PREFERRED_PATH) is not None:
            raise ZkShellError("Preferred replica leader election currently in progress for "
                               + ", ".join(map(str, partitions)) + ". Aborting operation")
        doc = {"version": 1, "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in partitions]}
        self.zk.create(PREFERRED_PATH, _encode(doc), make_parents=True)

    def create_topics(self, topics: list[NewTopic]) -> None:
        for t in topics:
            if self.zk.exists(f"/brokers/topics/{t.name}") is not None:
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
            config_path = f"/config/topics/{t.name}"
            config = _encode({"version": 1, "config": dict(t.configs)})
            if self.zk.exists(config_path) is None:
                self.zk.create(config_path, config, make_parents=True)
            else:
                self.zk.set(config_path, config)
            topic = {"partitions": {str(p): r for p, r in sorted(assignment.items())},
                     "topic_id": uuid_to_str(uuid.uuid4()), "adding_replicas": {}, "removing_replicas": {},
                     "version": 3}
            try:
                self.zk.create(f"/brokers/topics/{t.name}", _encode(topic), make_parents=True)
            except ZkShellError as e:
                raise TopicAlreadyExistsError(f"Topic '{t.name}' already exists.") from e

    def create_partitions(self, new: dict[str, NewPartitions]) -> None:
        for name, np in new.items():
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
            self.zk.set(f"/brokers/topics/{name}", _encode(data))

    def delete_topics(self, topics: list[str]) -> None:
        for name in topics:
            path = f"/admin/delete_topics/{name}"
            if self.zk.exists(path) is None:
                self.zk.create(path, None, make_parents=True)
