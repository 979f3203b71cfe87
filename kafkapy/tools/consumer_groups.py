"""`kafkapy consumer-groups` logic (Kafka's ConsumerGroupCommand.ConsumerGroupService): list, describe
(offsets / members / state), reset offsets, delete groups, delete offsets. Returns dataclasses; the
text (Kafka's column formats) is rendered by kafkapy/cli/consumer_groups.py.

Data sources, as Kafka's tool: ListGroups (every broker), DescribeGroups + OffsetFetch at the group
coordinator, ListOffsets (latest) at the leaders for LOG-END-OFFSET, Metadata for which partitions
have a leader. Row order is Kafka's: groups sorted by id; members by number of partitions
(descending, otherwise as the coordinator listed them), each member's partitions by (topic,
partition), then committed partitions no member owns. Reset results and deletions are kept in
Java HashMap iteration order, which is what Kafka prints.

Uses client/ only; not thread-safe (one tool run).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.common.errors import GroupIdNotFoundError, KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools import ToolFailure
from kafkapy.tools.group_offsets_resetter import (
    GroupOffsetsResetter,
    ResetArgumentError,
    ResetSpec,
    export_csv,
    parse_topic_partitions,
    read_reset_plan,
)
from kafkapy.tools.tool_support import java_hash_order, java_string_hash, topic_partition_hash

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

MISSING = "-"

# Kafka's exception classes and default messages for the group errors this tool reports.
GROUP_EXCEPTIONS = {
    "NON_EMPTY_GROUP": ("GroupNotEmptyException", "The group is not empty."),
    "GROUP_ID_NOT_FOUND": ("GroupIdNotFoundException", "The group id does not exist."),
    "GROUP_SUBSCRIBED_TO_TOPIC": ("GroupSubscribedToTopicException",
                                  "The consumer group is actively subscribed to the topic"),
    "INVALID_GROUP_ID": ("InvalidGroupIdException", "The configured groupId is invalid."),
    "GROUP_AUTHORIZATION_FAILED": ("GroupAuthorizationException", "Group authorization failed."),
    "TOPIC_AUTHORIZATION_FAILED": ("TopicAuthorizationException", "Topic authorization failed."),
    "UNKNOWN_TOPIC_OR_PARTITION": ("UnknownTopicOrPartitionException",
                                   "This server does not host this topic-partition."),
    "COORDINATOR_NOT_AVAILABLE": ("CoordinatorNotAvailableException", "The coordinator is not available."),
    "NOT_COORDINATOR": ("NotCoordinatorException", "This is not the correct coordinator."),
}
CONSUMER_GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning",
                         "Reconciling")


class GroupCommandArgumentError(ToolFailure):
    """Kafka's IllegalArgumentException in the command (printed with the usage)."""


def java_error_text(err: BaseException) -> str:
    """Throwable.toString() of the Java exception Kafka would raise for `err`."""
    known = GROUP_EXCEPTIONS.get(err.name) if isinstance(err, KafkaError) else None
    if known is None:
        from kafkapy.tools.tool_support import java_error_text as generic

        return generic(err)
    message = (err.message if isinstance(err, KafkaError) else None) or known[1]
    return f"org.apache.kafka.common.errors.{known[0]}: {message}"


def error_message(err: BaseException) -> str:
    if isinstance(err, KafkaError) and err.name in GROUP_EXCEPTIONS:
        return err.message or GROUP_EXCEPTIONS[err.name][1]
    return str(err)


@dataclass
class PartitionAssignmentState:
    group: str
    coordinator: Any
    topic: str | None
    partition: int | None
    offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None
    log_end_offset: int | None
    leader_epoch: int | None = None


@dataclass
class MemberAssignmentState:
    group: str
    consumer_id: str
    host: str
    client_id: str
    group_instance_id: str
    num_partitions: int
    assignment: list[TopicPartition]
    target_assignment: list[TopicPartition] = field(default_factory=list)
    current_epoch: int | None = None
    target_epoch: int | None = None
    upgraded: bool | None = None


@dataclass
class GroupInformation:
    group: str
    coordinator: Any
    assignment_strategy: str
    state: str
    num_members: int
    group_epoch: int | None = None
    target_assignment_epoch: int | None = None


@dataclass
class GroupOffsets:
    group: str
    state: str
    rows: list[PartitionAssignmentState]


@dataclass
class GroupMembers:
    group: str
    state: str
    members: list[MemberAssignmentState]


@dataclass
class ResetResult:
    offsets: dict[str, dict[TopicPartition, int]]  # group -> {tp: new offset}, Java HashMap order
    errors: list[str] = field(default_factory=list)  # Kafka's printError lines (without "Error: ")
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


@dataclass
class DeleteGroupsResult:
    deleted: list[str]
    failed: dict[str, KafkaError]


@dataclass
class DeleteOffsetsResult:
    group: str
    error: KafkaError | None
    partitions: dict[TopicPartition, KafkaError | None]


def _sorted_tps(tps: Iterable[TopicPartition]) -> list[TopicPartition]:
    return sorted(tps, key=lambda tp: (tp.topic, tp.partition))


def hash_ordered_tps(tps: Iterable[TopicPartition]) -> list[TopicPartition]:
    return java_hash_order(list(tps), lambda tp: topic_partition_hash(tp.topic, tp.partition))


def hash_ordered_groups(groups: Iterable[str]) -> list[str]:
    return java_hash_order(list(groups), java_string_hash)


class ConsumerGroupService:
    def __init__(self, admin: AdminClient, timeout_ms: int = 5000) -> None:
        self.admin = admin
        self.timeout_ms = timeout_ms
        self.resetter = GroupOffsetsResetter(admin, timeout_ms)

    # ------------------------------------------------------------------------------------------
    # list

    def list_groups(self, states: list[str] | None = None, types: list[str] | None = None) -> list[Any]:
        return self.admin.list_consumer_groups(states=states or (), types=types or (), timeout_ms=self.timeout_ms)

    def list_group_ids(self) -> list[str]:
        return [g.group_id for g in self.list_groups()]

    # ------------------------------------------------------------------------------------------
    # describe

    def describe(self, group_ids: Iterable[str]) -> dict[str, Any]:
        """{group: description | None (the group does not exist)}, sorted by group id."""
        out: dict[str, Any] = {}
        found = self.admin.describe_consumer_groups(list(group_ids), timeout_ms=self.timeout_ms, raise_errors=False)
        for group in sorted(found):
            desc = found[group]
            if isinstance(desc, GroupIdNotFoundError):
                out[group] = None
            elif isinstance(desc, KafkaError):
                raise desc
            else:
                out[group] = desc
        return out

    def committed_offsets(self, group: str) -> dict[TopicPartition, Any]:
        try:
            return self.admin.list_consumer_group_offsets(group, timeout_ms=self.timeout_ms)
        except GroupIdNotFoundError:
            return {}

    def collect_groups_offsets(self, group_ids: Iterable[str]) -> list[GroupOffsets]:
        result = []
        for group, desc in self.describe(group_ids).items():
            if desc is None:
                result.append(GroupOffsets(group, "Dead", []))
                continue
            committed = self.committed_offsets(group)
            rows: list[PartitionAssignmentState] = []
            assigned: set[TopicPartition] = set()
            members = sorted((m for m in desc.members if m.assignment), key=lambda m: -len(m.assignment))
            for m in members:
                assigned.update(m.assignment)
                rows += self._describe_partitions(group, desc.coordinator, m.assignment, committed, m.member_id,
                                                  m.host, m.client_id)
            unassigned = [tp for tp in committed if tp not in assigned]
            if unassigned:
                rows += self._describe_partitions(group, desc.coordinator, unassigned, committed, None, None, None)
            result.append(GroupOffsets(group, desc.state, rows))
        return result

    def _describe_partitions(self, group: str, coordinator: Any, tps: Iterable[TopicPartition], committed: dict,
                             consumer_id: str | None, host: str | None, client_id: str | None
                             ) -> list[PartitionAssignmentState]:
        tps = list(tps)
        described = self.resetter.describe_partitions(tp.topic for tp in tps)
        with_leader = [tp for tp in tps if described.get(tp.topic, {}).get(tp.partition) is not None]
        ends = self.resetter.log_offsets(with_leader, "latest") if with_leader else {}
        rows = []
        for tp in tps:
            om = committed.get(tp)
            offset = None if om is None else om.offset
            end = ends.get(tp)
            lag = end - offset if offset is not None and offset != -1 and end is not None else None
            rows.append(PartitionAssignmentState(group, coordinator, tp.topic, tp.partition, offset, lag, consumer_id,
                                                 host, client_id, end, None if om is None else om.leader_epoch))
        rows.sort(key=lambda r: (r.topic or "", -1 if r.partition is None else r.partition))
        return rows

    def collect_groups_members(self, group_ids: Iterable[str]) -> list[GroupMembers]:
        result = []
        for group, desc in self.describe(group_ids).items():
            if desc is None:
                result.append(GroupMembers(group, "Dead", []))
                continue
            members = [MemberAssignmentState(group, m.member_id, m.host, m.client_id, m.group_instance_id or "",
                                             len(m.assignment), list(m.assignment)) for m in desc.members]
            result.append(GroupMembers(group, desc.state, members))
        return result

    def collect_groups_state(self, group_ids: Iterable[str]) -> list[GroupInformation]:
        result = []
        for group, desc in self.describe(group_ids).items():
            if desc is None:
                result.append(GroupInformation(group, None, "", "Dead", 0))
                continue
            result.append(GroupInformation(group, desc.coordinator, desc.partition_assignor, desc.state,
                                           len(desc.members)))
        return result

    # ------------------------------------------------------------------------------------------
    # reset

    def reset_offsets(self, group_ids: list[str], topics: list[str], all_topics: bool, spec: ResetSpec,
                      execute: bool, given_groups: list[str]) -> ResetResult:
        file_plan = None
        if spec.from_file is not None:
            try:
                with open(spec.from_file, encoding="utf-8") as f:
                    file_plan = read_reset_plan(f.read(), given_groups)
            except OSError as e:
                raise ToolFailure(f"{spec.from_file} ({e.strerror})") from e
        result = ResetResult({})
        described = self.admin.describe_consumer_groups(group_ids, timeout_ms=self.timeout_ms, raise_errors=False)
        per_group: dict[str, dict[TopicPartition, int]] = {}
        for group in group_ids:
            desc = described.get(group)
            if isinstance(desc, KafkaError) and not isinstance(desc, GroupIdNotFoundError):
                raise desc
            state = "Dead" if isinstance(desc, GroupIdNotFoundError) or desc is None else desc.state
            if state not in ("Empty", "Dead"):
                result.errors.append(f"Assignments can only be reset if the group '{group}' is inactive, but the "
                                     f"current state is {state}.")
                per_group[group] = {}
                continue
            committed = self.committed_offsets(group)
            if all_topics:
                partitions = list(committed)
            elif topics:
                partitions = self.resetter.partitions_to_reset(topics)
            elif spec.from_file is not None:
                partitions = []
            else:
                raise GroupCommandArgumentError("One of the reset scopes should be defined: --all-topics, --topic.")
            try:
                plan = self.resetter.prepare(group, partitions, spec, committed, file_plan)
            except ResetArgumentError as e:
                raise GroupCommandArgumentError(str(e)) from e
            except ToolFailure as e:
                if str(e).startswith("No reset plan for group"):
                    result.errors.append(str(e))
                    per_group[group] = {}
                    continue
                raise
            result.warnings += plan.warnings
            result.notices += plan.notices
            offsets = {tp: plan.offsets[tp] for tp in hash_ordered_tps(plan.offsets)}
            if execute and offsets:
                self.admin.alter_consumer_group_offsets(group, offsets, timeout_ms=self.timeout_ms)
            per_group[group] = offsets
        result.offsets = {g: per_group[g] for g in hash_ordered_groups(per_group)}
        return result

    @staticmethod
    def export_offsets_csv(result: ResetResult, single_group: bool) -> str:
        rows: list[tuple[Any, ...]] = []
        for group, offsets in result.offsets.items():
            for tp, offset in offsets.items():
                rows.append((tp.topic, tp.partition, offset) if single_group else (group, tp.topic, tp.partition,
                                                                                    offset))
        return export_csv(rows)

    # ------------------------------------------------------------------------------------------
    # delete

    def delete_groups(self, group_ids: list[str]) -> DeleteGroupsResult:
        results = self.admin.delete_consumer_groups(group_ids, timeout_ms=self.timeout_ms)
        deleted = hash_ordered_groups(g for g, e in results.items() if e is None)
        failed = {g: e for g, e in results.items() if e is not None}
        return DeleteGroupsResult(deleted, {g: failed[g] for g in hash_ordered_groups(failed)})

    def delete_offsets(self, group: str, topics: list[str]) -> DeleteOffsetsResult:
        partition_errors: dict[TopicPartition, KafkaError | None] = {}
        partitions: set[TopicPartition] = set()
        whole = []
        for arg in topics:
            if ":" in arg:
                try:
                    partitions.update(parse_topic_partitions(arg))
                except ResetArgumentError as e:
                    raise GroupCommandArgumentError(str(e)) from e
            else:
                whole.append(arg)
        if whole:
            found = self.admin.describe_topics(sorted(set(whole)), timeout_ms=self.timeout_ms, raise_errors=False)
            for topic, desc in found.items():
                if desc.error is not None:
                    partition_errors[TopicPartition(topic, -1)] = desc.error
                else:
                    partitions.update(TopicPartition(topic, p.partition) for p in desc.partitions)
        top: KafkaError | None = None
        if partitions:
            try:
                res = self.admin.delete_consumer_group_offsets(group, partitions, timeout_ms=self.timeout_ms)
            except KafkaError as e:
                res = None
                top = e
            if res is not None:
                top = res.error
                first_partition_error = next((e for e in res.partitions.values() if e is not None), None)
                if top is None and first_partition_error is not None:
                    top = first_partition_error
                for tp in partitions:
                    partition_errors[tp] = res.partitions.get(tp, top)
            else:
                for tp in partitions:
                    partition_errors[tp] = top
        return DeleteOffsetsResult(group, top, partition_errors)
