"""Replicas on offline log dirs: Kafka's handling of LeaderAndIsr responses that carry KAFKA_STORAGE_ERROR.

A broker answers a partition of a LeaderAndIsr request with KAFKA_STORAGE_ERROR when it cannot host it
(the log could not be created or opened: EMFILE, ENOSPC, a failed disk). Kafka's controller
(handleLeaderAndIsrResponseReceived) then keeps that replica in `replicasOnOfflineDirs`, and for the
newly offline ones runs onReplicasBecomeOffline: partitions led there go Offline and are re-elected among
the other online ISR members (none for a single replica: leader -1), the replica leaves the ISR, and every
broker's metadata lists it among the partition's offline replicas. A partition answered without error
comes back online. A broker that restarts or dies starts over (its entry is dropped on the broker change).

Reads and writes no bytes. Thread-safety: none; runs on the controller's event thread.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionStateMachine,
)

log = logging.getLogger("kafka.controller.KafkaController")


def on_leader_and_isr_response(ctx: ControllerContext, psm: PartitionStateMachine, broker_id: int,
                               errors: Mapping[TopicPartition, int], batch: BrokerRequestBatch) -> bool:
    """Record the broker's answer; add the resulting decisions to `batch`. True when anything changed."""
    if broker_id not in ctx.live_brokers:
        return False
    previous = ctx.replicas_on_offline_dirs.get(broker_id, set())
    offline = {tp for tp, code in errors.items() if code == ErrorCode.KAFKA_STORAGE_ERROR}
    online = {tp for tp, code in errors.items() if code == ErrorCode.NONE}
    current = (previous | offline) - online
    if current:
        ctx.replicas_on_offline_dirs[broker_id] = current
    else:
        ctx.replicas_on_offline_dirs.pop(broker_id, None)
    new_offline = sorted((tp for tp in current - previous if tp in ctx.leadership
                          and tp.topic not in ctx.topics_to_be_deleted), key=lambda tp: (tp.topic, tp.partition))
    back_online = sorted(previous - current, key=lambda tp: (tp.topic, tp.partition))
    if new_offline:
        log.info("Mark replicas %s on broker %d as offline", ",".join(str(tp) for tp in new_offline), broker_id)
        _on_replicas_become_offline(ctx, psm, broker_id, new_offline, batch)
    if back_online:
        batch.add_update_metadata(tp for tp in back_online if tp in ctx.leadership)
        # Leaderless partitions that now have an online replica again get one.
        psm.trigger_online_state_change(batch)
    return bool(new_offline or back_online)


def _on_replicas_become_offline(ctx: ControllerContext, psm: PartitionStateMachine, broker_id: int,
                                partitions: list[TopicPartition], batch: BrokerRequestBatch) -> None:
    """Kafka's onReplicasBecomeOffline for one broker's replicas."""
    led_there = [tp for tp in partitions if ctx.leadership[tp].leader_and_isr.leader == broker_id]
    psm.to_offline(led_there)
    psm.trigger_online_state_change(batch, led_there)
    # OfflineReplica: out of the ISR; a partition still led there (nobody else to elect) loses its leader.
    psm.remove_replica_from_isr(broker_id, partitions, batch)
    batch.add_update_metadata(partitions)
