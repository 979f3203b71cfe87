"""TransactionStateManager: the transactional ids of the __transaction_state partitions this broker leads.

Owns the metadata cache (per partition, with the coordinator epoch = the partition's leader epoch), which
partitions are loading, and the reads/writes of __transaction_state (transaction_log.py records):
transactional id -> partition is abs(Java String.hashCode) % transaction.state.log.num.partitions.
Every state change is one record appended with acks=-1 (Kafka's enforced acks) through
`replica_manager.append_records(..., internal_topics_allowed=True, origin="coordinator")` on an appender
thread (never under a metadata lock); the transit is applied (`complete_transition_to`) when the append
succeeds and the coordinator epoch is unchanged. Loading replays a partition's log from its start (the
latest record per id wins, tombstones delete), then hands back the ids left in PrepareCommit/PrepareAbort
so their markers are sent again. Lists the Ongoing transactions past their timeout and the ids past
transactional.id.expiration.ms.

Thread-safety: the cache and partition sets under one lock; each TransactionMetadata under its own lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.internal_topics import TRANSACTION_STATE_TOPIC_NAME
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator import transaction_log
from kafkapy.coordinator.group_metadata_manager import Executor, WorkerThread, partition_for
from kafkapy.coordinator.transaction_metadata import TransactionMetadata, TransactionState, TxnTransitMetadata
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

log = logging.getLogger("kafka.coordinator.transaction.TransactionStateManager")

ENFORCED_REQUIRED_ACKS = -1


@dataclass(frozen=True)
class TransactionConfig:
    transactional_id_expiration_ms: int = 604_800_000
    transaction_max_timeout_ms: int = 900_000
    transaction_log_num_partitions: int = 50
    transaction_log_load_buffer_size: int = 5_242_880
    abort_timed_out_transaction_cleanup_interval_ms: int = 10_000
    remove_expired_transactional_ids_interval_ms: int = 3_600_000
    request_timeout_ms: int = 30_000

    @classmethod
    def from_config(cls, config: Any) -> TransactionConfig:
        def get(name: str, default: int) -> int:
            try:
                return int(config.get_int(name))
            except (KeyError, AttributeError, TypeError, ValueError):
                return default

        return cls(get("transactional.id.expiration.ms", 604_800_000), get("transaction.max.timeout.ms", 900_000),
                   get("transaction.state.log.num.partitions", 50),
                   get("transaction.state.log.load.buffer.size", 5_242_880),
                   get("transaction.abort.timed.out.transaction.cleanup.interval.ms", 10_000),
                   get("transaction.remove.expired.transaction.cleanup.interval.ms", 3_600_000),
                   get("request.timeout.ms", 30_000))


@dataclass(frozen=True)
class CoordinatorEpochAndTxnMetadata:
    coordinator_epoch: int
    metadata: TransactionMetadata


@dataclass(frozen=True)
class TransactionalIdAndProducerIdEpoch:
    transactional_id: str
    producer_id: int
    producer_epoch: int


def append_error_to_coordinator_error(code: int) -> int:
    """Kafka's mapping of a failed __transaction_state append to what the client is told."""
    if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS,
                ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return code


class TransactionStateManager:
    def __init__(self, broker_id: int, config: TransactionConfig, time: Time, replica_manager: Any,
                 metadata_cache: Any = None, append_executor: Executor | None = None,
                 load_executor: Executor | None = None) -> None:
        self.broker_id = broker_id
        self.config = config
        self.time = time
        self.replica_manager = replica_manager
        self.metadata_cache = metadata_cache
        self._lock = threading.Lock()
        self._cache: dict[int, tuple[int, dict[str, TransactionMetadata]]] = {}  # partition -> (epoch, ids)
        self._loading: dict[int, int] = {}  # partition -> epoch being loaded
        self._workers: list[WorkerThread] = []
        if append_executor is None:
            worker = WorkerThread(f"transaction-log-appender-{broker_id}")
            self._workers.append(worker)
            append_executor = worker.submit
        if load_executor is None:
            worker = WorkerThread(f"transaction-log-loader-{broker_id}")
            self._workers.append(worker)
            load_executor = worker.submit
        self._append_executor = append_executor
        self._load_executor = load_executor
        self.shutting_down = False

    def shutdown(self) -> None:
        self.shutting_down = True
        for worker in self._workers:
            worker.shutdown()
        with self._lock:
            self._cache.clear()
            self._loading.clear()

    # -- partitions -----------------------------------------------------------------------------------

    def partition_count(self) -> int:
        if self.metadata_cache is not None:
            n = self.metadata_cache.num_partitions(TRANSACTION_STATE_TOPIC_NAME)
            if n:
                return int(n)
        return self.config.transaction_log_num_partitions

    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self.partition_count())

    @property
    def num_transactions(self) -> int:
        """The transactional ids of the partitions this broker coordinates (kafkapy's NumTransactions gauge)."""
        with self._lock:
            return sum(len(ids) for _, ids in self._cache.values())

    def owned_partitions(self) -> dict[int, int]:
        with self._lock:
            return {p: epoch for p, (epoch, _) in self._cache.items()}

    def loading_partitions(self) -> dict[int, int]:
        with self._lock:
            return dict(self._loading)

    def get_transaction_state(self, transactional_id: str) -> tuple[int, CoordinatorEpochAndTxnMetadata | None]:
        """(error, epoch+metadata or None when unknown). NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS first."""
        partition = self.partition_for(transactional_id)
        with self._lock:
            if partition in self._loading:
                return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, None
            entry = self._cache.get(partition)
            if entry is None:
                return ErrorCode.NOT_COORDINATOR, None
            epoch, ids = entry
            metadata = ids.get(transactional_id)
            return 0, None if metadata is None else CoordinatorEpochAndTxnMetadata(epoch, metadata)

    def put_transaction_state_if_not_exists(self, metadata: TransactionMetadata
                                            ) -> tuple[int, CoordinatorEpochAndTxnMetadata | None]:
        partition = self.partition_for(metadata.transactional_id)
        with self._lock:
            if partition in self._loading:
                return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, None
            entry = self._cache.get(partition)
            if entry is None:
                return ErrorCode.NOT_COORDINATOR, None
            epoch, ids = entry
            current = ids.setdefault(metadata.transactional_id, metadata)
            return 0, CoordinatorEpochAndTxnMetadata(epoch, current)

    def transactional_ids_in(self, partition: int) -> set[str]:
        with self._lock:
            entry = self._cache.get(partition)
            return set(entry[1]) if entry is not None else set()

    def all_transactions(self) -> list[TransactionMetadata]:
        with self._lock:
            return [m for _, ids in self._cache.values() for m in ids.values()]

    def _remove_from_cache(self, metadata: TransactionMetadata, coordinator_epoch: int) -> None:
        partition = self.partition_for(metadata.transactional_id)
        with self._lock:
            entry = self._cache.get(partition)
            if entry is not None and entry[0] == coordinator_epoch and entry[1].get(metadata.transactional_id) is metadata:
                del entry[1][metadata.transactional_id]

    # -- writes ---------------------------------------------------------------------------------------

    def append_transaction_to_log(self, transactional_id: str, coordinator_epoch: int,
                                  metadata: TransactionMetadata, transit: TxnTransitMetadata,
                                  callback: Callable[[int], None], retry_on_error: Callable[[int], bool] | None = None
                                  ) -> None:
        """Write `transit`; on success apply it to `metadata` and call back 0, else undo the pending state
        (unless retry_on_error(code) says the caller retries) and call back the mapped error."""
        builder = MemoryRecordsBuilder()
        builder.append(self.time.milliseconds(), transaction_log.key_to_bytes(transactional_id),
                       transaction_log.value_to_bytes(transit))
        data = builder.build()
        tp = TopicPartition(TRANSACTION_STATE_TOPIC_NAME, self.partition_for(transactional_id))

        def done(results: dict[TopicPartition, Any]) -> None:
            r = results.get(tp)
            code = ErrorCode.UNKNOWN_SERVER_ERROR if r is None else r.error
            error = append_error_to_coordinator_error(code) if code else 0
            with metadata.lock:
                if not error:
                    current_error, current = self.get_transaction_state(transactional_id)
                    if current is None or current.metadata is not metadata and transit.txn_state != TransactionState.DEAD:
                        error = current_error or ErrorCode.NOT_COORDINATOR
                    elif current.coordinator_epoch != coordinator_epoch:
                        error = ErrorCode.NOT_COORDINATOR
                if not error:
                    metadata.complete_transition_to(transit)
                elif retry_on_error is None or not retry_on_error(error):
                    metadata.pending_state = None
                if error:
                    log.info("Appending %s's new metadata %s failed due to %s", transactional_id, transit,
                             ErrorCode(error).name)
            callback(error)

        def run() -> None:
            try:
                self.replica_manager.append_records(self.config.request_timeout_ms, ENFORCED_REQUIRED_ACKS,
                                                    {tp: data}, done, internal_topics_allowed=True,
                                                    origin="coordinator")
            except Exception:
                log.exception("Appending to %s failed", tp)
                done({})

        self._append_executor(run)

    # -- scans ----------------------------------------------------------------------------------------

    def timed_out_transactions(self) -> list[TransactionalIdAndProducerIdEpoch]:
        now = self.time.milliseconds()
        out = []
        for m in self.all_transactions():
            with m.lock:
                if (m.state == TransactionState.ONGOING and m.pending_state is None
                        and m.txn_start_timestamp + m.txn_timeout_ms < now):
                    out.append(TransactionalIdAndProducerIdEpoch(m.transactional_id, m.producer_id, m.producer_epoch))
        return out

    def remove_expired_transactional_ids(self) -> int:
        """Write tombstones for ids idle past transactional.id.expiration.ms (Kafka's removeExpiredTransactionalIds)."""
        now = self.time.milliseconds()
        expiration = self.config.transactional_id_expiration_ms
        count = 0
        for partition, epoch in self.owned_partitions().items():
            with self._lock:
                entry = self._cache.get(partition)
                candidates = list(entry[1].values()) if entry is not None else []
            for m in candidates:
                with m.lock:
                    if (m.pending_state is not None or m.state not in (
                            TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT)
                            or m.txn_last_update_timestamp > now - expiration):
                        continue
                    transit = m.prepare_dead()
                count += 1

                def removed(error: int, m: TransactionMetadata = m, epoch: int = epoch) -> None:
                    if not error:
                        self._remove_from_cache(m, epoch)
                        log.info("Removed expired transactional id %s", m.transactional_id)

                self.append_transaction_to_log(m.transactional_id, epoch, m, transit, removed)
        return count

    # -- loading --------------------------------------------------------------------------------------

    def load_transactions_for_partition(self, partition: int, coordinator_epoch: int,
                                        on_loaded: Callable[[int, list[TransactionMetadata]], None]) -> None:
        """Replay __transaction_state-`partition` on the loader thread; then `on_loaded(epoch, pending)` with the
        ids left in PrepareCommit/PrepareAbort (their markers must be written again)."""
        with self._lock:
            owned = self._cache.get(partition)
            if (owned is not None and owned[0] >= coordinator_epoch) or self._loading.get(partition, -1) >= coordinator_epoch:
                return
            self._loading[partition] = coordinator_epoch
        log.info("Scheduling loading of transaction metadata from %s-%d for epoch %d",
                 TRANSACTION_STATE_TOPIC_NAME, partition, coordinator_epoch)

        def run() -> None:
            start = self.time.hi_res_clock_ms()
            try:
                loaded = self._read_partition(TopicPartition(TRANSACTION_STATE_TOPIC_NAME, partition))
            except Exception:
                log.exception("Error loading transactions from %s-%d", TRANSACTION_STATE_TOPIC_NAME, partition)
                with self._lock:
                    if self._loading.get(partition) == coordinator_epoch:
                        del self._loading[partition]
                return
            with self._lock:
                if self._loading.get(partition) != coordinator_epoch or self.shutting_down:
                    return
                del self._loading[partition]
                self._cache[partition] = (coordinator_epoch, loaded)
            pending = [m for m in loaded.values()
                       if m.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)]
            log.info("Finished loading %d transaction metadata from %s-%d in %d milliseconds, of which %d were "
                     "pending completion", len(loaded), TRANSACTION_STATE_TOPIC_NAME, partition,
                     self.time.hi_res_clock_ms() - start, len(pending))
            on_loaded(coordinator_epoch, pending)

        self._load_executor(run)

    def _read_partition(self, tp: TopicPartition) -> dict[str, TransactionMetadata]:
        partition = self.replica_manager.get_partition(tp)
        local_log = partition.log if partition is not None else None
        loaded: dict[str, TransactionMetadata] = {}
        if local_log is None:
            return loaded
        position, end = local_log.log_start_offset, local_log.log_end_offset
        while position < end and not self.shutting_down:
            info = local_log.read(position, self.config.transaction_log_load_buffer_size, max_offset=None,
                                  min_one_message=True)
            if info.records is None or info.records.length == 0:
                break
            read_any = False
            for batch in MemoryRecords(info.records.read_bytes()).batches():
                read_any = True
                position = batch.next_offset
                if batch.is_control_batch:
                    continue
                for rec in batch.records():
                    self._replay(rec.key, rec.value, loaded)
            if not read_any:
                break
        return loaded

    @staticmethod
    def _replay(key: bytes | None, value: bytes | None, loaded: dict[str, TransactionMetadata]) -> None:
        if key is None:
            return
        try:
            transactional_id = transaction_log.read_key(key)
            transit = transaction_log.read_value(value)
        except (ValueError, IndexError) as e:
            log.warning("Skipping an unreadable __transaction_state record: %s", e)
            return
        if transit is None:
            loaded.pop(transactional_id, None)
        else:
            loaded[transactional_id] = TransactionMetadata.from_transit(transactional_id, transit)

    def remove_transactions_for_partition(self, partition: int, coordinator_epoch: int | None) -> None:
        with self._lock:
            entry = self._cache.get(partition)
            if entry is not None and (coordinator_epoch is None or entry[0] <= coordinator_epoch):
                del self._cache[partition]
                log.info("Unloaded transaction metadata of %s-%d for coordinator epoch %s",
                         TRANSACTION_STATE_TOPIC_NAME, partition, coordinator_epoch)
            if partition in self._loading and (coordinator_epoch is None or self._loading[partition] <= coordinator_epoch):
                del self._loading[partition]

    def is_partition_known(self, partition: int) -> bool:
        with self._lock:
            return partition in self._cache or partition in self._loading

