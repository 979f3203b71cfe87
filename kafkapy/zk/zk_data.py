"""Kafka's ZooKeeper layout (Kafka's ZkData): node paths, the JSON payloads stored at them, and the ACLs
Kafka gives each node. Used by the controller's store, the broker and the ZooKeeper-era tools alike.

Payload shapes, exactly as Kafka writes them (compact UTF-8 JSON; Kafka's Jackson writes no spaces):
  /cluster/id                                {"version":"1","id":"<22-char base64 uuid>"}
  /controller                                {"version":1,"brokerid":0,"timestamp":"<ms>"}
  /controller_epoch                          5                        (a bare integer)
  /brokers/ids/<id>                          {"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},
                                              "endpoints":["PLAINTEXT://host:9092"],"rack":"r1","jmx_port":-1,
                                              "port":9092,"host":"host","version":5,"timestamp":"<ms>"}
  /brokers/topics/<t>                        {"partitions":{"0":[0,1]},"topic_id":"<base64 uuid>",
                                              "adding_replicas":{},"removing_replicas":{},"version":3}
  /brokers/topics/<t>/partitions/<p>/state   {"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}
                                             (+ "leader_recovery_state":1 while RECOVERING); the node's
                                             version is the partition epoch
  /config/topics/<t>, /config/brokers/<id>, /config/brokers/<default>, /config/users/<u>, /config/clients/<c>
                                             {"version":1,"config":{"k":"v"}}  (a SCRAM credential is the value
                                             "salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>" of
                                             the key SCRAM-SHA-256 / SCRAM-SHA-512 under /config/users/<u>)
  /admin/delete_topics/<t>                   (no data)
  /config/changes/config_change_<seq>        {"version":2,"entity_path":"topics/<t>"}
  /isr_change_notification/isr_change_<seq>  {"version":1,"partitions":[{"topic":"t","partition":0}]}
  /admin/reassign_partitions                 {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}
  /admin/preferred_replica_election          {"version":1,"partitions":[{"topic":"t","partition":0}]}
ACLs (ZkData.defaultAcls): with zookeeper.set.acl every node but /consumers gets the authenticated creator's
ALL (`auth` scheme) plus world READ, except under the sensitive roots (/config/users, /config/brokers,
/delegation_token/tokens), which are creator-only; without it every node is world ALL.
Values are Python objects (what json.loads gives); encode_json / decode_json give Kafka's bytes.
Pure functions and constants; thread-safe. Imports nothing of kafkapy but common: the tools use it too.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

CLUSTER_PATH = "/cluster"
CLUSTER_ID_PATH = "/cluster/id"
CONTROLLER_PATH = "/controller"
CONTROLLER_EPOCH_PATH = "/controller_epoch"
BROKERS_PATH = "/brokers"
BROKER_IDS_PATH = "/brokers/ids"
TOPICS_PATH = "/brokers/topics"
CONFIG_PATH = "/config"
ADMIN_PATH = "/admin"
DELETE_TOPICS_PATH = "/admin/delete_topics"
PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block"
LOG_DIR_EVENT_NOTIFICATION_PATH = "/log_dir_event_notification"
CONFIG_CHANGES_PATH = "/config/changes"
CONFIG_CHANGE_PREFIX = "/config/changes/config_change_"
ISR_CHANGE_NOTIFICATION_PATH = "/isr_change_notification"
ISR_CHANGE_PREFIX = "/isr_change_notification/isr_change_"
REASSIGN_PARTITIONS_PATH = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION_PATH = "/admin/preferred_replica_election"
BROKER_SEQUENCE_ID_PATH = "/brokers/seqid"
CONSUMERS_PATH = "/consumers"
DELEGATION_TOKEN_AUTH_PATH = "/delegation_token"
DELEGATION_TOKENS_PATH = "/delegation_token/tokens"
FEATURE_PATH = "/feature"
MIGRATION_PATH = "/migration"
# ACLs (Kafka's ZkAclStore): LITERAL patterns under /kafka-acl/<ResourceType>/<name>, PREFIXED under
# /kafka-acl-extended/prefixed/<ResourceType>/<name>; each change leaves a sequential notification node.
ACL_LITERAL_PATH = "/kafka-acl"
ACL_EXTENDED_PATH = "/kafka-acl-extended"
ACL_PREFIXED_PATH = "/kafka-acl-extended/prefixed"
ACL_LITERAL_CHANGES_PATH = "/kafka-acl-changes"
ACL_EXTENDED_CHANGES_PATH = "/kafka-acl-extended-changes"
ACL_CHANGE_NODE = "acl_changes_"
# ConfigType.ALL: the entity types under /config.
CONFIG_ENTITY_TYPES = ("topics", "clients", "users", "brokers", "ips")
# Kafka's ZkData.PersistentZkPaths: created at start-up by every broker.
PERSISTENT_PATHS = ("/consumers", "/brokers/ids", "/brokers/topics", "/config/changes", "/admin/delete_topics",
                    "/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block", "/log_dir_event_notification",
                    "/config/topics", "/config/clients", "/config/users", "/config/brokers", "/config/ips")
# ZkData.SecureRootPaths: the roots zookeeper-security-migration walks (ZkAclStore's paths included).
SECURE_ROOT_PATHS = (ADMIN_PATH, BROKERS_PATH, CLUSTER_PATH, CONFIG_PATH, CONTROLLER_PATH, CONTROLLER_EPOCH_PATH,
                     ISR_CHANGE_NOTIFICATION_PATH, PRODUCER_ID_BLOCK_PATH, LOG_DIR_EVENT_NOTIFICATION_PATH,
                     DELEGATION_TOKEN_AUTH_PATH, ACL_EXTENDED_PATH, MIGRATION_PATH, FEATURE_PATH,
                     ACL_LITERAL_PATH, ACL_LITERAL_CHANGES_PATH, ACL_PREFIXED_PATH, ACL_EXTENDED_CHANGES_PATH)
# ZkData.SensitiveRootPaths: credentials live here, so no world READ.
SENSITIVE_ROOT_PATHS = ("/config/users", "/config/brokers", DELEGATION_TOKENS_PATH)
DEFAULT_BROKER_ENTITY = "<default>"

ZERO_UUID = uuid.UUID(int=0)
METADATA_TOPIC_ID = uuid.UUID(int=1)


# -- ACLs (ZooDefs.Perms / ZooDefs.Ids) ----------------------------------------------------------------

PERM_READ, PERM_WRITE, PERM_CREATE, PERM_DELETE, PERM_ADMIN = 1, 2, 4, 8, 16
PERM_ALL = 31


@dataclass(frozen=True, slots=True)
class ZkAcl:
    """One ZooKeeper ACL entry: permission bits, scheme (world, auth, digest, sasl, ip) and id."""

    perms: int
    scheme: str
    id: str


OPEN_ACL_UNSAFE = (ZkAcl(PERM_ALL, "world", "anyone"),)
CREATOR_ALL_ACL = (ZkAcl(PERM_ALL, "auth", ""),)
READ_ACL_UNSAFE = (ZkAcl(PERM_READ, "world", "anyone"),)


def sensitive_path(path: str) -> bool:
    return any(path.startswith(root) for root in SENSITIVE_ROOT_PATHS)


def default_acls(is_secure: bool, path: str) -> tuple[ZkAcl, ...]:
    """Kafka's ZkData.defaultAcls (path relative to the chroot). /consumers stays open: old consumers write there."""
    if not is_secure or path == CONSUMERS_PATH:
        return OPEN_ACL_UNSAFE
    return CREATOR_ALL_ACL if sensitive_path(path) else CREATOR_ALL_ACL + READ_ACL_UNSAFE


# -- bytes ------------------------------------------------------------------------------------------------

def encode_json(data: Any) -> bytes:
    if data is None:
        return b""
    return json.dumps(data, separators=(",", ":")).encode("utf-8")


def decode_json(raw: bytes | None) -> Any:
    if not raw:
        return None
    return json.loads(raw.decode("utf-8"))


# -- Kafka's Uuid text form (url-safe base64 of the 16 bytes, no padding) -------------------------------

def uuid_to_kafka_str(value: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


def uuid_from_kafka_str(text: str) -> uuid.UUID:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a Kafka uuid: {text!r}")
    return uuid.UUID(bytes=raw)


def random_kafka_uuid() -> uuid.UUID:
    """Kafka's Uuid.randomUuid: never the reserved ids, never a text form starting with '-'."""
    for _ in range(1000):
        value = uuid.uuid4()
        if value not in (ZERO_UUID, METADATA_TOPIC_ID) and not uuid_to_kafka_str(value).startswith("-"):
            return value
    raise RuntimeError("could not draw a Kafka uuid")  # unreachable in practice


# -- paths ----------------------------------------------------------------------------------------------

def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS_PATH}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS_PATH}/{topic}"


def topic_partitions_path(topic: str) -> str:
    return f"{TOPICS_PATH}/{topic}/partitions"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{TOPICS_PATH}/{topic}/partitions/{partition}/state"


def entity_config_path(entity_type: str, entity_name: str) -> str:
    return f"{CONFIG_PATH}/{entity_type}/{entity_name}"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS_PATH}/{topic}"


# -- payloads -------------------------------------------------------------------------------------------

def encode_cluster_id(cluster_id: str) -> dict[str, Any]:
    return {"version": "1", "id": cluster_id}


def decode_cluster_id(data: Any) -> str:
    return str(data["id"])


def encode_controller(broker_id: int, timestamp_ms: int) -> dict[str, Any]:
    return {"version": 1, "brokerid": broker_id, "timestamp": str(timestamp_ms)}


def decode_controller(data: Any) -> int:
    return int(data["brokerid"]) if isinstance(data, dict) else int(data)


class EndPointLike(Protocol):
    @property
    def listener_name(self) -> str: ...
    @property
    def security_protocol(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    def connection_string(self) -> str: ...


class BrokerLike(Protocol):
    """What encode_broker reads of a broker (kafkapy.cluster.broker.Broker has it)."""

    @property
    def endpoints(self) -> Sequence[EndPointLike]: ...
    @property
    def rack(self) -> str | None: ...
    @property
    def features(self) -> dict[str, Any]: ...


def encode_broker(broker: BrokerLike, timestamp_ms: int) -> dict[str, Any]:
    first = broker.endpoints[0] if broker.endpoints else None
    return {
        "features": broker.features,
        "listener_security_protocol_map": {ep.listener_name: ep.security_protocol for ep in broker.endpoints},
        "endpoints": [ep.connection_string() for ep in broker.endpoints],
        "jmx_port": -1,
        "port": first.port if first else -1,
        "host": first.host if first else None,
        "version": 5,
        "timestamp": str(timestamp_ms),
    } | ({"rack": broker.rack} if broker.rack is not None else {})


class BrokerRegistration(NamedTuple):
    """A decoded /brokers/ids/<id>: endpoints as `LISTENER://host:port` texts."""

    endpoints: tuple[str, ...]
    protocol_map: dict[str, str]
    rack: str | None
    features: dict[str, Any]


def decode_broker(data: Any) -> BrokerRegistration:
    endpoints = tuple(str(e) for e in data.get("endpoints", []))
    if not endpoints and data.get("host") is not None:  # version 1 registrations: host and port only
        endpoints = (f"PLAINTEXT://{data['host']}:{int(data['port'])}",)
    return BrokerRegistration(endpoints, dict(data.get("listener_security_protocol_map") or {}), data.get("rack"),
                              dict(data.get("features") or {}))

def encode_topic(topic_id: uuid.UUID | None, assignment: Mapping[int, Sequence[int]],
                 adding_replicas: Mapping[int, Sequence[int]] | None = None,
                 removing_replicas: Mapping[int, Sequence[int]] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "partitions": {str(p): list(r) for p, r in sorted(assignment.items())},
        "adding_replicas": {str(p): list(r) for p, r in sorted((adding_replicas or {}).items())},
        "removing_replicas": {str(p): list(r) for p, r in sorted((removing_replicas or {}).items())},
        "version": 3,
    }
    if topic_id is not None:
        data["topic_id"] = uuid_to_kafka_str(topic_id)
    return data


def decode_topic(data: Any) -> tuple[uuid.UUID | None, dict[int, tuple[int, ...]], dict[int, tuple[int, ...]],
                                     dict[int, tuple[int, ...]]]:
    """-> (topic_id, assignment, adding_replicas, removing_replicas)."""
    topic_id = uuid_from_kafka_str(data["topic_id"]) if data.get("topic_id") else None

    def parts(key: str) -> dict[int, tuple[int, ...]]:
        return {int(p): tuple(int(r) for r in rs) for p, rs in (data.get(key) or {}).items()}

    return topic_id, parts("partitions"), parts("adding_replicas"), parts("removing_replicas")


class PartitionState(NamedTuple):
    """A decoded /brokers/topics/<t>/partitions/<p>/state (leader_recovery_state 0 = RECOVERED)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    leader_recovery_state: int = 0


def encode_partition_state(state: PartitionState) -> dict[str, Any]:
    data: dict[str, Any] = {
        "controller_epoch": state.controller_epoch,
        "leader": state.leader,
        "version": 1,
        "leader_epoch": state.leader_epoch,
        "isr": list(state.isr),
    }
    if state.leader_recovery_state != 0:
        data["leader_recovery_state"] = int(state.leader_recovery_state)
    return data


def decode_partition_state(data: Any) -> PartitionState:
    return PartitionState(int(data["leader"]), int(data["leader_epoch"]), tuple(int(r) for r in data["isr"]),
                          int(data["controller_epoch"]), int(data.get("leader_recovery_state", 0)))

def encode_config(configs: Mapping[str, str], sort_keys: bool = True) -> dict[str, Any]:
    """sort_keys=False keeps the caller's order (ConfigCommand's --zookeeper path writes keys as given)."""
    items = sorted(configs.items()) if sort_keys else list(configs.items())
    return {"version": 1, "config": {k: str(v) for k, v in items}}


def decode_config(data: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((data or {}).get("config") or {}).items()}


def encode_config_change(entity_path: str) -> dict[str, Any]:
    return {"version": 2, "entity_path": entity_path}


def decode_config_change(data: Any) -> tuple[str, str]:
    """-> (entity_type, entity_name) of a version-2 notification ('topics', 't')."""
    entity_type, _, name = str((data or {}).get("entity_path", "")).partition("/")
    return entity_type, name


def encode_partitions(partitions: list[tuple[str, int]]) -> dict[str, Any]:
    """/isr_change_notification and /admin/preferred_replica_election payloads."""
    return {"version": 1, "partitions": [{"topic": t, "partition": p} for t, p in partitions]}


def decode_partitions(data: Any) -> list[tuple[str, int]]:
    return [(str(e["topic"]), int(e["partition"])) for e in ((data or {}).get("partitions") or [])]


def encode_reassignment(assignment: dict[tuple[str, int], list[int]]) -> dict[str, Any]:
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": list(r)}
                                         for (t, p), r in sorted(assignment.items())]}


def decode_reassignment(data: Any) -> dict[tuple[str, int], tuple[int, ...]]:
    return {(str(e["topic"]), int(e["partition"])): tuple(int(r) for r in e["replicas"])
            for e in ((data or {}).get("partitions") or [])}
