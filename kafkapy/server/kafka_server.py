"""KafkaServer: wires one broker together and runs its lifecycle (Kafka's KafkaServer, embedded mode).

startup(): LogManager over log.dirs (recovery after an unclean stop), the metadata store (embedded
LocalMetadataStore in the first log dir when zookeeper.connect is unset), MetadataCache,
ReplicaManager (+ produce/fetch purgatories), SocketServer bound first so that port 0 resolves, the
broker registration with its advertised listeners, the embedded Controller (this broker is its own
controller: its LeaderAndIsr decisions reach the ReplicaManager through callbacks), then KafkaApis and
the request handler pool (requests that arrived meanwhile waited in the RequestChannel), and the
KafkaScheduler thread: log retention, dirty-log flushing, recovery-point / log-start-offset and HW
checkpoints, ISR expiration.
shutdown(): graceful and idempotent: stop the network (no new requests), drain the handler threads,
stop the scheduler and the purgatories, write the HW checkpoint, stop the controller, then the
LogManager flushes every log and writes its checkpoints and the clean-shutdown marker.
Thread-safety: startup/shutdown are serialised by a lock; await_shutdown may be called from any thread.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafkapy.cluster.alter_isr_manager import AlterIsrManager
from kafkapy.cluster.broker import Broker
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.time import SYSTEM, Time
from kafkapy.controller.controller import Controller
from kafkapy.controller.controller_channel import ControllerChannel
from kafkapy.controller.controller_events import AlterPartitionItem
from kafkapy.controller.local_store import LocalMetadataStore
from kafkapy.coordinator.group_coordinator import GroupCoordinator
from kafkapy.coordinator.group_membership import GroupConfig
from kafkapy.coordinator.group_metadata_manager import GroupMetadataManager, OffsetConfig
from kafkapy.coordinator.transaction_coordinator import TransactionCoordinator
from kafkapy.metrics.registry import MetricsRegistry
from kafkapy.server.alter_isr_manager import DefaultAlterIsrManager
from kafkapy.server.auth.acl_authorizer import AclAuthorizer
from kafkapy.server.auto_topic_creation_manager import AutoTopicCreationManager
from kafkapy.server.broker_metrics import BrokerMetrics, MeteredAlterIsrManager
from kafkapy.server.broker_services import BrokerServices
from kafkapy.server.kafka_apis import KafkaApis
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.kafka_request_handler import KafkaRequestHandlerPool
from kafkapy.server.local_controller_channel import LocalControllerChannel
from kafkapy.server.log_dir_failure_notifier import LogDirFailureNotifier
from kafkapy.server.network.request_channel import RequestChannel
from kafkapy.server.network.socket_server import SocketServer
from kafkapy.server.purgatory import DelayedOperationPurgatory
from kafkapy.server.purgatory.group_delayed_operation import GroupDelayedOperation
from kafkapy.server.quota.quota_managers import QuotaManagers
from kafkapy.server.replica_manager import ReplicaManager, effective_broker_configs
from kafkapy.storage.log_cleaner import CleanerConfig
from kafkapy.storage.log_manager import LogManager
from kafkapy.zk.zk_data import DEFAULT_BROKER_ENTITY

if TYPE_CHECKING:
    from kafkapy.server import cluster_mode
    from kafkapy.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager

log = logging.getLogger("kafka.server.KafkaServer")

CONTROLLER_STARTUP_TIMEOUT_S = 60.0
INITIAL_TASK_DELAY_MS = 30_000  # Kafka's LogManager.InitialTaskDelayMs
FLUSH_CHECK_CAP_MS = 1_000  # rolled segments are flushed by the flusher task within this bound


def create_group_coordinator(services: BrokerServices) -> GroupCoordinator:
    """The GroupCoordinator of a broker over its replica manager, with its own Heartbeat and Rebalance
    purgatories (call startup() once the replica manager is running)."""
    config, time, broker_id = services.config, services.time, services.broker_id
    offset_config = OffsetConfig.from_config(config)
    manager = GroupMetadataManager(broker_id, offset_config, time, services.replica_manager, services.metadata_cache)
    return GroupCoordinator(broker_id, GroupConfig.from_config(config), offset_config, manager, time,
                            DelayedOperationPurgatory("Heartbeat", time, broker_id=broker_id),
                            DelayedOperationPurgatory("Rebalance", time, broker_id=broker_id), GroupDelayedOperation)


def create_transaction_coordinator(services: BrokerServices) -> TransactionCoordinator:
    """The TransactionCoordinator of a broker: shares the broker's ProducerIdManager; sends its markers
    through WriteTxnMarkers requests on the inter-broker listener (call startup() once handlers run)."""
    from kafkapy.server.apis.producer_ids import producer_id_manager
    from kafkapy.server.network.inter_broker_security import inter_broker_client_security
    from kafkapy.server.txn_marker_sender import TxnMarkerSender, txn_marker_sender_config

    config = services.config
    sender = TxnMarkerSender(services.broker_id, config.inter_broker_listener_name(), services.metadata_cache,
                             txn_marker_sender_config(config, services.broker_id), inter_broker_client_security(config))
    return TransactionCoordinator.create(services.broker_id, config, services.time, services.replica_manager,
                                         services.metadata_cache, producer_id_manager(services), sender.send,
                                         sender.close)


def create_add_partitions_to_txn_manager(services: BrokerServices) -> AddPartitionsToTxnManager:
    """Transaction verification's path to other brokers' coordinators (its thread starts on first use)."""
    from kafkapy.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager
    from kafkapy.server.network.inter_broker_security import inter_broker_client_security

    config = services.config
    return AddPartitionsToTxnManager(services.broker_id, config.inter_broker_listener_name(), services.metadata_cache,
                                     config.get_int("request.timeout.ms"), inter_broker_client_security(config))


class KafkaScheduler:
    """Kafka's KafkaScheduler: periodic background tasks on one daemon thread, driven by `Time`.
    A task that raises is logged and keeps its schedule."""

    def __init__(self, time: Time = SYSTEM, thread_name_prefix: str = "kafka-scheduler-") -> None:
        self._time = time
        self._cond = threading.Condition()
        self._tasks: list[tuple[int, int, str, int, Callable[[], Any]]] = []
        self._seq = itertools.count()
        self._running = False
        self._thread = threading.Thread(target=self._run, name=f"{thread_name_prefix}0", daemon=True)

    def startup(self) -> None:
        with self._cond:
            self._running = True
        self._thread.start()

    def schedule(self, name: str, fn: Callable[[], Any], delay_ms: int, period_ms: int) -> None:
        with self._cond:
            heapq.heappush(self._tasks, (self._time.milliseconds() + delay_ms, next(self._seq), name,
                                         max(1, period_ms), fn))
            self._cond.notify()

    def shutdown(self, timeout_s: float = 30.0) -> None:
        with self._cond:
            was_running = self._running
            self._running = False
            self._cond.notify_all()
        if was_running and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._running:
                    return
                if not self._tasks:
                    self._cond.wait(1.0)
                    continue
                due, seq, name, period, fn = self._tasks[0]
                now = self._time.milliseconds()
                if due > now:
                    self._cond.wait(min(due - now, 1000) / 1000.0)
                    continue
                heapq.heapreplace(self._tasks, (now + period, seq, name, period, fn))
            try:
                fn()
            except Exception:
                log.exception("Uncaught exception in scheduled task '%s'", name)


class KafkaServer:
    def __init__(self, config: KafkaConfig, time: Time = SYSTEM,
                 alter_isr_manager: AlterIsrManager | None = None) -> None:
        """alter_isr_manager: where partition leaders propose ISR changes (default: this broker's own
        controller; ZooKeeper mode and tests acting as the controller bring theirs)."""
        self.config = config
        self.time = time
        self.broker_id = config.broker_id
        self._lifecycle = threading.Lock()
        self._started = False
        self._shutting_down = False
        self._shutdown_done = threading.Event()
        self.log_manager: LogManager | None = None
        self.store: Any = None
        self.metadata_cache: MetadataCache | None = None
        self.replica_manager: ReplicaManager | None = None
        self.controller: Controller | None = None
        self.request_channel: RequestChannel | None = None
        self.socket_server: SocketServer | None = None
        self.apis: KafkaApis | None = None
        self.request_handler_pool: KafkaRequestHandlerPool | None = None
        self.scheduler: KafkaScheduler | None = None
        self.services: BrokerServices | None = None
        self.broker_epoch = -1
        self.cluster: cluster_mode.ClusterMode | None = None  # ZooKeeper mode's extra parts
        self.alter_isr_manager: AlterIsrManager = alter_isr_manager or DefaultAlterIsrManager(
            self._send_alter_partition)
        # Kafka's metrics (kafkapy/metrics, server/broker_metrics.py); the ISR meters wrap the AlterIsrManager.
        self.metrics = MetricsRegistry(time)
        self.broker_metrics = BrokerMetrics(self.metrics)
        self.alter_isr_manager = MeteredAlterIsrManager(self.alter_isr_manager, self.metrics)

    @property
    def ident(self) -> str:
        return f"[KafkaServer id={self.broker_id}]"

    # -- startup --------------------------------------------------------------------------------------

    def startup(self) -> None:
        with self._lifecycle:
            if self._started or self._shutting_down:
                return
            # The cyclic GC stays off while start-up builds its long-lived objects (loading 10,000 partitions
            # otherwise runs several full collections over everything built so far: a quarter of the logs'
            # load time), and what start-up built is then frozen (gc.freeze): later collections never walk
            # the partitions' objects again, so their cost does not grow with the partitions loaded. A log or
            # partition dropped later is freed by reference counting (they hold no reference cycles); the
            # shutdown unfreezes, so nothing frozen outlives the server unexamined.
            gc_was_enabled = gc.isenabled()
            gc.disable()
            try:
                self._startup()
            except BaseException:
                log.error("%s Fatal error during startup; shutting down what was started", self.ident)
                self._shutdown_components()
                self._shutdown_done.set()
                raise
            finally:
                if gc_was_enabled:
                    gc.freeze()
                    gc.enable()
            self._started = True

    def _startup(self) -> None:
        config, time = self.config, self.time
        log_dirs = config.log_dirs
        if config.uses_zookeeper:
            # ZooKeeper mode only: kazoo and the client stack stay unloaded on a single node
            from kafkapy.server import cluster_mode

            self.store = cluster_mode.connect_store(config)
        else:
            self.store = LocalMetadataStore(log_dirs[0])
        dynamic = {DEFAULT_BROKER_ENTITY: self.store.get_broker_config(None),
                   str(self.broker_id): self.store.get_broker_config(self.broker_id)}
        self.log_manager = LogManager(log_dirs, effective_broker_configs(config.originals, dynamic, self.broker_id),
                                      time, topic_configs=self.store.get_topic_config)
        self.log_manager.startup()
        self.log_manager.start_log_cleaner(CleanerConfig.from_broker_config(config.get))
        log.info("Loaded %d logs from %s", len(self.log_manager.all_logs()), ", ".join(self.log_manager.log_dirs))

        self.metadata_cache = MetadataCache(self.broker_id)
        self.replica_manager = ReplicaManager(config, time, self.log_manager, self.metadata_cache, self.broker_id,
                                              alter_isr_manager=self.alter_isr_manager,
                                              dynamic_broker_configs=dynamic)
        self.replica_manager.startup()

        # Bind before registering so an ephemeral port (0) is advertised as the one really bound; requests
        # wait in the channel until the handler pool starts below.
        self.request_channel = RequestChannel(config.get_int("queued.max.requests"))
        self.socket_server = SocketServer(config, self.request_channel, time)
        self.socket_server.startup()
        endpoints = tuple(self.socket_server.advertised_endpoints())
        broker = Broker(self.broker_id, endpoints, config.get_string("broker.rack"))
        self.broker_epoch = self.store.register_broker(broker, time.milliseconds())
        log.info("Registered broker %d at path /brokers/ids/%d with addresses: %s, czxid (broker epoch): %d",
                 self.broker_id, self.broker_id, ",".join(ep.connection_string() for ep in endpoints),
                 self.broker_epoch)

        rm = self.replica_manager
        # One broker-side path for the controller's decisions: over the wire in ZooKeeper mode, in-process
        # (the same ReplicaManager + onLeadershipChange path, server/controller_decisions.py) when embedded.
        channel: ControllerChannel
        if config.uses_zookeeper:
            from kafkapy.server import cluster_mode

            self.cluster = cluster_mode.ClusterMode(self, self.store)
            channel = self.cluster.controller_channel
        else:
            channel = LocalControllerChannel(self.broker_id, rm, lambda: self.services)
        self.controller = Controller(self.store, self.metadata_cache, self.broker_id, time, config,
                                     on_config_change=rm.update_topic_config, channel=channel)
        rm.log_dir_failure_listener = LogDirFailureNotifier(self.broker_id, self.store, self.controller,
                                                            config.uses_zookeeper)
        elected = self.controller.startup().result(CONTROLLER_STARTUP_TIMEOUT_S)
        if not elected and not config.uses_zookeeper:
            raise RuntimeError(f"Broker {self.broker_id} could not become the controller of its embedded store")
        cluster_id = self.metadata_cache.get_cluster_id()
        if cluster_id:
            self.log_manager.ensure_meta_properties(cluster_id, self.broker_id, kraft=False)

        self.services = BrokerServices(
            config=config, time=time, replica_manager=rm, metadata_cache=self.metadata_cache,
            controller=self.controller, log_manager=self.log_manager, broker_id=self.broker_id,
            advertised={ep.listener_name: (ep.host, ep.port) for ep in endpoints},
            socket_server=self.socket_server, broker_epoch=self.broker_epoch,
            topic_purgatory=DelayedOperationPurgatory("topic", time, broker_id=self.broker_id),
            authorizer=AclAuthorizer.from_config(config, self.store))
        self.services.auto_topic_creation_manager = AutoTopicCreationManager(config, self.metadata_cache,
                                                                             self.controller, time)
        self.services.quotas = QuotaManagers(self.store, config.get_int("quota.window.num"),
                                             config.get_int("quota.window.size.seconds"), time)
        # Group coordinator (coordinator/ owner): starts by loading the __consumer_offsets partitions this
        # broker leads, then learns of leadership changes from controller_decisions.on_leadership_change;
        # handlers reach it as ctx.server.group_coordinator.
        self.services.group_coordinator = create_group_coordinator(self.services)
        self.services.group_coordinator.startup()
        self.metadata_cache.add_deleted_partitions_listener(self.services.group_coordinator.handle_deleted_partitions)
        self.services.transaction_coordinator = create_transaction_coordinator(self.services)
        self.services.transaction_coordinator.startup()
        self.services.add_partitions_to_txn_manager = create_add_partitions_to_txn_manager(self.services)
        self.services.metrics = self.broker_metrics
        rm.broker_topic_stats = rm.replica_fetcher_manager.topic_stats = self.broker_metrics.topic_stats
        self.apis = KafkaApis(self.request_channel, self.services)
        self.request_handler_pool = KafkaRequestHandlerPool(config.get_int("num.io.threads"), self.request_channel,
                                                            self.apis, self.broker_id, time)
        self.broker_metrics.attach_network(self.request_handler_pool, self.socket_server)
        self._start_scheduler()
        self.broker_metrics.start(self)
        log.info("%s Kafka clusterId %s, listening on %s", self.ident, cluster_id,
                 ", ".join(ep.connection_string() for ep in endpoints))

    def _start_scheduler(self) -> None:
        config, lm, rm = self.config, self.log_manager, self.replica_manager
        assert lm is not None and rm is not None
        scheduler = self.scheduler = KafkaScheduler(self.time)
        retention_ms = config.get_int("log.retention.check.interval.ms")
        scheduler.schedule("kafka-log-retention", lm.cleanup_logs, INITIAL_TASK_DELAY_MS, retention_ms)
        flush_ms = min(config.get_int("log.flush.scheduler.interval.ms"), FLUSH_CHECK_CAP_MS)
        scheduler.schedule("kafka-log-flusher", lm.flush_dirty_logs, flush_ms, flush_ms)
        checkpoint_ms = config.get_int("log.flush.offset.checkpoint.interval.ms")
        scheduler.schedule("kafka-recovery-point-checkpoint", lm.checkpoint_all, checkpoint_ms, checkpoint_ms)
        hw_ms = config.get_int("replica.high.watermark.checkpoint.interval.ms")
        scheduler.schedule("highwatermark-checkpoint", rm.checkpoint_high_watermarks, hw_ms, hw_ms)
        isr_ms = max(1, config.get_int("replica.lag.time.max.ms") // 2)
        scheduler.schedule("isr-expiration", rm.maybe_shrink_isr, isr_ms, isr_ms)
        expiration_ms = config.get_int("producer.id.expiration.ms")
        check_ms = config.get_int("producer.id.expiration.check.interval.ms")
        scheduler.schedule("PeriodicProducerExpirationCheck", lambda: lm.remove_expired_producers(expiration_ms),
                           check_ms, check_ms)
        txn = self.services.transaction_coordinator if self.services is not None else None
        if txn is not None:
            abort_ms = txn.config.abort_timed_out_transaction_cleanup_interval_ms
            scheduler.schedule("transaction-abort", txn.abort_timed_out_transactions, abort_ms, abort_ms)
            expire_ms = txn.config.remove_expired_transactional_ids_interval_ms
            scheduler.schedule("transactionalId-expiration", txn.remove_expired_transactional_ids, expire_ms,
                               expire_ms)
        scheduler.startup()

    def _send_alter_partition(self, tp: Any, leader_and_isr: Any) -> Any:
        if self.cluster is not None:
            return self.cluster.to_controller.alter_partition(tp, leader_and_isr)
        controller = self.controller
        if controller is None:
            from concurrent.futures import Future

            f: Future[Any] = Future()
            f.set_exception(RuntimeError("no controller"))
            return f
        return controller.alter_partition(self.broker_id, self.broker_epoch,
                                          [AlterPartitionItem(tp, leader_and_isr)])

    # -- facts ----------------------------------------------------------------------------------------

    def bound_port(self, listener_name: str | None = None) -> int:
        if self.socket_server is None:
            raise RuntimeError("The server is not started")
        return self.socket_server.bound_port(listener_name)

    @property
    def is_started(self) -> bool:
        return self._started and not self._shutting_down

    # -- shutdown -------------------------------------------------------------------------------------

    def shutdown(self) -> None:
        with self._lifecycle:
            if self._shutting_down or self._shutdown_done.is_set():
                return
            self._shutting_down = True
            try:
                self._shutdown_components()
            finally:
                self._started = False
                gc.unfreeze()  # what start-up froze is collectable again (see startup)
                self._shutdown_done.set()

    def _shutdown_components(self) -> None:
        def step(what: str, fn: Callable[[], Any]) -> None:
            try:
                fn()
            except Exception:
                log.exception("%s Error while shutting down %s", self.ident, what)

        if self.cluster is not None and self._started:
            step("the controlled shutdown", self.cluster.controlled_shutdown)
        step("the metrics endpoint", self.broker_metrics.shutdown)
        if self.socket_server is not None:
            step("the socket server", self.socket_server.shutdown)
        if self.request_handler_pool is not None:
            step("the request handlers", self.request_handler_pool.shutdown)
        if self.request_channel is not None:
            step("the request channel", self.request_channel.clear)
        if self.services is not None and self.services.add_partitions_to_txn_manager is not None:
            step("the AddPartitionsToTxn manager", self.services.add_partitions_to_txn_manager.shutdown)
        if self.services is not None and self.services.transaction_coordinator is not None:
            step("the transaction coordinator", self.services.transaction_coordinator.shutdown)
        if self.services is not None and self.services.group_coordinator is not None:  # coordinator/ owner
            step("the group coordinator", self.services.group_coordinator.shutdown)
        if self.services is not None and self.services.topic_purgatory is not None:
            step("the topic purgatory", self.services.topic_purgatory.shutdown)
        if self.scheduler is not None:
            step("the scheduler", self.scheduler.shutdown)
        if self.replica_manager is not None:
            step("the replica manager", self.replica_manager.shutdown)
        if self.controller is not None:
            step("the controller", self.controller.shutdown)
        if self.cluster is not None:
            step("the cluster mode", self.cluster.shutdown)
        if self.store is not None:
            step("the metadata store", self.store.close)
        if self.log_manager is not None:
            step("the log manager", lambda: self.log_manager.shutdown(self.broker_epoch))  # type: ignore[union-attr]

    def await_shutdown(self, timeout_s: float | None = None) -> bool:
        return self._shutdown_done.wait(timeout_s)
