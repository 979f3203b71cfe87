"""`kafkapy streams-application-reset` logic (Kafka's StreamsResetter, kafka-streams-application-reset.sh).

For one Streams application id (= its consumer group): refuses while the group has members (or removes
them with --force), resets the group's committed offsets on the input topics (earliest by default, or
to-offset / to-latest / shift-by / to-datetime / by-duration / from-file), moves the intermediate topics'
offsets to their log end, and deletes the application's internal topics (`<application.id>-...-changelog`,
`-repartition`, the foreign-key join topics). Kafka drives an embedded consumer (assign, seek, commitSync);
here the same offsets are computed with ListOffsets and committed with the admin's OffsetCommit
(generation -1), which the coordinator accepts for a group without members - the state Kafka's tool
requires before it commits.

Output: the lines Kafka prints, handed to `say` (stdout) and `warn` (stderr) in Kafka's order (HashMap /
HashSet iteration order where Kafka iterates one). The result dataclass is what `--output json` shows.
Not thread-safe (one tool run).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools import ToolFailure
from kafkapy.tools.group_offsets_resetter import parse_datetime, parse_duration_ms
from kafkapy.tools.tool_support import java_hash_order, java_string_hash, listed_offset, topic_partition_hash

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

_FK_JOIN = re.compile(r".+-KTABLE-FK-JOIN-SUBSCRIPTION-(?:REGISTRATION|RESPONSE)-\d+-topic")


class StreamsResetError(ToolFailure):
    """What Kafka's tool reports as `ERROR: <java exception>` (exit 1)."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(message)
        self.java_class = java_class

    def java_text(self) -> str:
        return f"{self.java_class}: {self}"


@dataclass
class ResetOptions:
    application_id: str
    input_topics: list[str] = field(default_factory=list)
    intermediate_topics: list[str] = field(default_factory=list)
    internal_topics: list[str] = field(default_factory=list)
    to_offset: int | None = None
    to_earliest: bool = False
    to_latest: bool = False
    shift_by: int | None = None
    to_datetime: str | None = None
    by_duration: str | None = None
    from_file: str | None = None
    dry_run: bool = False
    force: bool = False
    auto_offset_reset: str = "latest"  # the embedded consumer's auto.offset.reset (its position without a commit)


@dataclass
class StreamsResetResult:
    application_id: str
    dry_run: bool
    removed_members: list[str]
    input_offsets: list[dict[str, Any]]  # {"topic", "partition", "offset"}
    intermediate_offsets: list[dict[str, Any]]
    not_found_topics: list[str]
    deleted_topics: list[str]
    exit_code: int


def matches_internal_topic_format(name: str) -> bool:
    """Kafka's StreamsResetter.matchesInternalTopicFormat."""
    return (name.endswith("-changelog") or name.endswith("-repartition")
            or name.endswith("-subscription-registration-topic") or name.endswith("-subscription-response-topic")
            or _FK_JOIN.fullmatch(name) is not None)


def java_list(items: Iterable[Any]) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def member_text(m: Any) -> str:
    """Java's MemberDescription.toString (classic group: no target assignment)."""
    parts = ",".join(str(tp) for tp in m.assignment)
    gid = m.group_instance_id if m.group_instance_id is not None else "null"
    return (f"(memberId={m.member_id}, groupInstanceId={gid}, clientId={m.client_id}, host={m.host}, "
            f"assignment=(topicPartitions={parts}), targetAssignment=Optional.empty)")


def parse_reset_plan_csv(text: str) -> dict[TopicPartition, int]:
    """Kafka's parseResetPlan: `TOPIC,PARTITION,OFFSET` per line."""
    if not text:
        raise StreamsResetError("java.text.ParseException", "Error parsing reset plan CSV file. It is empty,")
    plan: dict[TopicPartition, int] = {}
    for line in text.split("\n"):
        parts = line.split(",")
        if len(parts) != 3:
            raise StreamsResetError("java.text.ParseException",
                                    "Reset plan CSV file is not following the format `TOPIC,PARTITION,OFFSET`.")
        try:
            plan[TopicPartition(parts[0], int(parts[1]))] = int(parts[2])
        except ValueError as e:
            raise StreamsResetError("java.lang.NumberFormatException", f'For input string: "{e}"') from e
    return plan


class StreamsResetter:
    def __init__(self, admin: AdminClient, opts: ResetOptions, say: Callable[[str], None], warn: Callable[[str], None],
                 now_ms: Callable[[], int] | None = None, timeout_ms: int = 60_000) -> None:
        self.admin = admin
        self.opts = opts
        self.say = say
        self.warn = warn
        self.now_ms = now_ms or (lambda: int(time.time() * 1000))
        self.timeout_ms = timeout_ms
        self.all_topics: list[str] = []

    # ----------------------------------------------------------------------------------------------

    def run(self) -> StreamsResetResult:
        o = self.opts
        removed = self._maybe_delete_active_consumers()
        self.all_topics = sorted(self.admin.list_topics(timeout_ms=self.timeout_ms))
        if o.dry_run:
            self.say("----Dry run displays the actions which will be performed when running Streams Reset Tool----")
        result = StreamsResetResult(o.application_id, o.dry_run, removed, [], [], [], [], 0)
        result.exit_code = self._reset_input_and_seek_intermediate(result)
        result.deleted_topics = self._maybe_delete_internal_topics()
        return result

    def _maybe_delete_active_consumers(self) -> list[str]:
        group = self.opts.application_id
        desc = self.admin.describe_consumer_groups([group], timeout_ms=10_000, raise_errors=False)[group]
        if isinstance(desc, KafkaError):
            if desc.code != ErrorCode.GROUP_ID_NOT_FOUND:  # a group never used has no members to stop
                raise desc
            return []
        members = list(desc.members)
        if not members:
            return []
        if not self.opts.force:
            raise StreamsResetError(
                "java.lang.IllegalStateException",
                f"Consumer group '{group}' is still active and has following members: "
                f"{java_list(member_text(m) for m in members)}. Make sure to stop all running application instances "
                "before running the reset tool. You can use option '--force' to remove active members from the group.")
        self.say(f"Force deleting all active members in the group: {group}")
        errors = self.admin.remove_members_from_consumer_group(group, members, timeout_ms=self.timeout_ms)
        failed = {mid: err for mid, err in errors.items() if err is not None}
        if failed:
            mid, err = next(iter(failed.items()))
            raise StreamsResetError("org.apache.kafka.common.KafkaException",
                                    f"Encounter an error when trying to remove member {mid}: {err}")
        return [m.member_id for m in members]

    # ----------------------------------------------------------------------------------------------

    def _reset_input_and_seek_intermediate(self, result: StreamsResetResult) -> int:
        o = self.opts
        if not o.input_topics and not o.intermediate_topics:
            self.say("No input or intermediate topics specified. Skipping seek.")
            return 0
        if o.input_topics:
            self.say(f"Reset-offsets for input topics {java_list(o.input_topics)}")
        if o.intermediate_topics:
            self.say(f"Seek-to-end for intermediate topics {java_list(o.intermediate_topics)}")
        existing = set(self.all_topics)
        missing_input = [t for t in o.input_topics if t not in existing]
        missing_inter = [t for t in o.intermediate_topics if t not in existing]
        code = 0
        if missing_input:
            self.say("Following input topics are not found, skipping them")
            for t in missing_input:
                self.say(f"Topic: {t}")
            code = 1
        if missing_inter:
            self.say("Following intermediate topics are not found, skipping them")
            for t in missing_inter:
                self.say(f"Topic:{t}")  # sic: Kafka prints no space here
            code = 1
        result.not_found_topics = missing_input + missing_inter
        wanted = [t for t in dict.fromkeys(o.input_topics + o.intermediate_topics) if t in existing]
        if not wanted:
            return code
        subscribe = java_hash_order(wanted, java_string_hash, "sized")
        partitions = self._partitions_of(subscribe)
        inputs = java_hash_order([tp for tp in partitions if tp.topic in o.input_topics], _tp_hash)
        inters = java_hash_order([tp for tp in partitions if tp.topic not in o.input_topics], _tp_hash)
        positions: dict[TopicPartition, int] = {}
        if inputs:
            self.say(f"Following input topics offsets will be reset to (for consumer group {o.application_id})")
            positions.update(self._input_positions(inputs))
            for tp in inputs:
                self.say(f"Topic: {tp.topic} Partition: {tp.partition} Offset: {positions[tp]}")
        if inters:
            self.say(f"Following intermediate topics offsets will be reset to end (for consumer group "
                     f"{o.application_id})")
            for tp in inters:
                self.say(f"Topic: {tp.topic}")
            positions.update(self._known(self._log_offsets(inters, "latest")))
        if not o.dry_run:
            self.admin.alter_consumer_group_offsets(o.application_id, {tp: positions[tp] for tp in partitions},
                                                    timeout_ms=self.timeout_ms)
        result.input_offsets = [{"topic": tp.topic, "partition": tp.partition, "offset": positions[tp]} for tp in inputs]
        result.intermediate_offsets = [{"topic": tp.topic, "partition": tp.partition, "offset": positions[tp]}
                                       for tp in inters]
        self.say("Done.")
        return code

    def _partitions_of(self, topics: list[str]) -> list[TopicPartition]:
        found = self.admin.describe_topics(topics, timeout_ms=self.timeout_ms)
        out: list[TopicPartition] = []
        for t in topics:
            out += [TopicPartition(t, p.partition) for p in sorted(found[t].partitions, key=lambda p: p.partition)]
        return out

    def _log_offsets(self, tps: list[TopicPartition], spec: str | int) -> dict[TopicPartition, int | None]:
        found = self.admin.list_offsets({tp: spec for tp in tps}, timeout_ms=self.timeout_ms)
        return {tp: listed_offset(found.get(tp)) for tp in tps}

    def _input_positions(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        o = self.opts
        if o.to_offset is not None:
            return self._check_range({tp: o.to_offset for tp in tps}, tps, "sized")
        if o.to_latest:
            return self._known(self._log_offsets(tps, "latest"))
        if o.shift_by is not None:
            current = self._current_positions(tps)
            return self._check_range({tp: current[tp] + o.shift_by for tp in tps}, tps, "sized")
        if o.to_datetime is not None or o.by_duration is not None:
            if o.to_datetime is not None:
                ts = parse_datetime(o.to_datetime)
            else:
                ts = self.now_ms() - parse_duration_ms(o.by_duration or "")
            found = self._log_offsets(tps, ts)
            out: dict[TopicPartition, int] = {}
            for tp in tps:
                offset = found.get(tp)
                if offset is None or offset < 0:
                    out[tp] = self._known(self._log_offsets([tp], "latest"))[tp]
                    self.say(f"Partition {tp.partition} from topic {tp.topic} is empty, without a committed record. "
                             "Falling back to latest known offset.")
                else:
                    out[tp] = offset
            return out
        if o.from_file is not None:
            try:
                with open(o.from_file, encoding="utf-8") as f:
                    plan = parse_reset_plan_csv(f.read())
            except OSError as e:
                raise StreamsResetError("java.nio.file.NoSuchFileException", o.from_file) from e
            missing = [tp for tp in tps if tp not in plan]
            if missing:
                raise StreamsResetError("java.lang.NullPointerException",
                                        f"no offset for {missing[0]} in the reset plan")
            wanted = {tp: plan[tp] for tp in java_hash_order(list(plan), _tp_hash) if tp in set(tps)}
            return self._check_range(wanted, tps, None)
        return self._known(self._log_offsets(tps, "earliest"))

    def _current_positions(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        """The embedded consumer's position: the committed offset, else per auto.offset.reset."""
        committed = self.admin.list_consumer_group_offsets(self.opts.application_id, tps, timeout_ms=self.timeout_ms)
        out = {tp: c.offset for tp, c in committed.items() if c is not None and c.offset >= 0}
        rest = [tp for tp in tps if tp not in out]
        if rest:
            policy = self.opts.auto_offset_reset
            if policy not in ("earliest", "latest"):
                raise StreamsResetError("org.apache.kafka.clients.consumer.NoOffsetForPartitionException",
                                        f"Undefined offset with no reset policy for partitions: {java_list(rest)}")
            out.update(self._known(self._log_offsets(rest, policy)))
        return out

    def _check_range(self, requested: Mapping[TopicPartition, int], tps: list[TopicPartition],
                     sizing: str | None) -> dict[TopicPartition, int]:
        """Kafka's checkOffsetRange (its messages, in its HashMap order; note `>` earliest: equal is reported)."""
        starts = self._known(self._log_offsets(tps, "earliest"))
        ends = self._known(self._log_offsets(tps, "latest"))
        order = list(requested) if sizing is None else java_hash_order(list(requested), _tp_hash, sizing)
        out: dict[TopicPartition, int] = {}
        for tp in order:
            offset, end = requested[tp], ends[tp]
            if offset < end:
                if offset > starts[tp]:
                    out[tp] = offset
                else:
                    self.say(f"New offset ({offset}) is lower than earliest offset. Value will be set to {starts[tp]}")
                    out[tp] = starts[tp]
            else:
                self.say(f"New offset ({offset}) is higher than latest offset. Value will be set to {end}")
                out[tp] = end
        return out

    @staticmethod
    def _known(found: Mapping[TopicPartition, int | None]) -> dict[TopicPartition, int]:
        out: dict[TopicPartition, int] = {}
        for tp, offset in found.items():
            if offset is None:
                raise StreamsResetError("org.apache.kafka.common.errors.TimeoutException",
                                        f"Failed to get offsets by times for {tp}")
            out[tp] = offset
        return out

    # ----------------------------------------------------------------------------------------------

    def _is_inferred_internal(self, name: str) -> bool:
        o = self.opts
        return (name not in o.input_topics and name not in o.intermediate_topics
                and name.startswith(o.application_id + "-") and matches_internal_topic_format(name))

    def _maybe_delete_internal_topics(self) -> list[str]:
        o = self.opts
        inferred = [t for t in self.all_topics if self._is_inferred_internal(t)]
        if o.internal_topics:
            if not set(o.internal_topics) <= set(inferred):
                raise StreamsResetError(
                    "java.lang.IllegalArgumentException",
                    "Invalid topic specified in the --internal-topics option. Ensure that the topics specified are all "
                    "internal topics. Do a dry run without the --internal-topics option to see the list of all "
                    "internal topics that can be deleted.")
            to_delete = list(o.internal_topics)
            self.say(f"Deleting specified internal topics {java_list(to_delete)}")
        else:
            to_delete = inferred
            self.say(f"Deleting inferred internal topics {java_list(to_delete)}")
        if not o.dry_run and to_delete:
            results = self.admin.delete_topics(to_delete, timeout_ms=30_000, raise_errors=False)
            failed = False
            for name in to_delete:
                result = results.get(name)
                err = result.error if result is not None else None
                if err is not None:
                    self.warn(f"ERROR: deleting topic {name}")
                    self.warn(f"{type(err).__name__}: {err}")
                    failed = True
            if failed:
                raise StreamsResetError("java.lang.RuntimeException",
                                        "Encountered an error deleting one or more topics")
        self.say("Done.")
        return to_delete


def _tp_hash(tp: TopicPartition) -> int:
    return topic_partition_hash(tp.topic, tp.partition)
