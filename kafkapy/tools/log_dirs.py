"""kafka-log-dirs logic (LogDirsCommand): each broker's log directories and replica sizes.

Brokers default to every broker of the cluster; ids given with --broker-list must exist ("ERROR: The
given brokers do not exist from --broker-list: 5. Current existent brokers: 0"). Topics are filtered
client side (--topic-list), as Kafka does. `to_json(result)` writes Kafka's one-line JSON
byte-for-byte: Jackson over Java HashMaps, so keys come in HashMap order
(`{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"foo-0","size":123,"offsetLag":0,
"isFuture":false}],"error":null,"logDir":"/data"}]}],"version":1}`), as do brokers, log dirs and
partitions; a log dir error prints as its Java exception class name.
Thread-safety: one call at a time per AdminClient.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.tools import ToolFailure
from kafkapy.tools.tool_support import java_hash_order, java_string_hash, topic_partition_hash

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient


class LogDirsError(ToolFailure):
    """Kafka's TerseException: the bare message."""


@dataclass(frozen=True)
class ReplicaEntry:
    topic: str
    partition: int
    size: int
    offset_lag: int
    is_future: bool


@dataclass
class LogDirEntry:
    log_dir: str
    error: str | None  # Java exception class name
    partitions: list[ReplicaEntry]


@dataclass
class BrokerLogDirs:
    broker: int
    log_dirs: list[LogDirEntry]


@dataclass
class LogDirsResult:
    brokers_queried: list[int]
    brokers: list[BrokerLogDirs]


def _split(spec: str | None) -> list[str]:
    return [x for x in (spec or "").split(",") if x]


def _int_order(values: Any) -> list[int]:
    return java_hash_order(list(dict.fromkeys(values)), lambda i: i)


def describe_log_dirs(admin: AdminClient, broker_list: str | None = None, topic_list: str | None = None) -> LogDirsResult:
    from kafkapy.tools.tool_support import java_exception_name

    topics = set(_split(topic_list))
    try:
        requested = [int(b) for b in _split(broker_list)]
    except ValueError as e:
        raise LogDirsError(f"For input string: \"{e}\"") from e
    cluster = [n.node_id for n in admin.describe_cluster().nodes]
    missing = [b for b in requested if b not in cluster]
    if missing:
        raise LogDirsError(
            "ERROR: The given brokers do not exist from --broker-list: "
            + ",".join(map(str, _int_order(missing))) + ". Current existent brokers: "
            + ",".join(map(str, _int_order(cluster))))
    existing = _int_order(requested if requested else cluster)
    described = admin.describe_log_dirs(existing)
    brokers: list[BrokerLogDirs] = []
    for broker in _int_order(described):
        dirs = described[broker]
        entries: list[LogDirEntry] = []
        for path in java_hash_order(list(dirs), java_string_hash, sizing="sized"):
            d = dirs[path]
            replicas = [(tp, info) for tp, info in d.replicas.items() if not topics or tp.topic in topics]
            replicas = java_hash_order(replicas, lambda item: topic_partition_hash(item[0].topic, item[0].partition))
            entries.append(LogDirEntry(
                path, None if d.error is None else java_exception_name(d.error),
                [ReplicaEntry(tp.topic, tp.partition, info.size, info.offset_lag, info.is_future)
                 for tp, info in replicas]))
        brokers.append(BrokerLogDirs(broker, entries))
    return LogDirsResult(existing, brokers)


def to_json(result: LogDirsResult) -> str:
    """Kafka's JSON line (key order as Java's HashMaps iterate them)."""
    doc = {
        "brokers": [
            {
                "broker": b.broker,
                "logDirs": [
                    {
                        "partitions": [
                            {"partition": f"{r.topic}-{r.partition}", "size": r.size, "offsetLag": r.offset_lag,
                             "isFuture": r.is_future}
                            for r in d.partitions
                        ],
                        "error": d.error,
                        "logDir": d.log_dir,
                    }
                    for d in b.log_dirs
                ],
            }
            for b in result.brokers
        ],
        "version": 1,
    }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
