"""The controller's view of the cluster (ControllerContext), the batch of decisions it sends to brokers
(BrokerRequestBatch: LeaderAndIsr, UpdateMetadata, StopReplica), and Kafka's partition state machine with
its leader elections (offline, preferred, controlled shutdown) and ISR shrink for offline replicas.

States: NonExistent -> New -> Online <-> Offline -> NonExistent. New -> Online elects the first live replica
of the assignment with leader epoch 0 and ISR = live replicas. Offline/Online -> Online elects through a
strategy; every new leader bumps the leader epoch, every stored write bumps the partition epoch.
Thread-safety: none; owned by the controller's event thread.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import (
    INITIAL_LEADER_EPOCH,
    LEADER_DURING_DELETE,
    NO_LEADER,
    LeaderAndIsr,
    LeaderAndIsrPartitionState,
    LeaderIsrAndControllerEpoch,
    StopReplicaPartitionState,
    UpdateMetadataPartitionState,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.metadata_store import BadVersionError, MetadataStore, MetadataStoreError
from kafkapy.controller.state_change_logger import StateChangeLogger

log = logging.getLogger("kafka.controller.ZkPartitionStateMachine")


class PartitionState(Enum):
    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"
    NON_EXISTENT = "NonExistentPartition"


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    """An ongoing reassignment of one partition (Kafka's ReplicaAssignment): the full replica set RS while it
    runs is the target followed by the replicas being removed."""

    replicas: tuple[int, ...]  # RS
    adding: tuple[int, ...]  # AR = TRS - ORS
    removing: tuple[int, ...]  # RR = RS - TRS

    @property
    def target(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.removing)

    @property
    def original(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.adding)

    @classmethod
    def of(cls, current: tuple[int, ...], original: tuple[int, ...], target: tuple[int, ...]) -> ReplicaAssignment:
        """Moving to target from the current replica set (which may carry an earlier reassignment's replicas)."""
        full = tuple(target) + tuple(r for r in current if r not in target)
        return cls(full, tuple(r for r in target if r not in original), tuple(r for r in full if r not in target))


@dataclass
class ControllerContext:
    epoch: int = 0
    controller_id: int = -1  # this controller's broker id (the state change log's "[Controller id=N ...]")
    live_brokers: dict[int, Broker] = field(default_factory=dict)
    shutting_down_broker_ids: set[int] = field(default_factory=set)
    topic_ids: dict[str, uuid.UUID] = field(default_factory=dict)
    assignments: dict[str, dict[int, tuple[int, ...]]] = field(default_factory=dict)
    topic_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    leadership: dict[TopicPartition, LeaderIsrAndControllerEpoch] = field(default_factory=dict)
    states: dict[TopicPartition, PartitionState] = field(default_factory=dict)
    topics_to_be_deleted: set[str] = field(default_factory=set)
    reassignments: dict[TopicPartition, ReplicaAssignment] = field(default_factory=dict)
    # Kafka's replicasOnOfflineDirs: per live broker, the partitions whose replica it reported
    # KAFKA_STORAGE_ERROR for in a LeaderAndIsr response (no leader there, listed as offline replicas).
    replicas_on_offline_dirs: dict[int, set[TopicPartition]] = field(default_factory=dict)

    def live_or_shutting_down_broker_ids(self) -> set[int]:
        return set(self.live_brokers)

    def live_broker_ids(self) -> set[int]:
        return set(self.live_brokers) - self.shutting_down_broker_ids

    def is_replica_online(self, broker_id: int, include_shutting_down: bool = True,
                          tp: TopicPartition | None = None) -> bool:
        """The broker is live (and, given tp, its replica of tp is not on an offline log dir)."""
        if broker_id not in self.live_brokers:
            return False
        if tp is not None and tp in self.replicas_on_offline_dirs.get(broker_id, ()):
            return False
        return include_shutting_down or broker_id not in self.shutting_down_broker_ids

    def replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        return self.assignments.get(tp.topic, {}).get(tp.partition, ())

    def partitions_for_topic(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in sorted(self.assignments.get(topic, {}))]

    def all_partitions(self) -> list[TopicPartition]:
        return [tp for topic in sorted(self.assignments) for tp in self.partitions_for_topic(topic)]

    def partitions_on_broker(self, broker_id: int) -> list[TopicPartition]:
        return [tp for tp in self.all_partitions() if broker_id in self.replicas(tp)]

    def partitions_in_state(self, *states: PartitionState) -> list[TopicPartition]:
        return [tp for tp in self.all_partitions() if self.states.get(tp) in states]

    def offline_replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        return tuple(r for r in self.replicas(tp) if not self.is_replica_online(r, tp=tp))

    def remove_topic(self, topic: str) -> None:
        for tp in self.partitions_for_topic(topic):
            self.leadership.pop(tp, None)
            self.states.pop(tp, None)
            self.reassignments.pop(tp, None)
        self.assignments.pop(topic, None)
        self.topic_ids.pop(topic, None)
        self.topic_configs.pop(topic, None)
        self.topics_to_be_deleted.discard(topic)


class BrokerRequestBatch:
    """Decisions collected while handling one event, sent when the event is done (Kafka's
    ControllerBrokerRequestBatch): LeaderAndIsr per broker first, then UpdateMetadata, then StopReplica."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.leader_and_isr: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
        self.update_metadata: dict[TopicPartition, UpdateMetadataPartitionState] = {}
        self.update_metadata_brokers = False
        self.stop_replica: dict[int, dict[TopicPartition, StopReplicaPartitionState]] = {}

    def add_leader_and_isr(self, broker_ids: Iterable[int], tp: TopicPartition,
                           leadership: LeaderIsrAndControllerEpoch, is_new: bool = False) -> None:
        lai = leadership.leader_and_isr
        ongoing = self.ctx.reassignments.get(tp)
        state = LeaderAndIsrPartitionState(
            tp.topic, tp.partition, self.ctx.topic_ids[tp.topic], leadership.controller_epoch, lai.leader,
            lai.leader_epoch, tuple(lai.isr), lai.partition_epoch, self.ctx.replicas(tp),
            adding_replicas=ongoing.adding if ongoing else (), removing_replicas=ongoing.removing if ongoing else (),
            is_new=is_new, leader_recovery_state=lai.leader_recovery_state)
        for broker_id in broker_ids:
            if broker_id >= 0:
                self.leader_and_isr.setdefault(broker_id, {})[tp] = state
        self.add_update_metadata([tp])

    def add_update_metadata(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            leadership = self.ctx.leadership.get(tp)
            if leadership is None:
                continue
            lai = leadership.leader_and_isr
            leader = LEADER_DURING_DELETE if tp.topic in self.ctx.topics_to_be_deleted else lai.leader
            self.update_metadata[tp] = UpdateMetadataPartitionState(
                tp.topic, tp.partition, leadership.controller_epoch, leader, lai.leader_epoch, tuple(lai.isr),
                lai.partition_epoch, self.ctx.replicas(tp), self.ctx.offline_replicas(tp))

    def add_stop_replica(self, broker_ids: Iterable[int], tp: TopicPartition, delete: bool) -> None:
        leadership = self.ctx.leadership.get(tp)
        epoch = leadership.leader_and_isr.leader_epoch if leadership else -1
        # Kafka sends EpochDuringDelete (-2) when deleting so brokers accept it whatever their epoch.
        state = StopReplicaPartitionState(tp.topic, tp.partition, self.ctx.topic_ids.get(tp.topic),
                                          -2 if delete else epoch, delete)
        for broker_id in broker_ids:
            self.stop_replica.setdefault(broker_id, {})[tp] = state

    def is_empty(self) -> bool:
        return not (self.leader_and_isr or self.update_metadata or self.update_metadata_brokers
                    or self.stop_replica)


# An election strategy maps (partition, current leadership) to (new leader, new ISR) or None when none.
Election = Callable[[TopicPartition, LeaderAndIsr], tuple[int, tuple[int, ...]] | None]


class PartitionStateMachine:
    def __init__(self, ctx: ControllerContext, store: MetadataStore,
                 unclean_enabled: Callable[[str], bool]) -> None:
        self.ctx = ctx
        self.store = store
        self.unclean_enabled = unclean_enabled
        # ControllerStats (server/broker_metrics.py): UncleanLeaderElectionsPerSec, LeaderElectionRateAndTimeMs.
        self.on_unclean_election: Callable[[], None] = lambda: None
        self.on_election_ms: Callable[[float], None] = lambda ms: None
        self.state_change_log = StateChangeLogger(ctx.controller_id)

    # -- election strategies (Kafka's PartitionLeaderElectionAlgorithms) --------------------------------------

    def offline_election(self, allow_unclean: bool | None = None) -> Election:
        def elect(tp: TopicPartition, lai: LeaderAndIsr) -> tuple[int, tuple[int, ...]] | None:
            replicas = self.ctx.replicas(tp)
            live = [r for r in replicas if self.ctx.is_replica_online(r, tp=tp)]
            leader = next((r for r in replicas if r in live and r in lai.isr), None)
            if leader is not None:
                return leader, tuple(r for r in lai.isr if self.ctx.is_replica_online(r, tp=tp))
            unclean = self.unclean_enabled(tp.topic) if allow_unclean is None else allow_unclean
            if unclean and live:
                log.warning("Unclean leader election for %s: electing %d, out of the ISR %s", tp, live[0], lai.isr)
                self.on_unclean_election()
                return live[0], (live[0],)
            return None
        return elect

    def preferred_election(self) -> Election:
        def elect(tp: TopicPartition, lai: LeaderAndIsr) -> tuple[int, tuple[int, ...]] | None:
            replicas = self.ctx.replicas(tp)
            if replicas and self.ctx.is_replica_online(replicas[0], tp=tp) and replicas[0] in lai.isr:
                return replicas[0], tuple(lai.isr)
            return None
        return elect

    def controlled_shutdown_election(self) -> Election:
        def elect(tp: TopicPartition, lai: LeaderAndIsr) -> tuple[int, tuple[int, ...]] | None:
            shutting = self.ctx.shutting_down_broker_ids
            leader = next((r for r in self.ctx.replicas(tp) if self.ctx.is_replica_online(r, tp=tp)
                           and r in lai.isr and r not in shutting), None)
            if leader is None:
                return None
            return leader, tuple(r for r in lai.isr if r not in shutting)
        return elect

    # -- transitions -------------------------------------------------------------------------------------------

    def _previous(self, partitions: list[TopicPartition]) -> list[tuple[TopicPartition, str]]:
        states = self.ctx.states
        return [(tp, states.get(tp, PartitionState.NON_EXISTENT).value) for tp in partitions]

    def to_new(self, partitions: Iterable[TopicPartition]) -> None:
        partitions = list(partitions)
        if self.state_change_log.enabled(logging.INFO):
            self.state_change_log.partitions_new(self.ctx.epoch, [
                (tp, previous, self.ctx.replicas(tp)) for tp, previous in self._previous(partitions)])
        for tp in partitions:
            self.ctx.states[tp] = PartitionState.NEW

    def to_offline(self, partitions: Iterable[TopicPartition]) -> None:
        self._to_state(list(partitions), PartitionState.OFFLINE)

    def to_non_existent(self, partitions: Iterable[TopicPartition]) -> None:
        self._to_state(list(partitions), PartitionState.NON_EXISTENT)

    def _to_state(self, partitions: list[TopicPartition], target: PartitionState) -> None:
        if self.state_change_log.enabled(5):
            self.state_change_log.partitions_changed(self.ctx.epoch, self._previous(partitions), target.value)
        for tp in partitions:
            self.ctx.states[tp] = target

    def to_online(self, partitions: Iterable[TopicPartition], batch: BrokerRequestBatch,
                  election: Election | None = None) -> dict[TopicPartition, LeaderAndIsr | None]:
        """New partitions get their first leader; others are elected with `election` (offline by default).
        Returns the new leadership per partition, None where no leader could be elected."""
        partitions = list(partitions)
        new = [tp for tp in partitions if self.ctx.states.get(tp, PartitionState.NON_EXISTENT)
               in (PartitionState.NEW, PartitionState.NON_EXISTENT)]
        new_set = set(new)
        others = [tp for tp in partitions if tp not in new_set]
        results = self._initialize_leader_and_isr(new, batch)
        if others:
            results.update(self.elect_leaders(others, election or self.offline_election(), batch))
        self._log_online(results)
        for tp, lai in results.items():
            if lai is not None:
                self.ctx.states[tp] = PartitionState.ONLINE
        return results

    def _log_online(self, results: dict[TopicPartition, LeaderAndIsr | None]) -> None:
        scl, epoch, states = self.state_change_log, self.ctx.epoch, self.ctx.states
        failed = [tp for tp, lai in results.items() if lai is None]
        for tp in failed:
            scl.partition_failed(epoch, tp, states.get(tp, PartitionState.NON_EXISTENT).value,
                                 PartitionState.ONLINE.value, "no leader could be elected")
        if scl.enabled(logging.INFO):
            scl.partitions_online(epoch, [(tp, states.get(tp, PartitionState.NON_EXISTENT).value, lai)
                                          for tp, lai in results.items() if lai is not None])

    def trigger_online_state_change(self, batch: BrokerRequestBatch,
                                    partitions: Iterable[TopicPartition] | None = None) -> None:
        """Elect leaders for every New/Offline partition (not of topics being deleted)."""
        candidates = self.ctx.partitions_in_state(PartitionState.NEW, PartitionState.OFFLINE) \
            if partitions is None else list(partitions)
        candidates = [tp for tp in candidates if tp.topic not in self.ctx.topics_to_be_deleted]
        if candidates:
            self.to_online(candidates, batch)

    def _initialize_leader_and_isr(self, partitions: list[TopicPartition], batch: BrokerRequestBatch
                                   ) -> dict[TopicPartition, LeaderAndIsr | None]:
        results: dict[TopicPartition, LeaderAndIsr | None] = {}
        to_create: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        for tp in partitions:
            live = tuple(r for r in self.ctx.replicas(tp) if self.ctx.is_replica_online(r, tp=tp))
            if not live:
                log.error("Cannot initialize %s: none of its replicas %s is alive", tp, self.ctx.replicas(tp))
                self.ctx.states[tp] = PartitionState.NEW
                results[tp] = None
                continue
            to_create[tp] = LeaderIsrAndControllerEpoch(LeaderAndIsr(live[0], INITIAL_LEADER_EPOCH, live),
                                                        self.ctx.epoch)
        if not to_create:
            return results
        for tp, created in self.store.create_partition_states(to_create).items():
            if isinstance(created, MetadataStoreError):
                log.error("Cannot initialize %s: its state already exists in the store", tp)
                self.ctx.states[tp] = PartitionState.NEW
                results[tp] = None
                continue
            leadership = LeaderIsrAndControllerEpoch(created, self.ctx.epoch)
            self.ctx.leadership[tp] = leadership
            batch.add_leader_and_isr(created.isr, tp, leadership, is_new=True)
            results[tp] = created
        return results

    def elect_leaders(self, partitions: list[TopicPartition], election: Election, batch: BrokerRequestBatch
                      ) -> dict[TopicPartition, LeaderAndIsr | None]:
        results: dict[TopicPartition, LeaderAndIsr | None] = {}
        proposed: dict[TopicPartition, LeaderAndIsr] = {}
        started = time.monotonic()
        for tp in partitions:
            leadership = self.ctx.leadership.get(tp)
            if leadership is None:
                results[tp] = None
                continue
            current = leadership.leader_and_isr
            choice = election(tp, current)
            if choice is None:
                log.error("No leader can be elected for %s (replicas %s, ISR %s)", tp, self.ctx.replicas(tp),
                          current.isr)
                results[tp] = None
                continue
            proposed[tp] = current.new_leader_and_isr(*choice)
        results.update(self._write(proposed, batch, send_to=lambda tp: [
            r for r in self.ctx.replicas(tp) if self.ctx.is_replica_online(r)]))
        if proposed:
            self.on_election_ms((time.monotonic() - started) * 1000)
        return results

    def remove_replica_from_isr(self, broker_id: int, partitions: Iterable[TopicPartition],
                                batch: BrokerRequestBatch) -> dict[TopicPartition, LeaderAndIsr | None]:
        """OfflineReplica: drop broker_id from the ISR (never emptying it); a leader that goes offline
        without successor leaves the partition leaderless (leader -1)."""
        proposed: dict[TopicPartition, LeaderAndIsr] = {}
        for tp in partitions:
            leadership = self.ctx.leadership.get(tp)
            if leadership is None:
                continue
            lai = leadership.leader_and_isr
            if broker_id not in lai.isr and broker_id != lai.leader:
                continue
            isr = lai.isr if len(lai.isr) == 1 else tuple(r for r in lai.isr if r != broker_id)
            leader = NO_LEADER if lai.leader == broker_id else lai.leader
            proposed[tp] = lai.new_leader_and_isr(leader, isr)
        return self._write(proposed, batch, send_to=lambda tp: [
            r for r in self.ctx.replicas(tp) if r != broker_id and self.ctx.is_replica_online(r)])

    def _write(self, proposed: dict[TopicPartition, LeaderAndIsr], batch: BrokerRequestBatch,
               send_to: Callable[[TopicPartition], list[int]]) -> dict[TopicPartition, LeaderAndIsr | None]:
        results: dict[TopicPartition, LeaderAndIsr | None] = {}
        if not proposed:
            return results
        for tp, written in self.store.update_partition_states(proposed, self.ctx.epoch).items():
            if isinstance(written, MetadataStoreError):
                # Only this controller writes partition states; a version mismatch means the store changed
                # behind our back, so reload the partition and let the next event retry.
                log.error("Could not write the state of %s: %r", tp, written)
                if isinstance(written, BadVersionError):
                    stored = self.store.get_partition_states(tp.topic).get(tp.partition)
                    if stored is not None:
                        self.ctx.leadership[tp] = stored
                results[tp] = None
                continue
            leadership = LeaderIsrAndControllerEpoch(written, self.ctx.epoch)
            self.ctx.leadership[tp] = leadership
            batch.add_leader_and_isr(send_to(tp), tp, leadership)
            results[tp] = written
        return results
