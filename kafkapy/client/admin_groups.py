"""The consumer group operations behind AdminClient's methods of the same names: functions over the
AdminClient's AdminCalls (admin_calls.py), plus Kafka's result types for groups.

`list_consumer_groups(states, types)` (ListGroups v0-5 to every broker, merged; consumer groups are
those with protocol type "consumer" or "" - the latter only ever committed offsets),
`describe_consumer_groups(ids)` (FindCoordinator, then DescribeGroups v0-6; member assignments decoded
from the consumer protocol), `list_consumer_group_offsets(id, partitions=None)` (OffsetFetch v0-9;
None = every committed partition), `alter_consumer_group_offsets(id, offsets)` (OffsetCommit as an
admin: generation -1, empty member id, which the broker accepts for groups without active members),
`delete_consumer_groups(ids)` (DeleteGroups v0-2) and `delete_consumer_group_offsets(id, partitions)`
(OffsetDelete v0). Requests go to each group's coordinator; NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE
/ COORDINATOR_LOAD_IN_PROGRESS look the coordinator up again and retry within the call's timeout.

Thread-safety: as AdminClient (blocking calls, safe from several threads).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkapy.client.admin_calls import AdminCalls, error_or_none
from kafkapy.client.assignors.consumer_protocol import (
    PROTOCOL_TYPE,
    ConsumerProtocolError,
    deserialize_assignment,
)
from kafkapy.client.errors import error_from_code
from kafkapy.client.group_offsets import (
    OffsetAndMetadata,
    offset_commit_builder,
    offset_fetch_builder,
    parse_offset_fetch,
    to_offset_and_metadata,
)
from kafkapy.client.metadata import Node
from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol import messages as M

FIND_COORDINATOR, OFFSET_COMMIT, OFFSET_FETCH, DESCRIBE_GROUPS, LIST_GROUPS = 10, 8, 9, 15, 16
DELETE_GROUPS, OFFSET_DELETE = 42, 47
_COORDINATOR_MOVED = {ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE}

# Kafka's GroupState names (what ListGroups/DescribeGroups carry), by lower-case spelling.
GROUP_STATES = {s.lower(): s for s in ("Unknown", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead",
                                       "Empty", "Assigning", "Reconciling")}
CONSUMER_GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning",
                         "Reconciling")


GROUP_TYPES = {t.lower(): t for t in ("Unknown", "Consumer", "Classic", "Share", "Streams")}


def parse_group_state(text: str) -> str:
    """Kafka's GroupState.parse: case-insensitive, "Unknown" for anything else."""
    return GROUP_STATES.get(text.strip().lower(), "Unknown")


def parse_group_type(text: str) -> str:
    """Kafka's GroupType.parse: case-insensitive, "Unknown" for anything else."""
    return GROUP_TYPES.get(text.strip().lower(), "Unknown")


@dataclass(frozen=True)
class ConsumerGroupListing:
    group_id: str
    is_simple_consumer_group: bool
    state: str | None = None  # Kafka's GroupState name; None when the broker is older than ListGroups v4
    type: str | None = None  # Kafka's GroupType name ("Classic", "Consumer"); None before ListGroups v5
    protocol_type: str = ""


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: list[TopicPartition] = field(default_factory=list)


@dataclass(frozen=True)
class ConsumerGroupDescription:
    group_id: str
    is_simple_consumer_group: bool
    members: list[MemberDescription]
    partition_assignor: str
    state: str
    coordinator: Node
    protocol_type: str = ""
    authorized_operations: int | None = None


@dataclass(frozen=True)
class DeleteGroupOffsetsResult:
    error: KafkaError | None  # top-level error
    partitions: dict[TopicPartition, KafkaError | None]


# ------------------------------------------------------------------------------------------
# coordinators

def find_group_coordinator(calls: AdminCalls, group_id: str, timeout_ms: float | None = None) -> Node:

    def build(version: int) -> Any:
        if version >= 4:
            return M.FindCoordinatorRequest(key_type=0, coordinator_keys=[group_id])
        return M.FindCoordinatorRequest(key=group_id, key_type=0)

    def handle(resp: M.FindCoordinatorResponse) -> Node:
        if resp.coordinators:
            c = resp.coordinators[0]
            code, message, node = c.error_code, c.error_message, Node(c.node_id, c.host, c.port)
        else:
            code, message = resp.error_code, resp.error_message
            node = Node(resp.node_id, resp.host, resp.port)
        if code:
            raise error_from_code(code, message)
        return node

    return calls.call(None, build, FIND_COORDINATOR, timeout_ms, handle, "findCoordinator")

def _coordinator_node(calls: AdminCalls, group_id: str) -> Callable[[float], int]:
    """A `_call` target: looks the coordinator up (again) on every attempt."""

    def target(deadline: float) -> int:
        node = find_group_coordinator(calls, group_id, calls.remaining(deadline))
        if calls.client.cluster.node(node.node_id) is None:
            calls.metadata([], deadline)
        return node.node_id

    return target

def _group_call(calls: AdminCalls, group_id: str, build: Callable[[int], Any], api_key: int, timeout_ms: float | None,
                handle: Callable[[Any], Any], what: str) -> Any:
    return calls.call(_coordinator_node(calls, group_id), build, api_key, timeout_ms, handle, what)

def _check_group_error(code: int, message: str | None = None) -> None:
    """Raise for a group-level error code (retriable ones make `_call` retry)."""
    if code:
        raise error_from_code(code, message or None)

# ------------------------------------------------------------------------------------------
# list / describe

def list_consumer_groups(calls: AdminCalls, states: Iterable[str] = (), types: Iterable[str] = (),
                         timeout_ms: float | None = None) -> list[ConsumerGroupListing]:
    timeout = calls.timeout(timeout_ms)
    deadline = calls.time.milliseconds() + timeout
    wanted_states = [parse_group_state(s) for s in states]
    wanted_types = [parse_group_type(t) for t in types]
    brokers = sorted(calls.metadata([], deadline).brokers)
    found: dict[str, ConsumerGroupListing] = {}

    def build(version: int) -> Any:
        return M.ListGroupsRequest(states_filter=wanted_states if version >= 4 else [],
                                   types_filter=wanted_types if version >= 5 else [])

    def handle(resp: M.ListGroupsResponse) -> list[ConsumerGroupListing]:
        _check_group_error(resp.error_code)
        out = []
        for g in resp.groups:
            if g.protocol_type not in (PROTOCOL_TYPE, ""):
                continue
            state = parse_group_state(g.group_state) if g.group_state else None
            gtype = parse_group_type(g.group_type) if g.group_type else None
            out.append(ConsumerGroupListing(g.group_id, g.protocol_type == "", state, gtype, g.protocol_type))
        return out

    for node in brokers:
        for listing in calls.call(node, build, LIST_GROUPS, calls.remaining(deadline), handle, "listGroups"):
            found[listing.group_id] = listing
    result = list(found.values())
    if wanted_states:
        lowered = {s.lower() for s in wanted_states}
        result = [g for g in result if g.state is None or g.state.lower() in lowered]
    return result

def describe_consumer_groups(calls: AdminCalls, group_ids: Iterable[str], include_authorized_operations: bool = False,
                             timeout_ms: float | None = None, raise_errors: bool = True
                             ) -> dict[str, ConsumerGroupDescription | KafkaError]:
    out: dict[str, ConsumerGroupDescription | KafkaError] = {}
    for group_id in dict.fromkeys(group_ids):
        try:
            out[group_id] = _describe_one(calls, group_id, include_authorized_operations, timeout_ms)
        except KafkaError as e:
            if raise_errors:
                raise
            out[group_id] = e
    return out

def _describe_one(calls: AdminCalls, group_id: str, include_ops: bool, timeout_ms: float | None) -> ConsumerGroupDescription:
    coordinator: list[Node] = []

    def target(deadline: float) -> int:
        node = find_group_coordinator(calls, group_id, calls.remaining(deadline))
        if calls.client.cluster.node(node.node_id) is None:
            calls.metadata([], deadline)
        coordinator[:] = [calls.client.cluster.node(node.node_id) or node]
        return node.node_id

    def build(version: int) -> Any:
        return M.DescribeGroupsRequest(groups=[group_id], include_authorized_operations=include_ops)

    def handle(resp: M.DescribeGroupsResponse) -> ConsumerGroupDescription:
        g = resp.groups[0]
        _check_group_error(g.error_code, g.error_message)
        if g.protocol_type not in (PROTOCOL_TYPE, ""):
            raise error_from_code(ErrorCode.INVALID_GROUP_ID,
                                  f"GroupId {group_id} is not a consumer group ({g.protocol_type}).")
        members = []
        for m in g.members:
            try:
                assignment = deserialize_assignment(m.member_assignment).partitions if m.member_assignment else []
            except ConsumerProtocolError:
                assignment = []
            members.append(MemberDescription(m.member_id, m.group_instance_id, m.client_id,
                                             m.client_host, assignment))
        ops = g.authorized_operations
        return ConsumerGroupDescription(
            g.group_id, g.protocol_type == "", members, g.protocol_data, parse_group_state(g.group_state),
            coordinator[0], g.protocol_type, None if ops == -2147483648 else ops)

    return calls.call(target, build, DESCRIBE_GROUPS, timeout_ms, handle, "describeConsumerGroups")

# ------------------------------------------------------------------------------------------
# offsets

def list_consumer_group_offsets(calls: AdminCalls, group_id: str, partitions: Iterable[TopicPartition] | None = None,
                                require_stable: bool = False, timeout_ms: float | None = None
                                ) -> dict[TopicPartition, OffsetAndMetadata | None]:
    tps = None if partitions is None else [TopicPartition(*tp) for tp in partitions]
    build = offset_fetch_builder(group_id, tps, require_stable)

    def handle(resp: M.OffsetFetchResponse) -> dict[TopicPartition, OffsetAndMetadata | None]:
        result = parse_offset_fetch(resp)
        _check_group_error(result.error_code)
        for tp, code in result.partition_errors.items():
            err = error_from_code(code, f"partition {tp}")
            if err.retriable:
                raise err
        return result.offsets

    return _group_call(calls, group_id, build, OFFSET_FETCH, timeout_ms, handle, "listConsumerGroupOffsets")

def alter_consumer_group_offsets(calls: AdminCalls, group_id: str, offsets: Mapping[TopicPartition, Any],
                                 timeout_ms: float | None = None, raise_errors: bool = True
                                 ) -> dict[TopicPartition, KafkaError | None]:
    items = {TopicPartition(*tp): to_offset_and_metadata(v) for tp, v in offsets.items()}
    build = offset_commit_builder(group_id, -1, "", None, items)

    def handle(resp: M.OffsetCommitResponse) -> dict[TopicPartition, KafkaError | None]:
        out: dict[TopicPartition, KafkaError | None] = {}
        for t in resp.topics:
            for p in t.partitions:
                err = error_or_none(p.error_code)
                if err is not None and (p.error_code in _COORDINATOR_MOVED
                                        or p.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS):
                    raise err
                out[TopicPartition(t.name, p.partition_index)] = err
        return out

    result = _group_call(calls, group_id, build, OFFSET_COMMIT, timeout_ms, handle, "alterConsumerGroupOffsets")
    if raise_errors:
        for err in result.values():
            if err is not None:
                raise err
    return result

def delete_consumer_group_offsets(calls: AdminCalls, group_id: str, partitions: Iterable[TopicPartition],
                                  timeout_ms: float | None = None) -> DeleteGroupOffsetsResult:
    tps = sorted({TopicPartition(*tp) for tp in partitions})
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)

    def build(version: int) -> Any:
        R = M.OffsetDeleteRequest
        return R(group_id=group_id, topics=[R.OffsetDeleteRequestTopic(name=t, partitions=[
            R.OffsetDeleteRequestPartition(partition_index=p) for p in ps]) for t, ps in by_topic.items()])

    def handle(resp: M.OffsetDeleteResponse) -> DeleteGroupOffsetsResult:
        if resp.error_code in _COORDINATOR_MOVED or resp.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            raise error_from_code(resp.error_code)
        parts = {TopicPartition(t.name, p.partition_index): error_or_none(p.error_code)
                 for t in resp.topics for p in t.partitions}
        return DeleteGroupOffsetsResult(error_or_none(resp.error_code), parts)

    return _group_call(calls, group_id, build, OFFSET_DELETE, timeout_ms, handle, "deleteConsumerGroupOffsets")

def delete_consumer_groups(calls: AdminCalls, group_ids: Iterable[str], timeout_ms: float | None = None
                           ) -> dict[str, KafkaError | None]:
    out: dict[str, KafkaError | None] = {}
    for group_id in dict.fromkeys(group_ids):
        def build(version: int, group_id: str = group_id) -> Any:
            return M.DeleteGroupsRequest(groups_names=[group_id])

        def handle(resp: M.DeleteGroupsResponse) -> KafkaError | None:
            r = resp.results[0]
            if r.error_code in _COORDINATOR_MOVED or r.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                raise error_from_code(r.error_code)
            return error_or_none(r.error_code)

        try:
            out[group_id] = _group_call(calls, group_id, build, DELETE_GROUPS, timeout_ms, handle,
                                             "deleteConsumerGroups")
        except KafkaError as e:
            out[group_id] = e
    return out


LEAVE_GROUP = 13


def remove_members_from_consumer_group(calls: AdminCalls, group_id: str, members: Iterable[MemberDescription],
                                       timeout_ms: float | None = None) -> dict[str, KafkaError | None]:
    """LeaveGroup v3+ for `members` on behalf of an admin (Kafka's removeMembersFromConsumerGroup): the
    per-member errors by member id; a group-level error is raised."""
    identities = [(m.member_id, m.group_instance_id) for m in members]

    def build(version: int) -> Any:
        R = M.LeaveGroupRequest
        return R(group_id=group_id, members=[
            R.MemberIdentity(member_id=mid, group_instance_id=gid, reason="member was removed by an admin")
            for mid, gid in identities])

    def handle(resp: M.LeaveGroupResponse) -> dict[str, KafkaError | None]:
        if resp.error_code in _COORDINATOR_MOVED or resp.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            raise error_from_code(resp.error_code)
        _check_group_error(resp.error_code)
        return {m.member_id: error_or_none(m.error_code) for m in resp.members}

    return calls.call(_coordinator_node(calls, group_id), build, LEAVE_GROUP, timeout_ms, handle,
                      "removeMembersFromConsumerGroup", min_version=3)
