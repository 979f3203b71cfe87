"""Kafka's ReplicaStateMachine: the controller's state of every replica (partition, broker) and the requests
each transition sends.

States and the states they may be entered from (Kafka's validPreviousStates):
  NewReplica                  <- NonExistentReplica
  OnlineReplica               <- NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible
  OfflineReplica              <- NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible
  ReplicaDeletionStarted      <- OfflineReplica
  ReplicaDeletionSuccessful   <- ReplicaDeletionStarted
  ReplicaDeletionIneligible   <- OfflineReplica, ReplicaDeletionStarted
  NonExistentReplica          <- ReplicaDeletionSuccessful
Effects: New sends the replica LeaderAndIsr (it becomes a follower of the current leader); Online from
anything but New sends it LeaderAndIsr with the current leadership; Offline sends StopReplica (no delete)
and removes the replica from the ISR (a leader that goes leaves the partition leaderless until the
partition state machine elects); DeletionStarted sends StopReplica with delete. An invalid transition is
logged and skipped, as Kafka does.
Thread-safety: none; owned by the controller's event thread.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from enum import Enum

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionStateMachine,
)
from kafkapy.controller.state_change_logger import TRACE, StateChangeLogger

log = logging.getLogger("kafka.controller.ZkReplicaStateMachine")


class ReplicaState(Enum):
    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    DELETION_STARTED = "ReplicaDeletionStarted"
    DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
    DELETION_INELIGIBLE = "ReplicaDeletionIneligible"
    NON_EXISTENT = "NonExistentReplica"


S = ReplicaState
VALID_PREVIOUS_STATES: dict[ReplicaState, frozenset[ReplicaState]] = {
    S.NEW: frozenset({S.NON_EXISTENT}),
    S.ONLINE: frozenset({S.NEW, S.ONLINE, S.OFFLINE, S.DELETION_INELIGIBLE}),
    S.OFFLINE: frozenset({S.NEW, S.ONLINE, S.OFFLINE, S.DELETION_INELIGIBLE}),
    S.DELETION_STARTED: frozenset({S.OFFLINE}),
    S.DELETION_SUCCESSFUL: frozenset({S.DELETION_STARTED}),
    S.DELETION_INELIGIBLE: frozenset({S.OFFLINE, S.DELETION_STARTED}),
    S.NON_EXISTENT: frozenset({S.DELETION_SUCCESSFUL}),
}

Replica = tuple[TopicPartition, int]


class ReplicaStateMachine:
    def __init__(self, ctx: ControllerContext, psm: PartitionStateMachine) -> None:
        self.ctx = ctx
        self.psm = psm
        self.states: dict[Replica, ReplicaState] = {}
        self.state_change_log = StateChangeLogger(ctx.controller_id)

    def state(self, tp: TopicPartition, replica: int) -> ReplicaState:
        return self.states.get((tp, replica), S.NON_EXISTENT)

    def all_replicas(self) -> list[Replica]:
        return [(tp, r) for tp in self.ctx.all_partitions() for r in self.ctx.replicas(tp)]

    def initialize(self) -> tuple[list[Replica], list[Replica]]:
        """Kafka's startup: replicas on live brokers are Online, the others ReplicaDeletionIneligible.
        Returns (online, offline) replicas for the caller to transition."""
        self.states.clear()
        online: list[Replica] = []
        offline: list[Replica] = []
        for tp, r in self.all_replicas():
            if self.ctx.is_replica_online(r):
                self.states[(tp, r)] = S.ONLINE
                online.append((tp, r))
            else:
                self.states[(tp, r)] = S.DELETION_INELIGIBLE
                offline.append((tp, r))
        return online, offline

    def forget_topic(self, topic: str) -> None:
        for key in [k for k in self.states if k[0].topic == topic]:
            del self.states[key]

    def _valid(self, replicas: Iterable[Replica], target: ReplicaState) -> list[Replica]:
        out = []
        for tp, r in replicas:
            current = self.state(tp, r)
            if current in VALID_PREVIOUS_STATES[target]:
                out.append((tp, r))
            else:
                valid_from = ",".join(sorted(s.value for s in VALID_PREVIOUS_STATES[target]))
                self.state_change_log.replica_failed(
                    self.ctx.epoch, tp, r, current.value, target.value,
                    f"Replica [Topic={tp.topic},Partition={tp.partition},Replica={r}] should be in the {valid_from} "
                    f"states before moving to {target.value} state. Instead it is in {current.value} state")
        return out

    def handle_state_changes(self, replicas: Iterable[Replica], target: ReplicaState,
                             batch: BrokerRequestBatch) -> None:
        valid = self._valid(replicas, target)
        if not valid:
            return
        ctx = self.ctx
        if self.state_change_log.enabled(TRACE):
            self.state_change_log.replicas_changed(ctx.epoch, [(tp, r, self.state(tp, r).value) for tp, r in valid],
                                                   target.value)
        if target in (S.NEW, S.ONLINE):
            for tp, r in valid:
                leadership = ctx.leadership.get(tp)
                was_new = self.state(tp, r) == S.NEW
                if leadership is not None and not (target == S.ONLINE and was_new) and ctx.is_replica_online(r):
                    batch.add_leader_and_isr([r], tp, leadership, is_new=target == S.NEW)
                self.states[(tp, r)] = target
        elif target == S.OFFLINE:
            by_broker: dict[int, list[TopicPartition]] = {}
            for tp, r in valid:
                if ctx.is_replica_online(r):
                    batch.add_stop_replica([r], tp, delete=False)
                by_broker.setdefault(r, []).append(tp)
                self.states[(tp, r)] = S.OFFLINE
            for broker_id, tps in sorted(by_broker.items()):
                self.psm.remove_replica_from_isr(broker_id, [tp for tp in tps if tp.topic not in
                                                             ctx.topics_to_be_deleted], batch)
        elif target == S.DELETION_STARTED:
            for tp, r in valid:
                if ctx.is_replica_online(r):
                    batch.add_stop_replica([r], tp, delete=True)
                self.states[(tp, r)] = S.DELETION_STARTED
        elif target == S.NON_EXISTENT:
            for tp, r in valid:
                self.states.pop((tp, r), None)
        else:
            for tp, r in valid:
                self.states[(tp, r)] = target

    def replicas_on_brokers(self, broker_ids: Iterable[int]) -> list[Replica]:
        wanted = set(broker_ids)
        return [(tp, r) for tp, r in self.all_replicas() if r in wanted]
