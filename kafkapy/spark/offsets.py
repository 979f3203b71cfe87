"""Spark's JSON forms of Kafka offsets and partitions (Spark's JsonUtils), and offset-range specs.

Formats: partition offsets `{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}` (-2 earliest, -1 latest),
timestamps `{"topicA":{"0":1700000000000}}` (same shape), assignments `{"topicA":[0,1],"topicB":[2]}`.
The streaming checkpoint stores the partition-offset form (as Spark's KafkaSourceOffset does).
Pure functions; thread-safe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.spark.errors import KafkaSourceError

EARLIEST = -2
LATEST = -1


@dataclass(frozen=True)
class OffsetSpec:
    """Where a range starts or ends: earliest, latest, per-partition offsets, or timestamps.

    kind: "earliest" | "latest" | "offsets" (partition_values: {tp: offset, -2/-1 allowed}) |
    "timestamps" (partition_values: {tp: ms}) | "timestamp" (one ms for every partition).
    `strategy_latest`: Spark's startingOffsetsByTimestampStrategy=latest (no matching offset -> latest).
    """

    kind: str
    partition_values: dict[TopicPartition, int] | None = None
    timestamp: int | None = None
    strategy_latest: bool = False


def parse_partition_offsets(text: str, what: str = "offsets") -> dict[TopicPartition, int]:
    """{"t":{"0":23}} -> {TopicPartition("t", 0): 23}."""
    example = '{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}'
    try:
        doc = json.loads(text)
        out: dict[TopicPartition, int] = {}
        if not isinstance(doc, dict):
            raise TypeError
        for topic, parts in doc.items():
            if not isinstance(parts, dict):
                raise TypeError
            for p, v in parts.items():
                if isinstance(v, bool) or not isinstance(v, int):
                    raise TypeError
                out[TopicPartition(str(topic), int(p))] = v
        return out
    except (ValueError, TypeError):
        raise KafkaSourceError(f"Expected e.g. {example}, got {text}") from None


def parse_assignment(text: str) -> list[TopicPartition]:
    """{"t":[0,1]} -> [t-0, t-1] (Spark's `assign` option)."""
    try:
        doc = json.loads(text)
        if not isinstance(doc, dict):
            raise TypeError
        out = []
        for topic, parts in doc.items():
            if not isinstance(parts, list):
                raise TypeError
            for p in parts:
                if isinstance(p, bool) or not isinstance(p, int):
                    raise TypeError
                out.append(TopicPartition(str(topic), p))
        return out
    except (ValueError, TypeError):
        raise KafkaSourceError(f'Expected e.g. {{"topicA":[0,1],"topicB":[0,1]}}, got {text}') from None


def partition_offsets_json(offsets: dict[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """{tp: offset} -> the JSON-able {"t": {"0": 23}} (topics and partitions sorted)."""
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    return out


def from_partition_offsets_json(doc: dict) -> dict[TopicPartition, int]:
    return {TopicPartition(t, int(p)): int(o) for t, parts in doc.items() for p, o in parts.items()}


def format_partition_set(tps: object) -> str:
    """Scala's `Set(t-0, t-1)` rendering, used in Spark's assertion messages."""
    return "Set(" + ", ".join(str(tp) for tp in sorted(tps)) + ")"  # type: ignore[call-overload]
