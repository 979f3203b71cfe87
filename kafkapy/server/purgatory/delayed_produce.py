"""DelayedProduce: an acks=-1 produce waiting until every appended partition's HW reaches its offset.

Kafka's rules: partitions whose append failed are answered with that error at once; the others start
as REQUEST_TIMED_OUT with acks pending and complete when `Partition.check_enough_replicas_reach_offset`
says the HW passed the appended batch (NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank
below min.insync.replicas meanwhile) or the partition is gone / no longer led (its error). When the
timeout fires first, the pending ones keep REQUEST_TIMED_OUT. No byte format.
It looks partitions up through a `PartitionLookup` (the ReplicaManager is one) passed in, so this module
never imports the ReplicaManager.
Thread-safety: try_complete runs under the operation's lock (purgatory contract); on_complete runs once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.partition_response import PartitionResponse
from kafkapy.server.purgatory.delayed_operation import DelayedOperation

if TYPE_CHECKING:
    from kafkapy.cluster.partition import Partition


class PartitionLookup(Protocol):
    """What a DelayedProduce needs of the ReplicaManager."""

    def get_partition_or_error(self, tp: TopicPartition) -> Partition: ...


@dataclass(slots=True)
class ProducePartitionStatus:
    required_offset: int  # the appended batch's last offset + 1 (-1 when the append failed)
    response: PartitionResponse
    acks_pending: bool = False


class DelayedProduce(DelayedOperation):
    def __init__(self, delay_ms: int, statuses: dict[TopicPartition, ProducePartitionStatus],
                 replica_manager: PartitionLookup,
                 callback: Callable[[dict[TopicPartition, PartitionResponse]], None]) -> None:
        super().__init__(delay_ms)
        self.statuses = statuses
        self.replica_manager = replica_manager
        self.callback = callback
        for status in statuses.values():
            if status.response.error == ErrorCode.NONE:
                status.acks_pending = True
                status.response.error = ErrorCode.REQUEST_TIMED_OUT
            else:
                status.acks_pending = False

    def try_complete(self) -> bool:
        rm = self.replica_manager
        for tp, status in self.statuses.items():
            if not status.acks_pending:
                continue
            try:
                partition = rm.get_partition_or_error(tp)
                done, error = partition.check_enough_replicas_reach_offset(status.required_offset)
                code = error.code if error is not None else ErrorCode.NONE
            except KafkaError as e:
                done, code = False, e.code
            if code != ErrorCode.NONE or done:
                status.acks_pending = False
                status.response.error = code
        if not any(s.acks_pending for s in self.statuses.values()):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.callback({tp: s.response for tp, s in self.statuses.items()})

    def __repr__(self) -> str:
        pending = [str(tp) for tp, s in self.statuses.items() if s.acks_pending]
        return f"DelayedProduce(delay_ms={self.delay_ms}, pending={pending})"
