"""DescribeLogDirs (35) v0-4, AlterReplicaLogDirs (34) v0-2 and DeleteRecords (21) v0-2.

DescribeLogDirs (Kafka's ReplicaManager.describeLogDirs): one result per configured log dir with the
partitions stored there (size, offset lag, is_future), filtered by the requested topics (null = all);
v3 adds a top-level error code, v4 the file system's total/usable bytes. A topic hosted in a dir but
not asked for still appears there with no partitions, as in Kafka. Data comes from
`log_manager.describe_log_dirs() -> {dir: [(tp, size, offset_lag, is_future)]}` and
`log_manager.log_dir_usage(dir) -> (total, usable)`; an offline log dir (KIP-112) is answered
KAFKA_STORAGE_ERROR, a future replica (a move between dirs) is listed with is_future_key.
AlterReplicaLogDirs (KafkaApis.handleAlterReplicaLogDirsRequest): ALTER on the cluster, else
CLUSTER_AUTHORIZATION_FAILED for every partition; the rest is `replica_manager.alter_replica_log_dirs({tp: dir})`.
DeleteRecords: partitions this broker does not know are UNKNOWN_TOPIC_OR_PARTITION; the others go to
`replica_manager.delete_records(timeout_ms, {tp: offset}) -> {tp: (low_watermark, error_code)}`.
Thread-safety: stateless.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import (
    ClusterAuthorizationFailedError,
    KafkaError,
    KafkaStorageError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from kafkapy.server.apis.registry import api

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

log = logging.getLogger("kafka.server.ReplicaManager")

LONG_MAX = 2**63 - 1
DLResp = DescribeLogDirsResponse


def _usage(log_manager: Any, log_dir: str) -> tuple[int, int]:
    total, usable = log_manager.log_dir_usage(log_dir)
    # Kafka's adjustForLargeFileSystems: a size that overflowed a long reads as Long.MAX_VALUE.
    return (total if total >= 0 else LONG_MAX), (usable if usable >= 0 else LONG_MAX)


@api(ApiKey.DESCRIBE_LOG_DIRS, 0, 4)
def handle_describe_log_dirs(ctx: RequestContext, request: DescribeLogDirsRequest) -> DescribeLogDirsResponse:
    ctx.require(AclOperation.DESCRIBE, ResourceType.CLUSTER)
    log_manager = ctx.server.log_manager
    wanted: set[TopicPartition] | None = None
    if request.topics is not None:
        wanted = {TopicPartition(t.topic, p) for t in request.topics for p in t.partitions}
    results = []
    offline = log_manager.offline_dirs
    for log_dir, entries in log_manager.describe_log_dirs().items():
        result = DLResp.DescribeLogDirsResult(error_code=0, log_dir=log_dir, topics=[])
        if log_dir in offline:
            result.error_code = KafkaStorageError.code
            results.append(result)
            continue
        try:
            result.total_bytes, result.usable_bytes = _usage(log_manager, log_dir)
            by_topic: dict[str, list[Any]] = defaultdict(list)
            for tp, size, lag, is_future in entries:
                partitions = by_topic[tp.topic]
                if wanted is None or tp in wanted:
                    partitions.append(DLResp.DescribeLogDirsPartition(partition_index=tp.partition,
                                                                      partition_size=size, offset_lag=lag,
                                                                      is_future_key=is_future))
            result.topics = [DLResp.DescribeLogDirsTopic(name=t, partitions=p) for t, p in by_topic.items()]
        except OSError as e:
            log.error("Error while describing log dir %s: %s", log_dir, e)
            result.error_code, result.topics = KafkaStorageError.code, []
        except KafkaError as e:
            result.error_code, result.topics = e.code, []
        results.append(result)
    return DLResp(throttle_time_ms=0, error_code=0, results=results)


ARResp = AlterReplicaLogDirsResponse


def _alter_results(request: AlterReplicaLogDirsRequest, codes: dict[TopicPartition, int]) -> AlterReplicaLogDirsResponse:
    by_topic: dict[str, list[Any]] = defaultdict(list)
    for tp, code in codes.items():
        by_topic[tp.topic].append(ARResp.AlterReplicaLogDirPartitionResult(partition_index=tp.partition,
                                                                           error_code=code))
    return ARResp(throttle_time_ms=0, results=[ARResp.AlterReplicaLogDirTopicResult(topic_name=t, partitions=ps)
                                               for t, ps in by_topic.items()])


def _partition_dirs(request: AlterReplicaLogDirsRequest) -> dict[TopicPartition, str]:
    return {TopicPartition(t.name, p): d.path for d in request.dirs for t in d.topics for p in t.partitions}


def _alter_error(request: AlterReplicaLogDirsRequest, version: int, code: int) -> AlterReplicaLogDirsResponse:
    return _alter_results(request, dict.fromkeys(_partition_dirs(request), code))


@api(ApiKey.ALTER_REPLICA_LOG_DIRS, 0, 2, error_response=_alter_error)
def handle_alter_replica_log_dirs(ctx: RequestContext, request: AlterReplicaLogDirsRequest
                                  ) -> AlterReplicaLogDirsResponse:
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER):
        return _alter_error(request, ctx.api_version, ClusterAuthorizationFailedError.code)
    return _alter_results(request, ctx.server.replica_manager.alter_replica_log_dirs(_partition_dirs(request)))


DRResp = DeleteRecordsResponse


def _delete_records_error(request: DeleteRecordsRequest, version: int, code: int) -> DeleteRecordsResponse:
    return DRResp(topics=[DRResp.DeleteRecordsTopicResult(name=t.name, partitions=[
        DRResp.DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=-1, error_code=code)
        for p in t.partitions]) for t in request.topics])


@api(ApiKey.DELETE_RECORDS, 0, 2, error_response=_delete_records_error)
def handle_delete_records(ctx: RequestContext, request: DeleteRecordsRequest) -> DeleteRecordsResponse:
    cache = ctx.server.metadata_cache
    offsets: dict[TopicPartition, int] = {}
    outcome: dict[TopicPartition, tuple[int, int]] = {}
    for t in request.topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            if not ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, t.name):
                outcome[tp] = (-1, TopicAuthorizationFailedError.code)
            elif cache.contains(tp):
                offsets[tp] = p.offset
            else:
                outcome[tp] = (-1, UnknownTopicOrPartitionError.code)
    if offsets:
        outcome.update(ctx.server.replica_manager.delete_records(request.timeout_ms, offsets))
    topics = []
    for t in request.topics:
        partitions = []
        for p in t.partitions:
            low_watermark, code = outcome[TopicPartition(t.name, p.partition_index)]
            partitions.append(DRResp.DeleteRecordsPartitionResult(partition_index=p.partition_index,
                                                                  low_watermark=low_watermark, error_code=code))
        topics.append(DRResp.DeleteRecordsTopicResult(name=t.name, partitions=partitions))
    return DRResp(throttle_time_ms=0, topics=topics)
