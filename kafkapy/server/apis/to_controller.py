"""Requests a broker sends to the controller (cluster mode), served by the active controller's broker:
- ControlledShutdown: the controller moves leadership off the stopping broker and answers with the
  partitions it still leads (Kafka retries while any remain);
- AlterPartition (v0-1, topic names): ISR changes a partition leader proposes, committed by the controller
  with the partition-epoch check (per-partition errors as Kafka's).
A broker that is not the controller answers NOT_CONTROLLER (the sender looks the controller up again).
Thread-safety: handlers only enqueue on the controller and answer from the topic purgatory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderRecoveryState
from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_events import AlterPartitionItem
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages.alter_partition import AlterPartitionRequest, AlterPartitionResponse
from kafkapy.protocol.messages.controlled_shutdown import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
)
from kafkapy.server.apis.handler_support import controller_of, respond_after_controller
from kafkapy.server.apis.registry import Deferred, api
from kafkapy.server.purgatory.delayed_controller_operation import controller_result

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

# -- ControlledShutdown -----------------------------------------------------------------------------------------

def _controlled_shutdown_error(request: ControlledShutdownRequest, version: int, code: int) -> ControlledShutdownResponse:
    return ControlledShutdownResponse(error_code=code)


def _alter_partition_error(request: AlterPartitionRequest, version: int, code: int) -> AlterPartitionResponse:
    return AlterPartitionResponse(error_code=code)


@api(ApiKey.CONTROLLED_SHUTDOWN, 1, 3, error_response=_controlled_shutdown_error)
def handle_controlled_shutdown(ctx: RequestContext, request: ControlledShutdownRequest) -> ControlledShutdownResponse | Deferred:
    ctx.require(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
    future = controller_of(ctx).controlled_shutdown(request.broker_id, request.broker_epoch)

    def build() -> ControlledShutdownResponse:
        remaining = controller_result(future, "move leaders off the stopping broker")
        return ControlledShutdownResponse(error_code=ErrorCode.NONE, remaining_partitions=[
            ControlledShutdownResponse.RemainingPartition(topic_name=tp.topic, partition_index=tp.partition)
            for tp in sorted(remaining)])

    return respond_after_controller(ctx, request, [future], ctx.server.config.get_int("request.timeout.ms"), build)


# -- AlterPartition ---------------------------------------------------------------------------------------------

@api(ApiKey.ALTER_PARTITION, 0, 1, error_response=_alter_partition_error)
def handle_alter_partition(ctx: RequestContext, request: AlterPartitionRequest) -> AlterPartitionResponse | Deferred:
    ctx.require(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
    items = [AlterPartitionItem(TopicPartition(t.topic_name, p.partition_index),
                                LeaderAndIsr(request.broker_id, p.leader_epoch, tuple(p.new_isr),
                                             LeaderRecoveryState.of(p.leader_recovery_state), p.partition_epoch))
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
