"""Controller: Kafka's (ZooKeeper-mode) KafkaController over a MetadataStore, with one event thread that
owns all controller state.

The event loop and a {event type: handler} table live here, with controller election / failover, broker
changes and log dir failures; Kafka's collaborators are classes of their own, each built from the controller
context, the two state machines, the store and the request sender: TopicChangeHandler (topic and partition
creation), TopicDeletionManager, ReassignmentManager, PartitionLeaderElection (AlterPartition, controlled
shutdown, elections) and ConfigChangeHandler. ControllerConfig holds the broker properties they read.

Public methods only enqueue an event and return a concurrent.futures.Future the event thread completes;
handlers wait on it (or chain add_done_callback) and never read controller state. Every decision is written
to the store first, then pushed to brokers through one ControllerChannel in Kafka's order: LeaderAndIsr (so
the broker hosts the partition before clients can see it), UpdateMetadata (this broker's MetadataCache at
once, the others by request), StopReplica. An in-process channel runs on the event thread; it must not call
back into the controller and wait.
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

from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.errors import (
    KafkaError,
    NotControllerError,
)
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.config_change_handler import (
    ConfigChangeCallback,
    ConfigChangeHandler,
    ConfigValidator,
)
from kafkapy.controller.controller_channel import (
    CallbackControllerChannel,
    ControllerChannel,
    LeaderAndIsrCallback,
    StopReplicaCallback,
)
from kafkapy.controller.controller_config import ConfigProperties, ControllerConfig
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
from kafkapy.controller.controller_request_sender import ControllerRequestSender
from kafkapy.controller.leadership import PartitionLeaderElection
from kafkapy.controller.metadata_store import ControllerMovedError, MetadataStore, MetadataStoreError
from kafkapy.controller.offline_replicas import on_leader_and_isr_response
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionState,
    PartitionStateMachine,
)
from kafkapy.controller.reassignment import ReassignmentManager
from kafkapy.controller.replica_state_machine import ReplicaState, ReplicaStateMachine
from kafkapy.controller.topic_change_handler import TopicChangeHandler
from kafkapy.controller.topic_deletion_manager import TopicDeletionManager
from kafkapy.zk import zk_data
from kafkapy.zk.zk_data import DEFAULT_BROKER_ENTITY, random_kafka_uuid, uuid_to_kafka_str

log = logging.getLogger("kafka.controller.KafkaController")



def _default_topic_config_validator(configs: Mapping[str, str]) -> None:
    from kafkapy.storage.log_config import validate_topic_configs

    validate_topic_configs(configs)


# Requests any broker serves in cluster mode by writing the store (the controller's watches do the rest).
ADMIN_EVENTS = (TopicCreation, TopicDeletion, PartitionCreation, ConfigChange)


class Controller:
    def __init__(self, store: MetadataStore, metadata_cache: MetadataCache, broker_id: int, time: Time = SYSTEM,
                 config: ControllerConfig | ConfigProperties | None = None,
                 on_leader_and_isr: LeaderAndIsrCallback | None = None,
                 on_stop_replica: StopReplicaCallback | None = None,
                 on_config_change: ConfigChangeCallback | None = None,
                 topic_config_validator: ConfigValidator | None = None,
                 rng: random.Random | None = None,
                 channel: ControllerChannel | None = None) -> None:
        """config: broker properties by Kafka name (a dict, a KafkaConfig or a ControllerConfig; see
        ControllerConfig). channel: how decisions (LeaderAndIsr / UpdateMetadata / StopReplica) reach brokers:
        the network in ZooKeeper mode, the broker in-process when embedded; without one, a
        CallbackControllerChannel hands them to on_leader_and_isr / on_stop_replica (tests)."""
        self.store = store
        self.metadata_cache = metadata_cache
        self.broker_id = broker_id
        self.time = time
        self.config = ControllerConfig.from_config(config)
        self.ctx = ControllerContext(controller_id=broker_id)
        self.psm = PartitionStateMachine(self.ctx, store, self._unclean_enabled)
        self.rsm = ReplicaStateMachine(self.ctx, self.psm)
        self.channel = channel if channel is not None else CallbackControllerChannel(on_leader_and_isr,
                                                                                    on_stop_replica)
        self.channel.on_leader_and_isr_response = self.leader_and_isr_response
        self.sender = ControllerRequestSender(self.ctx, broker_id, metadata_cache, self.channel)
        validate = topic_config_validator or _default_topic_config_validator
        parts = (self.ctx, self.psm, self.rsm, store, self.sender)
        self.topics = TopicChangeHandler(*parts, self.config, validate, rng or random.Random(), self._is_active,
                                         self._enqueue_watch)
        self.deletion = TopicDeletionManager(*parts, self.config, self._is_active)
        self.reassignments = ReassignmentManager(*parts)
        self.elections = PartitionLeaderElection(*parts, self.reassignments, self.config, self._is_active)
        self.configs = ConfigChangeHandler(self.ctx, store, self.config, self.elections, validate, on_config_change)
        self._queue: queue.Queue[ControllerEvent] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._running = False
        self._active = False
        self._watching = False
        self._zk_watching = False
        self._stopped = threading.Event()
        self._handlers: dict[type[ControllerEvent], Callable[[Any], Any]] = {
            Startup: lambda _e: self._on_startup(),
            BrokerChange: lambda _e: self._on_broker_change() if self._active else None,
            SessionExpired: self._on_session_expired,
            ControllerChange: lambda _e: self._on_controller_change(),
            LeaderAndIsrResponseReceived: self._on_leader_and_isr_response,
            LogDirEventNotification: lambda _e: self._on_log_dir_event_notification(),
            TopicCreation: self.topics.on_topic_creation,
            PartitionCreation: self.topics.on_partition_creation,
            TopicChange: lambda _e: self.topics.on_topic_change(),
            PartitionModifications: lambda e: self.topics.on_partition_modifications(e.topic),
            TopicDeletion: self.deletion.on_topic_deletion,
            TopicDeletionFlag: lambda _e: self.deletion.on_topic_deletion_flag(),
            ConfigChange: self.configs.on_config_change,
            ConfigNotification: lambda e: self.configs.on_config_notification(e.entity_type, e.entity_name),
            IsrChange: self.elections.on_isr_change,
            IsrChangeNotification: lambda _e: self.elections.on_isr_change_notification(),
            ControlledShutdown: self.elections.on_controlled_shutdown,
            ElectLeaders: self.elections.on_elect_leaders,
            PreferredReplicaElection: lambda _e: self.elections.on_preferred_replica_election(),
            AutoPreferredReplicaLeaderElection: lambda _e: self.elections.on_auto_leader_rebalance(),
            AlterReassignments: self.reassignments.on_alter_reassignments,
            PartitionReassignment: lambda _e: self.reassignments.on_partition_reassignment(),
        }

    def _is_active(self) -> bool:
        return self._active

    def _unclean_enabled(self, topic: str) -> bool:
        return self.configs.unclean_enabled(topic)

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
        interval_s = max(1, self.config.leader_imbalance_check_interval_seconds)
        while not self._stopped.wait(interval_s):
            if self._active and self.config.auto_leader_rebalance_enable:
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
                self.sender.shutdown()
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
                self.sender.reset()
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
        handler = self._handlers.get(type(event))
        if handler is None:
            raise ValueError(f"unknown controller event {event!r}")
        return handler(event)

    def _on_session_expired(self, _event: SessionExpired) -> bool:
        self._resign()
        return self._on_startup()

    def leader_and_isr_response(self, broker_id: int, errors: Any) -> None:
        """A broker's LeaderAndIsr answer ({TopicPartition: error code}); handled as an event of its own,
        after the one that sent the request (any thread may call this)."""
        if not isinstance(errors, dict):
            return  # the broker could not answer at all (a failed callback)
        if any(code != 0 for code in errors.values()) or self.ctx.replicas_on_offline_dirs.get(broker_id):
            self._enqueue(LeaderAndIsrResponseReceived(broker_id, dict(errors)))

    def _on_leader_and_isr_response(self, event: LeaderAndIsrResponseReceived) -> None:
        if not self._active:
            return
        batch = BrokerRequestBatch(self.ctx)
        if on_leader_and_isr_response(self.ctx, self.psm, event.broker_id, event.errors, batch):
            self.sender.send(batch)

    def _resign(self) -> None:
        if self._active:
            self._active = False
            self.sender.reset()
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
            self.sender.reset()
        if current is None:
            return self._on_startup()
        return self._active

    def _register_cluster_watches(self) -> None:
        if self._zk_watching or not self.store.cluster_mode:
            return
        self._zk_watching = True
        store = self.store
        store.add_session_listener(lambda: self._enqueue_watch(SessionExpired()))
        store.watch_path_node(zk_data.CONTROLLER_PATH, lambda: self._enqueue_watch(ControllerChange()))
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
        self.configs.load_broker_defaults()
        topics = self.store.get_topics()
        for name, topic in topics.items():
            self.topics.watch_topic(name)
            ctx.topic_ids[name] = topic.topic_id or random_kafka_uuid()
            ctx.assignments[name] = dict(topic.assignment)
            ctx.topic_configs[name] = self.store.get_topic_config(name)
            for partition, stored in self.store.get_partition_states(name).items():
                ctx.leadership[TopicPartition(name, partition)] = stored
        ctx.topics_to_be_deleted = self.store.get_topics_marked_for_deletion() & set(topics)
        ctx.reassignments.clear()
        self.reassignments.load_reassignments({n: t for n, t in topics.items() if n not in ctx.topics_to_be_deleted})
        partitions = ctx.all_partitions()  # built once: it sorts and makes every partition's key
        for tp in partitions:
            leadership = ctx.leadership.get(tp)
            if leadership is None:
                ctx.states[tp] = PartitionState.NEW
            elif ctx.is_replica_online(leadership.leader_and_isr.leader):
                ctx.states[tp] = PartitionState.ONLINE
            else:
                ctx.states[tp] = PartitionState.OFFLINE
        batch = BrokerRequestBatch(ctx)
        batch.update_metadata_brokers = True
        batch.add_update_metadata(partitions)
        for tp in partitions:
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
        self.sender.send(batch)
        if ctx.reassignments:
            resumed = BrokerRequestBatch(ctx)
            self.reassignments.resume_reassignments(resumed)
            self.sender.send(resumed)
        if ctx.topics_to_be_deleted:
            self.deletion.delete_topics(sorted(ctx.topics_to_be_deleted))
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
        self.sender.send(batch)
        if new:
            self.deletion.resume_topic_deletion(new)

    def _on_brokers_failure(self, dead: set[int], batch: BrokerRequestBatch) -> None:
        ctx = self.ctx
        offline_leaders = [tp for tp in ctx.all_partitions() if tp.topic not in ctx.topics_to_be_deleted
                           and tp in ctx.leadership and ctx.leadership[tp].leader_and_isr.leader in dead]
        self.psm.to_offline(offline_leaders)
        self.psm.trigger_online_state_change(batch)
        self.rsm.handle_state_changes([(tp, r) for tp, r in self.rsm.replicas_on_brokers(dead)
                                       if tp.topic not in ctx.topics_to_be_deleted], ReplicaState.OFFLINE, batch)

    # -- log dir failures brokers reported (KIP-112) ---------------------------------------------------------

    def _on_log_dir_event_notification(self) -> None:
        """Kafka's processLogDirEventNotification / onBrokerLogDirFailure: send LeaderAndIsr for every replica
        on the reporting brokers; each answers KAFKA_STORAGE_ERROR for the replicas in its offline dirs, and the
        LeaderAndIsr response handling (offline_replicas.py) moves their leadership."""
        ctx = self.ctx
        names = self.store.children(zk_data.LOG_DIR_EVENT_NOTIFICATION_PATH)
        brokers: set[int] = set()
        for name in names:
            data = self.store.get_json(f"{zk_data.LOG_DIR_EVENT_NOTIFICATION_PATH}/{name}")
            if isinstance(data, dict) and "broker" in data:
                brokers.add(int(data["broker"]))
        try:
            live = sorted(b for b in brokers if b in ctx.live_brokers)
            if live:
                log.info("Received log directory failure notification for brokers %s", ",".join(map(str, live)))
                batch = BrokerRequestBatch(ctx)
                for broker in live:
                    for tp in ctx.partitions_on_broker(broker):
                        leadership = ctx.leadership.get(tp)
                        if leadership is not None and tp.topic not in ctx.topics_to_be_deleted:
                            batch.add_leader_and_isr([broker], tp, leadership)
                self.sender.send(batch)
        finally:
            if names:
                self.store.delete_children(zk_data.LOG_DIR_EVENT_NOTIFICATION_PATH, names)
