"""Partition reassignment, Kafka's KafkaController.onPartitionReassignment (KIP-455) in ZooKeeper mode (run on
the controller's event thread). Sources: AlterPartitionReassignments (a target per partition, None
cancels) and /admin/reassign_partitions ({"version":1,"partitions":[{"topic","partition","replicas"}]},
Kafka 2.x's tool; each partition leaves the node when its move completes, the node goes when empty).
ReassignmentManager is built from the controller context, the two state machines, the store and the sender.

With ORS the original replicas, TRS the target, RS = TRS + (ORS - TRS), AR = TRS - ORS, RR = RS - TRS:
  start:    /brokers/topics/<t> gets RS with adding_replicas AR and removing_replicas RR; AR become NewReplica;
            the leader epoch is bumped and LeaderAndIsr(RS, AR, RR) goes to every replica (new ones start
            fetching from the leader);
  complete: once every TRS replica is in the ISR (checked on each ISR change): AR become OnlineReplica, RS =
            TRS, a new leader from TRS if the leader is leaving (else one more epoch bump), RR go Offline (out
            of the ISR, StopReplica) then through ReplicaDeletionStarted (StopReplica delete) to NonExistent,
            and the topic node keeps TRS only.
A new controller resumes every reassignment recorded in the topic nodes.
Thread-safety: none; only the controller's event thread calls these.
"""

from __future__ import annotations

import logging
from typing import Any

from kafkapy.common.errors import (
    InvalidReplicaAssignmentError,
    KafkaError,
    NoReassignmentInProgressError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_events import AlterReassignments
from kafkapy.controller.controller_request_sender import ControllerRequestSender
from kafkapy.controller.metadata_store import MetadataStore, MetadataStoreError, TopicReplicaAssignment
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionStateMachine,
    ReplicaAssignment,
)
from kafkapy.controller.replica_state_machine import ReplicaState, ReplicaStateMachine

log = logging.getLogger("kafka.controller.KafkaController")


def _seq(values: Any) -> str:
    return "List(" + ", ".join(map(str, values)) + ")"


class ReassignmentManager:
    def __init__(self, ctx: ControllerContext, psm: PartitionStateMachine, rsm: ReplicaStateMachine,
                 store: MetadataStore, sender: ControllerRequestSender) -> None:
        self.ctx = ctx
        self.psm = psm
        self.rsm = rsm
        self.store = store
        self.sender = sender

    # -- sources ----------------------------------------------------------------------------------------------

    def on_alter_reassignments(self, event: AlterReassignments) -> list[KafkaError | None]:
        ctx = self.ctx
        results: list[KafkaError | None] = []
        batch = BrokerRequestBatch(ctx)
        for tp, target in event.reassignments:
            if tp not in ctx.leadership or tp.topic in ctx.topics_to_be_deleted:
                results.append(UnknownTopicOrPartitionError("The partition does not exist."))
            elif target is None:
                ongoing = ctx.reassignments.get(tp)
                results.append(NoReassignmentInProgressError(None) if ongoing is None else
                               self._start_reassignment(tp, ongoing.original, batch))
            else:
                results.append(self._validate_target(tuple(target), ctx.replicas(tp))
                               or self._start_reassignment(tp, tuple(target), batch))
        self.sender.send(batch)
        return results

    def on_partition_reassignment(self) -> None:
        """/admin/reassign_partitions changed: start what it asks that is not running yet."""
        ctx = self.ctx
        wanted = self.store.get_partition_reassignment()
        batch = BrokerRequestBatch(ctx)
        done = []
        for tp, target in sorted(wanted.items()):
            ongoing = ctx.reassignments.get(tp)
            if ongoing is not None and ongoing.target == tuple(target):
                continue
            error = UnknownTopicOrPartitionError("The partition does not exist.") \
                if tp not in ctx.leadership or tp.topic in ctx.topics_to_be_deleted else \
                self._validate_target(tuple(target), ctx.replicas(tp)) or \
                self._start_reassignment(tp, tuple(target), batch)
            if error is not None:
                log.error("Skipping the reassignment of %s to %s: %s", tp, list(target), error)
            if error is not None or tp not in ctx.reassignments:
                done.append(tp)
        self.sender.send(batch)
        self._remove_from_admin_node(done)

    def _validate_target(self, target: tuple[int, ...], current: tuple[int, ...]) -> KafkaError | None:
        if not target:
            return InvalidReplicaAssignmentError("Empty replica list specified in partition reassignment.")
        if len(set(target)) != len(target):
            return InvalidReplicaAssignmentError(
                f"Duplicate replica ids in partition reassignment replica list: {_seq(target)}")
        if any(r < 0 for r in target):
            return InvalidReplicaAssignmentError(f"Invalid broker id in replica list: {_seq(target)}")
        adding = [r for r in target if r not in current]
        if any(not self.ctx.is_replica_online(r) for r in adding):
            live = sorted(self.ctx.live_brokers)
            return InvalidReplicaAssignmentError(f"Replica assignment has brokers that are not alive. Replica "
                                                 f"list: {_seq(adding)}, live broker list: {_seq(live)}")
        return None

    # -- the steps --------------------------------------------------------------------------------------------

    def _start_reassignment(self, tp: TopicPartition, target: tuple[int, ...], batch: BrokerRequestBatch
                            ) -> KafkaError | None:
        ctx = self.ctx
        ongoing = ctx.reassignments.get(tp)
        current = ctx.replicas(tp)
        original = ongoing.original if ongoing is not None else current
        if ongoing is None and target == current:
            return None  # nothing to move
        ra = ReplicaAssignment.of(current, original, target)
        log.info("Reassigning %s: original %s, target %s (adding %s, removing %s)", tp, list(original),
                 list(target), list(ra.adding), list(ra.removing))
        ctx.reassignments[tp] = ra
        self._maybe_complete_or_continue(tp, batch, starting=True)
        return None

    def resume_reassignments(self, batch: BrokerRequestBatch) -> None:
        """Controller failover: the topic nodes' adding/removing replicas are reassignments still running."""
        for tp in list(self.ctx.reassignments):
            self._maybe_complete_or_continue(tp, batch, starting=False)

    def check_reassignments(self, partitions: list[TopicPartition], batch: BrokerRequestBatch) -> None:
        """An ISR changed: a reassignment whose target replicas are all in the ISR completes now."""
        for tp in partitions:
            ra = self.ctx.reassignments.get(tp)
            leadership = self.ctx.leadership.get(tp)
            if ra is not None and leadership is not None and \
                    all(r in leadership.leader_and_isr.isr for r in ra.target):
                self._complete_reassignment(tp, batch)

    def _maybe_complete_or_continue(self, tp: TopicPartition, batch: BrokerRequestBatch, starting: bool) -> None:
        ctx = self.ctx
        ra = ctx.reassignments[tp]
        leadership = ctx.leadership[tp]
        if all(r in leadership.leader_and_isr.isr for r in ra.target):
            self._complete_reassignment(tp, batch)
            return
        if ctx.replicas(tp) != ra.replicas or starting:
            ctx.assignments[tp.topic][tp.partition] = ra.replicas
            self._write_topic(tp.topic)
            self.rsm.handle_state_changes([(tp, r) for r in ra.adding
                                           if self.rsm.state(tp, r) == ReplicaState.NON_EXISTENT],
                                          ReplicaState.NEW, batch)
        # A new leader epoch tells every replica (the adding ones first of all) about RS.
        self.psm.elect_leaders([tp], lambda _tp, lai: (lai.leader, tuple(lai.isr)), batch)

    def _complete_reassignment(self, tp: TopicPartition, batch: BrokerRequestBatch) -> None:
        ctx = self.ctx
        ra = ctx.reassignments[tp]
        target = ra.target
        self.rsm.handle_state_changes([(tp, r) for r in ra.adding], ReplicaState.ONLINE, batch)
        del ctx.reassignments[tp]
        ctx.assignments[tp.topic][tp.partition] = target
        lai = ctx.leadership[tp].leader_and_isr
        if lai.leader not in target or not ctx.is_replica_online(lai.leader):
            def reassign_election(_tp: TopicPartition, cur: Any) -> tuple[int, tuple[int, ...]] | None:
                leader = next((r for r in target if ctx.is_replica_online(r) and r in cur.isr), None)
                return None if leader is None else (leader, tuple(cur.isr))
            self.psm.elect_leaders([tp], reassign_election, batch)
        else:
            self.psm.elect_leaders([tp], lambda _tp, cur: (cur.leader, tuple(cur.isr)), batch)
        removing = [(tp, r) for r in ra.removing]
        self.rsm.handle_state_changes(removing, ReplicaState.OFFLINE, batch)
        self.rsm.handle_state_changes(removing, ReplicaState.DELETION_STARTED, batch)
        self.rsm.handle_state_changes(removing, ReplicaState.DELETION_SUCCESSFUL, batch)
        self.rsm.handle_state_changes(removing, ReplicaState.NON_EXISTENT, batch)
        self._write_topic(tp.topic)
        batch.add_update_metadata([tp])
        self._remove_from_admin_node([tp])
        log.info("Completed the reassignment of %s to %s", tp, list(target))

    # -- store ------------------------------------------------------------------------------------------------

    def _write_topic(self, topic: str) -> None:
        ctx = self.ctx
        stored = self.store.get_topic(topic)
        if stored is None:
            return
        ongoing = {tp.partition: ra for tp, ra in ctx.reassignments.items() if tp.topic == topic}
        updated = TopicReplicaAssignment(
            topic, stored.topic_id, dict(ctx.assignments[topic]),
            {p: ra.adding for p, ra in ongoing.items() if ra.adding},
            {p: ra.removing for p, ra in ongoing.items() if ra.removing}, stored.version)
        try:
            self.store.set_topic_assignment(updated)
        except MetadataStoreError:
            log.exception("Could not write the assignment of %s", topic)

    def _remove_from_admin_node(self, partitions: list[TopicPartition]) -> None:
        if not partitions or not self.store.cluster_mode:
            return
        wanted = self.store.get_partition_reassignment()
        left = {tp: r for tp, r in wanted.items() if tp not in set(partitions)}
        if len(left) != len(wanted):
            self.store.set_partition_reassignment(left)

    def load_reassignments(self, topics: dict[str, TopicReplicaAssignment]) -> None:
        for name, topic in topics.items():
            for p in set(topic.adding_replicas) | set(topic.removing_replicas):
                if p in topic.assignment:
                    self.ctx.reassignments[TopicPartition(name, p)] = ReplicaAssignment(
                        tuple(topic.assignment[p]), tuple(topic.adding_replicas.get(p, ())),
                        tuple(topic.removing_replicas.get(p, ())))
