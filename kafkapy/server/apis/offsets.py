"""Offset APIs: OffsetCommit (8, v0-9), OffsetFetch (9, v0-9, several groups per request from v8),
OffsetDelete (47, v0), over the GroupCoordinator.

Kafka's KafkaApis rules: partitions of topics the metadata cache does not know get
UNKNOWN_TOPIC_OR_PARTITION and are not committed; commits are answered after their records reach
__consumer_offsets (DEFERRED); v1 may carry a commit timestamp, v2-4 a retention time (an explicit
expire timestamp); a null metadata string is stored as "". OffsetFetch v0-1 report a group-level
error in every requested partition, v2-7 in the top-level error code, v8+ per group; a null topic
list (v2+) returns every committed offset of the group.
Authorization as KafkaApis: OffsetCommit READ on the group and on each topic; OffsetFetch DESCRIBE on the
group, and on each topic (a named one the principal may not describe answers offset -1 with
TOPIC_AUTHORIZATION_FAILED, an all-offsets answer leaves it out); OffsetDelete DELETE on the group and READ
on each topic.

Thread-safety: stateless; the commit response is sent from the thread that completes the append.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group_metadata import OffsetAndMetadata
from kafkapy.coordinator.group_metadata_manager import INVALID_OFFSET, OffsetFetchPartition
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from kafkapy.server.apis.registry import DEFERRED, Deferred, api

if TYPE_CHECKING:
    from kafkapy.coordinator.group_coordinator import GroupCoordinator
    from kafkapy.server.request_context import RequestContext


def _coordinator(ctx: RequestContext) -> GroupCoordinator | None:
    coordinator = ctx.server.group_coordinator
    return coordinator if coordinator is not None and coordinator.is_active else None


# -- OffsetCommit ---------------------------------------------------------------------------------------

def offset_commit_response(request: OffsetCommitRequest, errors: dict[TopicPartition, int]) -> OffsetCommitResponse:
    Resp = OffsetCommitResponse
    topics = []
    for t in request.topics:
        parts = [Resp.OffsetCommitResponsePartition(partition_index=p.partition_index,
                                                    error_code=errors.get(TopicPartition(t.name, p.partition_index),
                                                                          ErrorCode.UNKNOWN_SERVER_ERROR))
                 for p in t.partitions]
        topics.append(Resp.OffsetCommitResponseTopic(name=t.name, partitions=parts))
    return Resp(throttle_time_ms=0, topics=topics)


def offset_commit_error_response(request: OffsetCommitRequest, version: int, code: int) -> OffsetCommitResponse:
    return offset_commit_response(request, {TopicPartition(t.name, p.partition_index): code
                                            for t in request.topics for p in t.partitions})


@api(ApiKey.OFFSET_COMMIT, 0, 9, error_response=offset_commit_error_response)
def handle_offset_commit(ctx: RequestContext, request: OffsetCommitRequest) -> OffsetCommitResponse | Deferred:
    ctx.require(AclOperation.READ, ResourceType.GROUP, request.group_id)
    version = ctx.api_version
    services = ctx.server
    coordinator = _coordinator(ctx)
    if coordinator is None:
        return offset_commit_error_response(request, version, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    cache = services.metadata_cache
    now = services.time.milliseconds()
    errors: dict[TopicPartition, int] = {}
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    retention = request.retention_time_ms if 2 <= version <= 4 else -1
    for t in request.topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name):
                errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            if not cache.contains(tp):
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            commit_ts = p.commit_timestamp if version == 1 and p.commit_timestamp != -1 else now
            offsets[tp] = OffsetAndMetadata(
                p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "", commit_ts,
                now + retention if retention != -1 else None)
    if not offsets:
        return offset_commit_response(request, errors)

    def done(results: dict[TopicPartition, int]) -> None:
        errors.update(results)
        ctx.respond(offset_commit_response(request, errors))

    coordinator.handle_commit_offsets(request.group_id, request.member_id, request.group_instance_id,
                                      request.generation_id_or_member_epoch, offsets, done)
    return DEFERRED


# -- OffsetFetch ----------------------------------------------------------------------------------------

_UNAUTHORIZED_PARTITION = OffsetFetchPartition(INVALID_OFFSET, -1, "", ErrorCode.TOPIC_AUTHORIZATION_FAILED)


def _fetch_group(ctx: RequestContext, coordinator: Any, group_id: str, topics: list[tuple[str, list[int]]] | None,
                 require_stable: bool) -> tuple[int, list[tuple[str, list[tuple[int, OffsetFetchPartition]]]]]:
    """(group error, [(topic, [(partition, data)])]) in request order, or sorted for all offsets. Topics the
    principal may not DESCRIBE are never read: named ones answer TOPIC_AUTHORIZATION_FAILED, the rest are hidden."""
    if coordinator is None:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
    denied = set() if topics is None else {
        name for name, _ in topics if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name)}
    wanted = None if topics is None else [TopicPartition(name, p) for name, parts in topics for p in parts
                                          if name not in denied]
    error, data = coordinator.handle_fetch_offsets(group_id, require_stable, wanted)
    if error:
        return error, []
    out: dict[str, list[tuple[int, OffsetFetchPartition]]] = {}
    if wanted is None:
        described = {t for t in {tp.topic for tp in data}
                     if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t)}
        order = sorted(tp for tp in data if tp.topic in described)
    else:
        order = wanted
    for tp in order:
        out.setdefault(tp.topic, []).append((tp.partition, data.get(tp, OffsetFetchPartition(INVALID_OFFSET, -1, "", 0))))
    for name, parts in topics or []:
        if name in denied:
            out.setdefault(name, []).extend((p, _UNAUTHORIZED_PARTITION) for p in parts)
    return 0, list(out.items())


@api(ApiKey.OFFSET_FETCH, 0, 9)
def handle_offset_fetch(ctx: RequestContext, request: OffsetFetchRequest) -> OffsetFetchResponse:
    version = ctx.api_version
    coordinator = _coordinator(ctx)
    Resp = OffsetFetchResponse
    if version >= 8:
        groups = []
        for g in request.groups:
            topics = None if g.topics is None else [(t.name, list(t.partition_indexes)) for t in g.topics]
            if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id):
                groups.append(Resp.OffsetFetchResponseGroup(group_id=g.group_id,
                                                            error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, topics=[]))
                continue
            error, found = _fetch_group(ctx, coordinator, g.group_id, topics, request.require_stable)
            groups.append(Resp.OffsetFetchResponseGroup(group_id=g.group_id, error_code=error, topics=[
                Resp.OffsetFetchResponseTopics(name=name, partitions=[
                    Resp.OffsetFetchResponsePartitions(partition_index=p, committed_offset=d.offset,
                                                       committed_leader_epoch=d.leader_epoch, metadata=d.metadata,
                                                       error_code=d.error)
                    for p, d in parts])
                for name, parts in found]))
        return Resp(throttle_time_ms=0, groups=groups)
    topics = None if request.topics is None else [(t.name, list(t.partition_indexes)) for t in request.topics]
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, request.group_id):
        error, found = ErrorCode.GROUP_AUTHORIZATION_FAILED, []
    else:
        error, found = _fetch_group(ctx, coordinator, request.group_id, topics, version >= 7 and request.require_stable)
    if error and version < 2:
        # No top-level error before v2: every requested partition carries it.
        found = [(name, [(p, OffsetFetchPartition(INVALID_OFFSET, -1, "", error)) for p in parts])
                 for name, parts in topics or []]
    return Resp(throttle_time_ms=0, error_code=error if version >= 2 else 0, topics=[
        Resp.OffsetFetchResponseTopic(name=name, partitions=[
            Resp.OffsetFetchResponsePartition(partition_index=p, committed_offset=d.offset,
                                              committed_leader_epoch=d.leader_epoch, metadata=d.metadata,
                                              error_code=d.error)
            for p, d in parts])
        for name, parts in found])


# -- OffsetDelete ---------------------------------------------------------------------------------------

@api(ApiKey.OFFSET_DELETE, 0, 0)
def handle_offset_delete(ctx: RequestContext, request: OffsetDeleteRequest) -> OffsetDeleteResponse:
    ctx.require(AclOperation.DELETE, ResourceType.GROUP, request.group_id)
    coordinator = _coordinator(ctx)
    if coordinator is None:
        return OffsetDeleteResponse(throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
    cache = ctx.server.metadata_cache
    errors: dict[TopicPartition, int] = {}
    known = []
    for t in request.topics:
        readable = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name)
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            if not readable:
                errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif cache.contains(tp):
                known.append(tp)
            else:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    group_error, results = coordinator.handle_delete_offsets(request.group_id, known)
    if group_error:
        return OffsetDeleteResponse(throttle_time_ms=0, error_code=group_error)
    errors.update(results)
    Resp = OffsetDeleteResponse
    topics: dict[str, list[Any]] = {}
    for t in request.topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            topics.setdefault(t.name, []).append(Resp.OffsetDeleteResponsePartition(
                partition_index=p.partition_index, error_code=errors.get(tp, 0)))
    return Resp(throttle_time_ms=0, error_code=0, topics=[
        Resp.OffsetDeleteResponseTopic(name=name, partitions=parts) for name, parts in topics.items()])
