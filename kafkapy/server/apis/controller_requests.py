"""Inter-broker requests between brokers and the controller (cluster mode), other than the replica manager's
LeaderAndIsr / StopReplica:
- UpdateMetadata (controller -> every broker): the broker's MetadataCache takes the controller's view; a
  request from an older controller epoch is refused with STALE_CONTROLLER_EPOCH (a zombie controller),
  one addressed to an older registration of this broker with STALE_BROKER_EPOCH.
- ControlledShutdown (a stopping broker -> the controller): the controller moves leadership away and
  answers with the partitions the broker still leads.
- AlterPartition (a partition leader -> the controller): ISR changes, committed by the controller.
Thread-safety: handlers run on request-handler threads; the cache swaps snapshots, the controller queues.
"""

from __future__ import annotations

import uuid
from typing import Any

from kafkapy.cluster.broker import Broker, EndPoint
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderRecoveryState, UpdateMetadataPartitionState
from kafkapy.common.errors import (
    ErrorCode,
    KafkaError,
    StaleBrokerEpochError,
    StaleControllerEpochError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_events import AlterPartitionItem
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages.alter_partition import AlterPartitionRequest, AlterPartitionResponse
from kafkapy.protocol.messages.controlled_shutdown import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)
from kafkapy.protocol.messages.update_metadata import UpdateMetadataRequest, UpdateMetadataResponse
from kafkapy.server.apis.registry import api
from kafkapy.server.apis.topics import controller_of, respond_after_controller
from kafkapy.server.delayed_controller_operation import controller_result

SECURITY_PROTOCOL_NAMES = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
ZERO_UUID = uuid.UUID(int=0)


def _broker_epoch(ctx: Any) -> int:
    return int(getattr(ctx.server, "broker_epoch", -1))


# -- UpdateMetadata ------------------------------------------------------------------------------------------

def _brokers(request: UpdateMetadataRequest, version: int) -> list[Broker]:
    out = []
    for b in request.live_brokers:
        if version == 0:
            endpoints: tuple[EndPoint, ...] = (EndPoint("PLAINTEXT", b.v0_host, b.v0_port, "PLAINTEXT"),)
        else:
            endpoints = tuple(EndPoint(
                e.listener or SECURITY_PROTOCOL_NAMES.get(e.security_protocol, "PLAINTEXT"), e.host, e.port,
                SECURITY_PROTOCOL_NAMES.get(e.security_protocol, "PLAINTEXT")) for e in b.endpoints)
        out.append(Broker(b.id, endpoints, b.rack))
    return out


def _partition_states(request: UpdateMetadataRequest, version: int) -> list[UpdateMetadataPartitionState]:
    pairs = [(p.topic_name, p) for p in request.ungrouped_partition_states] if version < 5 else \
        [(t.topic_name, p) for t in request.topic_states for p in t.partition_states]
    return [UpdateMetadataPartitionState(topic, p.partition_index, p.controller_epoch, p.leader, p.leader_epoch,
                                         tuple(p.isr), p.zk_version, tuple(p.replicas), tuple(p.offline_replicas))
            for topic, p in pairs]


@api(ApiKey.UPDATE_METADATA, 0, 8)
def handle_update_metadata(ctx: Any, request: UpdateMetadataRequest) -> UpdateMetadataResponse:
    cache = ctx.server.metadata_cache
    known_epoch = cache.snapshot().controller_epoch
    if request.controller_epoch < known_epoch:
        raise StaleControllerEpochError(f"Received UpdateMetadata from controller {request.controller_id} with "
                                        f"epoch {request.controller_epoch}, older than {known_epoch}.")
    broker_epoch = _broker_epoch(ctx)
    if request.broker_epoch != -1 and request.broker_epoch < broker_epoch:
        raise StaleBrokerEpochError(f"Received UpdateMetadata for broker epoch {request.broker_epoch}, older "
                                    f"than the current {broker_epoch}.")
    version = ctx.api_version
    topic_ids = {t.topic_name: t.topic_id for t in request.topic_states if t.topic_id != ZERO_UUID}
    cache.update_metadata(request.controller_id, request.controller_epoch, _brokers(request, version),
                          _partition_states(request, version), topic_ids)
    return UpdateMetadataResponse(error_code=ErrorCode.NONE)


# -- ControlledShutdown -----------------------------------------------------------------------------------------

def _controlled_shutdown_error(request: Any, version: int, code: int) -> ControlledShutdownResponse:
    return ControlledShutdownResponse(error_code=code)


def _alter_partition_error(request: Any, version: int, code: int) -> AlterPartitionResponse:
    return AlterPartitionResponse(error_code=code)


@api(ApiKey.CONTROLLED_SHUTDOWN, 1, 3, error_response=_controlled_shutdown_error)
def handle_controlled_shutdown(ctx: Any, request: ControlledShutdownRequest) -> Any:
    future = controller_of(ctx).controlled_shutdown(request.broker_id, request.broker_epoch)

    def build() -> ControlledShutdownResponse:
        remaining = controller_result(future, "move leaders off the stopping broker")
        return ControlledShutdownResponse(error_code=ErrorCode.NONE, remaining_partitions=[
            ControlledShutdownResponse.RemainingPartition(topic_name=tp.topic, partition_index=tp.partition)
            for tp in sorted(remaining)])

    return respond_after_controller(ctx, request, [future], ctx.server.config.get_int("request.timeout.ms"), build)


# -- AlterPartition ---------------------------------------------------------------------------------------------

@api(ApiKey.ALTER_PARTITION, 0, 1, error_response=_alter_partition_error)
def handle_alter_partition(ctx: Any, request: AlterPartitionRequest) -> Any:
    items = [AlterPartitionItem(TopicPartition(t.topic_name, p.partition_index),
                                LeaderAndIsr(request.broker_id, p.leader_epoch, tuple(p.new_isr),
                                             LeaderRecoveryState(p.leader_recovery_state), p.partition_epoch))
             for t in request.topics for p in t.partitions]
    future = controller_of(ctx).alter_partition(request.broker_id, request.broker_epoch, items)

    def build() -> AlterPartitionResponse:
        results = controller_result(future, "alter partitions")
        topics: dict[str, AlterPartitionResponse.TopicData] = {}
        for item in items:
            tp = item.topic_partition
            topic = topics.setdefault(tp.topic, AlterPartitionResponse.TopicData(topic_name=tp.topic, partitions=[]))
            result = results.get(tp)
            if isinstance(result, LeaderAndIsr):
                topic.partitions.append(AlterPartitionResponse.PartitionData(
                    partition_index=tp.partition, error_code=ErrorCode.NONE, leader_id=result.leader,
                    leader_epoch=result.leader_epoch, isr=list(result.isr),
                    leader_recovery_state=int(result.leader_recovery_state), partition_epoch=result.partition_epoch))
            else:
                code = result.code if isinstance(result, KafkaError) else ErrorCode.UNKNOWN_SERVER_ERROR
                topic.partitions.append(AlterPartitionResponse.PartitionData(partition_index=tp.partition,
                                                                             error_code=code, leader_id=-1))
        return AlterPartitionResponse(error_code=ErrorCode.NONE, topics=list(topics.values()))

    return respond_after_controller(ctx, request, [future], ctx.server.config.get_int("request.timeout.ms"), build)
