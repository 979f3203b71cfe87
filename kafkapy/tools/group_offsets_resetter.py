"""GroupOffsetsResetter: the new offsets `kafkapy consumer-groups --reset-offsets` plans (Kafka's class).

Scenarios (exactly one): to-earliest / to-latest (ListOffsets), to-current (committed, else log end),
to-offset N and shift-by N (clamped into [log start, log end] with Kafka's WARN), to-datetime /
by-duration (ListOffsets by timestamp; an empty partition falls back to the log end with Kafka's
"Warn: Partition p from topic t is empty." line), from-file (CSV `topic,partition,offset` for one
group or `group,topic,partition,offset`). Partitions come from --topic (`t` or `t:0,1`) or
--all-topics (the group's committed partitions); every one must exist and have a leader.

Also: Kafka's date-time (`Utils.getDateTime`) and ISO-8601 duration (`Duration.parse`) parsing, and the
CSV reader/writer. Results are plain dicts {TopicPartition: offset}. Stateless apart from the admin
client; not thread-safe (one tool run).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools import ToolFailure
from kafkapy.tools.tool_support import listed_offset

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient


class ResetArgumentError(ToolFailure):
    """Kafka raises IllegalArgumentException (a usage error) for these."""


@dataclass
class ResetSpec:
    to_earliest: bool = False
    to_latest: bool = False
    to_current: bool = False
    to_offset: int | None = None
    shift_by: int | None = None
    to_datetime: str | None = None
    by_duration: str | None = None
    from_file: str | None = None


@dataclass
class ResetPlan:
    offsets: dict[TopicPartition, int]
    warnings: list[str] = field(default_factory=list)  # Kafka's logger WARN lines (stderr)
    notices: list[str] = field(default_factory=list)  # lines Kafka prints on stdout ("Warn: ...")


# --------------------------------------------------------------------------------------------------
# parsing


_DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{3}))?(Z|[+-]\d{2}(?::?\d{2})?)?$")


def parse_datetime(text: str) -> int:
    """Kafka's Utils.getDateTime: `yyyy-MM-ddTHH:mm:ss[.SSS][zone]`, UTC when no zone; epoch ms."""
    if "T" not in text:
        raise ResetArgumentError("Error parsing timestamp. It does not contain a 'T' according to ISO8601 format")
    m = _DATETIME.match(text.strip())
    if m is None:
        raise ToolFailure(f'Unparseable date: "{text}"')
    year, month, day, hour, minute, second, millis, zone = m.groups()
    tz = dt.UTC
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
        tz = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    try:
        when = dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=tz)
    except ValueError as e:
        raise ToolFailure(f'Unparseable date: "{text}"') from e
    return int(when.timestamp()) * 1000 + int(millis or 0)


_DURATION = re.compile(
    r"^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$",
    re.IGNORECASE)


def parse_duration_ms(text: str) -> int:
    """Java's Duration.parse (PnDTnHnMn.nS) in milliseconds."""
    m = _DURATION.match(text.strip())
    if m is None or text.strip().upper().endswith("T") or text.strip().upper() in ("P", "-P", "+P"):
        raise ToolFailure(f"Text cannot be parsed to a Duration: {text}")
    sign, days, hours, minutes, seconds, fraction = m.groups()
    if not any(v is not None for v in (days, hours, minutes, seconds)):
        raise ToolFailure(f"Text cannot be parsed to a Duration: {text}")
    total = Decimal(int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60)
    if seconds is not None:
        secs = Decimal(seconds)
        frac = Decimal("0." + (fraction or "0"))
        total += secs - frac if seconds.startswith("-") else secs + frac
    if sign == "-":
        total = -total
    return int(total * 1000)


def parse_topic_partitions(arg: str) -> list[TopicPartition]:
    """`topic:0,1,2` (Kafka's parseTopicsWithPartitions)."""
    parts = arg.split(":")
    if len(parts) != 2 or not parts[1]:
        raise ResetArgumentError(f"Invalid topic arg '{arg}', expected topic name and partitions")
    topic, partitions = parts
    out = []
    for p in partitions.split(","):
        try:
            out.append(TopicPartition(topic, int(p)))
        except ValueError:
            raise ResetArgumentError(f"Invalid partition '{p}' specified in topic arg '{arg}''") from None
    return out


def read_reset_plan(text: str, groups: list[str]) -> dict[str, dict[TopicPartition, int]]:
    """Kafka's CSV: `topic,partition,offset` when one --group was given, else `group,topic,partition,offset`."""
    lines = [line for line in text.split("\n") if line.strip()]
    rows = list(csv.reader(lines))
    single = len(groups) == 1 and bool(rows) and len(rows[0]) == 3 and _is_int(rows[0][1])
    plan: dict[str, dict[TopicPartition, int]] = {}
    for row in rows:
        try:
            if single:
                group, (topic, partition, offset) = groups[0], row
            else:
                group, topic, partition, offset = row
            plan.setdefault(group, {})[TopicPartition(topic, int(partition))] = int(offset)
        except ValueError as e:
            raise ToolFailure(f"Invalid reset plan line: {','.join(row)}") from e
    return plan


def _is_int(text: str) -> bool:
    try:
        int(text)
        return True
    except ValueError:
        return False


def _csv_field(value: Any) -> str:
    text = str(value)
    if any(c in text for c in ',"\n\r') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


def export_csv(rows: Iterable[tuple[Any, ...]]) -> str:
    """Kafka's CsvUtils writer: one line per record, no header, quoting only where needed."""
    out = io.StringIO()
    for row in rows:
        out.write(",".join(_csv_field(v) for v in row) + "\n")
    return out.getvalue()


# --------------------------------------------------------------------------------------------------
# planning


class GroupOffsetsResetter:
    def __init__(self, admin: AdminClient, timeout_ms: int, now_ms: int | None = None) -> None:
        self.admin = admin
        self.timeout_ms = timeout_ms
        self.now_ms = now_ms

    def describe_partitions(self, topics: Iterable[str]) -> dict[str, dict[int, Any]]:
        """Partitions (with their leader or None) of each existing topic."""
        names = sorted(set(topics))
        if not names:
            return {}
        found = self.admin.describe_topics(names, timeout_ms=self.timeout_ms, raise_errors=False)
        out: dict[str, dict[int, Any]] = {}
        for name, desc in found.items():
            if desc.error is None:
                out[name] = {p.partition: p.leader for p in desc.partitions}
        return out

    def partitions_to_reset(self, topic_args: list[str]) -> list[TopicPartition]:
        specified: list[TopicPartition] = []
        whole: list[str] = []
        for arg in topic_args:
            if ":" in arg:
                specified += parse_topic_partitions(arg)
            else:
                whole.append(arg)
        if whole:
            described = self.describe_partitions(whole)
            for topic in whole:
                if topic not in described:
                    raise ToolFailure(f"This server does not host this topic-partition: topic {topic}")
                specified += [TopicPartition(topic, p) for p in sorted(described[topic])]
        return specified

    def check_all_valid(self, partitions: list[TopicPartition]) -> None:
        described = self.describe_partitions(tp.topic for tp in partitions)
        missing = [tp for tp in partitions if tp.partition not in described.get(tp.topic, {})]
        if missing:
            raise ToolFailure('The partitions "' + ",".join(map(str, missing)) + '" do not exist')
        leaderless = [tp for tp in partitions if described[tp.topic][tp.partition] is None]
        if leaderless:
            raise ToolFailure('The partitions "' + ",".join(map(str, leaderless)) + '" have no leader')

    def log_offsets(self, partitions: Iterable[TopicPartition], spec: str | int) -> dict[TopicPartition, int | None]:
        tps = list(dict.fromkeys(partitions))
        if not tps:
            return {}
        found = self.admin.list_offsets({tp: spec for tp in tps}, timeout_ms=self.timeout_ms)
        return {tp: listed_offset(found.get(tp)) for tp in tps}

    def _check_range(self, requested: Mapping[TopicPartition, int], plan: ResetPlan) -> dict[TopicPartition, int]:
        starts = self.log_offsets(requested, "earliest")
        ends = self.log_offsets(requested, "latest")
        out = {}
        for tp, offset in requested.items():
            end, start = ends.get(tp), starts.get(tp)
            if end is not None and offset > end:
                plan.warnings.append(f"New offset ({offset}) is higher than latest offset for topic partition {tp}. "
                                     f"Value will be set to {end}.")
                out[tp] = end
            elif start is not None and offset < start:
                plan.warnings.append(f"New offset ({offset}) is lower than earliest offset for topic partition {tp}. "
                                     f"Value will be set to {start}.")
                out[tp] = start
            else:
                out[tp] = offset
        return out

    def prepare(self, group: str, partitions: list[TopicPartition], spec: ResetSpec,
                committed: Mapping[TopicPartition, Any], file_plan: dict[str, dict[TopicPartition, int]] | None
                ) -> ResetPlan:
        plan = ResetPlan({})
        self.check_all_valid(partitions)
        if spec.to_offset is not None:
            plan.offsets = self._check_range({tp: spec.to_offset for tp in partitions}, plan)
        elif spec.to_earliest or spec.to_latest:
            which = "earliest" if spec.to_earliest else "latest"
            found = self.log_offsets(partitions, which)
            for tp in partitions:
                if found.get(tp) is None:
                    raise ResetArgumentError(f"Error getting {'starting' if spec.to_earliest else 'ending'} offset "
                                             f"of topic partition: {tp}")
                plan.offsets[tp] = found[tp]  # type: ignore[assignment]
        elif spec.shift_by is not None:
            requested = {}
            for tp in partitions:
                current = committed.get(tp)
                if current is None:
                    raise ResetArgumentError(f"Cannot shift offset for partition {tp} since there is no current "
                                             "committed offset")
                requested[tp] = current.offset + spec.shift_by
            plan.offsets = self._check_range(requested, plan)
        elif spec.to_datetime is not None or spec.by_duration is not None:
            if spec.to_datetime is not None:
                timestamp = parse_datetime(spec.to_datetime)
            else:
                import time

                now = self.now_ms if self.now_ms is not None else int(time.time() * 1000)
                timestamp = now - parse_duration_ms(spec.by_duration or "")
            found = self.log_offsets(partitions, timestamp)
            empty = [tp for tp in partitions if found.get(tp) is None]
            for tp in empty:
                plan.notices.append(f"\nWarn: Partition {tp.partition} from topic {tp.topic} is empty. Falling back "
                                    "to latest known offset.")
            ends = self.log_offsets(empty, "latest")
            for tp in partitions:
                value = found.get(tp) if found.get(tp) is not None else ends.get(tp)
                if value is None:
                    raise ResetArgumentError(f"Error getting offset by timestamp of topic partition: {tp}")
                plan.offsets[tp] = value
        elif file_plan is not None:
            wanted = file_plan.get(group)
            if wanted is None:
                raise ToolFailure(f"No reset plan for group {group} found.")
            self.check_all_valid(list(wanted))
            plan.offsets = self._check_range(wanted, plan)
        elif spec.to_current:
            have = [tp for tp in partitions if committed.get(tp) is not None]
            missing = [tp for tp in partitions if committed.get(tp) is None]
            plan.offsets = {tp: committed[tp].offset for tp in have}
            for tp, end in self.log_offsets(missing, "latest").items():
                if end is None:
                    raise ToolFailure(f"Error getting ending offset of topic partition: {tp}")
                plan.offsets[tp] = end
        else:
            raise ResetArgumentError("Option '[reset-offsets]' requires one of the following scenarios: "
                                     "[to-offset, shift-by, to-datetime, by-duration, to-earliest, to-latest, "
                                     "to-current, from-file]")
        return plan
