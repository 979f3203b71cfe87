"""PathMetadataStore: MetadataStore implemented over ZooKeeper-like primitives (nodes at paths, each with a
JSON value, a version bumped on every write, and the zxid of its creation), using Kafka's paths and payloads
from zk_data.py. A backend supplies five primitives: _get, _children, _multi (atomic), _each (independent
ops) and _watch_children. LocalMetadataStore backs them with a file; a ZooKeeper store backs them with kazoo.
Thread-safety: whatever the backend's primitives guarantee (both backends are thread-safe).
"""

from __future__ import annotations

import uuid
from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkapy.cluster.broker import Broker, EndPoint
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch, LeaderRecoveryState
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.metadata_store import (
    BadVersionError,
    ControllerMovedError,
    MetadataStore,
    MetadataStoreError,
    NodeExistsError,
    NoNodeError,
    TopicReplicaAssignment,
)
from kafkapy.zk import zk_data


@dataclass(frozen=True, slots=True)
class Stat:
    version: int
    czxid: int


@dataclass(frozen=True, slots=True)
class Create:
    path: str
    data: Any
    ephemeral: bool = False


@dataclass(frozen=True, slots=True)
class SetData:
    path: str
    data: Any
    version: int = -1  # -1: any version


@dataclass(frozen=True, slots=True)
class Delete:
    path: str
    version: int = -1
    recursive: bool = False  # also delete every node under path


@dataclass(frozen=True, slots=True)
class Check:
    path: str
    version: int


Op = Create | SetData | Delete | Check


# -- Kafka's types <-> kafkapy.zk.zk_data's plain payloads ---------------------------------------------------

def broker_json(broker: Broker, timestamp_ms: int) -> dict[str, Any]:
    return zk_data.encode_broker(broker, timestamp_ms)


def broker_from_json(broker_id: int, data: Any, epoch: int) -> Broker:
    reg = zk_data.decode_broker(data)
    endpoints = tuple(EndPoint.parse(text, reg.protocol_map) for text in reg.endpoints)
    return Broker(broker_id, endpoints, reg.rack, epoch, reg.features)


def partition_state_json(state: LeaderIsrAndControllerEpoch) -> dict[str, Any]:
    lai = state.leader_and_isr
    return zk_data.encode_partition_state(zk_data.PartitionState(
        lai.leader, lai.leader_epoch, tuple(lai.isr), state.controller_epoch, int(lai.leader_recovery_state)))


def partition_state_from_json(data: Any, node_version: int) -> LeaderIsrAndControllerEpoch:
    ps = zk_data.decode_partition_state(data)
    lai = LeaderAndIsr(ps.leader, ps.leader_epoch, ps.isr, LeaderRecoveryState(ps.leader_recovery_state),
                       node_version)
    return LeaderIsrAndControllerEpoch(lai, ps.controller_epoch)


class PathMetadataStore(MetadataStore):
    # -- primitives -----------------------------------------------------------------------------------------

    @abstractmethod
    def _get(self, path: str) -> tuple[Any, Stat] | None: ...

    @abstractmethod
    def _children(self, path: str) -> list[str]:
        """Names of the direct children of path (empty when path has none or does not exist)."""

    @abstractmethod
    def _multi(self, ops: list[Op]) -> list[Stat | None]:
        """Apply all ops or none; raises NodeExistsError / NoNodeError / BadVersionError.
        Returns each op's resulting Stat (None for Delete / Check)."""

    @abstractmethod
    def _each(self, ops: list[Op]) -> list[Stat | None | MetadataStoreError]:
        """Apply each op on its own; a failed op yields its error and does not stop the others."""

    @abstractmethod
    def _watch_children(self, path: str, callback: Callable[[], None]) -> None:
        """Call callback whenever the children of path change (persistent watch)."""

    def _notify_config_change(self, entity_path: str) -> None:
        """Hook for a ZooKeeper backend to write Kafka's /config/changes notification."""

    def watch_path_children(self, path: str, callback: Callable[[], None]) -> None:
        if self.cluster_mode:
            self._watch_children(path, callback)

    def children(self, path: str) -> list[str]:
        return self._children(path)

    def get_json(self, path: str) -> Any:
        """The node's JSON value, None when the node is missing or empty."""
        node = self._get(path)
        return node[0] if node is not None else None

    # -- admin paths (cluster mode: written by tools and non-controller brokers, read by the controller) -----

    def get_isr_change_notifications(self) -> tuple[list[str], set[TopicPartition]]:
        """-> (notification node names, the partitions they name)."""
        names = self._children(zk_data.ISR_CHANGE_NOTIFICATION_PATH)
        tps: set[TopicPartition] = set()
        for name in names:
            node = self._get(f"{zk_data.ISR_CHANGE_NOTIFICATION_PATH}/{name}")
            if node is not None:
                tps.update(TopicPartition(t, p) for t, p in zk_data.decode_partitions(node[0]))
        return names, tps

    def delete_children(self, parent: str, names: Iterable[str]) -> None:
        self._each([Delete(f"{parent}/{n}") for n in names])

    def get_partition_reassignment(self) -> dict[TopicPartition, tuple[int, ...]]:
        node = self._get(zk_data.REASSIGN_PARTITIONS_PATH)
        if node is None:
            return {}
        return {TopicPartition(t, p): r for (t, p), r in zk_data.decode_reassignment(node[0]).items()}

    def set_partition_reassignment(self, assignment: Mapping[TopicPartition, Iterable[int]]) -> None:
        """Write /admin/reassign_partitions (delete it when assignment is empty)."""
        data = zk_data.encode_reassignment({(tp.topic, tp.partition): list(r) for tp, r in assignment.items()})
        node = self._get(zk_data.REASSIGN_PARTITIONS_PATH)
        if not assignment:
            if node is not None:
                self._each([Delete(zk_data.REASSIGN_PARTITIONS_PATH)])
        elif node is None:
            self._multi([Create(zk_data.REASSIGN_PARTITIONS_PATH, data)])
        else:
            self._multi([SetData(zk_data.REASSIGN_PARTITIONS_PATH, data)])

    def get_preferred_replica_election(self) -> list[TopicPartition] | None:
        node = self._get(zk_data.PREFERRED_REPLICA_ELECTION_PATH)
        if node is None:
            return None
        return [TopicPartition(t, p) for t, p in zk_data.decode_partitions(node[0])]

    def create_preferred_replica_election(self, partitions: Iterable[TopicPartition]) -> None:
        """NodeExistsError while an earlier election is still pending (Kafka's tool says so)."""
        self._multi([Create(zk_data.PREFERRED_REPLICA_ELECTION_PATH,
                            zk_data.encode_partitions([(tp.topic, tp.partition) for tp in partitions]))])

    def delete_preferred_replica_election(self) -> None:
        self._each([Delete(zk_data.PREFERRED_REPLICA_ELECTION_PATH)])

    def set_topic_assignment(self, topic: TopicReplicaAssignment) -> TopicReplicaAssignment:
        """Overwrite /brokers/topics/<t> (reassignment); guarded by topic.version."""
        data = zk_data.encode_topic(topic.topic_id, dict(topic.assignment), dict(topic.adding_replicas),
                                    dict(topic.removing_replicas))
        stat = self._multi([SetData(zk_data.topic_path(topic.name), data, topic.version)])[0]
        assert stat is not None
        return TopicReplicaAssignment(topic.name, topic.topic_id, dict(topic.assignment),
                                      dict(topic.adding_replicas), dict(topic.removing_replicas), stat.version)

    # -- cluster id -------------------------------------------------------------------------------------------

    def get_cluster_id(self) -> str | None:
        node = self._get(zk_data.CLUSTER_ID_PATH)
        return zk_data.decode_cluster_id(node[0]) if node else None

    def get_or_create_cluster_id(self, proposed: str) -> str:
        try:
            self._multi([Create(zk_data.CLUSTER_ID_PATH, zk_data.encode_cluster_id(proposed))])
            return proposed
        except NodeExistsError:
            existing = self.get_cluster_id()
            assert existing is not None
            return existing

    # -- controller -------------------------------------------------------------------------------------------

    def get_controller_id(self) -> int | None:
        node = self._get(zk_data.CONTROLLER_PATH)
        return zk_data.decode_controller(node[0]) if node else None

    def get_controller_epoch(self) -> int:
        node = self._get(zk_data.CONTROLLER_EPOCH_PATH)
        return int(node[0]) if node else 0

    def try_elect_controller(self, broker_id: int, timestamp_ms: int) -> int | None:
        # Kafka's registerControllerAndIncrementControllerEpoch: one transaction that creates the ephemeral
        # /controller and bumps /controller_epoch only if nobody else bumped it meanwhile.
        for _ in range(10):
            node = self._get(zk_data.CONTROLLER_EPOCH_PATH)
            if node is None:
                try:
                    self._multi([Create(zk_data.CONTROLLER_EPOCH_PATH, 0)])
                except NodeExistsError:
                    pass
                continue
            epoch, stat = int(node[0]), node[1]
            try:
                self._multi([Create(zk_data.CONTROLLER_PATH, zk_data.encode_controller(broker_id, timestamp_ms),
                                    ephemeral=True),
                             SetData(zk_data.CONTROLLER_EPOCH_PATH, epoch + 1, stat.version)])
                self.controller_epoch_zk_version = stat.version + 1
                return epoch + 1
            except NodeExistsError:
                return None
            except BadVersionError:
                continue
        return None

    def resign_controller(self, broker_id: int) -> None:
        self.controller_epoch_zk_version = None
        node = self._get(zk_data.CONTROLLER_PATH)
        if node is not None and zk_data.decode_controller(node[0]) == broker_id:
            try:
                self._multi([Delete(zk_data.CONTROLLER_PATH, node[1].version)])
            except (NoNodeError, BadVersionError):
                pass

    # -- brokers ----------------------------------------------------------------------------------------------

    def register_broker(self, broker: Broker, timestamp_ms: int) -> int:
        path = zk_data.broker_path(broker.id)
        data = broker_json(broker, timestamp_ms)
        # A re-registration replaces the old node, so the broker gets a new (larger) epoch.
        try:
            stat = self._multi([Create(path, data, ephemeral=True)])[0]
        except NodeExistsError:
            stat = self._multi([Delete(path), Create(path, data, ephemeral=True)])[1]
        assert stat is not None
        return stat.czxid

    def unregister_broker(self, broker_id: int) -> None:
        try:
            self._multi([Delete(zk_data.broker_path(broker_id))])
        except NoNodeError:
            pass

    def get_brokers(self) -> dict[int, Broker]:
        out: dict[int, Broker] = {}
        for child in self._children(zk_data.BROKER_IDS_PATH):
            node = self._get(zk_data.broker_path(int(child)))
            if node is not None:
                out[int(child)] = broker_from_json(int(child), node[0], node[1].czxid)
        return dict(sorted(out.items()))

    def watch_brokers(self, callback: Callable[[], None]) -> None:
        self._watch_children(zk_data.BROKER_IDS_PATH, callback)

    # -- topics -----------------------------------------------------------------------------------------------

    def create_topic(self, name: str, topic_id: uuid.UUID, assignment: Mapping[int, Iterable[int]],
                     configs: Mapping[str, str]) -> None:
        config_path = zk_data.entity_config_path("topics", name)
        config_data = zk_data.encode_config(dict(configs))
        # Kafka writes the config first (set or create), then the topic node that makes the topic exist.
        config_op: Op = SetData(config_path, config_data) if self._get(config_path) else Create(config_path,
                                                                                                 config_data)
        topic_data = zk_data.encode_topic(topic_id, {p: list(r) for p, r in assignment.items()})
        self._multi([config_op, Create(zk_data.topic_path(name), topic_data)])

    def get_all_topics(self) -> set[str]:
        return set(self._children(zk_data.TOPICS_PATH))

    def get_topic(self, name: str) -> TopicReplicaAssignment | None:
        node = self._get(zk_data.topic_path(name))
        if node is None:
            return None
        topic_id, assignment, adding, removing = zk_data.decode_topic(node[0])
        return TopicReplicaAssignment(name, topic_id, assignment, adding, removing, node[1].version)

    def add_partitions(self, name: str, new_assignment: Mapping[int, Iterable[int]]) -> TopicReplicaAssignment:
        current = self.get_topic(name)
        if current is None:
            raise NoNodeError(zk_data.topic_path(name))
        merged = {p: tuple(r) for p, r in new_assignment.items()}
        merged.update(current.assignment)
        data = zk_data.encode_topic(current.topic_id, merged, dict(current.adding_replicas),
                                    dict(current.removing_replicas))
        stat = self._multi([SetData(zk_data.topic_path(name), data, current.version)])[0]
        assert stat is not None
        return TopicReplicaAssignment(name, current.topic_id, dict(sorted(merged.items())),
                                      current.adding_replicas, current.removing_replicas, stat.version)

    def mark_topics_for_deletion(self, names: Iterable[str]) -> None:
        ops: list[Op] = [Create(zk_data.delete_topic_path(n), None) for n in names]
        for result in self._each(ops):
            if isinstance(result, MetadataStoreError) and not isinstance(result, NodeExistsError):
                raise result

    def get_topics_marked_for_deletion(self) -> set[str]:
        return set(self._children(zk_data.DELETE_TOPICS_PATH))

    def delete_topic(self, name: str) -> None:
        ops: list[Op] = [Delete(zk_data.topic_path(name), recursive=True),
                         Delete(zk_data.entity_config_path("topics", name)),
                         Delete(zk_data.delete_topic_path(name))]
        for result in self._each(ops):
            if isinstance(result, MetadataStoreError) and not isinstance(result, NoNodeError):
                raise result

    # -- partition states -----------------------------------------------------------------------------------

    def get_partition_states(self, topic: str) -> dict[int, LeaderIsrAndControllerEpoch]:
        out: dict[int, LeaderIsrAndControllerEpoch] = {}
        partitions = [int(child) for child in self._children(zk_data.topic_partitions_path(topic))]
        nodes = self._get_many([zk_data.partition_state_path(topic, p) for p in partitions])
        for partition, node in zip(partitions, nodes, strict=True):
            if node is not None:
                out[partition] = partition_state_from_json(node[0], node[1].version)
        return dict(sorted(out.items()))

    def _get_many(self, paths: list[str]) -> list[tuple[Any, Stat] | None]:
        """_get of each path; a ZooKeeper backend pipelines them."""
        return [self._get(path) for path in paths]

    def _multi_each(self, transactions: list[list[Op]]) -> list[list[Stat | None] | MetadataStoreError]:
        """_multi of each transaction on its own (a failed one yields its error); a ZooKeeper backend
        pipelines them."""
        out: list[list[Stat | None] | MetadataStoreError] = []
        for ops in transactions:
            try:
                out.append(self._multi(ops))
            except MetadataStoreError as e:
                out.append(e)
        return out

    def create_partition_states(self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]
                                ) -> dict[TopicPartition, LeaderAndIsr | MetadataStoreError]:
        tps = list(states)
        ops: list[Op] = [Create(zk_data.partition_state_path(tp.topic, tp.partition),
                                partition_state_json(states[tp])) for tp in tps]
        out: dict[TopicPartition, LeaderAndIsr | MetadataStoreError] = {}
        for tp, result in zip(tps, self._each_fenced(ops), strict=True):
            if isinstance(result, Stat):
                out[tp] = states[tp].leader_and_isr.with_partition_epoch(result.version)
            else:
                out[tp] = result if isinstance(result, MetadataStoreError) else MetadataStoreError(str(tp))
        return out

    def update_partition_states(self, states: Mapping[TopicPartition, LeaderAndIsr], controller_epoch: int
                                ) -> dict[TopicPartition, LeaderAndIsr | MetadataStoreError]:
        tps = list(states)
        ops: list[Op] = [SetData(zk_data.partition_state_path(tp.topic, tp.partition),
                                 partition_state_json(LeaderIsrAndControllerEpoch(states[tp],
                                                                                            controller_epoch)),
                                 states[tp].partition_epoch) for tp in tps]
        out: dict[TopicPartition, LeaderAndIsr | MetadataStoreError] = {}
        for tp, result in zip(tps, self._each_fenced(ops), strict=True):
            if isinstance(result, Stat):
                out[tp] = states[tp].with_partition_epoch(result.version)
            else:
                out[tp] = result if isinstance(result, MetadataStoreError) else MetadataStoreError(str(tp))
        return out

    def _each_fenced(self, ops: list[Op]) -> list[Stat | None | MetadataStoreError]:
        """_each, but in cluster mode each op is a transaction with a check of this controller's
        /controller_epoch zkVersion; ControllerMovedError when another controller has been elected since."""
        version = self.controller_epoch_zk_version
        if not self.cluster_mode or version is None:
            return self._each(ops)
        results: list[Stat | None | MetadataStoreError] = []
        for outcome in self._multi_each([[Check(zk_data.CONTROLLER_EPOCH_PATH, version), op] for op in ops]):
            if isinstance(outcome, BadVersionError):
                node = self._get(zk_data.CONTROLLER_EPOCH_PATH)
                if node is None or node[1].version != version:
                    raise ControllerMovedError(f"/controller_epoch moved past zkVersion {version}") from None
            results.append(outcome if isinstance(outcome, MetadataStoreError) else outcome[1])
        return results

    # -- producer id blocks ----------------------------------------------------------------------------------

    def get_producer_id_block(self) -> tuple[dict[str, Any] | None, int]:
        node = self._get(zk_data.PRODUCER_ID_BLOCK_PATH)
        if node is None:
            return None, -1
        data, stat = node
        return (data or None), stat.version

    def set_producer_id_block(self, data: dict[str, Any], expected_version: int) -> bool:
        op = Create(zk_data.PRODUCER_ID_BLOCK_PATH, data) if expected_version < 0 else \
            SetData(zk_data.PRODUCER_ID_BLOCK_PATH, data, expected_version)
        try:
            self._multi([op])
        except (NodeExistsError, BadVersionError, NoNodeError):
            return False
        return True

    # -- finalized features (Kafka's /feature FeatureZNode) ---------------------------------------------------

    def get_feature_znode(self) -> tuple[dict[str, Any] | None, int]:
        node = self._get(zk_data.FEATURE_PATH)
        if node is None:
            return None, -1
        data, stat = node
        return (data or None), stat.version

    def set_feature_znode(self, data: dict[str, Any], expected_version: int) -> bool:
        """Create the node (expected_version < 0) or replace it at that version; False when another writer won."""
        op = (Create(zk_data.FEATURE_PATH, data) if expected_version < 0
              else SetData(zk_data.FEATURE_PATH, data, expected_version))
        try:
            self._multi([op])
        except (NodeExistsError, BadVersionError, NoNodeError):
            return False
        return True

    # -- ACLs (/kafka-acl, /kafka-acl-extended/prefixed) ---------------------------------------------------

    @staticmethod
    def _acl_root(prefixed: bool) -> str:
        return zk_data.ACL_PREFIXED_PATH if prefixed else zk_data.ACL_LITERAL_PATH

    def get_acl_resources(self) -> list[tuple[bool, str, str]]:
        """Every stored ACL resource as (prefixed, resource type title, name)."""
        out: list[tuple[bool, str, str]] = []
        for prefixed in (False, True):
            root = self._acl_root(prefixed)
            for rtype in self._children(root):
                out.extend((prefixed, rtype, name) for name in self._children(f"{root}/{rtype}"))
        return out

    def get_acls(self, prefixed: bool, resource_type: str, name: str) -> tuple[list[dict[str, Any]], int]:
        """The resource's ACL entries (Kafka's JSON objects) and the node's version (-1: none stored)."""
        node = self._get(f"{self._acl_root(prefixed)}/{resource_type}/{name}")
        if node is None:
            return [], -1
        return list((node[0] or {}).get("acls", [])), node[1].version

    def set_acls(self, prefixed: bool, resource_type: str, name: str, acls: list[dict[str, Any]],
                 expected_version: int) -> bool:
        """Write the resource's entries (an empty list deletes the node) if its version is still
        expected_version (-1: create); False if another writer got there first."""
        path = f"{self._acl_root(prefixed)}/{resource_type}/{name}"
        try:
            if not acls:
                if expected_version >= 0:
                    self._multi([Delete(path, expected_version)])
            elif expected_version < 0:
                self._multi([Create(path, {"version": 1, "acls": acls})])
            else:
                self._multi([SetData(path, {"version": 1, "acls": acls}, expected_version)])
        except (NodeExistsError, BadVersionError, NoNodeError):
            return False
        self._notify_acl_change(prefixed, resource_type, name)
        return True

    def _notify_acl_change(self, prefixed: bool, resource_type: str, name: str) -> None:
        """Hook for a ZooKeeper backend to write Kafka's /kafka-acl-changes notification."""

    # -- delegation tokens (/delegation_token/tokens/<tokenId>, Kafka's JSON; server/security/delegation_token_manager)

    def set_delegation_token(self, token_id: str, data: dict[str, Any]) -> None:
        path = f"{zk_data.DELEGATION_TOKENS_PATH}/{token_id}"
        for _ in range(10):
            try:
                self._multi([SetData(path, data) if self._get(path) is not None else Create(path, data)])
                self._notify_token_change(token_id)
                return
            except (NodeExistsError, NoNodeError):
                continue
        raise MetadataStoreError(f"{path}: could not be written")

    def delete_delegation_token(self, token_id: str) -> None:
        try:
            self._multi([Delete(f"{zk_data.DELEGATION_TOKENS_PATH}/{token_id}")])
        except NoNodeError:
            return
        self._notify_token_change(token_id)

    def _notify_token_change(self, token_id: str) -> None:
        """Hook for a ZooKeeper backend to write Kafka's /delegation_token/token_changes notification."""

    # -- config overrides -----------------------------------------------------------------------------------

    def entity_names(self, entity_type: str) -> list[str]:
        """Entities of a type that have a config node (e.g. the users under /config/users)."""
        return sorted(self._children(f"{zk_data.CONFIG_PATH}/{entity_type}"))

    def get_entity_config(self, entity_type: str, entity_name: str) -> dict[str, str]:
        node = self._get(zk_data.entity_config_path(entity_type, entity_name))
        return zk_data.decode_config(node[0]) if node else {}

    def set_entity_config(self, entity_type: str, entity_name: str, configs: Mapping[str, str]) -> None:
        path = zk_data.entity_config_path(entity_type, entity_name)
        data = zk_data.encode_config(dict(configs))
        for _ in range(10):
            try:
                if self._get(path) is None:
                    self._multi([Create(path, data)])
                else:
                    self._multi([SetData(path, data)])
                break
            except (NodeExistsError, NoNodeError):
                continue
        self._notify_config_change(f"{entity_type}/{entity_name}")
