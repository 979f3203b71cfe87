"""kafka-get-offsets logic (GetOffsetShell): offsets of the partitions matching Kafka's filters.

Filters: `--topic` regex (all topics without it) with `--partitions 0,1`, or `--topic-partitions`
rules `topicRegex[:N | :N- | :-N | :N-M]` (M exclusive), comma separated. `--time` is latest|-1,
earliest|-2, max-timestamp|-3, earliest-local|-4, latest-tiered|-5, earliest-pending-upload|-6 or a
timestamp in ms. Results are sorted by the `topic-partition` string (Kafka's TreeMap over
TopicPartition.toString, so `t-10` sorts before `t-2`); partitions without an offset (a timestamp after
the last record, max-timestamp of an empty partition) are left out; a partition whose lookup fails is
reported through `skipped` ("Skip getting offsets for topic-partition t-0 due to error: ...").

Errors are `GetOffsetsError` (Kafka prints "Error occurred: <msg>").
Thread-safety: one call at a time per AdminClient.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.tools import ToolFailure
from kafkapy.tools.tool_support import IncludeList

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

TOPIC_PARTITION_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
INT_MAX = 2**31 - 1
NAMED_TIMES = {"latest": -1, "earliest": -2, "max-timestamp": -3, "earliest-local": -4, "latest-tiered": -5,
               "earliest-pending-upload": -6}


class GetOffsetsError(ToolFailure):
    """Kafka's TerseException: printed as "Error occurred: <msg>"."""


@dataclass(frozen=True)
class PartitionOffset:
    topic: str
    partition: int
    offset: int


@dataclass
class OffsetsResult:
    offsets: list[PartitionOffset]
    skipped: list[str] = field(default_factory=list)


def parse_time(spec: str) -> int:
    if spec in NAMED_TIMES:
        return NAMED_TIMES[spec]
    try:
        return int(spec)
    except ValueError:
        raise GetOffsetsError(
            f"Malformed time argument {spec}. Please use -1 or latest / -2 or earliest / -3 or max-timestamp / "
            "-4 or earliest-local / -5 or latest-tiered / -6 or earliest-pending-upload, or a specified long format "
            "timestamp") from None


@dataclass
class _Rule:
    topics: IncludeList
    allows_partition: Callable[[int], bool]


def parse_topic_partitions(spec: str) -> list[_Rule]:
    rules = []
    specs = spec.split(",")
    while len(specs) > 1 and specs[-1] == "":  # Java's split drops trailing empty strings
        specs.pop()
    for rule in specs:
        m = TOPIC_PARTITION_PATTERN.fullmatch(rule)
        if not m:
            raise GetOffsetsError(f"Invalid rule specification: {rule}")

        def group(i: int, m: re.Match[str] = m) -> str | None:
            return m.group(i) or None

        topics = IncludeList(group(1) or ".*")
        exact, low, high = group(2), group(3), group(4)
        if exact is not None:
            rules.append(_Rule(topics, _in_range(int(exact), int(exact) + 1)))
        else:
            rules.append(_Rule(topics, _in_range(int(low) if low is not None else 0,
                                                 int(high) if high is not None else INT_MAX)))
    return rules


def parse_partitions(spec: str | None) -> set[int]:
    if not spec:
        return set()
    try:
        return {int(p) for p in spec.split(",")}
    except ValueError:
        raise GetOffsetsError(f"--partitions expects a comma separated list of numeric partition ids, but received: "
                              f"{spec}") from None


def get_offsets(
    admin: AdminClient,
    topic: str | None = None,
    partitions: str | None = None,
    topic_partitions: str | None = None,
    time: str = "latest",
    exclude_internal_topics: bool = False,
) -> OffsetsResult:
    from kafkapy.common.errors import KafkaError
    from kafkapy.common.topic_partition import TopicPartition
    from kafkapy.tools.tool_support import error_message, java_error_text

    if topic_partitions is not None and (topic is not None or partitions is not None):
        raise GetOffsetsError("--topic-partitions cannot be used with --topic or --partitions")
    spec = parse_time(time)
    if topic_partitions is not None:
        rules = parse_topic_partitions(topic_partitions)
    else:
        wanted = parse_partitions(partitions)
        rules = [_Rule(IncludeList(topic if topic is not None else ".*"), lambda p: not wanted or p in wanted)]

    names = [n for n in admin.list_topics(include_internal=not exclude_internal_topics)
             if any(r.topics.is_topic_allowed(n, exclude_internal_topics) for r in rules)]
    tps: list[Any] = []
    if names:
        described = admin.describe_topics(names)
        for name in names:
            for p in described[name].partitions:
                if any(r.topics.is_topic_allowed(name, exclude_internal_topics) and r.allows_partition(p.partition)
                       for r in rules):
                    tps.append(TopicPartition(name, p.partition))
    if not tps:
        raise GetOffsetsError("Could not match any topic-partitions with the specified filters")

    skipped: list[str] = []
    found = admin.list_offsets(dict.fromkeys(tps, spec), raise_errors=False)
    for tp in tps:  # Kafka reads each partition's future in the order it asked
        e = found.get(tp)
        if isinstance(e, KafkaError):
            skipped.append(f"Skip getting offsets for topic-partition {tp.topic}-{tp.partition} due to error: "
                           f"{error_message(e) if e.message else java_error_text(e)}")
    offsets = [PartitionOffset(tp.topic, tp.partition, info.offset)
               for tp, info in found.items()
               if info is not None and not isinstance(info, KafkaError) and info.offset != -1]
    offsets.sort(key=lambda o: f"{o.topic}-{o.partition}")
    return OffsetsResult(offsets, skipped)


def _in_range(lo: int, hi: int) -> Callable[[int], bool]:
    return lambda p: lo <= p < hi
