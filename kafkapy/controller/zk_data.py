"""Kafka's ZooKeeper layout (ZkData): node paths and the JSON payloads stored at them.

Payload shapes, exactly as Kafka writes them:
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
  /config/topics/<t>, /config/brokers/<id>, /config/brokers/<default>   {"version":1,"config":{"k":"v"}}
  /admin/delete_topics/<t>                   (no data)
  /config/changes/config_change_<seq>        {"version":2,"entity_path":"topics/<t>"}
  /isr_change_notification/isr_change_<seq>  {"version":1,"partitions":[{"topic":"t","partition":0}]}
  /admin/reassign_partitions                 {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}
  /admin/preferred_replica_election          {"version":1,"partitions":[{"topic":"t","partition":0}]}
Values are Python objects (what json.loads gives); the store decides how to hold bytes.
Pure functions; thread-safe.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

from kafkapy.cluster.broker import Broker, EndPoint
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch, LeaderRecoveryState

CLUSTER_ID_PATH = "/cluster/id"
CONTROLLER_PATH = "/controller"
CONTROLLER_EPOCH_PATH = "/controller_epoch"
BROKER_IDS_PATH = "/brokers/ids"
TOPICS_PATH = "/brokers/topics"
CONFIG_PATH = "/config"
DELETE_TOPICS_PATH = "/admin/delete_topics"
PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block"
CONFIG_CHANGES_PATH = "/config/changes"
CONFIG_CHANGE_PREFIX = "/config/changes/config_change_"
ISR_CHANGE_NOTIFICATION_PATH = "/isr_change_notification"
ISR_CHANGE_PREFIX = "/isr_change_notification/isr_change_"
REASSIGN_PARTITIONS_PATH = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION_PATH = "/admin/preferred_replica_election"
BROKER_SEQUENCE_ID_PATH = "/brokers/seqid"
CONSUMERS_PATH = "/consumers"
# ACLs (Kafka's ZkAclStore): LITERAL patterns under /kafka-acl/<ResourceType>/<name>, PREFIXED under
# /kafka-acl-extended/prefixed/<ResourceType>/<name>; each change leaves a sequential notification node.
ACL_LITERAL_PATH = "/kafka-acl"
ACL_PREFIXED_PATH = "/kafka-acl-extended/prefixed"
ACL_LITERAL_CHANGES_PATH = "/kafka-acl-changes"
ACL_EXTENDED_CHANGES_PATH = "/kafka-acl-extended-changes"
ACL_CHANGE_NODE = "acl_changes_"
# Kafka's ZkData.PersistentZkPaths: created at start-up by every broker.
PERSISTENT_PATHS = ("/consumers", "/brokers/ids", "/brokers/topics", "/config/changes", "/admin/delete_topics",
                    "/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block", "/log_dir_event_notification",
                    "/config/topics", "/config/clients", "/config/users", "/config/brokers", "/config/ips")
DEFAULT_BROKER_ENTITY = "<default>"

ZERO_UUID = uuid.UUID(int=0)
METADATA_TOPIC_ID = uuid.UUID(int=1)


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


def encode_broker(broker: Broker, timestamp_ms: int) -> dict[str, Any]:
    first = broker.endpoint()
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


def decode_broker(broker_id: int, data: Any, epoch: int) -> Broker:
    protocol_map = data.get("listener_security_protocol_map") or {}
    endpoints = tuple(EndPoint.parse(text, protocol_map) for text in data.get("endpoints", []))
    if not endpoints and data.get("host") is not None:
        endpoints = (EndPoint("PLAINTEXT", data["host"], int(data["port"]), "PLAINTEXT"),)
    return Broker(broker_id, endpoints, data.get("rack"), epoch, data.get("features") or {})


def encode_topic(topic_id: uuid.UUID | None, assignment: dict[int, list[int]] | dict[int, tuple[int, ...]],
                 adding_replicas: dict[int, list[int]] | None = None,
                 removing_replicas: dict[int, list[int]] | None = None) -> dict[str, Any]:
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


def encode_partition_state(state: LeaderIsrAndControllerEpoch) -> dict[str, Any]:
    lai = state.leader_and_isr
    data: dict[str, Any] = {
        "controller_epoch": state.controller_epoch,
        "leader": lai.leader,
        "version": 1,
        "leader_epoch": lai.leader_epoch,
        "isr": list(lai.isr),
    }
    if lai.leader_recovery_state != LeaderRecoveryState.RECOVERED:
        data["leader_recovery_state"] = int(lai.leader_recovery_state)
    return data


def decode_partition_state(data: Any, node_version: int) -> LeaderIsrAndControllerEpoch:
    recovery = LeaderRecoveryState(int(data.get("leader_recovery_state", 0)))
    lai = LeaderAndIsr(int(data["leader"]), int(data["leader_epoch"]), tuple(int(r) for r in data["isr"]),
                       recovery, node_version)
    return LeaderIsrAndControllerEpoch(lai, int(data["controller_epoch"]))


def encode_config(configs: dict[str, str]) -> dict[str, Any]:
    return {"version": 1, "config": {k: str(v) for k, v in sorted(configs.items())}}


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
