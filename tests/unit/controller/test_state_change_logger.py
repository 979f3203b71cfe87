"""state.change.logger: Kafka's wording for partition and replica state changes, at Kafka's levels."""

from __future__ import annotations

import logging
import uuid

import pytest

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionState,
    PartitionStateMachine,
)
from kafkapy.controller.replica_state_machine import ReplicaState, ReplicaStateMachine
from kafkapy.controller.state_change_logger import STATE_CHANGE_LOGGER, TRACE, leader_and_isr_string

TP = TopicPartition("t", 0)


def context() -> ControllerContext:
    ctx = ControllerContext(epoch=3, controller_id=5)
    ctx.live_brokers = {b: Broker.simple(b, "h", 9000 + b) for b in (0, 1)}
    ctx.assignments = {"t": {0: (0, 1)}}
    ctx.topic_ids = {"t": uuid.uuid4()}
    ctx.leadership[TP] = LeaderIsrAndControllerEpoch(LeaderAndIsr(0, 4, (0, 1)), 3)
    return ctx


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == STATE_CHANGE_LOGGER]


def test_leader_and_isr_string_is_kafkas_to_string() -> None:
    assert leader_and_isr_string(LeaderAndIsr(1, 2, (1, 0), partition_epoch=7)) == (
        "LeaderAndIsr(leader=1, leaderEpoch=2, isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=-1), "
        "BrokerState(brokerId=0, brokerEpoch=-1)), leaderRecoveryState=RECOVERED, partitionEpoch=7)")


def test_partition_changes(caplog: pytest.LogCaptureFixture) -> None:
    ctx = context()
    psm = PartitionStateMachine(ctx, None, lambda topic: False)  # type: ignore[arg-type]
    caplog.set_level(TRACE, logger=STATE_CHANGE_LOGGER)
    psm.to_new([TP])
    psm.to_offline([TP])
    psm.to_non_existent([TP])
    assert ctx.states[TP] == PartitionState.NON_EXISTENT
    assert lines(caplog) == [
        ("INFO", "[Controller id=5 epoch=3] Changed partition t-0 state from NonExistentPartition to NewPartition "
                 "with assigned replicas 0,1"),
        ("TRACE", "[Controller id=5 epoch=3] Changed partition t-0 state from NewPartition to OfflinePartition"),
        ("TRACE", "[Controller id=5 epoch=3] Changed partition t-0 state from OfflinePartition to "
                  "NonExistentPartition"),
    ]


def test_at_info_only_info_lines_are_written(caplog: pytest.LogCaptureFixture) -> None:
    ctx = context()
    psm = PartitionStateMachine(ctx, None, lambda topic: False)  # type: ignore[arg-type]
    caplog.set_level(logging.INFO, logger=STATE_CHANGE_LOGGER)
    psm.to_new([TP])
    psm.to_offline([TP])
    assert [level for level, _ in lines(caplog)] == ["INFO"]


def test_replica_changes_and_an_invalid_one(caplog: pytest.LogCaptureFixture) -> None:
    ctx = context()
    psm = PartitionStateMachine(ctx, None, lambda topic: False)  # type: ignore[arg-type]
    rsm = ReplicaStateMachine(ctx, psm)
    caplog.set_level(TRACE, logger=STATE_CHANGE_LOGGER)
    batch = BrokerRequestBatch(ctx)
    rsm.handle_state_changes([(TP, 0)], ReplicaState.NEW, batch)
    rsm.handle_state_changes([(TP, 0)], ReplicaState.ONLINE, batch)
    rsm.handle_state_changes([(TP, 1)], ReplicaState.DELETION_STARTED, batch)  # NonExistent -> invalid
    assert lines(caplog) == [
        ("TRACE", "[Controller id=5 epoch=3] Changed state of replica 0 for partition t-0 from NonExistentReplica "
                  "to NewReplica"),
        ("TRACE", "[Controller id=5 epoch=3] Changed state of replica 0 for partition t-0 from NewReplica to "
                  "OnlineReplica"),
        ("ERROR", "[Controller id=5 epoch=3] Controller 5 epoch 3 initiated state change of replica 1 for "
                  "partition t-0 from NonExistentReplica to ReplicaDeletionStarted failed: Replica "
                  "[Topic=t,Partition=0,Replica=1] should be in the OfflineReplica states before moving to "
                  "ReplicaDeletionStarted state. Instead it is in NonExistentReplica state"),
    ]
