"""LeaderAndIsr (api key 4) v0-7 and StopReplica (5) v0-4: the controller's orders about the replicas this
broker hosts, over the inter-broker listener (ZooKeeper mode; Kafka's handleLeaderAndIsrRequest /
handleStopReplicaRequest). UpdateMetadata is in update_metadata.py.

Fencing, as Kafka: a broker epoch (v2+ / v1+) below this broker's registration epoch is a message to an
earlier incarnation of this broker: STALE_BROKER_EPOCH (-1 skips the check); a controller epoch below
the newest one seen is a zombie controller: STALE_CONTROLLER_EPOCH on the whole request and on every
partition; a leader epoch older than the partition's: STALE_CONTROLLER_EPOCH for that partition
(LeaderAndIsr) or FENCED_LEADER_EPOCH (StopReplica v3+). The decisions are applied by the
ReplicaManager through server/controller_decisions.py, the path embedded mode's LocalControllerChannel takes
too: Kafka's onLeadershipChange then tells both coordinators (__consumer_offsets, __transaction_state).
Request layouts: LeaderAndIsr v0-1 ungrouped partition states with their topic names, v2+ grouped by
topic (v5+ with topic ids; responses v5+ by topic id). StopReplica v0 ungrouped partitions plus one
delete flag, v1-2 topics with partition indexes plus one delete flag, v3+ per-partition leader epoch and
delete flag. Thread-safety: stateless; the ReplicaManager serialises its own state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from kafkapy.cluster.broker import Node
from kafkapy.cluster.leader_and_isr import (
    LeaderAndIsrPartitionState,
    LeaderRecoveryState,
    StopReplicaPartitionState,
)
from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode, StaleControllerEpochError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.state_change_logger import StateChangeLogger
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    StopReplicaRequest,
    StopReplicaResponse,
)
from kafkapy.protocol.types import ZERO_UUID
from kafkapy.server.apis.registry import api
from kafkapy.server.controller_decisions import become_leader_or_follower, stop_replicas

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

log = logging.getLogger("kafka.server.KafkaApis")


def _log_handling(ctx: RequestContext, what: str, controller_id: int, partitions: int) -> None:
    """ReplicaManager's first state-change line for a controller request: `[Broker id=N] Handling ...`."""
    if StateChangeLogger.enabled(logging.INFO):
        StateChangeLogger(ctx.server.broker_id, in_controller_context=False).log(
            logging.INFO, None, f"Handling {what} request correlationId {ctx.header.correlation_id} from controller "
                                f"{controller_id} for {partitions} partitions")
LR = LeaderAndIsrResponse
SR = StopReplicaResponse
EPOCH_DURING_DELETE = -2  # StopReplica leader epoch of a partition being deleted
T = TypeVar("T")


def _fenced_apply(ctx: RequestContext, request: Any, what: str, apply: Callable[[], T]) -> tuple[int, T | None]:
    """Kafka's fencing of a controller request, then apply(): (error code, its result). A broker epoch below
    this broker's registration is STALE_BROKER_EPOCH (-1, an old controller, is never stale); an older
    controller epoch (the ReplicaManager's check) is STALE_CONTROLLER_EPOCH."""
    current = ctx.server.broker_epoch
    if request.broker_epoch != -1 and request.broker_epoch < current:
        log.info("Received %s request with broker epoch %d smaller than the current broker epoch %d", what,
                 request.broker_epoch, current)
        return ErrorCode.STALE_BROKER_EPOCH, None
    try:
        return ErrorCode.NONE, apply()
    except StaleControllerEpochError:
        StateChangeLogger(ctx.server.broker_id, in_controller_context=False).log(
            logging.WARNING, None, f"Ignoring {what} request from controller {request.controller_id} with correlation id "
                                   f"{ctx.header.correlation_id} since its controller epoch {request.controller_epoch} "
                                   f"is old. Latest known controller epoch is "
                                   f"{ctx.server.replica_manager.controller_epoch}")
        return ErrorCode.STALE_CONTROLLER_EPOCH, None


def _grouped(request: LeaderAndIsrRequest, version: int) -> list[tuple[str, Any, Any]]:
    grouped: list[tuple[str, Any, Any]] = []
    if version < 2:
        grouped = [(p.topic_name, None, p) for p in request.ungrouped_partition_states]
    else:
        for t in request.topic_states:
            topic_id = t.topic_id if version >= 5 and t.topic_id != ZERO_UUID else None
            grouped.extend((t.topic_name, topic_id, p) for p in t.partition_states)
    return grouped


def _partition_states(request: LeaderAndIsrRequest, version: int) -> list[LeaderAndIsrPartitionState]:
    return [LeaderAndIsrPartitionState(
        topic=topic, partition=p.partition_index, topic_id=topic_id, controller_epoch=p.controller_epoch,
        leader=p.leader, leader_epoch=p.leader_epoch, isr=tuple(p.isr), partition_epoch=p.partition_epoch,
        replicas=tuple(p.replicas), adding_replicas=tuple(p.adding_replicas or ()),
        removing_replicas=tuple(p.removing_replicas or ()), is_new=bool(p.is_new),
        leader_recovery_state=LeaderRecoveryState.of(p.leader_recovery_state))
        for topic, topic_id, p in _grouped(request, version)]


def _leader_and_isr_response(request: LeaderAndIsrRequest, version: int, code: int,
                             errors: dict[TopicPartition, int]) -> LeaderAndIsrResponse:
    # Built from the raw partitions, not _partition_states: an error response must not fail on the field
    # values that made the request bad.
    grouped = _grouped(request, version)
    if version < 5:
        return LR(error_code=code, partition_errors=[LR.LeaderAndIsrPartitionError(
            topic_name=topic, partition_index=p.partition_index,
            error_code=errors.get(TopicPartition(topic, p.partition_index), code)) for topic, _, p in grouped])
    by_topic: dict[Any, list[Any]] = {}
    for topic, topic_id, p in grouped:
        by_topic.setdefault(topic_id or ZERO_UUID, []).append(LR.LeaderAndIsrPartitionError(
            partition_index=p.partition_index,
            error_code=errors.get(TopicPartition(topic, p.partition_index), code)))
    return LR(error_code=code, topics=[LR.LeaderAndIsrTopicError(topic_id=tid, partition_errors=errs)
                                       for tid, errs in by_topic.items()])


def leader_and_isr_error_response(request: LeaderAndIsrRequest, version: int, code: int) -> LeaderAndIsrResponse:
    """Kafka's LeaderAndIsrRequest.getErrorResponse: the error at the top and on every partition."""
    return _leader_and_isr_response(request, version, code, {})


@api(ApiKey.LEADER_AND_ISR, 0, 7, error_response=leader_and_isr_error_response)
def handle_leader_and_isr(ctx: RequestContext, request: LeaderAndIsrRequest) -> LeaderAndIsrResponse:
    ctx.require(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
    services = ctx.server
    version = ctx.api_version
    states = _partition_states(request, version)
    _log_handling(ctx, "LeaderAndIsr", request.controller_id, len(states))
    leaders = {ll.broker_id: Node(ll.broker_id, ll.host_name, ll.port) for ll in request.live_leaders}
    code, errors = _fenced_apply(ctx, request, "LeaderAndIsr", lambda: become_leader_or_follower(
        services.replica_manager, services, services.broker_id, request.controller_epoch, states, leaders))
    if errors is None:
        return leader_and_isr_error_response(request, version, code)
    return _leader_and_isr_response(request, version, ErrorCode.NONE, errors)


def _stop_replica_states(request: StopReplicaRequest, version: int) -> list[StopReplicaPartitionState]:
    if version == 0:
        return [StopReplicaPartitionState(p.topic_name, p.partition_index, None, -1, request.delete_partitions)
                for p in request.ungrouped_partitions]
    if version <= 2:
        return [StopReplicaPartitionState(t.name, p, None, -1, request.delete_partitions)
                for t in request.topics for p in t.partition_indexes]
    return [StopReplicaPartitionState(t.topic_name, p.partition_index, None, p.leader_epoch, p.delete_partition)
            for t in request.topic_states for p in t.partition_states]


def stop_replica_error_response(request: StopReplicaRequest, version: int, code: int) -> StopReplicaResponse:
    return SR(error_code=code, partition_errors=[
        SR.StopReplicaPartitionError(topic_name=s.topic, partition_index=s.partition, error_code=code)
        for s in _stop_replica_states(request, version)])


@api(ApiKey.STOP_REPLICA, 0, 4, error_response=stop_replica_error_response)
def handle_stop_replica(ctx: RequestContext, request: StopReplicaRequest) -> StopReplicaResponse:
    ctx.require(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
    services = ctx.server
    version = ctx.api_version
    states = _stop_replica_states(request, version)
    _log_handling(ctx, "StopReplica", request.controller_id, len(states))
    code, errors = _fenced_apply(ctx, request, "StopReplica", lambda: stop_replicas(
        services.replica_manager, services, services.broker_id, request.controller_epoch, states))
    if errors is None:
        return stop_replica_error_response(request, version, code)
    return SR(error_code=ErrorCode.NONE, partition_errors=[SR.StopReplicaPartitionError(
        topic_name=s.topic, partition_index=s.partition,
        error_code=errors.get(TopicPartition(s.topic, s.partition), ErrorCode.NONE)) for s in states])

