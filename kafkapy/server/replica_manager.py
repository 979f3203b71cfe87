"""ReplicaManager: the partitions this broker hosts, and the produce / fetch / offset paths over them.

Applies the controller's LeaderAndIsr decisions (creating Partitions over logs from the LogManager,
making this broker leader or follower) and StopReplica (dropping, optionally deleting, partitions).
Produce: one append as leader per partition (the Produce handler has already applied the request
version's rules: structure check, legacy up-conversion); acks=-1 waits in the produce purgatory
(DelayedProduce) until the HW reaches the appended offset.
Fetch: reads whole batches as FileRegions (never into Python) within partition_max_bytes and the
response's max_bytes (only the first partition with data may exceed it, by one batch; v0-2 never);
if fewer than min_bytes are ready the fetch waits in the fetch purgatory (DelayedFetch) until an
append moves the HW (or the log end for followers) or max_wait_ms elapses. Incremental fetch sessions (KIP-227):
the FetchSessionCache (fetch_session.py) is told of every partition whose fetches must wake (append, HW or log
start moved, leadership change), so a session's fetch reads and waits on what changed only; completions woken
by an append are read and answered on a small pool, off the producer's request thread. Also ListOffsets,
OffsetForLeaderEpoch, DeleteRecords and the replication-offset-checkpoint (HW) file.
JBOD: AlterReplicaLogDirs moves a replica between log dirs (a future log filled by the
ReplicaAlterLogDirsThread, swapped in when caught up); a log dir whose I/O fails is taken offline as Kafka's
handleLogDirFailure does (KIP-112): its partitions answer KAFKA_STORAGE_ERROR and `log_dir_failure_listener`
tells the controller.
The request/answer value types live in fetch_params.py and partition_response.py (re-exported here).
Byte format: none of its own (records pass through as bytes / FileRegions).
Thread-safety: the partition map is copied on write under a lock and read without it; every
Partition serialises its own state; append_records / fetch_messages run on any handler thread and
call back on the thread that completes them (the caller's, or a purgatory's).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.cluster.alter_isr_manager import AlterIsrManager
from kafkapy.cluster.broker import Node
from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState, StopReplicaPartitionState
from kafkapy.cluster.partition import Partition
from kafkapy.common.descriptor_reserve import is_descriptor_exhaustion
from kafkapy.common.errors import (
    ErrorCode,
    InvalidTopicExceptionError,
    KafkaError,
    KafkaStorageError,
    LogDirNotFoundError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    PolicyViolationError,
    ReplicaNotAvailableError,
    StaleControllerEpochError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.internal_topics import INTERNAL_TOPICS
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.crc import crc32c
from kafkapy.server.broker_topic_stats import DISABLED as DISABLED_TOPIC_STATS
from kafkapy.server.broker_topic_stats import BrokerTopicStats
from kafkapy.server.fetch_params import FetchParams, FetchPartitionData, FetchPartitionInfo
from kafkapy.server.fetch_session import (
    MIN_EVICTION_MS,
    FetchManager,
    FetchSession,
    FetchSessionCache,
    SessionWatchKey,
)
from kafkapy.server.partition_response import PartitionResponse, partition_error_response
from kafkapy.server.purgatory.delayed_fetch import DelayedFetch, FetchPartitionStatus
from kafkapy.server.purgatory.delayed_operation_purgatory import DelayedOperationPurgatory
from kafkapy.server.purgatory.delayed_produce import DelayedProduce, ProducePartitionStatus
from kafkapy.server.replica_alter_log_dirs_thread import ReplicaAlterLogDirsThread
from kafkapy.server.replica_fetcher_manager import ReplicaFetcherManager
from kafkapy.server.replication_quota_manager import (
    FOLLOWER_THROTTLED_RATE,
    LEADER_THROTTLED_RATE,
    LEADER_THROTTLED_REPLICAS,
    UNLIMITED,
    ReplicationQuotaManager,
    is_throttled_replica,
)
from kafkapy.zk.zk_data import DEFAULT_BROKER_ENTITY

if TYPE_CHECKING:
    from kafkapy.cluster.metadata_cache import MetadataCache
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.storage.log_manager import LogManager

log = logging.getLogger("kafka.server.ReplicaManager")

ALTER_LOG_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"


@dataclass(slots=True)
class ListOffsetsResult:
    error: int = 0
    timestamp: int = -1
    offset: int = -1
    leader_epoch: int = -1


_produce_path_warm = False


# A LeaderAndIsr leading at least this many partitions makes them leaders on a pool of threads: creating a
# log and assigning its leader epoch wait on fsync, and concurrent fsyncs share the file system's commits.
_PARALLEL_TRANSITIONS_MIN = 16
_TRANSITION_THREADS = 16


def _warm_up_produce_path() -> None:
    """Load, once, what the first produce request would otherwise load while holding the GIL: the crc32c
    C module (record/crc.py defers it because its package reads its version through importlib.metadata,
    ~25-30 ms). Done when this broker first leads a partition, i.e. before any produce can reach it."""
    global _produce_path_warm
    if not _produce_path_warm:
        _produce_path_warm = True
        crc32c(b"")


def effective_broker_configs(originals: Mapping[str, Any], dynamic: Mapping[str, Mapping[str, str]],
                             broker_id: int) -> dict[str, Any]:
    """Kafka's precedence for broker configs: this broker's dynamic configs, then the cluster-wide dynamic
    default (`<default>`), then server.properties (the static originals)."""
    merged: dict[str, Any] = dict(originals)
    merged.update(dynamic.get(DEFAULT_BROKER_ENTITY, {}))
    merged.update(dynamic.get(str(broker_id), {}))
    return merged


class ReplicaManager:
    def __init__(self, config: KafkaConfig, time: Time, log_manager: LogManager, metadata_cache: MetadataCache,
                 broker_id: int | None = None, alter_isr_manager: AlterIsrManager | None = None,
                 reaper_enabled: bool = True, dynamic_broker_configs: Mapping[str, Mapping[str, str]] | None = None,
                 complete_fetches_off_thread: bool | None = None) -> None:
        self.config = config
        self.time = time
        self.log_manager = log_manager
        self.metadata_cache = metadata_cache
        self.broker_id = config.broker_id if broker_id is None else broker_id
        self._alter_isr_manager = alter_isr_manager
        self.broker_topic_stats: BrokerTopicStats = DISABLED_TOPIC_STATS  # BrokerTopicMetrics (broker_metrics.py)
        # The epoch of the newest controller heard from (LeaderAndIsr / StopReplica older than it are stale).
        self.controller_epoch = 0
        self._lock = threading.Lock()
        self._partitions: dict[TopicPartition, Partition] = {}
        # Kafka's HostedPartition.Offline: partitions whose log could not be created or opened (a storage error,
        # e.g. EMFILE or ENOSPC). Requests for them get KAFKA_STORAGE_ERROR; copy-on-write like _partitions.
        self._offline_partitions: frozenset[TopicPartition] = frozenset()
        self._hw_checkpoints: dict[TopicPartition, int] = {}
        # entity name ("<default>" or this broker's id) -> its dynamic broker configs from the metadata store
        self._dynamic_broker_configs: dict[str, dict[str, str]] = {
            k: dict(v) for k, v in (dynamic_broker_configs or {}).items()}
        self.replica_lag_time_max_ms = config.get_int("replica.lag.time.max.ms")
        self.produce_purgatory: DelayedOperationPurgatory[DelayedProduce] = DelayedOperationPurgatory(
            "Produce", time, purge_interval=config.get_int("producer.purgatory.purge.interval.requests"),
            reaper_enabled=reaper_enabled, broker_id=self.broker_id)
        self.fetch_purgatory: DelayedOperationPurgatory[DelayedFetch] = DelayedOperationPurgatory(
            "Fetch", time, purge_interval=config.get_int("fetch.purgatory.purge.interval.requests"),
            reaper_enabled=reaper_enabled, broker_id=self.broker_id)
        self.fetch_session_cache = FetchSessionCache(config.get_int("max.incremental.fetch.session.cache.slots"),
                                                     MIN_EVICTION_MS, time)
        # Idle session partitions are read once per sweep: it refreshes the leader's view of idle followers
        # (well inside replica.lag.time.max.ms) and carries log start moves made by retention.
        self.fetch_manager = FetchManager(self.fetch_session_cache, time,
                                          max(100, min(5000, self.replica_lag_time_max_ms // 4)))
        off_thread = reaper_enabled if complete_fetches_off_thread is None else complete_fetches_off_thread
        self._fetch_completions: ThreadPoolExecutor | None = ThreadPoolExecutor(
            2, thread_name_prefix=f"fetch-completion-{self.broker_id}") if off_thread else None
        window_num = config.get_int("replication.quota.window.num")
        window_s = config.get_int("replication.quota.window.size.seconds")
        self.leader_quota = ReplicationQuotaManager(num_windows=window_num, window_size_s=window_s, time=time)
        self.follower_quota = ReplicationQuotaManager(num_windows=window_num, window_size_s=window_s, time=time)
        self._update_replication_quotas()
        self.replica_fetcher_manager = ReplicaFetcherManager(self.broker_id, config, self.get_partition,
                                                             self.follower_quota, time, self._on_append_io_error)
        self.alter_log_dirs_thread = ReplicaAlterLogDirsThread(self.broker_id, self.get_partition, log_manager,
                                                               rate=lambda: self._alter_log_dirs_rate)
        # Told (dir, its partitions) after a log dir went offline: KafkaServer notifies the controller.
        self.log_dir_failure_listener: Callable[[str, list[TopicPartition]], None] | None = None
        log_manager.on_log_dir_failure = self.handle_log_dir_failure
        self._shut_down = False

    # -- lifecycle --------------------------------------------------------------------------------------

    def startup(self) -> None:
        """Load the HW checkpoints (applied when a partition's log is opened, as Kafka's Partition does)."""
        self._hw_checkpoints = self.log_manager.read_high_watermarks()

    def shutdown(self, checkpoint_hw: bool = True) -> None:
        if self._shut_down:
            return
        self._shut_down = True
        self.alter_log_dirs_thread.shutdown()
        self.replica_fetcher_manager.shutdown()
        self.fetch_purgatory.shutdown()
        self.produce_purgatory.shutdown()
        if self._fetch_completions is not None:
            self._fetch_completions.shutdown(wait=False, cancel_futures=False)
        if checkpoint_hw:
            self.checkpoint_high_watermarks()

    # -- partitions -------------------------------------------------------------------------------------

    def get_partition(self, tp: TopicPartition) -> Partition | None:
        return self._partitions.get(tp)

    @property
    def partitions(self) -> dict[TopicPartition, Partition]:
        return dict(self._partitions)

    def leader_partitions(self) -> list[Partition]:
        return [p for p in self._partitions.values() if p.is_leader]

    def get_partition_or_error(self, tp: TopicPartition) -> Partition:
        if tp in self._offline_partitions:
            raise KafkaStorageError(f"Partition {tp} is in an offline log directory")
        partition = self._partitions.get(tp)
        if partition is not None:
            return partition
        if self.metadata_cache.contains(tp):
            raise NotLeaderOrFollowerError(f"Error while fetching partition state for {tp}")
        raise UnknownTopicOrPartitionError(f"Partition {tp} doesn't exist")

    def get_leader_partition_or_error(self, tp: TopicPartition) -> Partition:
        partition = self.get_partition_or_error(tp)
        if not partition.is_leader:
            raise NotLeaderOrFollowerError(f"Leader not local for partition {tp} on broker {self.broker_id}")
        return partition

    def _provide_log(self, tp: TopicPartition, topic_id: uuid.UUID | None) -> Any:
        # No config: the LogManager builds it from the topic's overrides and the broker defaults.
        log_ = self.log_manager.get_or_create_log(tp, None, topic_id)
        hw = self._hw_checkpoints.pop(tp, None)
        if hw is not None:
            log_.update_high_watermark(hw)
        elif not log_.has_high_watermark:
            # Kafka's rule: no checkpointed HW means the log start, not the log end: a replica must not
            # take records it never saw committed for committed (a leader's HW then moves with its ISR).
            log_.update_high_watermark(log_.log_start_offset)
        return log_

    def _get_or_create_partition(self, tp: TopicPartition, topic_id: uuid.UUID | None) -> Partition:
        partition = self._partitions.get(tp)
        if partition is not None:
            return partition
        with self._lock:
            partition = self._partitions.get(tp)
            if partition is None:
                partition = Partition(tp, topic_id, self._provide_log, self.broker_id, self.time,
                                      self.replica_lag_time_max_ms, self._alter_isr_manager,
                                      self._complete_delayed_requests)
                partitions = dict(self._partitions)
                partitions[tp] = partition
                self._partitions = partitions
            return partition

    def _add_partitions(self, wanted: Iterable[tuple[TopicPartition, uuid.UUID | None]]) -> None:
        """Create the missing ones of many partitions with one copy of the map (not one per partition)."""
        with self._lock:
            current = self._partitions
            missing = [(tp, tid) for tp, tid in wanted if tp not in current]
            if not missing:
                return
            partitions = dict(current)
            for tp, tid in missing:
                partitions[tp] = Partition(tp, tid, self._provide_log, self.broker_id, self.time,
                                           self.replica_lag_time_max_ms, self._alter_isr_manager,
                                           self._complete_delayed_requests)
            self._partitions = partitions

    def _check_controller_epoch(self, controller_epoch: int, what: str) -> None:
        with self._lock:
            if controller_epoch < self.controller_epoch:
                raise StaleControllerEpochError(
                    f"Received {what} request with controller epoch {controller_epoch} older than the current "
                    f"controller epoch {self.controller_epoch}")
            self.controller_epoch = controller_epoch

    def become_leader_or_follower(self, broker_id: int, controller_epoch: int,
                                  states: Iterable[LeaderAndIsrPartitionState],
                                  leader_endpoints: Mapping[int, Node] | None = None,
                                  on_leadership_change: Callable[[list[LeaderAndIsrPartitionState]], None]
                                  | None = None) -> dict[TopicPartition, int]:
        """Apply a LeaderAndIsr decision (Kafka's becomeLeaderOrFollower): per-partition error codes.
        Raises StaleControllerEpochError for a request from an older controller. leader_endpoints are the
        request's live leaders, used when the MetadataCache does not know a leader's address yet.
        on_leadership_change (Kafka's onLeadershipChange) gets the states applied without error, after every
        partition changed role: the coordinators load or unload their partitions from it."""
        if broker_id != self.broker_id:
            return {}
        self._check_controller_epoch(controller_epoch, "LeaderAndIsr")
        errors: dict[TopicPartition, int] = {}
        leaders: list[tuple[Partition, LeaderAndIsrPartitionState]] = []
        followers: list[tuple[Partition, LeaderAndIsrPartitionState]] = []
        states = list(states)
        try:
            self._add_partitions((TopicPartition(s.topic, s.partition), s.topic_id) for s in states
                                 if not s.replicas or self.broker_id in s.replicas)
        except Exception:
            log.exception("Could not create partitions at once; creating them one by one")
        for state in states:
            tp = TopicPartition(state.topic, state.partition)
            if state.replicas and self.broker_id not in state.replicas:
                log.warning("Ignoring LeaderAndIsr for %s: broker %d is not among its replicas %s", tp,
                            self.broker_id, list(state.replicas))
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            existing = self._partitions.get(tp)
            if existing is not None and state.leader_epoch < existing.leader_epoch:
                log.info("Ignoring LeaderAndIsr for %s: leader epoch %d is older than the current %d", tp,
                         state.leader_epoch, existing.leader_epoch)
                errors[tp] = ErrorCode.STALE_CONTROLLER_EPOCH
                continue
            try:
                partition = self._get_or_create_partition(tp, state.topic_id)
            except Exception:
                errors[tp] = ErrorCode.KAFKA_STORAGE_ERROR
                log.exception("Could not create the partition %s", tp)
                continue
            (leaders if state.leader == self.broker_id else followers).append((partition, state))
        if leaders:
            errors.update(self._make_leaders(leaders))
        if followers:
            errors.update(self._make_followers(followers, leader_endpoints or {}))
        lm = self.log_manager
        if lm is not None:  # Kafka: a future log loaded at startup resumes its move once the partition is hosted
            for tp, code in errors.items():
                if code == ErrorCode.NONE and lm.future_log(tp) is not None:
                    self.alter_log_dirs_thread.add_partition(tp)
        self.replica_fetcher_manager.shutdown_idle_fetcher_threads()
        if on_leadership_change is not None:
            on_leadership_change([s for s in states if errors.get(TopicPartition(s.topic, s.partition),
                                                                  ErrorCode.NONE) == ErrorCode.NONE])
        return errors

    def _transition(self, partition: Partition, role: str, fn: Callable[[], bool]) -> tuple[int, bool]:
        """Run one make_leader / make_follower: (error code, its answer). Never raises. A storage failure
        (the log could not be created or opened) takes the partition offline: KAFKA_STORAGE_ERROR to the
        controller, which then stops counting this replica, and to clients asking for it."""
        tp = partition.topic_partition
        try:
            answer = fn()
        except KafkaError as e:
            log.error("Could not make %d %s of %s: %s", self.broker_id, role, tp, e)
            if e.code == ErrorCode.KAFKA_STORAGE_ERROR:
                self._set_offline(tp, True)
            return e.code, False
        except Exception:
            log.exception("Could not make %d %s of %s", self.broker_id, role, tp)
            self._set_offline(tp, True)
            return ErrorCode.KAFKA_STORAGE_ERROR, False
        if tp in self._offline_partitions:  # its log is available again (e.g. descriptors were freed)
            self._set_offline(tp, False)
        return ErrorCode.NONE, answer

    def _set_offline(self, tp: TopicPartition, offline: bool) -> None:
        with self._lock:
            self._offline_partitions = (self._offline_partitions | {tp}) if offline \
                else (self._offline_partitions - {tp})

    def offline_partitions(self) -> frozenset[TopicPartition]:
        return self._offline_partitions

    def _make_leaders(self, leaders: list[tuple[Partition, LeaderAndIsrPartitionState]]) -> dict[TopicPartition, int]:
        """Kafka's makeLeaders: stop fetching first (no follower append may follow), then lead."""
        errors: dict[TopicPartition, int] = {}
        self.replica_fetcher_manager.remove_fetcher_for_partitions(p.topic_partition for p, _ in leaders)
        _warm_up_produce_path()

        def lead(item: tuple[Partition, LeaderAndIsrPartitionState]) -> tuple[int, bool]:
            return self._transition(item[0], "leader", functools.partial(item[0].make_leader, item[1]))

        if len(leaders) >= _PARALLEL_TRANSITIONS_MIN:
            with ThreadPoolExecutor(_TRANSITION_THREADS, thread_name_prefix="become-leader") as pool:
                outcomes = list(pool.map(lead, leaders))
        else:
            outcomes = [lead(item) for item in leaders]
        # Their new epochs' checkpoint entries, deferred by make_leader, written in batches in the background.
        self.log_manager.schedule_deferred_writes(p.log for p, _ in leaders if p.log is not None)
        for (partition, state), (code, became) in zip(leaders, outcomes, strict=True):
            tp = partition.topic_partition
            errors[tp] = code
            if became:
                log.info("[ReplicaManager broker=%d] %s is now leader at epoch %d (log end %d, HW %d, ISR %s)",
                         self.broker_id, tp, state.leader_epoch, partition.log_end_offset, partition.high_watermark,
                         list(state.isr))
            self._complete_delayed_requests(tp)
        return errors

    def _make_followers(self, followers: list[tuple[Partition, LeaderAndIsrPartitionState]],
                        leader_endpoints: Mapping[int, Node]) -> dict[TopicPartition, int]:
        """Kafka's makeFollowers: record the new leader; for partitions whose leader or epoch changed, stop
        the old fetcher and start one on the new leader (from the log end, Truncating first)."""
        errors: dict[TopicPartition, int] = {}
        changed: list[tuple[Partition, LeaderAndIsrPartitionState]] = []
        for partition, state in followers:
            tp = partition.topic_partition
            errors[tp], moved = self._transition(partition, "follower",
                                                 functools.partial(partition.make_follower, state))
            if moved:
                changed.append((partition, state))
        if not changed:
            return errors
        self.replica_fetcher_manager.remove_fetcher_for_partitions(p.topic_partition for p, _ in changed)
        from kafkapy.server.replica_fetcher_thread import InitialFetchState  # followers only (start-up time)

        initial: dict[TopicPartition, InitialFetchState] = {}
        for partition, state in changed:
            tp = partition.topic_partition
            self._complete_delayed_requests(tp)
            leader = self._leader_endpoint(state.leader, leader_endpoints)
            if leader is None:
                log.warning("[ReplicaManager broker=%d] Not fetching %s: its leader %d is not available", self.broker_id,
                            tp, state.leader)
                continue
            initial[tp] = InitialFetchState(leader, state.leader_epoch, partition.log_end_offset)
            log.info("[ReplicaManager broker=%d] %s follows broker %d at epoch %d (log end %d)", self.broker_id, tp,
                     state.leader, state.leader_epoch, partition.log_end_offset)
        if initial and not self._shut_down:
            self.replica_fetcher_manager.add_fetcher_for_partitions(initial)
        return errors

    def _leader_endpoint(self, leader: int, given: Mapping[int, Node]) -> Node | None:
        if leader < 0:
            return None
        node = self.metadata_cache.get_alive_broker_node(leader, self.config.inter_broker_listener_name())
        return node if node is not None else given.get(leader)

    def stop_replicas(self, broker_id: int, controller_epoch: int,
                      states: Iterable[StopReplicaPartitionState]) -> dict[TopicPartition, int]:
        """Stop hosting partitions (Kafka's stopReplicas): fetchers first, then the partition; delete the
        log when asked. Raises StaleControllerEpochError; FENCED_LEADER_EPOCH for an older leader epoch."""
        if broker_id != self.broker_id:
            return {}
        self._check_controller_epoch(controller_epoch, "StopReplica")
        errors: dict[TopicPartition, int] = {}
        stopping: list[StopReplicaPartitionState] = []
        for state in states:
            tp = TopicPartition(state.topic, state.partition)
            partition = self._partitions.get(tp)
            # -2 (deletion) and -1 (no epoch, older requests) always apply.
            if partition is not None and 0 <= state.leader_epoch < partition.leader_epoch:
                errors[tp] = ErrorCode.FENCED_LEADER_EPOCH
                continue
            stopping.append(state)
            errors[tp] = ErrorCode.NONE
        self.replica_fetcher_manager.remove_fetcher_for_partitions(
            TopicPartition(s.topic, s.partition) for s in stopping)
        for state in stopping:
            tp = TopicPartition(state.topic, state.partition)
            self.alter_log_dirs_thread.remove_partition(tp)
            with self._lock:
                partitions = dict(self._partitions)
                partition = partitions.pop(tp, None)
                self._partitions = partitions
            self._complete_delayed_requests(tp)
            if state.delete_partition:
                self._set_offline(tp, False)
                try:
                    self.log_manager.async_delete(tp)
                except Exception:
                    errors[tp] = ErrorCode.KAFKA_STORAGE_ERROR
                    log.exception("Could not delete the log of %s", tp)
            log.info("[ReplicaManager broker=%d] Stopped replica %s%s", self.broker_id, tp,
                     " and deleted its log" if state.delete_partition else "")
            del partition
        self.replica_fetcher_manager.shutdown_idle_fetcher_threads()
        return errors

    def update_topic_config(self, entity_type: str, name: str, configs: Mapping[str, str]) -> None:
        """The controller's on_config_change callback: new topic overrides, and dynamic broker configs (the
        cluster default `<default>` or this broker's own), reach the open logs at once."""
        try:
            if entity_type == "topics":
                self.log_manager.update_topic_config(name, configs)
            elif entity_type == "brokers" and name in (DEFAULT_BROKER_ENTITY, str(self.broker_id)):
                self._dynamic_broker_configs[name] = dict(configs)
                self.log_manager.update_broker_defaults(self.effective_broker_configs())
                self._update_replication_quotas()
        except Exception:
            log.exception("Could not apply the new config of %s %s", entity_type, name)

    def effective_broker_configs(self) -> dict[str, Any]:
        return effective_broker_configs(self.config.originals, self._dynamic_broker_configs, self.broker_id)

    def _update_replication_quotas(self) -> None:
        """leader/follower.replication.throttled.rate: dynamic broker configs (this broker's, else the
        cluster default); unthrottled when unset."""
        effective = self.effective_broker_configs()
        try:
            raw_rate = effective.get(ALTER_LOG_DIRS_RATE)
            self._alter_log_dirs_rate: int | None = int(raw_rate) if raw_rate is not None else None
        except (TypeError, ValueError):
            self._alter_log_dirs_rate = None
        for quota, key in ((self.leader_quota, LEADER_THROTTLED_RATE), (self.follower_quota, FOLLOWER_THROTTLED_RATE)):
            raw = effective.get(key)
            try:
                quota.update_quota(int(raw) if raw is not None else UNLIMITED)
            except (TypeError, ValueError):
                log.warning("Ignoring the invalid %s value %r", key, raw)

    def _complete_delayed_requests(self, tp: TopicPartition) -> None:
        self.wake_fetches(tp)
        self.produce_purgatory.check_and_complete(tp)

    def wake_fetches(self, tp: TopicPartition) -> None:
        """tp changed (appended to, HW / log start moved, leadership): retry the fetches waiting on it, the
        sessionless ones watching tp and the sessions holding it (which also remember it for their next read)."""
        purgatory = self.fetch_purgatory
        purgatory.check_and_complete(tp)
        for session_id in self.fetch_session_cache.mark_changed(tp):
            purgatory.check_and_complete(SessionWatchKey(session_id))

    # -- produce ----------------------------------------------------------------------------------------

    def append_records(self, timeout_ms: int, required_acks: int, entries: Mapping[TopicPartition, Any],
                       callback: Callable[[dict[TopicPartition, PartitionResponse]], None], *,
                       internal_topics_allowed: bool = False, origin: str = "client",
                       transactional_id: str | None = None) -> None:
        """Append each partition's records as leader, then answer through `callback` (now, or when
        acks=-1 is satisfied or times out)."""
        results: dict[TopicPartition, PartitionResponse] = {}
        appended: dict[TopicPartition, int] = {}
        partitions = self._partitions
        offline = self._offline_partitions
        stats = self.broker_topic_stats
        for tp, records in entries.items():
            try:
                if tp.topic in INTERNAL_TOPICS and not internal_topics_allowed:
                    raise InvalidTopicExceptionError(f"Cannot append to internal topic {tp.topic}")
                partition = (None if tp in offline else partitions.get(tp)) or self.get_partition_or_error(tp)
                info = partition.append_records_to_leader(records if records is not None else b"", required_acks,
                                                          origin=origin)
                results[tp] = PartitionResponse(0, info.first_offset, info.log_append_time, info.log_start_offset)
                appended[tp] = info.last_offset + 1
                stats.on_append(tp.topic, info.valid_bytes, info.num_records)
            except KafkaError as e:
                results[tp] = partition_error_response(e)
                stats.on_append_failed(tp.topic, len(records) if records is not None else 0, e.code)
                if e.code not in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
                    log.debug("Error appending to %s: %s", tp, e)
            except OSError as e:  # the log dir is failing (ENOSPC, EIO, ...): Kafka takes it offline
                self._on_append_io_error(tp, e)
                partitions, offline = self._partitions, self._offline_partitions  # its other partitions too
                results[tp] = PartitionResponse(ErrorCode.KAFKA_STORAGE_ERROR)
                stats.on_append_failed(tp.topic, len(records) if records is not None else 0,
                                       ErrorCode.KAFKA_STORAGE_ERROR)
            except Exception as e:
                log.error("Error processing append operation on partition %s", tp, exc_info=e)
                results[tp] = PartitionResponse(ErrorCode.UNKNOWN_SERVER_ERROR)
        produce_purgatory = self.produce_purgatory
        for tp in appended:
            # The HW may have moved (one replica: at once): waiting fetches and acks=-1 produces can go.
            self.wake_fetches(tp)
            produce_purgatory.check_and_complete(tp)
        if required_acks == -1 and appended and not self._acks_reached_now(appended, results):
            statuses = {tp: ProducePartitionStatus(appended.get(tp, -1), r) for tp, r in results.items()}
            op = DelayedProduce(timeout_ms, statuses, self, callback)
            produce_purgatory.try_complete_else_watch(op, list(results))
        else:
            callback(results)

    def _acks_reached_now(self, appended: dict[TopicPartition, int],
                          results: dict[TopicPartition, PartitionResponse]) -> bool:
        """acks=-1 fast path: when every appended partition's HW already covers its append (one replica, or
        followers already there), set the answers DelayedProduce would give and skip the purgatory. False
        (nothing changed) when any partition must wait: the caller then parks a DelayedProduce."""
        codes: list[tuple[PartitionResponse, int]] = []
        partitions = self._partitions
        for tp, required_offset in appended.items():
            partition = partitions.get(tp)
            if partition is None:
                return False
            done, error = partition.check_enough_replicas_reach_offset(required_offset)
            if error is not None:
                codes.append((results[tp], error.code))
            elif done:
                codes.append((results[tp], ErrorCode.NONE))
            else:
                return False
        for response, code in codes:
            response.error = code
        return True

    # -- fetch ------------------------------------------------------------------------------------------

    def fetch_messages(self, params: FetchParams,
                       callback: Callable[[dict[TopicPartition, FetchPartitionData]], None],
                       session: FetchSession | None = None) -> None:
        """Read now; answer now if min_bytes are ready (or on error / no wait), else park a DelayedFetch.
        With an incremental session, params names what to read now and the wait is on the session's key."""
        results, bytes_readable, complete_now = self.read_from_local_log(params)
        executor = self._fetch_completions.submit if self._fetch_completions is not None else None
        if session is not None:
            if params.max_wait_ms <= 0 or bytes_readable >= params.min_bytes or complete_now:
                callback(results)
                return
            op = DelayedFetch(params.max_wait_ms, params, {}, self, callback, session=session,
                              reread=functools.partial(self._reread_session, session), executor=executor)
            self.fetch_purgatory.try_complete_else_watch(op, [SessionWatchKey(session.id)])
            return
        if params.max_wait_ms <= 0 or not params.partitions or bytes_readable >= params.min_bytes or complete_now:
            callback(results)
            return
        statuses = {tp: FetchPartitionStatus(info.fetch_offset, info) for tp, info in params.partitions.items()}
        op = DelayedFetch(params.max_wait_ms, params, statuses, self, callback, executor=executor)
        self.fetch_purgatory.try_complete_else_watch(op, list(params.partitions))

    def _reread_session(self, session: FetchSession, params: FetchParams) -> FetchParams:
        """What a session's delayed fetch reads when it completes: its first read's partitions plus the
        partitions touched since (with the session's current fetch state)."""
        partitions = self.fetch_manager.partitions_to_read(session, params.partitions, self.time.milliseconds())
        return FetchParams(params.replica_id, params.max_wait_ms, params.min_bytes, params.max_bytes,
                           params.isolation_level, partitions, params.hard_max_bytes_limit, params.replica_epoch)

    def read_from_local_log(self, params: FetchParams) -> tuple[dict[TopicPartition, FetchPartitionData], int, bool]:
        """(per-partition data, bytes read, whether something must be answered at once: an error or a
        diverging epoch). Enforces max_bytes across partitions as Kafka's readFromLog does."""
        limit = params.max_bytes
        min_one_message = not params.hard_max_bytes_limit
        results: dict[TopicPartition, FetchPartitionData] = {}
        total = 0
        throttled = 0
        urgent = False
        for tp, info in params.partitions.items():
            data = self._read_partition(tp, info, params, min(info.partition_max_bytes, limit), min_one_message)
            size = data.records.length if data.records is not None else 0
            if size:
                min_one_message = False
                limit = max(0, limit - size)
                total += size
                if params.is_from_follower and self._is_leader_throttled(tp):
                    throttled += size
            if data.error or data.diverging_epoch is not None:
                urgent = True
            results[tp] = data
        if throttled:
            self.leader_quota.record(throttled)
        return results, total, urgent

    def _is_leader_throttled(self, tp: TopicPartition) -> bool:
        """Whether this broker's replica of tp is named in leader.replication.throttled.replicas."""
        if not self.leader_quota.is_enabled():
            return False
        partition = self._partitions.get(tp)
        local_log = partition.log if partition is not None else None
        return local_log is not None and is_throttled_replica(local_log.config.get(LEADER_THROTTLED_REPLICAS),
                                                              tp.partition, self.broker_id)

    def should_leader_throttle(self, partition: Partition, replica_id: int) -> bool:
        """Kafka's shouldLeaderThrottle: a follower outside the ISR fetching a throttled replica while the
        leader's replication quota is exceeded gets no records this time."""
        return (replica_id not in partition.isr and self._is_leader_throttled(partition.topic_partition)
                and self.leader_quota.is_quota_exceeded())

    def _read_partition(self, tp: TopicPartition, info: FetchPartitionInfo, params: FetchParams, max_bytes: int,
                        min_one_message: bool) -> FetchPartitionData:
        try:
            partition = self.get_partition_or_error(tp)
            if params.is_from_follower and params.replica_id not in partition.replicas:
                raise NotLeaderOrFollowerError(f"Replica {params.replica_id} is not a replica of {tp}")
            if info.last_fetched_epoch >= 0:
                diverging = self._diverging_epoch(partition, info, params)
                if diverging is not None:
                    return diverging
            read = partition.read_records(info.fetch_offset, max_bytes, params.isolation, min_one_message,
                                          info.current_leader_epoch, params.fetch_only_from_leader)
            records = read.fetched_data.records
            if params.is_from_follower:
                leader_end = partition.log_end_offset
                if partition.update_follower_fetch_state(params.replica_id, info.fetch_offset, info.log_start_offset,
                                                         leader_end_offset=leader_end):
                    self.produce_purgatory.check_and_complete(tp)
                    self.wake_fetches(tp)
                if records is not None and self.should_leader_throttle(partition, params.replica_id):
                    records = None
            return FetchPartitionData(0, read.high_watermark, read.last_stable_offset, read.log_start_offset,
                                      records, aborted_transactions=read.aborted_transactions)
        except OffsetOutOfRangeError as e:
            log.debug("Fetch of %s at %d out of range: %s", tp, info.fetch_offset, e)
            return FetchPartitionData(e.code)
        except KafkaError as e:
            return FetchPartitionData(e.code, current_leader=self._current_leader(tp, e))
        except Exception as e:
            log.error("Error processing fetch with max size %d from %s on partition %s", max_bytes,
                      "consumer" if params.replica_id < 0 else f"replica {params.replica_id}", tp, exc_info=e)
            return FetchPartitionData(ErrorCode.UNKNOWN_SERVER_ERROR)

    def _diverging_epoch(self, partition: Partition, info: FetchPartitionInfo,
                         params: FetchParams) -> FetchPartitionData | None:
        error, epoch, end_offset = self.last_offset_for_leader_epoch(
            partition.topic_partition, info.current_leader_epoch, info.last_fetched_epoch, fetch_only_from_leader=True)
        if error:
            return FetchPartitionData(error)
        if epoch < info.last_fetched_epoch or end_offset < info.fetch_offset:
            return FetchPartitionData(0, partition.high_watermark, partition.last_stable_offset,
                                      partition.log_start_offset, None, diverging_epoch=(epoch, end_offset))
        return None

    def _current_leader(self, tp: TopicPartition, error: KafkaError) -> tuple[int, int] | None:
        if error.code != ErrorCode.NOT_LEADER_OR_FOLLOWER:
            return None
        state = self.metadata_cache.get_partition_state(tp)
        return (state.leader, state.leader_epoch) if state is not None else None

    # -- offsets ------------------------------------------------------------------------------------------

    def fetch_offset_for_timestamp(self, tp: TopicPartition, timestamp: int, isolation_level: int | None,
                                   current_leader_epoch: int = -1,
                                   fetch_only_from_leader: bool = True) -> ListOffsetsResult:
        """ListOffsets for one partition (isolation_level None: a follower/debug request reading to the log end)."""
        from kafkapy.storage.log import EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

        try:
            partition = self.get_partition_or_error(tp)
            with partition.lock:
                local_log = partition._check_leader_epoch(current_leader_epoch, fetch_only_from_leader)
                leader_epoch = partition.leader_epoch
            if isolation_level is None:
                last_fetchable = local_log.log_end_offset
            else:
                last_fetchable = partition.high_watermark if isolation_level == 0 else partition.last_stable_offset
            if timestamp == LATEST_TIMESTAMP:
                return ListOffsetsResult(0, -1, last_fetchable, leader_epoch)
            found = local_log.fetch_offset_by_timestamp(timestamp)
            if found is None or found.offset < 0:
                return ListOffsetsResult(0, -1, -1, -1)
            if timestamp not in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP) and found.offset >= last_fetchable:
                return ListOffsetsResult(0, -1, -1, -1)
            return ListOffsetsResult(0, found.timestamp, found.offset, found.leader_epoch)
        except KafkaError as e:
            return ListOffsetsResult(e.code)
        except Exception as e:
            log.error("Error while responding to offset request for %s", tp, exc_info=e)
            return ListOffsetsResult(ErrorCode.UNKNOWN_SERVER_ERROR)

    def last_offset_for_leader_epoch(self, tp: TopicPartition, current_leader_epoch: int, leader_epoch: int,
                                     fetch_only_from_leader: bool = True) -> tuple[int, int, int]:
        """OffsetForLeaderEpoch for one partition: (error code, epoch, end offset); (-1, -1) if unknown."""
        try:
            partition = self.get_partition_or_error(tp)
            with partition.lock:
                local_log = partition._check_leader_epoch(current_leader_epoch, fetch_only_from_leader)
            epoch, end_offset = local_log.end_offset_for_epoch(leader_epoch)
            return 0, epoch, end_offset
        except KafkaError as e:
            return e.code, -1, -1
        except OSError as e:  # its deferred epoch entry could not be written: not answered from memory
            log.error("Could not write the leader epoch checkpoint of %s: %s", tp, e)
            return ErrorCode.KAFKA_STORAGE_ERROR, -1, -1

    def delete_records(self, timeout_ms: int, offsets: Mapping[TopicPartition, int]
                       ) -> dict[TopicPartition, tuple[int, int]]:
        """DeleteRecords: move each log start offset (-1 = the HW). {tp: (low_watermark, error code)}.
        One replica: done at once (with followers Kafka waits for their low watermarks: later)."""
        out: dict[TopicPartition, tuple[int, int]] = {}
        for tp, offset in offsets.items():
            try:
                partition = self.get_leader_partition_or_error(tp)
                local_log = partition.log
                if local_log is None:
                    raise NotLeaderOrFollowerError(f"Leader not local for partition {tp}")
                if "delete" not in str(local_log.config.get("cleanup.policy")):
                    raise PolicyViolationError(f"Records of partition {tp} can not be deleted due to the configured "
                                               "policy")
                hw = partition.high_watermark
                target = hw if offset == -1 else offset
                if target < 0 or target > hw:
                    raise OffsetOutOfRangeError(f"Cannot increment the log start offset to {target} of partition "
                                                f"{tp} since it is larger than the high watermark {hw}")
                local_log.maybe_increment_log_start_offset(target, "client")
                out[tp] = (local_log.log_start_offset, 0)
                self.wake_fetches(tp)
            except KafkaError as e:
                out[tp] = (-1, e.code)
        return out

    def describe_log_dirs(self, *args: Any, **kwargs: Any) -> Any:
        return self.log_manager.describe_log_dirs(*args, **kwargs)

    # -- JBOD: moving replicas between log dirs, offline log dirs -------------------------------------------

    def alter_replica_log_dirs(self, dirs: Mapping[TopicPartition, str]) -> dict[TopicPartition, int]:
        """Kafka's alterReplicaLogDirs: per partition, start moving its replica to the dir (or remember the dir
        for a log created later): NONE, LOG_DIR_NOT_FOUND, KAFKA_STORAGE_ERROR (dir offline) or
        REPLICA_NOT_AVAILABLE (no replica here yet)."""
        lm = self.log_manager
        out: dict[TopicPartition, int] = {}
        for tp, dir_ in dirs.items():
            try:
                dest = lm.check_log_dir_online(dir_)
                if tp in self._offline_partitions:
                    raise KafkaStorageError(f"Partition {tp} is offline")
                lm.maybe_update_preferred_log_dir(tp, dest)
                partition = self._partitions.get(tp)
                if partition is None or partition.log is None:
                    raise ReplicaNotAvailableError(f"Replica {self.broker_id} of {tp} is not available")
                if lm.offline_dirs:  # Kafka: no future log while a dir is offline (it could exist twice)
                    raise KafkaStorageError(f"Can not move {tp} while log directories are offline")
                future = lm.get_or_create_future_log(tp, dest)
                if future is not None:
                    self.alter_log_dirs_thread.add_partition(tp)
                else:
                    self.alter_log_dirs_thread.remove_partition(tp)
                out[tp] = ErrorCode.NONE
            except (LogDirNotFoundError, KafkaStorageError, ReplicaNotAvailableError) as e:
                log.warning("Unable to alter log dirs for %s: %s", tp, e)
                out[tp] = e.code
            except NotLeaderOrFollowerError as e:
                log.warning("Unable to alter log dirs for %s: %s", tp, e)
                out[tp] = ErrorCode.REPLICA_NOT_AVAILABLE
        return out

    def _on_append_io_error(self, tp: TopicPartition, error: OSError) -> None:
        if is_descriptor_exhaustion(error):
            # The process's descriptor limit, not the disk's (as log creation treats it): only this append
            # fails, before anything is written (the roll check and LogSegment.append open the lazy indexes
            # before the write); the producer gets KAFKA_STORAGE_ERROR (retriable), the dir and broker stay up.
            log.error("Error while appending records to %s: %s", tp, error)
            return
        partition = self._partitions.get(tp)
        current = partition.log if partition is not None else None
        if current is not None:
            self.log_manager.log_dir_failed(os.path.dirname(current.dir), error)
        else:
            log.error("Error while appending records to %s: %s", tp, error)

    def handle_log_dir_failure(self, dir_: str) -> None:
        """Kafka's handleLogDirFailure (the LogManager already dropped the dir's logs): stop fetching and moving
        its partitions, host them as offline (KAFKA_STORAGE_ERROR), then tell the listener (the controller)."""
        log.warning("Stopping serving replicas in dir %s", dir_)
        lm = self.log_manager
        gone = sorted(tp for tp in self._partitions if lm.is_in_offline_dir(tp))
        self.replica_fetcher_manager.remove_fetcher_for_partitions(gone)
        for tp in list(self.alter_log_dirs_thread.partitions()):
            if tp in gone or lm.future_log(tp) is None:
                self.alter_log_dirs_thread.remove_partition(tp)
        with self._lock:
            partitions = dict(self._partitions)
            for tp in gone:
                partitions.pop(tp, None)
            self._partitions = partitions
            self._offline_partitions = self._offline_partitions | set(gone)
        for tp in gone:
            self._complete_delayed_requests(tp)
        log.info("Broker %d stopped fetcher for partitions %s and stopped moving logs for partitions %s because "
                 "they are in the failed log directory %s.", self.broker_id, ",".join(map(str, gone)),
                 ",".join(map(str, gone)), dir_)
        log.warning("Stopped serving replicas in dir %s", dir_)
        if self.log_dir_failure_listener is not None:
            try:
                self.log_dir_failure_listener(dir_, gone)
            except Exception:
                log.exception("Could not report the failure of log dir %s", dir_)

    # -- background work ------------------------------------------------------------------------------

    def maybe_shrink_isr(self) -> None:
        for partition in list(self._partitions.values()):
            try:
                partition.maybe_shrink_isr()
            except Exception:
                log.exception("Error checking the ISR of %s", partition.topic_partition)

    def checkpoint_high_watermarks(self) -> None:
        """Write replication-offset-checkpoint in every log dir (the HW of each hosted log)."""
        hws = {tp: p.high_watermark for tp, p in self._partitions.items() if p.log is not None}
        try:
            self.log_manager.checkpoint_high_watermarks(hws)
        except (OSError, KafkaError) as e:
            log.error("Error while writing the high watermark checkpoint: %s", e)
