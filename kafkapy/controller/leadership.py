"""PartitionLeaderElection: the controller's leadership and ISR events, Kafka's per-partition errors included.

AlterPartition from partition leaders (ISR changes) and the ISR change notifications leaders write themselves
(/isr_change_notification/*, cluster mode); ControlledShutdown (move leaders off a stopping broker);
ElectLeaders (preferred / unclean elections), also as /admin/preferred_replica_election asks (tools with
--zookeeper) and as the auto leader rebalance (auto.leader.rebalance.enable, leader.imbalance.*) decides;
offline partitions elected again when unclean election becomes allowed. Built from the controller context,
the two state machines, the store, the sender and the ReassignmentManager (an ISR change may complete a
reassignment).
Reads and writes no bytes itself. Thread-safety: none; only the controller's event thread calls these.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafkapy.common.errors import (
    BrokerNotAvailableError,
    ElectionNotNeededError,
    EligibleLeadersNotAvailableError,
    FencedLeaderEpochError,
    IneligibleReplicaError,
    InvalidRequestError,
    InvalidUpdateVersionError,
    KafkaError,
    NotControllerError,
    PreferredLeaderNotAvailableError,
    StaleBrokerEpochError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_config import ControllerConfig
from kafkapy.controller.controller_events import ControlledShutdown, ElectionType, ElectLeaders, IsrChange
from kafkapy.controller.controller_request_sender import ControllerRequestSender
from kafkapy.controller.metadata_store import MetadataStore, MetadataStoreError
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionState,
    PartitionStateMachine,
)
from kafkapy.controller.reassignment import ReassignmentManager
from kafkapy.controller.replica_state_machine import ReplicaState, ReplicaStateMachine
from kafkapy.zk import zk_data

log = logging.getLogger("kafka.controller.KafkaController")


class PartitionLeaderElection:
    def __init__(self, ctx: ControllerContext, psm: PartitionStateMachine, rsm: ReplicaStateMachine,
                 store: MetadataStore, sender: ControllerRequestSender, reassignments: ReassignmentManager,
                 config: ControllerConfig, is_active: Callable[[], bool]) -> None:
        self.ctx = ctx
        self.psm = psm
        self.rsm = rsm
        self.store = store
        self.sender = sender
        self.reassignments = reassignments
        self.config = config
        self.is_active = is_active

    def _check_broker_epoch(self, broker_id: int, broker_epoch: int) -> None:
        broker = self.ctx.live_brokers.get(broker_id)
        if broker is None:
            raise BrokerNotAvailableError(f"Broker id {broker_id} does not exist.")
        if broker_epoch != -1 and broker_epoch != broker.epoch:
            raise StaleBrokerEpochError(f"Broker epoch {broker_epoch} of broker {broker_id} is not the current "
                                        f"epoch {broker.epoch}.")

    def on_isr_change(self, event: IsrChange) -> dict[TopicPartition, LeaderAndIsr | KafkaError]:
        ctx = self.ctx
        broker = ctx.live_brokers.get(event.broker_id)
        if broker is None or (event.broker_epoch != -1 and event.broker_epoch != broker.epoch):
            raise StaleBrokerEpochError(f"Stale broker epoch {event.broker_epoch} for broker {event.broker_id}.")
        results: dict[TopicPartition, LeaderAndIsr | KafkaError] = {}
        proposed: dict[TopicPartition, LeaderAndIsr] = {}
        for item in event.items:
            tp, new = item.topic_partition, item.leader_and_isr
            leadership = ctx.leadership.get(tp)
            if leadership is None or tp.topic in ctx.topics_to_be_deleted:
                results[tp] = UnknownTopicOrPartitionError(f"Partition {tp} does not exist.")
                continue
            cur = leadership.leader_and_isr
            if new.partition_epoch > cur.partition_epoch or new.leader_epoch > cur.leader_epoch:
                # The leader knows a newer state than this controller: likely no longer the active one.
                results[tp] = NotControllerError(f"Partition {tp} is at a newer epoch than this controller knows.")
            elif new.leader_epoch < cur.leader_epoch:
                results[tp] = FencedLeaderEpochError(f"Leader epoch {new.leader_epoch} < {cur.leader_epoch}.")
            elif new.equals_allow_stale_partition_epoch(cur):
                results[tp] = cur  # already in the desired state: idempotent retry
            elif new.partition_epoch != cur.partition_epoch or new.leader_epoch != cur.leader_epoch:
                results[tp] = InvalidUpdateVersionError(
                    f"Partition epoch {new.partition_epoch} is not the current {cur.partition_epoch}.")
            elif event.broker_id != cur.leader:
                results[tp] = InvalidRequestError(f"Broker {event.broker_id} is not the leader of {tp}.")
            elif new.leader_recovery_state == 1 and (len(new.isr) > 1 or cur.leader_recovery_state == 0):
                results[tp] = InvalidRequestError("Invalid leader recovery state change.")
            else:
                ineligible = [r for r in new.isr if r not in ctx.replicas(tp)
                              or not ctx.is_replica_online(r, include_shutting_down=False)]
                if ineligible:
                    results[tp] = IneligibleReplicaError(f"Replicas {ineligible} are not eligible for the ISR.")
                else:
                    proposed[tp] = LeaderAndIsr(cur.leader, cur.leader_epoch, tuple(new.isr),
                                                new.leader_recovery_state, cur.partition_epoch)
        batch = BrokerRequestBatch(ctx)
        for tp, written in self.store.update_partition_states(proposed, ctx.epoch).items():
            if isinstance(written, MetadataStoreError):
                results[tp] = InvalidUpdateVersionError(str(written))
                continue
            ctx.leadership[tp] = LeaderIsrAndControllerEpoch(written, ctx.epoch)
            batch.add_update_metadata([tp])
            results[tp] = written
        self.reassignments.check_reassignments([tp for tp, r in results.items() if isinstance(r, LeaderAndIsr)], batch)
        self.sender.send(batch)
        return results

    def on_controlled_shutdown(self, event: ControlledShutdown) -> set[TopicPartition]:
        ctx = self.ctx
        self._check_broker_epoch(event.broker_id, event.broker_epoch)
        ctx.shutting_down_broker_ids.add(event.broker_id)
        hosted = [tp for tp in ctx.partitions_on_broker(event.broker_id)
                  if len(ctx.replicas(tp)) > 1 and tp.topic not in ctx.topics_to_be_deleted and tp in ctx.leadership]
        led = [tp for tp in hosted if ctx.leadership[tp].leader_and_isr.leader == event.broker_id]
        led_set = set(led)
        followed = [tp for tp in hosted if tp not in led_set]
        batch = BrokerRequestBatch(ctx)
        if led:
            self.psm.elect_leaders(led, self.psm.controlled_shutdown_election(), batch)
        # The followers on the stopping broker go offline: StopReplica (no delete) and out of the ISR.
        self.rsm.handle_state_changes([(tp, event.broker_id) for tp in followed], ReplicaState.OFFLINE, batch)
        self.sender.send(batch)
        return {tp for tp in hosted if ctx.leadership[tp].leader_and_isr.leader == event.broker_id}

    def on_elect_leaders(self, event: ElectLeaders) -> dict[TopicPartition, KafkaError | None]:
        ctx = self.ctx
        partitions = event.partitions if event.partitions is not None else ctx.all_partitions()
        results: dict[TopicPartition, KafkaError | None] = {}
        candidates = []
        for tp in partitions:
            leadership = ctx.leadership.get(tp)
            if leadership is None or tp.topic in ctx.topics_to_be_deleted:
                results[tp] = UnknownTopicOrPartitionError(f"The partition {tp} does not exist.")
                continue
            leader = leadership.leader_and_isr.leader
            if event.election_type == ElectionType.PREFERRED:
                done = leader == ctx.replicas(tp)[0]
            else:
                done = leader >= 0 and ctx.is_replica_online(leader)
            if done:
                results[tp] = ElectionNotNeededError("Leader election not needed for topic partition.")
            else:
                candidates.append(tp)
        batch = BrokerRequestBatch(ctx)
        if event.election_type == ElectionType.PREFERRED:
            elected = self.psm.elect_leaders(candidates, self.psm.preferred_election(), batch)
        else:
            elected = self.psm.to_online(candidates, batch, self.psm.offline_election(allow_unclean=True))
        for tp in candidates:
            if elected.get(tp) is not None:
                results[tp] = None
            elif event.election_type == ElectionType.PREFERRED:
                results[tp] = PreferredLeaderNotAvailableError(
                    f"Failed to elect leader for partition {tp} under strategy PreferredReplicaPartitionLeaderElectionStrategy")
            else:
                results[tp] = EligibleLeadersNotAvailableError(
                    f"Failed to elect leader for partition {tp} under strategy OfflinePartitionLeaderElectionStrategy")
        self.sender.send(batch)
        return results

    # -- ISR changes leaders wrote themselves (cluster mode) ----------------------------------------------------

    def on_isr_change_notification(self) -> None:
        ctx = self.ctx
        names, tps = self.store.get_isr_change_notifications()
        known = sorted(tp for tp in tps if tp in ctx.leadership)
        for topic in sorted({tp.topic for tp in known}):
            stored = self.store.get_partition_states(topic)
            for tp in known:
                if tp.topic == topic and tp.partition in stored:
                    ctx.leadership[tp] = stored[tp.partition]
        if known:
            batch = BrokerRequestBatch(ctx)
            batch.add_update_metadata(known)
            self.reassignments.check_reassignments(known, batch)
            self.sender.send(batch)
        if names:
            self.store.delete_children(zk_data.ISR_CHANGE_NOTIFICATION_PATH, names)

    # -- preferred replica election (tools with --zookeeper, non-controller brokers) ------------------------

    def on_preferred_replica_election(self) -> None:
        wanted = self.store.get_preferred_replica_election()
        if wanted is None:
            return
        try:
            partitions = [tp for tp in wanted if tp in self.ctx.leadership]
            if partitions:
                self.on_elect_leaders(ElectLeaders(partitions=partitions, election_type=ElectionType.PREFERRED))
        finally:
            self.store.delete_preferred_replica_election()

    # -- auto leader rebalance --------------------------------------------------------------------------------

    def on_auto_leader_rebalance(self) -> None:
        """Kafka's checkAndTriggerAutoLeaderRebalance: per preferred broker, when more than
        leader.imbalance.per.broker.percentage of its partitions are led elsewhere, move them back."""
        ctx = self.ctx
        if not self.config.auto_leader_rebalance_enable:
            return
        threshold = self.config.leader_imbalance_per_broker_percentage
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp in ctx.all_partitions():
            replicas = ctx.replicas(tp)
            if replicas and tp.topic not in ctx.topics_to_be_deleted and tp in ctx.leadership:
                by_preferred.setdefault(replicas[0], []).append(tp)
        candidates: list[TopicPartition] = []
        for broker_id, tps in sorted(by_preferred.items()):
            if not ctx.is_replica_online(broker_id, include_shutting_down=False):
                continue
            imbalanced = [tp for tp in tps if ctx.leadership[tp].leader_and_isr.leader != broker_id]
            ratio = len(imbalanced) * 100 / len(tps)
            if imbalanced and ratio > threshold:
                log.info("Leader imbalance ratio for broker %d is %.1f%%: moving %d leaders back", broker_id,
                         ratio, len(imbalanced))
                candidates.extend(tp for tp in imbalanced if broker_id in ctx.leadership[tp].leader_and_isr.isr
                                  and ctx.states.get(tp) == PartitionState.ONLINE)
        if candidates:
            self.on_elect_leaders(ElectLeaders(partitions=candidates, election_type=ElectionType.PREFERRED))

    # -- offline partitions unclean election may now lead ------------------------------------------------------

    def elect_offline(self, partitions: list[TopicPartition]) -> None:
        if not self.is_active():
            return
        offline = [tp for tp in partitions if self.ctx.states.get(tp) == PartitionState.OFFLINE]
        if offline:
            batch = BrokerRequestBatch(self.ctx)
            self.psm.trigger_online_state_change(batch, offline)
            self.sender.send(batch)
