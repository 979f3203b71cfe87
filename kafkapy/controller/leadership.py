"""The controller's leadership events (a mixin of Controller, run on its event thread): AlterPartition from
partition leaders (ISR changes), ControlledShutdown (move leaders off a stopping broker) and ElectLeaders
(preferred / unclean elections), with Kafka's per-partition errors.
Thread-safety: none; only the controller's event thread calls these.
"""

from __future__ import annotations

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
from kafkapy.controller.controller_events import ControlledShutdown, ElectionType, ElectLeaders, IsrChange
from kafkapy.controller.metadata_store import MetadataStore, MetadataStoreError
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionStateMachine,
)
from kafkapy.controller.replica_state_machine import ReplicaState, ReplicaStateMachine


class LeadershipHandlers:
    ctx: ControllerContext
    psm: PartitionStateMachine
    rsm: ReplicaStateMachine
    store: MetadataStore

    def _send(self, batch: BrokerRequestBatch) -> None:
        raise NotImplementedError

    def _check_reassignments(self, partitions: list[TopicPartition], batch: BrokerRequestBatch) -> None:
        raise NotImplementedError

    def _check_broker_epoch(self, broker_id: int, broker_epoch: int) -> None:
        broker = self.ctx.live_brokers.get(broker_id)
        if broker is None:
            raise BrokerNotAvailableError(f"Broker id {broker_id} does not exist.")
        if broker_epoch != -1 and broker_epoch != broker.epoch:
            raise StaleBrokerEpochError(f"Broker epoch {broker_epoch} of broker {broker_id} is not the current "
                                        f"epoch {broker.epoch}.")

    def _on_isr_change(self, event: IsrChange) -> dict[TopicPartition, LeaderAndIsr | KafkaError]:
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
        self._check_reassignments([tp for tp, r in results.items() if isinstance(r, LeaderAndIsr)], batch)
        self._send(batch)
        return results

    def _on_controlled_shutdown(self, event: ControlledShutdown) -> set[TopicPartition]:
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
        self._send(batch)
        return {tp for tp in hosted if ctx.leadership[tp].leader_and_isr.leader == event.broker_id}

    def _on_elect_leaders(self, event: ElectLeaders) -> dict[TopicPartition, KafkaError | None]:
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
        self._send(batch)
        return results
