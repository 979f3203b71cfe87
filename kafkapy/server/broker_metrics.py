"""BrokerMetrics: one broker's metrics, wired to its components, and its Prometheus endpoint.

KafkaServer creates the MetricsRegistry first (so the ISR meters wrap the AlterIsrManager before any
partition exists), then calls `BrokerMetrics.start(server)` once its components run. Registered here, all
computed at scrape time (gauges and providers read the components; nothing runs per record):
- kafka.server ReplicaManager: UnderReplicatedPartitions, UnderMinIsrPartitionCount, AtMinIsrPartitionCount,
  PartitionCount, LeaderCount, OfflineReplicaCount (+ the IsrShrinksPerSec /
  IsrExpandsPerSec meters marked by `MeteredAlterIsrManager` when a leader proposes an ISR change);
- kafka.server KafkaServer BrokerState (3 = RunningAsBroker), KafkaRequestHandlerPool
  RequestHandlerAvgIdlePercent (a Meter in idle ns per ns, marked by the handler threads);
- kafka.network SocketServer NetworkProcessorAvgIdlePercent (the mean of the processors' idle meters),
  RequestChannel RequestQueueSize, RequestMetrics (request_metrics.py);
- kafka.controller KafkaController ActiveControllerCount, OfflinePartitionsCount,
  PreferredReplicaImbalanceCount, GlobalTopicCount, GlobalPartitionCount (non-zero on the active controller
  only, as Kafka), ControllerStats (LeaderElectionRateAndTimeMs, UncleanLeaderElectionsPerSec);
- kafka.log Log Size / NumLogSegments / LogStartOffset / LogEndOffset {topic, partition}, LogFlushStats
  LogFlushRateAndTimeMs, LogCleaner max-clean-time-secs / max-buffer-utilization-percent /
  cleaner-recopy-percent, LogCleanerManager max-dirty-percent;
- kafka.coordinator.group GroupMetadataManager NumGroups, NumOffsets, NumGroups<State>, and ConsumerLag
  {group, topic, partition} for the groups this broker coordinates whose partitions it leads (log end - commit);
  kafka.coordinator.transaction TransactionStateManager counts;
- kafka.server ZooKeeperClientMetrics ZooKeeperRequestLatencyMs and SessionExpireListener SessionState
  (cluster mode).
No byte format. Thread-safety: gauges run on the scraping thread and read the components' thread-safe
accessors or copies of their maps; a gauge that races a change is retried on the next scrape.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from kafkapy.common.internal_topics import GROUP_METADATA_TOPIC_NAME
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.metrics.log_flush_stats import LOG_FLUSH_TIMER
from kafkapy.metrics.meter import Accumulator, Meter, ThreadAccumulator
from kafkapy.metrics.metric_name import metric_name, quote_tag_value
from kafkapy.metrics.registry import GAUGE, TIMER, KafkaMetricsGroup, MetricsRegistry, Sample
from kafkapy.server.broker_topic_stats import BrokerTopicStats
from kafkapy.server.request_metrics import RequestMetrics

if TYPE_CHECKING:
    from kafkapy.cluster.alter_isr_manager import AlterIsrManager
    from kafkapy.controller.zk_client import ZkMetadataStore
    from kafkapy.coordinator.transaction_coordinator import TransactionCoordinator
    from kafkapy.metrics.prometheus import PrometheusEndpoint
    from kafkapy.storage.log_cleaner import CleanerThread
    from kafkapy.storage.log_cleaner_pass import CleanerStats
    from kafkapy.storage.log_manager import LogManager

log = logging.getLogger("kafka.server.BrokerMetrics")

PROMETHEUS_LISTENER = "prometheus.listener"
RUNNING_AS_BROKER = 3


class MeteredAlterIsrManager:
    """Marks ReplicaManager IsrShrinksPerSec / IsrExpandsPerSec as a leader proposes a smaller / larger ISR,
    then hands the proposal to the real AlterIsrManager."""

    def __init__(self, inner: AlterIsrManager, registry: MetricsRegistry) -> None:
        self.inner = inner
        group = KafkaMetricsGroup(registry, "kafka.server", "ReplicaManager")
        self.shrinks = group.meter("IsrShrinksPerSec", "shrinks")
        self.expands = group.meter("IsrExpandsPerSec", "expands")
        self.current_isr: Callable[[Any], tuple[int, ...] | None] = lambda tp: None

    def submit(self, tp: Any, proposed: Any, controller_epoch: int) -> Future[Any]:
        current = self.current_isr(tp)
        if current is not None:
            if len(proposed.isr) < len(current):
                self.shrinks.mark()
            elif len(proposed.isr) > len(current):
                self.expands.mark()
        return self.inner.submit(tp, proposed, controller_epoch)


class BrokerMetrics:
    def __init__(self, registry: MetricsRegistry) -> None:
        self.registry = registry
        self.topic_stats = BrokerTopicStats(registry)
        self.request_metrics = RequestMetrics(registry)
        self.handler_idle: Meter = registry.meter(
            metric_name("kafka.server", "KafkaRequestHandlerPool", "RequestHandlerAvgIdlePercent"), "percent",
            "NANOSECONDS")
        self.processor_idle: dict[int, Meter] = {}
        controller_stats = KafkaMetricsGroup(registry, "kafka.controller", "ControllerStats")
        self.leader_election = controller_stats.timer("LeaderElectionRateAndTimeMs")
        self.unclean_elections = controller_stats.meter("UncleanLeaderElectionsPerSec", "elections")
        self.log_flush = registry.register(metric_name("kafka.log", "LogFlushStats", "LogFlushRateAndTimeMs"), TIMER,
                                           LOG_FLUSH_TIMER)
        self.zk_latency = registry.histogram(metric_name("kafka.server", "ZooKeeperClientMetrics",
                                                         "ZooKeeperRequestLatencyMs"))
        self.endpoint: PrometheusEndpoint | None = None
        self._handler_idle_acc = ThreadAccumulator()
        self._idle_lock = threading.Lock()
        self._processor_idle_acc: list[tuple[Accumulator, Meter]] = []
        registry.add_folder(self._fold_idle)

    def network_idle_meter(self, processor_id: int) -> Meter:
        """Each Processor's idle meter (Kafka's per-processor IdlePercent), marked with ns spent polling."""
        meter = self.processor_idle.get(processor_id)
        if meter is None:
            meter = self.processor_idle[processor_id] = self.registry.meter(
                metric_name("kafka.network", "Processor", "IdlePercent", networkProcessor=processor_id), "percent",
                "NANOSECONDS")
        return meter

    # -- wiring ----------------------------------------------------------------------------------------

    def attach_network(self, pool: Any, socket_server: Any) -> None:
        """The handler threads and network processors start adding their idle ns to lock-free accumulators,
        which `_fold_idle` (every second, and before a snapshot) moves into the idle meters."""
        if pool is not None:
            pool.set_idle_meter(self._handler_idle_acc)
        if socket_server is not None:
            accumulators = []
            for i, processor in enumerate(list(socket_server.processors)):
                acc = Accumulator()
                accumulators.append((acc, self.network_idle_meter(i)))
                processor.idle_meter = acc
            self._processor_idle_acc = accumulators

    def _fold_idle(self) -> None:
        with self._idle_lock:  # the tick thread and a scrape may fold at once: drain each delta once
            delta = self._handler_idle_acc.drain()
            if delta:
                self.handler_idle.mark(delta)
            for acc, meter in self._processor_idle_acc:
                delta = acc.drain()
                if delta:
                    meter.mark(delta)

    def start(self, server: Any) -> None:
        """Register the gauges over a started KafkaServer (typed Any: kafka_server imports this module) and
        start its Prometheus endpoint when configured."""
        if server.controller is not None:  # ControllerStats
            server.controller.psm.on_unclean_election = self.unclean_elections.mark
            server.controller.psm.on_election_ms = self.leader_election.update
        if server.cluster is not None:  # ZooKeeper mode: the store talks through one KafkaZkClient
            zk_store: ZkMetadataStore = server.store
            zk_store.zk.latency_recorder = self.zk_latency.update  # ZooKeeperRequestLatencyMs
        self._register_replica_manager(server)
        self._register_network(server)
        self._register_controller(server)
        self._register_logs(server)
        self._register_coordinators(server)
        services = server.services
        if services is not None:
            def quota_enabled(api_key: int) -> bool:
                quotas = services.quotas
                manager = None if quotas is None else (quotas.produce if api_key == 0 else quotas.fetch)
                return manager is not None and manager.quota_enabled()

            self.request_metrics.quota_enabled = quota_enabled
        self.registry.start_ticker()
        listener = server.config.get(PROMETHEUS_LISTENER) if server.config.is_set(PROMETHEUS_LISTENER) else None
        if listener:
            # prometheus_client and the HTTP server load only when the endpoint is configured (start-up time)
            from kafkapy.metrics.prometheus import PrometheusEndpoint, parse_listener

            host, port = parse_listener(str(listener))
            self.endpoint = PrometheusEndpoint(self.registry, host, port)
            self.endpoint.startup()

    def shutdown(self) -> None:
        self.registry.stop_ticker()
        if self.endpoint is not None:
            self.endpoint.shutdown()
            self.endpoint = None

    def _register_replica_manager(self, server: Any) -> None:
        rm = server.replica_manager
        assert rm is not None
        g = KafkaMetricsGroup(self.registry, "kafka.server", "ReplicaManager")

        def leaders() -> list[Any]:
            return list(rm.leader_partitions())

        def min_isr(p: Any) -> int:
            log_ = p.log
            return log_.config.min_in_sync_replicas if log_ is not None and log_.config is not None else 1

        g.gauge("PartitionCount", lambda: len(rm.partitions))
        g.gauge("LeaderCount", lambda: len(leaders()))
        g.gauge("UnderReplicatedPartitions", lambda: sum(1 for p in leaders() if len(p.isr) < len(p.replicas)))
        g.gauge("UnderMinIsrPartitionCount", lambda: sum(1 for p in leaders() if len(p.isr) < min_isr(p)))
        g.gauge("AtMinIsrPartitionCount", lambda: sum(1 for p in leaders() if len(p.isr) == min_isr(p)))
        g.gauge("OfflineReplicaCount", lambda: 0)  # kafkapy keeps no per-log-directory offline state
        g.meter("FailedIsrUpdatesPerSec", "failedUpdates")
        sessions = KafkaMetricsGroup(self.registry, "kafka.server", "FetchSessionCache")
        sessions.gauge("NumIncrementalFetchSessions", lambda: len(rm.fetch_session_cache))
        sessions.gauge("NumIncrementalFetchPartitionsCached", lambda: rm.fetch_session_cache.total_partitions)
        metered = server.alter_isr_manager
        if isinstance(metered, MeteredAlterIsrManager):
            def current_isr(tp: Any) -> tuple[int, ...] | None:
                p = rm.get_partition(tp)
                return None if p is None else p.isr

            metered.current_isr = current_isr
        self.registry.gauge(metric_name("kafka.server", "KafkaServer", "BrokerState"),
                            lambda: RUNNING_AS_BROKER if server.is_started else 0)

    def _register_network(self, server: Any) -> None:
        channel = server.request_channel
        if channel is not None:
            self.registry.gauge(metric_name("kafka.network", "RequestChannel", "RequestQueueSize"),
                                lambda: channel.request_queue_size)

        def network_idle() -> float:
            meters = list(self.processor_idle.values())
            if not meters:
                return 1.0
            return min(1.0, sum(m.one_minute_rate if m.ticked else m.mean_rate for m in meters) / len(meters))

        self.registry.gauge(metric_name("kafka.network", "SocketServer", "NetworkProcessorAvgIdlePercent"),
                            network_idle)

    def _register_controller(self, server: Any) -> None:
        g = KafkaMetricsGroup(self.registry, "kafka.controller", "KafkaController")

        def active() -> Any:
            c = server.controller
            return c if c is not None and c.is_active else None

        def offline() -> int:
            c = active()
            if c is None:
                return 0
            from kafkapy.controller.partition_state_machine import PartitionState

            ctx = c.ctx
            deleting = set(ctx.topics_to_be_deleted)
            return sum(1 for tp, state in list(ctx.states.items())
                       if state is PartitionState.OFFLINE and tp.topic not in deleting)

        def imbalance() -> int:
            c = active()
            if c is None:
                return 0
            ctx = c.ctx
            deleting = set(ctx.topics_to_be_deleted)
            count = 0
            for tp, lead in list(ctx.leadership.items()):
                replicas = ctx.replicas(tp)
                if tp.topic not in deleting and replicas and lead.leader_and_isr.leader != replicas[0]:
                    count += 1
            return count

        def topics() -> int:
            c = active()
            return 0 if c is None else len(c.ctx.assignments)

        def partitions() -> int:
            c = active()
            return 0 if c is None else sum(len(a) for a in list(c.ctx.assignments.values()))

        g.gauge("ActiveControllerCount", lambda: 1 if active() is not None else 0)
        g.gauge("OfflinePartitionsCount", offline)
        g.gauge("PreferredReplicaImbalanceCount", imbalance)
        g.gauge("GlobalTopicCount", topics)
        g.gauge("GlobalPartitionCount", partitions)
        g.gauge("TopicsToDeleteCount", lambda: 0 if active() is None else len(active().ctx.topics_to_be_deleted))
        g.gauge("ActiveBrokerCount", lambda: 0 if active() is None else len(active().ctx.live_brokers))
        if server.cluster is not None:
            zk_store: ZkMetadataStore = server.store
            zk = zk_store.zk
            self.registry.gauge(metric_name("kafka.server", "SessionExpireListener", "SessionState"),
                                lambda: "CONNECTED" if zk.connected else "DISCONNECTED")

    def _register_logs(self, server: Any) -> None:
        lm: LogManager | None = server.log_manager
        assert lm is not None

        def log_samples() -> Iterator[Sample]:
            for lg in lm.all_logs():
                tp = lg.topic_partition
                tags = (("topic", tp.topic), ("partition", str(tp.partition)))
                for name, value in (("Size", lg.size_in_bytes), ("NumLogSegments", lg.num_segments),
                                    ("LogStartOffset", lg.log_start_offset), ("LogEndOffset", lg.log_end_offset)):
                    yield Sample(metric_name("kafka.log", "Log", name)._replace(tags=tags), GAUGE, {"Value": value})

        self.registry.add_provider(log_samples)

        def cleaner_stats() -> CleanerStats | None:
            return None if lm.cleaner is None else lm.cleaner.last_stats

        def clean_secs() -> float:
            s = cleaner_stats()
            return 0.0 if s is None else max(0, s.end_ms - s.start_ms) / 1000.0

        def recopy() -> int:
            s = cleaner_stats()
            return 0 if s is None or not s.bytes_read else int(100 * s.bytes_written / s.bytes_read)

        g = KafkaMetricsGroup(self.registry, "kafka.log", "LogCleaner")
        g.gauge("max-clean-time-secs", clean_secs)
        g.gauge("cleaner-recopy-percent", recopy)
        def threads() -> list[CleanerThread]:
            return [] if lm.cleaner is None else lm.cleaner.threads

        def buffer_utilization() -> int:
            # Kafka: 100 x the offset map's utilization after the last pass (the map stays filled until the next).
            maps = [t.cleaner.offset_map for t in threads()]
            return int(100 * max((m.utilization for m in maps), default=0.0))

        g.gauge("max-buffer-utilization-percent", buffer_utilization)
        g.gauge("DeadThreadCount", lambda: sum(1 for t in threads() if not t.is_alive()))

    def _register_coordinators(self, server: Any) -> None:
        services = server.services
        if services is None:
            return
        rm = server.replica_manager
        assert rm is not None
        g = KafkaMetricsGroup(self.registry, "kafka.coordinator.group", "GroupMetadataManager")

        def groups() -> list[Any]:
            gc = services.group_coordinator
            return [] if gc is None else list(gc.group_manager.current_groups())

        g.gauge("NumGroups", lambda: len(groups()))
        g.gauge("NumOffsets", lambda: sum(len(gr.offsets) for gr in groups()))
        def in_state(state: str) -> Callable[[], int]:
            return lambda: sum(1 for gr in groups() if str(gr.state) == state)

        for state in ("Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead"):
            g.gauge(f"NumGroups{state}", in_state(state))

        def lag_samples() -> Iterator[Sample]:
            partitions = rm.partitions
            for gr in groups():
                group = quote_tag_value(gr.group_id)
                for tp, commit in list(gr.offsets.items()):
                    if tp.topic == GROUP_METADATA_TOPIC_NAME:
                        continue
                    p = partitions.get(TopicPartition(tp.topic, tp.partition))
                    if p is None or not p.is_leader:
                        continue
                    lag = max(0, p.high_watermark - commit.offset_and_metadata.offset)
                    name = metric_name("kafka.coordinator.group", "GroupMetadataManager", "ConsumerLag", group=group,
                                       topic=tp.topic, partition=tp.partition)
                    yield Sample(name, GAUGE, {"Value": lag})

        self.registry.add_provider(lag_samples)
        t = KafkaMetricsGroup(self.registry, "kafka.coordinator.transaction", "TransactionStateManager")

        def txn_count() -> int:
            tc: TransactionCoordinator | None = services.transaction_coordinator
            return 0 if tc is None else tc.state_manager.num_transactions

        t.gauge("NumTransactions", txn_count)  # kafkapy's: the transactional ids this broker coordinates

        def markers_waiting() -> int:
            # Kafka's UnknownDestinationQueueSize: markers held back because their broker cannot be reached yet
            tc: TransactionCoordinator | None = services.transaction_coordinator
            return 0 if tc is None else tc.marker_manager.num_retrying

        KafkaMetricsGroup(self.registry, "kafka.coordinator.transaction", "TransactionMarkerChannelManager").gauge(
            "UnknownDestinationQueueSize", markers_waiting)
