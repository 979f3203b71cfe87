"""ListOffsets (api key 2), v0-10, and OffsetForLeaderEpoch (api key 23), v0-4.

ListOffsets timestamps: -1 latest (the HW for read_uncommitted, the last stable offset for
read_committed, the log end for replica/debug requests), -2 earliest (log start), -3 max timestamp
(v7+), -4 earliest local (v8+), -5 latest tiered (v9+; no tiered storage: offset -1), else the
first offset whose timestamp is >= the one asked (offsets not yet fetchable count as not found:
offset -1, timestamp -1). v0 answers `old_style_offsets` with that one offset.
OffsetForLeaderEpoch: the end offset of the requested leader epoch from the leader epoch cache
(librdkafka validates its positions with it after a leader change); unknown epoch -> (-1, -1).
Both check current_leader_epoch (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH) and leadership
(NOT_LEADER_OR_FOLLOWER; replica id -2, Kafka's debugging id, may read any replica).
Authorization: ListOffsets DESCRIBE on each topic; OffsetForLeaderEpoch CLUSTER_ACTION (brokers) or DESCRIBE on
each topic; a refused topic's partitions carry TOPIC_AUTHORIZATION_FAILED.
Thread-safety: stateless.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafkapy.server.apis.registry import api
from kafkapy.server.fetch_params import CONSUMER_REPLICA_ID, DEBUGGING_REPLICA_ID

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

LO = ListOffsetsResponse
OE = OffsetForLeaderEpochResponse


def list_offsets_error_response(request: ListOffsetsRequest, version: int, code: int) -> ListOffsetsResponse:
    return LO(throttle_time_ms=0, topics=[LO.ListOffsetsTopicResponse(name=t.name, partitions=[
        LO.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=code)
        for p in t.partitions]) for t in request.topics])


@api(ApiKey.LIST_OFFSETS, 0, 10, error_response=list_offsets_error_response)
def handle_list_offsets(ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
    rm = ctx.server.replica_manager
    version = ctx.api_version
    replica_id = request.replica_id
    isolation = request.isolation_level if replica_id == CONSUMER_REPLICA_ID else None
    fetch_only_from_leader = replica_id != DEBUGGING_REPLICA_ID
    topics = []
    for t in request.topics:
        parts = []
        described = ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name)
        for p in t.partitions:
            if not described:
                parts.append(LO.ListOffsetsPartitionResponse(partition_index=p.partition_index,
                                                             error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            r = rm.fetch_offset_for_timestamp(TopicPartition(t.name, p.partition_index), p.timestamp, isolation,
                                              p.current_leader_epoch, fetch_only_from_leader)
            resp = LO.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=r.error)
            if version == 0:
                resp.old_style_offsets = [r.offset] if r.error == 0 and r.offset >= 0 else []
            else:
                resp.timestamp, resp.offset = r.timestamp, r.offset
                if version >= 4:
                    resp.leader_epoch = r.leader_epoch
            parts.append(resp)
        topics.append(LO.ListOffsetsTopicResponse(name=t.name, partitions=parts))
    return LO(throttle_time_ms=0, topics=topics)


def offset_for_leader_epoch_error_response(request: OffsetForLeaderEpochRequest, version: int,
                                           code: int) -> OffsetForLeaderEpochResponse:
    return OE(throttle_time_ms=0, topics=[OE.OffsetForLeaderTopicResult(topic=t.topic, partitions=[
        OE.EpochEndOffset(error_code=code, partition=p.partition) for p in t.partitions]) for t in request.topics])


@api(ApiKey.OFFSET_FOR_LEADER_EPOCH, 0, 4, error_response=offset_for_leader_epoch_error_response)
def handle_offset_for_leader_epoch(ctx: RequestContext, request: OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse:
    rm = ctx.server.replica_manager
    fetch_only_from_leader = request.replica_id != DEBUGGING_REPLICA_ID
    # Kafka (KIP-320): CLUSTER_ACTION for brokers, else DESCRIBE on each topic.
    replica = ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, log_if_denied=False)
    topics = []
    for t in request.topics:
        parts = []
        if not replica and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic):
            topics.append(OE.OffsetForLeaderTopicResult(topic=t.topic, partitions=[
                OE.EpochEndOffset(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, partition=p.partition)
                for p in t.partitions]))
            continue
        for p in t.partitions:
            error, epoch, end_offset = rm.last_offset_for_leader_epoch(
                TopicPartition(t.topic, p.partition), p.current_leader_epoch, p.leader_epoch, fetch_only_from_leader)
            parts.append(OE.EpochEndOffset(error_code=error, partition=p.partition, leader_epoch=epoch,
                                           end_offset=end_offset))
        topics.append(OE.OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
    return OE(throttle_time_ms=0, topics=topics)
