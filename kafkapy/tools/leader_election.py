"""kafka-leader-election logic (LeaderElectionCommand) and the parts the deprecated
kafka-preferred-replica-election reuses.

- `parse_election_json(text, what)`: Kafka's `{"partitions": [{"topic": "foo", "partition": 1}, ...]}`
  file; duplicates, a missing "partitions" field or text that is not JSON are `LeaderElectionError`s with
  Kafka's wording ("Replica election data ..."; the deprecated tool says "Preferred replica election data").
- `elect_leaders(admin, election_type, partitions)`: one AdminClient.elect_leaders call (None = every
  partition), split as Kafka splits it into succeeded, ELECTION_NOT_NEEDED ("noop") and failed partitions,
  each in the iteration order of the Java HashSet/HashMap Kafka prints from.
- Kafka's output lines: `succeeded_line`, `noop_line`, `failed_line`, `failure_message`.

Errors are `LeaderElectionError` (Kafka prints its message alone, without an "Error:" prefix).
Thread-safety: one call at a time per AdminClient.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools import ToolFailure
from kafkapy.tools.tool_support import java_error_text, java_hash_order, topic_partition_hash

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

ELECTION_TYPES = ("PREFERRED", "UNCLEAN")


class LeaderElectionError(ToolFailure):
    """Kafka's AdminCommandFailedException / AdminOperationException: one line, printed as is."""


@dataclass
class ElectionResult:
    """Outcome of one election call; partitions in the order Kafka prints them."""

    election_type: str
    succeeded: list[TopicPartition] = field(default_factory=list)
    noop: list[TopicPartition] = field(default_factory=list)
    failed: dict[TopicPartition, Any] = field(default_factory=dict)  # KafkaError per partition

    def __json__(self) -> dict[str, Any]:
        return {
            "electionType": self.election_type,
            "succeeded": [_tp_json(tp) for tp in self.succeeded],
            "noop": [_tp_json(tp) for tp in self.noop],
            "failed": [dict(_tp_json(tp), error=java_error_text(e)) for tp, e in self.failed.items()],
        }


def _tp_json(tp: TopicPartition) -> dict[str, Any]:
    return {"topic": tp.topic, "partition": tp.partition}


def tp_hash_order(tps: Iterable[TopicPartition]) -> list[TopicPartition]:
    """A java.util.HashSet<TopicPartition>'s iteration order (Kafka prints these sets as they iterate)."""
    return java_hash_order(list(tps), lambda tp: topic_partition_hash(tp.topic, tp.partition))


def java_set_string(tps: Iterable[TopicPartition]) -> str:
    """AbstractCollection.toString of a HashSet<TopicPartition>: `[foo-0, bar-1]`."""
    return "[" + ", ".join(str(tp) for tp in tp_hash_order(tps)) + "]"


def parse_election_type(value: str) -> str:
    """joptsimple's EnumConverter for ElectionType: case-insensitive PREFERRED / UNCLEAN."""
    upper = value.upper()
    if upper not in ELECTION_TYPES:
        raise LeaderElectionError(f"Cannot parse argument '{value}' of option election-type")
    return upper


def _reject_constants(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}'")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constants)


def _expect_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise LeaderElectionError(f"Expected JSON object, received {json.dumps(value)}")
    return value


def _field(obj: dict[str, Any], name: str) -> Any:
    if name not in obj:
        raise LeaderElectionError(f"No such field exists: `{name}`")
    return obj[name]


def _as_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and (not math.isfinite(value) or value != int(value))):
        raise LeaderElectionError(f"Expected `Int` value, received {json.dumps(value)}")
    return int(value)


def _as_str(value: Any) -> str:
    if not isinstance(value, str):
        raise LeaderElectionError(f"Expected `String` value, received {json.dumps(value)}")
    return value


def parse_election_json(text: str, what: str = "Replica election data") -> list[TopicPartition]:
    """The partitions of an election JSON file, in file order (duplicates refused, as Kafka does)."""
    try:
        js = _loads(text)
    except ValueError:
        raise LeaderElectionError(f"{what} is empty") from None  # Kafka's Json.parseFull gives up silently
    obj = _expect_object(js)
    if "partitions" not in obj:
        if what == "Replica election data":
            raise LeaderElectionError(f'{what} is missing "partitions" field')
        raise LeaderElectionError(f"{what} is empty")
    items = obj["partitions"]
    if not isinstance(items, list):
        raise LeaderElectionError(f"Expected JSON array, received {json.dumps(items)}")
    partitions = []
    for item in items:
        entry = _expect_object(item)
        partitions.append(TopicPartition(_as_str(_field(entry, "topic")), _as_int(_field(entry, "partition"))))
    seen: set[TopicPartition] = set()
    duplicates = [tp for tp in partitions if tp in seen or seen.add(tp)]  # type: ignore[func-returns-value]
    if duplicates:
        if what == "Replica election data":
            raise LeaderElectionError(f"{what} contains duplicate partitions: {java_set_string(set(duplicates))}")
        raise LeaderElectionError(f"{what} contains duplicate partitions: "
                                  + ",".join(str(tp) for tp in dict.fromkeys(duplicates)))
    return list(dict.fromkeys(partitions))


def elect_leaders(admin: AdminClient, election_type: str, partitions: list[TopicPartition] | None,
                  timeout_ms: float | None = None) -> ElectionResult:
    """AdminClient.electLeaders, split into succeeded / not needed / failed as Kafka's tools do."""
    from kafkapy.client.admin_types import ElectionType
    from kafkapy.common.errors import ElectionNotNeededError

    results = admin.elect_leaders(ElectionType[election_type], partitions, timeout_ms=timeout_ms)
    ordered = tp_hash_order(results)
    out = ElectionResult(election_type)
    for tp in ordered:
        error = results[tp]
        if error is None:
            out.succeeded.append(tp)
        elif isinstance(error, ElectionNotNeededError):
            out.noop.append(tp)
        else:
            out.failed[tp] = error
    return out


def succeeded_line(result: ElectionResult) -> str:
    return (f"Successfully completed leader election ({result.election_type}) for partitions "
            + ", ".join(map(str, result.succeeded)))


def noop_line(result: ElectionResult) -> str:
    return "Valid replica already elected for partitions " + ", ".join(map(str, result.noop))


def failed_line(result: ElectionResult, tp: TopicPartition) -> str:
    return (f"Error completing leader election ({result.election_type}) for partition: {tp}: "
            f"{java_error_text(result.failed[tp])}")


def failure_message(result: ElectionResult) -> str:
    return f"{len(result.failed)} replica(s) could not be elected"
