"""Group APIs: FindCoordinator (10, v0-6, batched v4+), JoinGroup (11, v0-9), Heartbeat (12, v0-4),
LeaveGroup (13, v0-5, batched v3+), SyncGroup (14, v0-5), DescribeGroups (15, v0-6), ListGroups (16, v0-5),
DeleteGroups (42, v0-2).

Handlers translate requests into GroupCoordinator calls and results into responses, version by
version as Kafka's KafkaApis does. JoinGroup and SyncGroup answer from the coordinator's callback
(DEFERRED: they wait in the rebalance purgatory, never on a handler thread). FindCoordinator finds the
leader of the key's __consumer_offsets partition (abs(String.hashCode) % partitions) and asks the
AutoTopicCreationManager to create the internal topic when it does not exist yet (COORDINATOR_NOT_AVAILABLE
meanwhile).

Thread-safety: stateless; responses are sent from whichever thread completes the operation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode
from kafkapy.common.internal_topics import GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME
from kafkapy.coordinator.group_coordinator import GroupCoordinator
from kafkapy.coordinator.group_metadata import JoinGroupResult, SyncGroupResult
from kafkapy.coordinator.group_metadata_manager import partition_for
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListGroupsRequest,
    ListGroupsResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafkapy.server.apis.registry import DEFERRED, Deferred, api
from kafkapy.server.auto_topic_creation_manager import auto_topic_creation_manager

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE = 0, 1
AUTHORIZED_OPERATIONS_OMITTED = -2147483648
CLASSIC_GROUP_TYPE = "classic"
# Kafka's Errors.message() texts for the errors FindCoordinator answers with.
_ERROR_MESSAGES = {
    0: "NONE",
    ErrorCode.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    ErrorCode.NOT_COORDINATOR: "This is not the correct coordinator.",
    ErrorCode.INVALID_REQUEST: "This most likely occurs because of a request being malformed by the client library "
                               "or the message was sent to an incompatible broker. See the broker logs for more "
                               "details.",
}


# -- wiring -----------------------------------------------------------------------------------------------

def _coordinator(ctx: RequestContext) -> GroupCoordinator | None:
    coordinator = ctx.server.group_coordinator
    return coordinator if coordinator is not None and coordinator.is_active else None


# -- FindCoordinator ------------------------------------------------------------------------------------

def find_coordinator_node(ctx: RequestContext, key_type: int, key: str) -> tuple[int, int, str, int]:
    """(error, node id, host, port) of the coordinator of `key`."""
    services = ctx.server
    if key_type == GROUP_KEY_TYPE and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, key):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, -1, "", -1
    if key_type == TRANSACTION_KEY_TYPE and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID,
                                                               key):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, "", -1
    if key_type == GROUP_KEY_TYPE:
        coordinator = _coordinator(ctx)
        if coordinator is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
        topic, partition = GROUP_METADATA_TOPIC_NAME, coordinator.partition_for(key)
    elif key_type == TRANSACTION_KEY_TYPE:
        txn = services.transaction_coordinator
        if txn is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
        topic, partition = TRANSACTION_STATE_TOPIC_NAME, txn.partition_for(key)
    else:
        return ErrorCode.INVALID_REQUEST, -1, "", -1
    cache = services.metadata_cache
    listener = ctx.request.listener_name
    if not cache.contains_topic(topic):
        auto_topic_creation_manager(services).create_internal_topic(topic)
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    metadata = cache.get_topic_metadata([topic], listener)
    if not metadata or metadata[0].error_code:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    state = next((p for p in metadata[0].partitions if p.partition == partition), None)
    if state is None or state.leader < 0:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    node = cache.get_alive_broker_node(state.leader, listener)
    if node is None:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    return 0, node.id, node.host, node.port


@api(ApiKey.FIND_COORDINATOR, 0, 6)
def handle_find_coordinator(ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    version = ctx.api_version
    if version >= 4:
        coordinators = []
        for key in request.coordinator_keys:
            error, node_id, host, port = find_coordinator_node(ctx, request.key_type, key)
            coordinators.append(FindCoordinatorResponse.Coordinator(
                key=key, node_id=node_id, host=host, port=port, error_code=error,
                error_message=_ERROR_MESSAGES.get(error)))
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=coordinators)
    error, node_id, host, port = find_coordinator_node(ctx, request.key_type, request.key)
    return FindCoordinatorResponse(throttle_time_ms=0, error_code=error, error_message=_ERROR_MESSAGES.get(error),
                                   node_id=node_id, host=host, port=port)


# -- JoinGroup / SyncGroup / Heartbeat / LeaveGroup -----------------------------------------------------

def join_group_response(result: JoinGroupResult, version: int) -> JoinGroupResponse:
    members = [JoinGroupResponse.JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=md)
               for m, i, md in result.members or []]
    protocol_name = result.protocol_name if version >= 7 else (result.protocol_name or "")
    return JoinGroupResponse(throttle_time_ms=0, error_code=result.error, generation_id=result.generation_id,
                             protocol_type=result.protocol_type, protocol_name=protocol_name,
                             leader=result.leader_id, skip_assignment=result.skip_assignment,
                             member_id=result.member_id, members=members)


@api(ApiKey.JOIN_GROUP, 0, 9)
def handle_join_group(ctx: RequestContext, request: JoinGroupRequest) -> JoinGroupResponse | Deferred:
    ctx.require(AclOperation.READ, ResourceType.GROUP, request.group_id)
    version = ctx.api_version
    coordinator = _coordinator(ctx)
    if coordinator is None:
        return join_group_response(JoinGroupResult(request.member_id, ErrorCode.COORDINATOR_NOT_AVAILABLE), version)
    # v0 has no rebalance timeout: the session timeout stands in for it.
    rebalance_timeout = request.session_timeout_ms if version == 0 else request.rebalance_timeout_ms
    protocols = [(p.name, bytes(p.metadata)) for p in request.protocols]
    coordinator.handle_join_group(
        request.group_id, request.member_id, request.group_instance_id,
        version >= 4 and request.group_instance_id is None, version >= 9, ctx.client_id, "/" + ctx.client_host,
        rebalance_timeout, request.session_timeout_ms, request.protocol_type, protocols,
        lambda result: ctx.respond(join_group_response(result, version)), request.reason)
    return DEFERRED


def sync_group_response(result: SyncGroupResult) -> SyncGroupResponse:
    return SyncGroupResponse(throttle_time_ms=0, error_code=result.error, protocol_type=result.protocol_type,
                             protocol_name=result.protocol_name, assignment=result.assignment)


@api(ApiKey.SYNC_GROUP, 0, 5)
def handle_sync_group(ctx: RequestContext, request: SyncGroupRequest) -> SyncGroupResponse | Deferred:
    ctx.require(AclOperation.READ, ResourceType.GROUP, request.group_id)
    coordinator = _coordinator(ctx)
    if coordinator is None:
        return sync_group_response(SyncGroupResult(ErrorCode.COORDINATOR_NOT_AVAILABLE))
    if ctx.api_version >= 5 and (request.protocol_type is None or request.protocol_name is None):
        # v5+ must name the protocol type and name (KIP-559).
        return sync_group_response(SyncGroupResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
    assignment = {a.member_id: bytes(a.assignment) for a in request.assignments}
    coordinator.handle_sync_group(request.group_id, request.generation_id, request.member_id, request.protocol_type,
                                  request.protocol_name, request.group_instance_id, assignment,
                                  lambda result: ctx.respond(sync_group_response(result)))
    return DEFERRED


@api(ApiKey.HEARTBEAT, 0, 4)
def handle_heartbeat(ctx: RequestContext, request: HeartbeatRequest) -> HeartbeatResponse:
    ctx.require(AclOperation.READ, ResourceType.GROUP, request.group_id)
    coordinator = _coordinator(ctx)
    if coordinator is None:
        return HeartbeatResponse(throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
    error = coordinator.handle_heartbeat(request.group_id, request.member_id, request.group_instance_id,
                                         request.generation_id)
    return HeartbeatResponse(throttle_time_ms=0, error_code=error)


@api(ApiKey.LEAVE_GROUP, 0, 5)
def handle_leave_group(ctx: RequestContext, request: LeaveGroupRequest) -> LeaveGroupResponse:
    ctx.require(AclOperation.READ, ResourceType.GROUP, request.group_id)
    version = ctx.api_version
    leaving: list[tuple[str, str | None, str | None]]
    if version < 3:
        leaving = [(request.member_id, None, None)]
    else:
        leaving = [(m.member_id, m.group_instance_id, m.reason) for m in request.members]
    coordinator = _coordinator(ctx)
    error: int
    results: list[tuple[str, str | None, int]]
    if coordinator is None:
        error, results = ErrorCode.COORDINATOR_NOT_AVAILABLE, []
    else:
        error, results = coordinator.handle_leave_group(request.group_id, leaving)
    if version < 3:
        # One member: its error is the response's (Kafka's LeaveGroupResponse for v0-2).
        top = error or next((e for _, _, e in results if e), 0)
        return LeaveGroupResponse(throttle_time_ms=0, error_code=top)
    members = [LeaveGroupResponse.MemberResponse(member_id=m, group_instance_id=i, error_code=e)
               for m, i, e in results]
    return LeaveGroupResponse(throttle_time_ms=0, error_code=error, members=members)


# -- DescribeGroups / ListGroups / DeleteGroups ---------------------------------------------------------

@api(ApiKey.DESCRIBE_GROUPS, 0, 6)
def handle_describe_groups(ctx: RequestContext, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    version = ctx.api_version
    coordinator = _coordinator(ctx)
    with_ops = version >= 3 and request.include_authorized_operations
    Resp = DescribeGroupsResponse
    groups = []
    error: int
    for group_id in request.groups:
        if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            groups.append(Resp.DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, group_id=group_id,
                                              group_state="", protocol_type="", protocol_data="",
                                              authorized_operations=AUTHORIZED_OPERATIONS_OMITTED))
            continue
        if coordinator is None:
            error, summary = ErrorCode.COORDINATOR_NOT_AVAILABLE, None
            groups.append(Resp.DescribedGroup(error_code=error, group_id=group_id, group_state="", protocol_type="",
                                              protocol_data="", authorized_operations=AUTHORIZED_OPERATIONS_OMITTED))
            continue
        error, summary = coordinator.handle_describe_group(group_id)
        # Kafka sets the principal's real bit set on the groups described without error only.
        ops = ctx.authorized_operations(ResourceType.GROUP, group_id) if with_ops else AUTHORIZED_OPERATIONS_OMITTED
        if summary is None:
            missing = version >= 6
            groups.append(Resp.DescribedGroup(
                error_code=ErrorCode.GROUP_ID_NOT_FOUND if missing else 0,
                error_message=f"Group {group_id} not found." if missing else None, group_id=group_id,
                group_state="Dead", protocol_type="", protocol_data="",
                authorized_operations=AUTHORIZED_OPERATIONS_OMITTED if missing else ops))
            continue
        members = [Resp.DescribedGroupMember(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                             client_id=m.client_id, client_host=m.client_host,
                                             member_metadata=m.metadata, member_assignment=m.assignment)
                   for m in summary.members]
        groups.append(Resp.DescribedGroup(error_code=error, group_id=group_id, group_state=summary.state,
                                          protocol_type=summary.protocol_type, protocol_data=summary.protocol,
                                          members=members,
                                          authorized_operations=ops if not error else AUTHORIZED_OPERATIONS_OMITTED))
    return Resp(throttle_time_ms=0, groups=groups)


@api(ApiKey.LIST_GROUPS, 0, 5)
def handle_list_groups(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    coordinator = _coordinator(ctx)
    if coordinator is None:
        return ListGroupsResponse(throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
    types = {t.lower() for t in request.types_filter or []}
    if types and CLASSIC_GROUP_TYPE not in types:
        return ListGroupsResponse(throttle_time_ms=0, error_code=0, groups=[])
    error, overviews = coordinator.handle_list_groups(set(request.states_filter or []))
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER, log_if_denied=False):  # else only its groups
        overviews = [o for o in overviews if ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, o.group_id)]
    groups = [ListGroupsResponse.ListedGroup(group_id=o.group_id, protocol_type=o.protocol_type,
                                             group_state=o.state, group_type=CLASSIC_GROUP_TYPE)
              for o in sorted(overviews, key=lambda o: o.group_id)]
    return ListGroupsResponse(throttle_time_ms=0, error_code=error, groups=groups)


@api(ApiKey.DELETE_GROUPS, 0, 2)
def handle_delete_groups(ctx: RequestContext, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    coordinator = _coordinator(ctx)
    names = list(dict.fromkeys(request.groups_names))
    errors: dict[str, int]
    if coordinator is None:
        errors = {g: ErrorCode.COORDINATOR_NOT_AVAILABLE for g in names}
    else:
        denied = [g for g in names if not ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, g)]
        errors = coordinator.handle_delete_groups([g for g in names if g not in denied]) if len(denied) < len(names) \
            else {}
        errors.update((g, ErrorCode.GROUP_AUTHORIZATION_FAILED) for g in denied)
    results = [DeleteGroupsResponse.DeletableGroupResult(group_id=g, error_code=errors[g]) for g in names]
    return DeleteGroupsResponse(throttle_time_ms=0, results=results)


__all__ = ["find_coordinator_node", "partition_for"]
