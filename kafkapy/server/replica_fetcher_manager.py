"""ReplicaFetcherManager: the follower fetcher threads of this broker (Kafka's AbstractFetcherManager /
ReplicaFetcherManager).

Partitions are spread over `num.replica.fetchers` threads per leader broker: a partition goes to
fetcher id abs(31 * hash(topic) + partition) % num.replica.fetchers (Java's String.hashCode), so a
partition keeps its thread while its leader stays. Threads are keyed by (leader broker id, fetcher id);
a leader that moved to another address gets a new thread. Threads left without partitions are stopped by
shutdown_idle_fetcher_threads (after each LeaderAndIsr).
No byte format. Thread-safety: one lock around the thread map; LeaderAndIsr / StopReplica handling and
shutdown may come from any thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group_metadata_manager import java_string_hashcode
from kafkapy.server.broker_topic_stats import DISABLED as DISABLED_TOPIC_STATS
from kafkapy.server.broker_topic_stats import BrokerTopicStats
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.replication_quota_manager import ReplicationQuotaManager

# The fetcher thread's module loads with the first follower partition (start-up time: a single node has none).
if TYPE_CHECKING:
    from kafkapy.server.replica_fetcher_thread import (
        AppendIoErrorHandler,
        InitialFetchState,
        PartitionFetchState,
        PartitionProvider,
        ReplicaFetcherThread,
    )

log = logging.getLogger("kafka.server.ReplicaFetcherManager")


def fetcher_id_for(tp: TopicPartition, num_fetchers: int) -> int:
    # Kafka's Utils.abs(31 * topic.hashCode + partition): the low 31 bits of the int32 sum.
    return ((31 * java_string_hashcode(tp.topic) + tp.partition) & 0x7FFFFFFF) % max(1, num_fetchers)


class ReplicaFetcherManager:
    topic_stats: BrokerTopicStats = DISABLED_TOPIC_STATS  # given to each fetcher thread (broker_metrics.py)

    def __init__(self, broker_id: int, config: KafkaConfig, partitions: PartitionProvider,
                 quota: ReplicationQuotaManager, time: Time = SYSTEM,
                 on_append_io_error: AppendIoErrorHandler | None = None) -> None:
        """on_append_io_error: given to every fetcher thread (a follower append's I/O error takes its dir offline)."""
        self.broker_id = broker_id
        self._config = config
        self._partitions = partitions
        self._on_append_io_error = on_append_io_error
        self._quota = quota
        self._time = time
        self.num_fetchers = max(1, config.get_int("num.replica.fetchers"))
        self._lock = threading.Lock()
        self._threads: dict[tuple[int, int], ReplicaFetcherThread] = {}
        self._shut_down = False

    @property
    def fetcher_threads(self) -> list[ReplicaFetcherThread]:
        with self._lock:
            return list(self._threads.values())

    def add_fetcher_for_partitions(self, states: Mapping[TopicPartition, InitialFetchState]) -> None:
        from kafkapy.server.replica_fetcher_thread import ReplicaFetcherThread

        groups: dict[tuple[int, int], dict[TopicPartition, InitialFetchState]] = {}
        for tp, st in states.items():
            groups.setdefault((st.leader.id, fetcher_id_for(tp, self.num_fetchers)), {})[tp] = st
        stale: list[ReplicaFetcherThread] = []
        with self._lock:
            if self._shut_down:
                return
            for key, group in groups.items():
                leader = next(iter(group.values())).leader
                thread = self._threads.get(key)
                if thread is not None and (thread.source.host, thread.source.port) != (leader.host, leader.port):
                    stale.append(thread)
                    thread.initiate_shutdown()
                    thread = None
                if thread is None:
                    thread = ReplicaFetcherThread(key[1], leader, self.broker_id, self._config, self._partitions,
                                                  self._quota, self._time, self._on_append_io_error)
                    thread.topic_stats = self.topic_stats
                    self._threads[key] = thread
                    thread.start()
                thread.add_partitions(group)
                log.info("[ReplicaFetcherManager on broker %d] Added fetcher to broker %d for partitions %s",
                         self.broker_id, leader.id, sorted(str(tp) for tp in group))
        for thread in stale:
            thread.shutdown()

    def remove_fetcher_for_partitions(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionFetchState]:
        wanted = list(tps)
        removed: dict[TopicPartition, PartitionFetchState] = {}
        if not wanted:
            return removed
        for thread in self.fetcher_threads:
            removed.update(thread.remove_partitions(wanted))
        if removed:
            log.info("[ReplicaFetcherManager on broker %d] Removed fetcher for partitions %s", self.broker_id,
                     sorted(str(tp) for tp in removed))
        return removed

    def fetch_state(self, tp: TopicPartition) -> PartitionFetchState | None:
        for thread in self.fetcher_threads:
            s = thread.fetch_state(tp)
            if s is not None:
                return s
        return None

    def shutdown_idle_fetcher_threads(self) -> None:
        idle: list[ReplicaFetcherThread] = []
        with self._lock:
            for key, thread in list(self._threads.items()):
                if thread.partition_count() == 0:
                    idle.append(self._threads.pop(key))
        for thread in idle:
            thread.initiate_shutdown()
        for thread in idle:
            thread.shutdown()

    def shutdown(self) -> None:
        with self._lock:
            self._shut_down = True
            threads = list(self._threads.values())
            self._threads.clear()
        for thread in threads:
            thread.initiate_shutdown()
        for thread in threads:
            thread.shutdown()
