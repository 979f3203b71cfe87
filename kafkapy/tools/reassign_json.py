"""kafka-reassign-partitions' file formats and input checks (Kafka 4.x's ReassignPartitionsCommand).

- reassignment JSON `{"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[1,2],
  "log_dirs":["any","any"]}]}` (`log_dirs` optional; "any" or an absolute path per replica): parsed by
  `parse_partition_reassignment_data` / `parse_execute_assignment_args` (Kafka's checks and messages), written
  by `format_reassignment_json` as Kafka's Jackson writes it (one compact line, partitions sorted by topic
  then partition);
- topics-to-move JSON `{"topics":[{"topic":"foo"}],"version":1}` and the `--broker-list` "0,1,2"
  (`parse_generate_assignment_args`).
Failures are `ReassignError` (Kafka's message; `terse` = Kafka's TerseException, printed without
"Error: "; `partial` = what the action did before failing). Sets Kafka prints come out in Java HashSet order.
Pure functions; thread-safe.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools import ToolFailure
from kafkapy.tools.tool_support import java_hash_order, java_string_hash, topic_partition_hash

ANY_LOG_DIR = "any"


class ReassignError(ToolFailure):
    def __init__(self, message: str, terse: bool = False, partial: Any = None) -> None:
        super().__init__(message)
        self.terse = terse
        self.partial = partial


class TopicPartitionReplica(NamedTuple):
    topic: str
    partition: int
    broker_id: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}-{self.broker_id}"


Assignment = dict[TopicPartition, list[int]]


def tp_sort_key(tp: TopicPartition) -> tuple[str, int]:
    return (tp.topic, tp.partition)


def replica_sort_key(r: TopicPartitionReplica) -> tuple[int, str, int]:
    return (r.broker_id, r.topic, r.partition)


def _java_set_of_ints(values: Iterable[int]) -> str:
    return "[" + ", ".join(map(str, java_hash_order(list(dict.fromkeys(values)), lambda v: v))) + "]"


def _duplicates(values: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    return list(dict.fromkeys(v for v in values if v in seen or seen.add(v)))  # type: ignore[func-returns-value]


# --- JSON ------------------------------------------------------------------------------------------


def _loads(text: str) -> Any:
    def reject(name: str) -> Any:
        raise ValueError(f"Non-standard token '{name}'")

    try:
        return json.loads(text, parse_constant=reject)
    except ValueError as e:
        raise ReassignError(f"The input string is not a valid JSON: {e}") from None


def _obj(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ReassignError(f"Expected JSON object, received {json.dumps(value)}")
    return value


def _arr(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ReassignError(f"Expected JSON array, received {json.dumps(value)}")
    return value


def _field(obj: dict[str, Any], name: str) -> Any:
    if name not in obj:
        raise ReassignError(f"No such field exists: `{name}`")
    return obj[name]


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and (not math.isfinite(value) or value != int(value))):
        raise ReassignError(f"Expected `Int` value, received {json.dumps(value)}")
    return int(value)


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ReassignError(f"Expected `String` value, received {json.dumps(value)}")
    return value


def _version(obj: dict[str, Any]) -> int:
    version = _int(obj["version"]) if "version" in obj else 1
    if version != 1:
        raise ReassignError(f"Not supported version field value {version}")
    return version


def parse_topics_data(text: str) -> list[str]:
    """The topics of a --topics-to-move-json-file, in file order."""
    try:
        js = json.loads(text)
    except ValueError:
        raise ReassignError("The input string is not a valid JSON") from None
    obj = _obj(js)
    _version(obj)
    return [_str(_field(_obj(t), "topic")) for t in _arr(obj.get("topics", []))]


def parse_partition_reassignment_data(
        text: str) -> tuple[list[tuple[TopicPartition, list[int]]], dict[TopicPartitionReplica, str]]:
    """Kafka's parsePartitionReassignmentData: (partition, replicas) entries in file order (duplicates kept
    for the caller to check) and the replicas with a log dir other than "any"."""
    obj = _obj(_loads(text))
    _version(obj)
    parts: list[tuple[TopicPartition, list[int]]] = []
    log_dirs: dict[TopicPartitionReplica, str] = {}
    for item in _arr(obj.get("partitions", [])):
        fields = _obj(item)
        tp = TopicPartition(_str(_field(fields, "topic")), _int(_field(fields, "partition")))
        replicas = [_int(r) for r in _arr(_field(fields, "replicas"))]
        dirs = [_str(d) for d in _arr(fields["log_dirs"])] if "log_dirs" in fields else [ANY_LOG_DIR] * len(replicas)
        if len(dirs) != len(replicas):
            raise ReassignError(f"Size of replicas list [{', '.join(map(str, replicas))}] is different from size of "
                                f"log dirs list [{', '.join(dirs)}] for partition {tp}")
        parts.append((tp, replicas))
        for replica, log_dir in zip(replicas, dirs, strict=True):
            if log_dir != ANY_LOG_DIR:
                log_dirs[TopicPartitionReplica(tp.topic, tp.partition, replica)] = log_dir
    return parts, log_dirs


def parse_execute_assignment_args(text: str) -> tuple[Assignment, dict[TopicPartitionReplica, str]]:
    parts, log_dirs = parse_partition_reassignment_data(text)
    if not parts:
        raise ReassignError("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in parts):
        raise ReassignError("Partition replica list cannot be empty")
    duplicate_parts = _duplicates([tp for tp, _ in parts])
    if duplicate_parts:
        ordered = java_hash_order(duplicate_parts, lambda tp: topic_partition_hash(tp.topic, tp.partition))
        raise ReassignError("Partition reassignment contains duplicate topic partitions: "
                            + ",".join(map(str, ordered)))
    duplicate_replicas = [(tp, _duplicates(replicas)) for tp, replicas in parts if _duplicates(replicas)]
    if duplicate_replicas:
        details = ". ".join(
            f"{tp} contains multiple entries for {','.join(map(str, java_hash_order(d, lambda v: v)))}"
            for tp, d in duplicate_replicas)
        raise ReassignError(f"Partition replica lists may not contain duplicate entries: {details}")
    return dict(parts), log_dirs


def parse_broker_list(text: str) -> list[int]:
    """Java's String.split(",") (trailing empty strings dropped) then Integer.parseInt on each piece."""
    pieces = text.split(",")
    while len(pieces) > 1 and pieces[-1] == "":
        pieces.pop()
    brokers = []
    for piece in pieces:
        if not re.fullmatch(r"[+-]?[0-9]+", piece) or not -2**31 <= int(piece) < 2**31:
            raise ReassignError(f'For input string: "{piece}"')
        brokers.append(int(piece))
    return brokers


def parse_generate_assignment_args(topics_json: str, broker_list: str) -> tuple[list[int], list[str]]:
    brokers = parse_broker_list(broker_list)
    duplicate_brokers = _duplicates(brokers)
    if duplicate_brokers:
        raise ReassignError(f"Broker list contains duplicate entries: {_java_set_of_ints(duplicate_brokers)}")
    topics = parse_topics_data(topics_json)
    duplicate_topics = _duplicates(topics)
    if duplicate_topics:
        ordered = java_hash_order(duplicate_topics, java_string_hash)
        raise ReassignError(f"List of topics to reassign contains duplicate entries: [{', '.join(ordered)}]")
    return brokers, topics


def reassignment_document(parts: Mapping[TopicPartition, list[int]],
                          log_dirs: Mapping[TopicPartitionReplica, str] | None = None) -> dict[str, Any]:
    log_dirs = log_dirs or {}
    return {"version": 1, "partitions": [
        {"topic": tp.topic, "partition": tp.partition, "replicas": list(parts[tp]),
         "log_dirs": [log_dirs.get(TopicPartitionReplica(tp.topic, tp.partition, r), ANY_LOG_DIR)
                      for r in parts[tp]]}
        for tp in sorted(parts, key=tp_sort_key)]}


def format_reassignment_json(parts: Mapping[TopicPartition, list[int]],
                             log_dirs: Mapping[TopicPartitionReplica, str] | None = None) -> str:
    """Kafka's formatAsReassignmentJson: one compact line."""
    return json.dumps(reassignment_document(parts, log_dirs), separators=(",", ":"), ensure_ascii=False)
