"""Controller: Kafka's (ZooKeeper-mode) KafkaController over a MetadataStore, with one event thread that
owns all controller state.

Public methods only enqueue an event and return a concurrent.futures.Future the event thread completes;
handlers wait on it (or chain add_done_callback) and never read controller state. Every decision is written
to the store first, then pushed to brokers in Kafka's order: LeaderAndIsr (on_leader_and_isr callback, so
the broker hosts the partition before clients can see it), UpdateMetadata (this broker's MetadataCache),
StopReplica (on_stop_replica callback). Callbacks run on the event thread; they must not call back into the
controller and wait.
Thread-safety: public methods are safe from any thread; state lives on the event thread only.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderAndIsrPartitionState, StopReplicaPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.errors import (
    KafkaError,
    NotControllerError,
)
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_channel import ControllerChannel
from kafkapy.controller.controller_events import (
    AlterPartitionItem,
    AlterReassignments,
    AutoPreferredReplicaLeaderElection,
    BrokerChange,
    ConfigChange,
    ConfigNotification,
    ControlledShutdown,
    ControllerChange,
    ControllerEvent,
    CreatableTopic,
    CreateTopicResult,
    ElectionType,
    ElectLeaders,
    IsrChange,
    IsrChangeNotification,
    LeaderAndIsrResponseReceived,
    LogDirEventNotification,
    PartitionCreation,
    PartitionModifications,
    PartitionReassignment,
    PreferredReplicaElection,
    SessionExpired,
    Shutdown,
    Startup,
    TopicChange,
    TopicCreation,
    TopicDeletion,
    TopicDeletionFlag,
    WatchEvent,
)
from kafkapy.controller.leadership import LeadershipHandlers
from kafkapy.controller.metadata_store import ControllerMovedError, MetadataStore, MetadataStoreError
from kafkapy.controller.offline_replicas import on_leader_and_isr_response
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionState,
    PartitionStateMachine,
)
from kafkapy.controller.reassignment import ReassignmentHandlers
from kafkapy.controller.replica_state_machine import ReplicaState, ReplicaStateMachine
from kafkapy.controller.topic_handlers import TopicHandlers, as_bool
from kafkapy.controller.zk_events import ClusterEventHandlers
from kafkapy.zk import zk_data
from kafkapy.zk.zk_data import DEFAULT_BROKER_ENTITY, random_kafka_uuid, uuid_to_kafka_str

log = logging.getLogger("kafka.controller.KafkaController")

LeaderAndIsrCallback = Callable[[int, int, list[LeaderAndIsrPartitionState]], None]
StopReplicaCallback = Callable[[int, int, list[StopReplicaPartitionState]], object]  # the result is not used
ConfigChangeCallback = Callable[[str, str, dict[str, str]], None]
ConfigValidator = Callable[[Mapping[str, str]], None]


def _default_topic_config_validator(configs: Mapping[str, str]) -> None:
    from kafkapy.storage.log_config import validate_topic_configs

    validate_topic_configs(configs)


# Requests any broker serves in cluster mode by writing the store (the controller's watches do the rest).
ADMIN_EVENTS = (TopicCreation, TopicDeletion, PartitionCreation, ConfigChange)


class Controller(TopicHandlers, ReassignmentHandlers, LeadershipHandlers, ClusterEventHandlers):
    def __init__(self, store: MetadataStore, metadata_cache: MetadataCache, broker_id: int, time: Time = SYSTEM,
                 config: Any = None,
                 on_leader_and_isr: LeaderAndIsrCallback | None = None,
                 on_stop_replica: StopReplicaCallback | None = None,
                 on_config_change: ConfigChangeCallback | None = None,
                 topic_config_validator: ConfigValidator | None = None,
                 rng: random.Random | None = None,
                 channel: ControllerChannel | None = None) -> None:
        """config: broker properties by Kafka name (num.partitions, default.replication.factor,
        delete.topic.enable, unclean.leader.election.enable): a dict or a KafkaConfig (anything with
        .get(name, default)); values may be strings or typed.
        channel: cluster mode's way to reach brokers (LeaderAndIsr / UpdateMetadata / StopReplica requests);
        without one, decisions go to the callbacks and this broker's MetadataCache only (embedded)."""
        self.store = store
        self.metadata_cache = metadata_cache
        self.broker_id = broker_id
        self.time = time
        self.config: Any = config if config is not None else {}
        self.on_leader_and_isr = on_leader_and_isr
        self.on_stop_replica = on_stop_replica
        self.on_config_change = on_config_change
        self.validate_topic_configs = topic_config_validator or _default_topic_config_validator
        self._rng = rng or random.Random()
        self.ctx = ControllerContext(controller_id=broker_id)
        self._broker_defaults: dict[str, str] = {}
        self.psm = PartitionStateMachine(self.ctx, store, self._unclean_enabled)
        self.rsm = ReplicaStateMachine(self.ctx, self.psm)
        self._queue: queue.Queue[ControllerEvent] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._running = False
        self._active = False
        self._watching = False
        self.channel = channel
        if channel is not None:
            channel.on_leader_and_isr_response = self.leader_and_isr_response
        self._zk_watching = False
        self._topic_watches: set[str] = set()
        self._stopped = threading.Event()

    # -- lifecycle ---------------------------------------------------------------------------------------

    def startup(self) -> Future[bool]:
        """Start the event thread and try to become the active controller. The future says whether this
        broker won the election. The broker must already be registered in the store."""
        with self._lock:
            if self._thread is None:
                self._running = True
                self._thread = threading.Thread(target=self._run, name=f"controller-event-thread-{self.broker_id}",
                                                daemon=True)
                self._thread.start()
                if self.store.cluster_mode:
                    threading.Thread(target=self._rebalance_timer, name=f"controller-rebalance-{self.broker_id}",
                                     daemon=True).start()
        return self._enqueue(Startup())

    def _rebalance_timer(self) -> None:
        interval_s = max(1, int(self.config.get("leader.imbalance.check.interval.seconds", 300)))
        while not self._stopped.wait(interval_s):
            if self._active and as_bool(self.config.get("auto.leader.rebalance.enable", True)):
                self._enqueue_watch(AutoPreferredReplicaLeaderElection())

    def shutdown(self, timeout_s: float = 30.0) -> None:
        with self._lock:
            thread = self._thread
            if thread is None:
                return
            # Under the lock, so no event can be queued behind Shutdown and be left without an answer.
            self._running = False
            self._stopped.set()
            self._queue.put(Shutdown())
        thread.join(timeout_s)
        with self._lock:
            self._thread = None
        self._drain(NotControllerError("The controller is shutting down."))

    @property
    def is_active(self) -> bool:
        return self._active

    @property
    def epoch(self) -> int:
        return self.ctx.epoch

    # -- public API (enqueue; thread-safe) -----------------------------------------------------------------

    def create_topics(self, topics: Iterable[CreatableTopic | tuple], validate_only: bool = False
                      ) -> Future[dict[str, CreateTopicResult]]:
        """Tuples are (name, num_partitions, replication_factor, assignment or None, configs)."""
        items = [t if isinstance(t, CreatableTopic) else CreatableTopic(t[0], t[1], t[2], t[3] or None,
                                                                           dict(t[4] or {})) for t in topics]
        return self._enqueue(TopicCreation(topics=items, validate_only=validate_only))

    def delete_topics(self, names: Iterable[str]) -> Future[dict[str, KafkaError | None]]:
        return self._enqueue(TopicDeletion(names=list(names)))

    def create_partitions(self, topic: str, new_total: int, assignment: Sequence[Sequence[int]] | None = None,
                          validate_only: bool = False) -> Future[None]:
        """assignment: replicas of each new partition in order (len == new_total - current)."""
        lists = [list(r) for r in assignment] if assignment is not None else None
        return self._enqueue(PartitionCreation(topic=topic, new_total=new_total, assignment=lists,
                                               validate_only=validate_only))

    def alter_topic_configs(self, topic: str, configs: Mapping[str, str], validate_only: bool = False
                            ) -> Future[None]:
        """Replace the topic's overrides with configs (IncrementalAlterConfigs: the handler merges first)."""
        return self._enqueue(ConfigChange(entity_type="topics", entity_name=topic, configs=dict(configs),
                                          validate_only=validate_only))

    def alter_broker_configs(self, broker_id: int | None, configs: Mapping[str, str],
                             validate_only: bool = False) -> Future[None]:
        """Replace dynamic broker overrides: per broker, or cluster-wide '<default>' when broker_id is None."""
        name = DEFAULT_BROKER_ENTITY if broker_id is None else str(broker_id)
        return self._enqueue(ConfigChange(entity_type="brokers", entity_name=name, configs=dict(configs),
                                          validate_only=validate_only))

    def alter_partition(self, broker_id: int, broker_epoch: int, items: Iterable[AlterPartitionItem]
                        ) -> Future[dict[TopicPartition, LeaderAndIsr | KafkaError]]:
        return self._enqueue(IsrChange(broker_id=broker_id, broker_epoch=broker_epoch, items=list(items)))

    def controlled_shutdown(self, broker_id: int, broker_epoch: int = -1) -> Future[set[TopicPartition]]:
        """Move leadership off broker_id; the result is the partitions it still leads (empty when done)."""
        return self._enqueue(ControlledShutdown(broker_id=broker_id, broker_epoch=broker_epoch))

    def elect_leaders(self, partitions: Iterable[TopicPartition] | None,
                      election_type: int = ElectionType.PREFERRED) -> Future[dict[TopicPartition, KafkaError | None]]:
        parts = list(partitions) if partitions is not None else None
        return self._enqueue(ElectLeaders(partitions=parts, election_type=election_type))

    def alter_partition_reassignments(self, reassignments: Iterable[tuple[TopicPartition, Sequence[int] | None]]
                                      ) -> Future[list[KafkaError | None]]:
        """Start (a replica list) or cancel (None) the reassignment of each partition, in order; one result
        per item."""
        wanted = [(tp, tuple(r) if r is not None else None) for tp, r in reassignments]
        return self._enqueue(AlterReassignments(reassignments=wanted))

    def config_changed(self, entity_type: str, entity_name: str) -> None:
        """A /config/changes notification (cluster mode): reload the entity's overrides."""
        self._enqueue_watch(ConfigNotification(entity_type=entity_type, entity_name=entity_name))

    def broker_change(self) -> None:
        """Re-read the registered brokers (the store's broker watch calls this)."""
        self._enqueue(BrokerChange())

    # Reads straight from the store (thread-safe there): the Describe/AlterConfigs handlers use these.
    def topic_config_overrides(self, topic: str) -> dict[str, str]:
        return self.store.get_topic_config(topic)

    def broker_config_overrides(self, broker_id: int | None) -> dict[str, str]:
        return self.store.get_broker_config(broker_id)

    # -- event loop -----------------------------------------------------------------------------------------

    def _enqueue(self, event: ControllerEvent) -> Future[Any]:
        with self._lock:
            if self._running:
                self._queue.put(event)
                return event.future
        event.future.set_exception(NotControllerError("The controller is not running."))
        return event.future

    def _enqueue_watch(self, event: ControllerEvent) -> None:
        """A watch callback's only job (it runs on the store's thread)."""
        self._enqueue(event)

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if isinstance(event, Shutdown):
                self._resign()
                if self.channel is not None:
                    self.channel.shutdown()
                event.future.set_result(None)
                return
            if isinstance(event, WatchEvent) and not self._active:
                event.future.set_result(None)
                continue
            try:
                if not self._active and self.store.cluster_mode and isinstance(event, ADMIN_EVENTS):
                    # Kafka 2.x: any broker serves these by writing ZooKeeper; the controller's watches act.
                    self._load_view_from_store()
                elif not self._active and not isinstance(event, (Startup, BrokerChange, ControllerChange,
                                                                  SessionExpired)):
                    raise NotControllerError(f"Broker {self.broker_id} is not the active controller.")
                result = self._process(event)
                if not event.future.done():
                    event.future.set_result(result)
            except ControllerMovedError as e:
                # A zombie: another controller was elected meanwhile; stop acting and follow /controller.
                log.warning("Broker %d resigns as controller: %s", self.broker_id, e)
                self._active = False
                if self.channel is not None:
                    self.channel.reset()
                self.store.controller_epoch_zk_version = None
                if not event.future.done():
                    event.future.set_exception(NotControllerError(f"Broker {self.broker_id} is not the controller."))
                self._enqueue(ControllerChange())
            except BaseException as e:  # the event thread must survive anything an event does
                if not isinstance(e, KafkaError):
                    log.exception("Controller event %s failed", type(event).__name__)
                if not event.future.done():
                    event.future.set_exception(e)

    def _load_view_from_store(self) -> None:
        """What an inactive broker needs to validate an admin write: topics, their assignments and deletion
        marks, and the live brokers for placement (no partition states)."""
        ctx, store = self.ctx, self.store
        ctx.live_brokers = store.get_brokers()
        topics = store.get_topics()
        ctx.assignments = {name: dict(t.assignment) for name, t in topics.items()}
        ctx.topic_ids = {name: t.topic_id or random_kafka_uuid() for name, t in topics.items()}
        ctx.topics_to_be_deleted = store.get_topics_marked_for_deletion()
        ctx.topic_configs.clear()
        ctx.leadership.clear()
        ctx.states.clear()

    def _drain(self, error: KafkaError) -> None:
        while True:
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                return
            if not event.future.done():
                event.future.set_exception(error)

    def _process(self, event: ControllerEvent) -> Any:
        if isinstance(event, Startup):
            return self._on_startup()
        if isinstance(event, BrokerChange):
            return self._on_broker_change() if self._active else None
        if isinstance(event, TopicCreation):
            return self._on_topic_creation(event)
        if isinstance(event, TopicDeletion):
            return self._on_topic_deletion(event.names)
        if isinstance(event, PartitionCreation):
            return self._on_partition_creation(event)
        if isinstance(event, ConfigChange):
            return self._on_config_change(event)
        if isinstance(event, IsrChange):
            return self._on_isr_change(event)
        if isinstance(event, ControlledShutdown):
            return self._on_controlled_shutdown(event)
        if isinstance(event, ElectLeaders):
            return self._on_elect_leaders(event)
        if isinstance(event, ControllerChange):
            return self._on_controller_change()
        if isinstance(event, SessionExpired):
            self._resign()
            return self._on_startup()
        if isinstance(event, TopicChange):
            return self._on_topic_change()
        if isinstance(event, PartitionModifications):
            return self._on_partition_modifications(event.topic)
        if isinstance(event, TopicDeletionFlag):
            return self._on_topic_deletion_flag()
        if isinstance(event, IsrChangeNotification):
            return self._on_isr_change_notification()
        if isinstance(event, LogDirEventNotification):
            return self._on_log_dir_event_notification()
        if isinstance(event, PreferredReplicaElection):
            return self._on_preferred_replica_election()
        if isinstance(event, PartitionReassignment):
            return self._on_partition_reassignment()
        if isinstance(event, AlterReassignments):
            return self._on_alter_reassignments(event)
        if isinstance(event, ConfigNotification):
            return self._on_config_notification(event.entity_type, event.entity_name)
        if isinstance(event, LeaderAndIsrResponseReceived):
            return self._on_leader_and_isr_response(event) if self._active else None
        if isinstance(event, AutoPreferredReplicaLeaderElection):
            return self._on_auto_leader_rebalance()
        raise ValueError(f"unknown controller event {event!r}")

    def _send(self, batch: BrokerRequestBatch) -> None:
        if self.channel is not None:
            self._send_to_brokers(batch, self.channel)
            return
        for broker_id, states in sorted(batch.leader_and_isr.items()):
            if self.on_leader_and_isr is not None:
                errors = self._call(self.on_leader_and_isr, broker_id, self.ctx.epoch, list(states.values()))
                self.leader_and_isr_response(broker_id, errors)
        if batch.update_metadata or batch.update_metadata_brokers:
            self.metadata_cache.update_metadata(self.broker_id, self.ctx.epoch, self.ctx.live_brokers.values(),
                                                list(batch.update_metadata.values()), self.ctx.topic_ids)
        for broker_id, parts in sorted(batch.stop_replica.items()):
            if self.on_stop_replica is not None:
                self._call(self.on_stop_replica, broker_id, self.ctx.epoch, list(parts.values()))

    def _send_to_brokers(self, batch: BrokerRequestBatch, channel: ControllerChannel) -> None:
        """Cluster mode: the same decisions as requests to every live broker, in Kafka's order."""
        ctx = self.ctx
        live = ctx.live_brokers
        channel.set_live_brokers(live)
        for broker_id, states in sorted(batch.leader_and_isr.items()):
            if broker_id not in live:
                continue
            leaders = {s.leader for s in states.values()}
            channel.send_leader_and_isr(broker_id, self.broker_id, ctx.epoch, list(states.values()),
                                        [live[b] for b in sorted(leaders) if b in live])
        if batch.update_metadata or batch.update_metadata_brokers:
            # This broker's cache at once (handlers here answer with it), every broker by UpdateMetadata.
            self.metadata_cache.update_metadata(self.broker_id, ctx.epoch, live.values(),
                                                list(batch.update_metadata.values()), ctx.topic_ids)
            channel.send_update_metadata(sorted(live), self.broker_id, ctx.epoch, list(live.values()),
                                         list(batch.update_metadata.values()), dict(ctx.topic_ids))
        for broker_id, parts in sorted(batch.stop_replica.items()):
            if broker_id in live:
                channel.send_stop_replica(broker_id, self.broker_id, ctx.epoch, list(parts.values()))

    @staticmethod
    def _call(fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception:  # a broker failing to apply a decision must not stop the controller
            log.exception("Controller callback %s failed", getattr(fn, "__name__", fn))
            return None

    def leader_and_isr_response(self, broker_id: int, errors: Any) -> None:
        """A broker's LeaderAndIsr answer ({TopicPartition: error code}); handled as an event of its own,
        after the one that sent the request (any thread may call this)."""
        if not isinstance(errors, dict):
            return  # the broker could not answer at all (a failed callback)
        if any(code != 0 for code in errors.values()) or self.ctx.replicas_on_offline_dirs.get(broker_id):
            self._enqueue(LeaderAndIsrResponseReceived(broker_id, dict(errors)))

    def _on_leader_and_isr_response(self, event: LeaderAndIsrResponseReceived) -> None:
        batch = BrokerRequestBatch(self.ctx)
        if on_leader_and_isr_response(self.ctx, self.psm, event.broker_id, event.errors, batch):
            self._send(batch)

    def _resign(self) -> None:
        if self._active:
            self._active = False
            if self.channel is not None:
                self.channel.reset()
            try:
                self.store.resign_controller(self.broker_id)
            except MetadataStoreError:
                log.exception("Could not resign as controller")

    def _on_controller_change(self) -> bool:
        """Kafka's Reelect: /controller changed. Another broker holding it makes this one resign (a zombie
        whose session expired); nobody holding it means an election."""
        current = self.store.get_controller_id()
        if self._active and current != self.broker_id:
            log.info("Broker %d resigns as controller: broker %s took over", self.broker_id, current)
            self._active = False
            if self.channel is not None:
                self.channel.reset()
        if current is None:
            return self._on_startup()
        return self._active

    def _register_cluster_watches(self) -> None:
        if self._zk_watching or not self.store.cluster_mode:
            return
        self._zk_watching = True
        store = self.store
        store.add_session_listener(lambda: self._enqueue(SessionExpired()))
        store.watch_path_node(zk_data.CONTROLLER_PATH, lambda: self._enqueue(ControllerChange()))
        store.watch_path_children(zk_data.TOPICS_PATH, lambda: self._enqueue_watch(TopicChange()))
        store.watch_path_children(zk_data.DELETE_TOPICS_PATH, lambda: self._enqueue_watch(TopicDeletionFlag()))
        store.watch_path_children(zk_data.ISR_CHANGE_NOTIFICATION_PATH,
                                  lambda: self._enqueue_watch(IsrChangeNotification()))
        store.watch_path_children(zk_data.LOG_DIR_EVENT_NOTIFICATION_PATH,
                                  lambda: self._enqueue_watch(LogDirEventNotification()))
        store.watch_path_node(zk_data.PREFERRED_REPLICA_ELECTION_PATH,
                              lambda: self._enqueue_watch(PreferredReplicaElection()))
        store.watch_path_node(zk_data.REASSIGN_PARTITIONS_PATH,
                              lambda: self._enqueue_watch(PartitionReassignment()))

    # -- startup / failover -----------------------------------------------------------------------------------

    def _on_startup(self) -> bool:
        if self._active:
            return True
        self._register_cluster_watches()
        epoch = self.store.try_elect_controller(self.broker_id, self.time.milliseconds())
        cluster_id = self.store.get_or_create_cluster_id(uuid_to_kafka_str(random_kafka_uuid()))
        self.metadata_cache.set_cluster_id(cluster_id)
        if epoch is None:
            log.info("Broker %d is not the controller (controller is %s)", self.broker_id,
                     self.store.get_controller_id())
            self._active = False
            return False
        ctx = self.ctx
        # A failover starts from the store alone: forget whatever an earlier term left in the context.
        for table in (ctx.topic_ids, ctx.assignments, ctx.topic_configs, ctx.leadership, ctx.states):
            table.clear()
        ctx.epoch = epoch
        self._active = True
        if not self._watching:
            self._watching = True
            self.store.watch_brokers(self.broker_change)
        ctx.live_brokers = self.store.get_brokers()
        ctx.shutting_down_broker_ids.clear()
        self._broker_defaults = self.store.get_broker_config(None)
        topics = self.store.get_topics()
        for name, topic in topics.items():
            self._watch_topic(name)
            ctx.topic_ids[name] = topic.topic_id or random_kafka_uuid()
            ctx.assignments[name] = dict(topic.assignment)
            ctx.topic_configs[name] = self.store.get_topic_config(name)
            for partition, leadership in self.store.get_partition_states(name).items():
                ctx.leadership[TopicPartition(name, partition)] = leadership
        ctx.topics_to_be_deleted = self.store.get_topics_marked_for_deletion() & set(topics)
        ctx.reassignments.clear()
        self._load_reassignments({n: t for n, t in topics.items() if n not in ctx.topics_to_be_deleted})
        for tp in ctx.all_partitions():
            leadership = ctx.leadership.get(tp)
            if leadership is None:
                ctx.states[tp] = PartitionState.NEW
            elif ctx.is_replica_online(leadership.leader_and_isr.leader):
                ctx.states[tp] = PartitionState.ONLINE
            else:
                ctx.states[tp] = PartitionState.OFFLINE
        batch = BrokerRequestBatch(ctx)
        batch.update_metadata_brokers = True
        batch.add_update_metadata(ctx.all_partitions())
        for tp in ctx.all_partitions():
            leadership = ctx.leadership.get(tp)
            if leadership is not None and tp.topic not in ctx.topics_to_be_deleted:
                live = [r for r in ctx.replicas(tp) if ctx.is_replica_online(r)]
                batch.add_leader_and_isr(live, tp, leadership)
        # Kafka's replica state machine start-up: replicas on dead brokers go offline (out of the ISR, their
        # leaderships ended) before the partition state machine elects leaders for offline partitions.
        _online, offline = self.rsm.initialize()
        self.rsm.handle_state_changes([r for r in offline if r[0].topic not in ctx.topics_to_be_deleted
                                       and r[0] in ctx.leadership], ReplicaState.OFFLINE, batch)
        self.psm.trigger_online_state_change(batch)
        self._send(batch)
        if ctx.reassignments:
            resumed = BrokerRequestBatch(ctx)
            self._resume_reassignments(resumed)
            self._send(resumed)
        if ctx.topics_to_be_deleted:
            self._delete_topics(sorted(ctx.topics_to_be_deleted))
        log.info("Broker %d is the controller, epoch %d, %d topics", self.broker_id, epoch, len(topics))
        return True

    def _on_broker_change(self) -> None:
        ctx = self.ctx
        current = self.store.get_brokers()
        old = ctx.live_brokers
        bounced = {b for b in current if b in old and current[b].epoch != old[b].epoch}
        dead = (set(old) - set(current)) | bounced
        new = (set(current) - set(old)) | bounced
        if not dead and not new and current == old:
            return
        batch = BrokerRequestBatch(ctx)
        batch.update_metadata_brokers = True
        for b in dead | new:  # a broker that died or (re)started reports its offline dirs afresh
            ctx.replicas_on_offline_dirs.pop(b, None)
        if dead:
            ctx.live_brokers = {b: old[b] for b in old if b not in dead}
            ctx.shutting_down_broker_ids -= dead
            self._on_brokers_failure(dead, batch)
        ctx.live_brokers = current
        if new:
            batch.add_update_metadata(ctx.all_partitions())
            # onBrokerStartup: the new brokers' replicas go online (LeaderAndIsr: they follow the leaders).
            self.rsm.handle_state_changes([(tp, r) for tp, r in self.rsm.replicas_on_brokers(new)
                                           if tp.topic not in ctx.topics_to_be_deleted and tp in ctx.leadership],
                                          ReplicaState.ONLINE, batch)
            self.psm.trigger_online_state_change(batch)
        self._send(batch)
        if new:
            self.resume_topic_deletion(new)

    def _on_brokers_failure(self, dead: set[int], batch: BrokerRequestBatch) -> None:
        ctx = self.ctx
        offline_leaders = [tp for tp in ctx.all_partitions() if tp.topic not in ctx.topics_to_be_deleted
                           and tp in ctx.leadership and ctx.leadership[tp].leader_and_isr.leader in dead]
        self.psm.to_offline(offline_leaders)
        self.psm.trigger_online_state_change(batch)
        self.rsm.handle_state_changes([(tp, r) for tp, r in self.rsm.replicas_on_brokers(dead)
                                       if tp.topic not in ctx.topics_to_be_deleted], ReplicaState.OFFLINE, batch)
