"""Kafka's replica state machine: valid previous states, and the requests an Offline / DeletionStarted
transition adds to the batch (StopReplica, ISR shrink through the partition state machine)."""

from __future__ import annotations

import uuid

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.partition_state_machine import BrokerRequestBatch, ControllerContext
from kafkapy.controller.replica_state_machine import VALID_PREVIOUS_STATES, ReplicaState, ReplicaStateMachine

TP = TopicPartition("t", 0)
S = ReplicaState


class RecordingPsm:
    def __init__(self) -> None:
        self.removed: list[tuple[int, list[TopicPartition]]] = []

    def remove_replica_from_isr(self, broker_id, partitions, batch):
        self.removed.append((broker_id, list(partitions)))
        return {}


def context() -> ControllerContext:
    ctx = ControllerContext(epoch=3)
    ctx.live_brokers = {b: Broker.simple(b, "h", 9000 + b) for b in (0, 1)}
    ctx.assignments = {"t": {0: (0, 1, 2)}}
    ctx.topic_ids = {"t": uuid.uuid4()}
    ctx.leadership[TP] = LeaderIsrAndControllerEpoch(LeaderAndIsr(0, 4, (0, 1, 2)), 3)
    return ctx


def test_valid_previous_states_are_kafkas() -> None:
    assert VALID_PREVIOUS_STATES[S.NEW] == {S.NON_EXISTENT}
    assert VALID_PREVIOUS_STATES[S.DELETION_STARTED] == {S.OFFLINE}
    assert VALID_PREVIOUS_STATES[S.NON_EXISTENT] == {S.DELETION_SUCCESSFUL}
    assert VALID_PREVIOUS_STATES[S.DELETION_INELIGIBLE] == {S.OFFLINE, S.DELETION_STARTED}
    assert S.DELETION_INELIGIBLE in VALID_PREVIOUS_STATES[S.ONLINE]


def test_initialize_offline_and_deletion() -> None:
    ctx = context()
    psm = RecordingPsm()
    rsm = ReplicaStateMachine(ctx, psm)  # type: ignore[arg-type]
    online, offline = rsm.initialize()
    assert online == [(TP, 0), (TP, 1)] and offline == [(TP, 2)]
    assert rsm.state(TP, 2) == S.DELETION_INELIGIBLE
    batch = BrokerRequestBatch(ctx)
    rsm.handle_state_changes([(TP, 1), (TP, 2)], S.OFFLINE, batch)
    # StopReplica (no delete) only to the live replica; both leave the ISR through the partition state machine.
    assert {b: [s.delete_partition for s in p.values()] for b, p in batch.stop_replica.items()} == {1: [False]}
    assert psm.removed == [(1, [TP]), (2, [TP])]
    # An invalid transition is skipped: NonExistent only from ReplicaDeletionSuccessful.
    rsm.handle_state_changes([(TP, 1)], S.NON_EXISTENT, batch)
    assert rsm.state(TP, 1) == S.OFFLINE
    rsm.handle_state_changes([(TP, 1)], S.DELETION_STARTED, batch)
    assert batch.stop_replica[1][TP].delete_partition
    rsm.handle_state_changes([(TP, 1)], S.DELETION_SUCCESSFUL, batch)
    rsm.handle_state_changes([(TP, 1)], S.NON_EXISTENT, batch)
    assert rsm.state(TP, 1) == S.NON_EXISTENT and (TP, 1) not in rsm.states


def test_online_sends_leader_and_isr_except_right_after_new() -> None:
    ctx = context()
    rsm = ReplicaStateMachine(ctx, RecordingPsm())  # type: ignore[arg-type]
    batch = BrokerRequestBatch(ctx)
    rsm.handle_state_changes([(TP, 1)], S.NEW, batch)
    assert batch.leader_and_isr[1][TP].is_new
    batch = BrokerRequestBatch(ctx)
    rsm.handle_state_changes([(TP, 1)], S.ONLINE, batch)
    assert batch.leader_and_isr == {}
    rsm.handle_state_changes([(TP, 1)], S.OFFLINE, batch)
    batch = BrokerRequestBatch(ctx)
    rsm.handle_state_changes([(TP, 1)], S.ONLINE, batch)
    assert batch.leader_and_isr[1][TP].leader_epoch == 4
