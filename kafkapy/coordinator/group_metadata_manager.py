"""GroupMetadataManager: the groups and committed offsets of the __consumer_offsets partitions this broker leads.

Owns the group cache, which partitions are owned or still loading, and the reads/writes of
__consumer_offsets: group -> partition is abs(Java String.hashCode(group id)) % partition count
(Kafka's Utils.abs: `h & 0x7fffffff`). Offsets and group generations are written as records
(group_records.py: OffsetCommitKey/Value, GroupMetadataKey/Value, tombstones) in one magic-2 batch per
write through `replica_manager.append_records(..., internal_topics_allowed=True, origin="coordinator")`
with offsets.commit.required.acks (-1) and offsets.commit.timeout.ms; callers are answered from the
append callback. Loading a partition replays its log from the log start into the cache (later records
win, tombstones delete). Offsets of Empty groups expire after offsets.retention.minutes.

Appends run on a dedicated appender thread and loads on a loader thread, never while a group lock is
held: the append path takes partition and delayed-produce locks whose callbacks take group locks, so
calling it under a group lock could deadlock (Kafka shares the group lock with DelayedProduce instead).
Unit tests inject synchronous executors.

Thread-safety: the cache and the partition sets are guarded by one lock; group state by each group's lock.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.internal_topics import GROUP_METADATA_TOPIC_NAME
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator import group_records as records
from kafkapy.coordinator.group_metadata import (
    CommitRecordMetadataAndOffset,
    GroupMetadata,
    GroupState,
    OffsetAndMetadata,
)
from kafkapy.record.compression import CompressionType
from kafkapy.record.control_record import ControlRecordType, parse_control_type
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

log = logging.getLogger("kafka.coordinator.group.GroupMetadataManager")

INVALID_OFFSET = -1

Executor = Callable[[Callable[[], None]], None]


def java_string_hashcode(s: str) -> int:
    """Java's String.hashCode (over UTF-16 code units) as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group_id: str, num_partitions: int) -> int:
    return (java_string_hashcode(group_id) & 0x7FFFFFFF) % num_partitions


@dataclass(slots=True)
class OffsetConfig:
    """The offsets.* broker configs (Kafka's OffsetConfig), read from a KafkaConfig-like `get_int`."""

    max_metadata_size: int = 4096
    load_buffer_size: int = 5 * 1024 * 1024
    offsets_retention_ms: int = 7 * 24 * 60 * 60 * 1000
    offsets_retention_check_interval_ms: int = 600_000
    offsets_topic_num_partitions: int = 50
    offsets_topic_compression: int = 0
    offset_commit_timeout_ms: int = 5000
    offset_commit_required_acks: int = -1

    @classmethod
    def from_config(cls, config: Any) -> OffsetConfig:
        return cls(
            max_metadata_size=config.get_int("offset.metadata.max.bytes"),
            load_buffer_size=config.get_int("offsets.load.buffer.size"),
            offsets_retention_ms=config.get_int("offsets.retention.minutes") * 60 * 1000,
            offsets_retention_check_interval_ms=int(config.get("offsets.retention.check.interval.ms")),
            offsets_topic_num_partitions=config.get_int("offsets.topic.num.partitions"),
            offsets_topic_compression=int(config.get("offsets.topic.compression.codec")),
            offset_commit_timeout_ms=config.get_int("offsets.commit.timeout.ms"),
            offset_commit_required_acks=int(config.get("offsets.commit.required.acks")),
        )


@dataclass(slots=True)
class OffsetFetchPartition:
    offset: int
    leader_epoch: int
    metadata: str | None
    error: int


def append_error_to_commit_error(code: int) -> int:
    """Kafka's mapping of a failed __consumer_offsets append to the OffsetCommit error."""
    if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS,
                ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE):
        return ErrorCode.INVALID_COMMIT_OFFSET_SIZE
    return code


def append_error_to_group_error(code: int) -> int:
    """Kafka's mapping of a failed group-metadata append to the JoinGroup/SyncGroup error."""
    if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS,
                ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE,
                ErrorCode.INVALID_FETCH_SIZE):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return code


class WorkerThread:
    """One daemon thread running submitted callables in order (the appender, the loader). The thread starts
    with the first submitted task (start-up time: a broker that leads no __consumer_offsets or
    __transaction_state partition never needs it); a task submitted after shutdown never runs."""

    def __init__(self, name: str) -> None:
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._name = name
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, fn: Callable[[], None]) -> None:
        if self._thread is None:
            self._start()
        self._queue.put(fn)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def shutdown(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._closed = True
            thread = self._thread
        self._queue.put(None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            fn = self._queue.get()
            if fn is None:
                return
            try:
                fn()
            except Exception:
                log.exception("Task of %s failed", self._name)


class GroupMetadataManager:
    def __init__(self, broker_id: int, config: OffsetConfig, time: Time, replica_manager: Any,
                 metadata_cache: Any = None, append_executor: Executor | None = None,
                 load_executor: Executor | None = None) -> None:
        self.broker_id = broker_id
        self.config = config
        self.time = time
        self.replica_manager = replica_manager
        self.metadata_cache = metadata_cache
        self._lock = threading.Lock()
        self._groups: dict[str, GroupMetadata] = {}
        self._owned: set[int] = set()
        self._loading: set[int] = set()
        self._epochs: dict[int, int] = {}
        # One token per scheduled load: a load finishes only if no resignation/re-election replaced it.
        self._load_tokens: dict[int, object] = {}
        self._partition_count: int | None = None
        self._workers: list[WorkerThread] = []
        if append_executor is None:
            worker = WorkerThread(f"group-metadata-manager-appender-{broker_id}")
            self._workers.append(worker)
            append_executor = worker.submit
        if load_executor is None:
            worker = WorkerThread(f"group-metadata-manager-loader-{broker_id}")
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
            self._groups.clear()
            self._owned.clear()
            self._loading.clear()

    # -- partitions -----------------------------------------------------------------------------------

    def partition_count(self) -> int:
        """The partition count of __consumer_offsets: the topic's own once it exists, else the config's."""
        count = self._partition_count
        if count is not None:
            return count
        if self.metadata_cache is not None:
            n = self.metadata_cache.num_partitions(GROUP_METADATA_TOPIC_NAME)
            if n:
                self._partition_count = n
                return n
        return self.config.offsets_topic_num_partitions

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.partition_count())

    def topic_partition_for(self, group_id: str) -> TopicPartition:
        return TopicPartition(GROUP_METADATA_TOPIC_NAME, self.partition_for(group_id))

    def is_partition_owned(self, partition: int) -> bool:
        return partition in self._owned

    def is_partition_loading(self, partition: int) -> bool:
        return partition in self._loading

    def is_group_local(self, group_id: str) -> bool:
        return self.is_partition_owned(self.partition_for(group_id))

    def is_group_loading(self, group_id: str) -> bool:
        return self.is_partition_loading(self.partition_for(group_id))

    def is_loading(self) -> bool:
        return bool(self._loading)

    def owned_partitions(self) -> set[int]:
        with self._lock:
            return set(self._owned)

    def partition_epoch(self, partition: int) -> int | None:
        return self._epochs.get(partition)

    # -- the group cache ------------------------------------------------------------------------------

    def current_groups(self) -> list[GroupMetadata]:
        with self._lock:
            return list(self._groups.values())

    def get_group(self, group_id: str) -> GroupMetadata | None:
        return self._groups.get(group_id)

    def get_or_maybe_create_group(self, group_id: str, create_if_not_exist: bool) -> GroupMetadata | None:
        group = self._groups.get(group_id)
        if group is not None or not create_if_not_exist:
            return group
        return self.add_group(GroupMetadata(group_id, GroupState.EMPTY, self.time))

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        with self._lock:
            return self._groups.setdefault(group.group_id, group)

    def remove_group(self, group: GroupMetadata) -> bool:
        with self._lock:
            if self._groups.get(group.group_id) is group:
                del self._groups[group.group_id]
                return True
            return False

    def group_not_exists(self, group_id: str) -> bool:
        """True when this broker owns the group's partition and holds no live group of that id."""
        if not self.is_group_local(group_id):
            return False
        group = self._groups.get(group_id)
        if group is None:
            return True
        with group.lock:
            return group.is_state(GroupState.DEAD)

    def missing_group_error(self, group_id: str) -> int:
        """The error for a group that is not here: GROUP_ID_NOT_FOUND when we own its partition."""
        return ErrorCode.GROUP_ID_NOT_FOUND if self.group_not_exists(group_id) else ErrorCode.NOT_COORDINATOR

    # -- writes ---------------------------------------------------------------------------------------

    def _build(self, entries: Iterable[tuple[bytes, bytes | None]], producer_id: int = -1,
               producer_epoch: int = -1) -> bytes:
        # TxnOffsetCommit batches are transactional with the producer's id and epoch (sequence 0, as Kafka).
        txn = producer_id >= 0
        builder = MemoryRecordsBuilder(compression=CompressionType.from_id(self.config.offsets_topic_compression),
                                       producer_id=producer_id, producer_epoch=producer_epoch,
                                       base_sequence=0 if txn else -1, is_transactional=txn)
        now = self.time.milliseconds()
        for key, value in entries:
            builder.append(now, key, value)
        return builder.build()

    def _append(self, tp: TopicPartition, data: bytes, callback: Callable[[int, int], None],
                required_acks: int | None = None) -> None:
        """Append `data` to `tp` on the appender thread; callback(error code, base offset)."""
        acks = self.config.offset_commit_required_acks if required_acks is None else required_acks
        timeout = self.config.offset_commit_timeout_ms

        def run() -> None:
            def done(results: dict[TopicPartition, Any]) -> None:
                r = results.get(tp)
                if r is None:
                    callback(ErrorCode.UNKNOWN_SERVER_ERROR, -1)
                else:
                    callback(r.error, r.base_offset)

            try:
                self.replica_manager.append_records(timeout, acks, {tp: data}, done, internal_topics_allowed=True,
                                                    origin="coordinator")
            except Exception:
                log.exception("Appending to %s failed", tp)
                callback(ErrorCode.UNKNOWN_SERVER_ERROR, -1)

        self._append_executor(run)

    def store_group(self, group: GroupMetadata, assignment: dict[str, bytes], callback: Callable[[int], None]) -> None:
        """Write the group's generation (+ assignment); callback(error) with Kafka's JoinGroup/SyncGroup error.
        Call with the group lock held (the record is built from the current state)."""
        data = self._build([(records.group_metadata_key(group.group_id),
                             records.group_metadata_value(group, assignment))])

        def done(error: int, _base_offset: int) -> None:
            if error:
                log.debug("Metadata from group %s with generation %d failed when appending to log due to %s",
                          group.group_id, group.generation_id, ErrorCode(error).name)
            callback(append_error_to_group_error(error) if error else 0)

        self._append(self.topic_partition_for(group.group_id), data, done)

    def store_offsets(self, group: GroupMetadata, member_id: str, offsets: dict[TopicPartition, OffsetAndMetadata],
                      callback: Callable[[dict[TopicPartition, int]], None]) -> None:
        """Write committed offsets; callback({tp: error}) once appended. Call with the group lock held."""
        valid = {tp: om for tp, om in offsets.items() if self.validate_offset_metadata_length(om.metadata)}

        def final(error: int) -> dict[TopicPartition, int]:
            return {tp: error if tp in valid else ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in offsets}

        if not valid:
            callback(final(0))
            return
        data = self._build([(records.offset_commit_key(group.group_id, tp), records.offset_commit_value(om))
                            for tp, om in valid.items()])
        group.prepare_offset_commit(valid)

        def done(error: int, base_offset: int) -> None:
            with group.lock:
                if not error:
                    if not group.is_state(GroupState.DEAD):
                        for tp, om in valid.items():
                            group.on_offset_commit_append(tp, CommitRecordMetadataAndOffset(base_offset, om))
                else:
                    if not group.is_state(GroupState.DEAD):
                        for tp, om in valid.items():
                            group.fail_pending_offset_write(tp, om)
                    log.debug("Offset commit %s from group %s, member %s failed when appending to log due to %s",
                              valid, group.group_id, member_id, ErrorCode(error).name)
            callback(final(append_error_to_commit_error(error) if error else 0))

        self._append(self.topic_partition_for(group.group_id), data, done)

    def append_txn_offsets(self, group_id: str, producer_id: int, producer_epoch: int,
                           offsets: dict[TopicPartition, OffsetAndMetadata],
                           callback: Callable[[int, int], None]) -> None:
        """Write a TxnOffsetCommit's records as one transactional batch; callback(error, base offset)."""
        data = self._build([(records.offset_commit_key(group_id, tp), records.offset_commit_value(om))
                            for tp, om in offsets.items()], producer_id, producer_epoch)
        self._append(self.topic_partition_for(group_id), data, callback)

    def validate_offset_metadata_length(self, metadata: str | None) -> bool:
        return metadata is None or len(metadata.encode()) <= self.config.max_metadata_size

    # -- reads ----------------------------------------------------------------------------------------

    def get_offsets(self, group_id: str, require_stable: bool,
                    partitions: list[TopicPartition] | None) -> dict[TopicPartition, OffsetFetchPartition]:
        group = self._groups.get(group_id)
        if group is None:
            return {tp: OffsetFetchPartition(INVALID_OFFSET, -1, "", 0) for tp in partitions or []}
        with group.lock:
            if group.is_state(GroupState.DEAD):
                return {tp: OffsetFetchPartition(INVALID_OFFSET, -1, "", 0) for tp in partitions or []}
            wanted = partitions if partitions is not None else list(group.offsets)
            out = {}
            for tp in wanted:
                if require_stable and group.has_pending_offset_commits_for(tp):
                    out[tp] = OffsetFetchPartition(INVALID_OFFSET, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT)
                    continue
                om = group.offset(tp)
                if om is None:
                    out[tp] = OffsetFetchPartition(INVALID_OFFSET, -1, "", 0)
                else:
                    out[tp] = OffsetFetchPartition(om.offset, om.leader_epoch, om.metadata, 0)
            return out

    # -- deletes and expiration -----------------------------------------------------------------------

    def cleanup_group_metadata(self, groups: Iterable[GroupMetadata],
                               selector: Callable[[GroupMetadata], dict[TopicPartition, OffsetAndMetadata]]) -> int:
        """Remove the offsets `selector` picks from each group, drop groups left Empty without offsets
        (Dead), and write the tombstones. Returns how many offsets were removed."""
        removed_total = 0
        by_partition: dict[TopicPartition, list[tuple[bytes, None]]] = {}
        for group in groups:
            group_id = group.group_id
            with group.lock:
                removed = selector(group)
                generation = group.generation_id
                if group.is_state(GroupState.EMPTY) and not group.has_offsets():
                    log.info("Group %s transitioned to Dead in generation %d", group_id, generation)
                    group.transition_to(GroupState.DEAD)
                is_dead = group.is_state(GroupState.DEAD)
            tombstones: list[tuple[bytes, None]] = [(records.offset_commit_key(group_id, tp), None) for tp in removed]
            removed_total += len(removed)
            # Groups that only stored offsets (generation 0) never wrote a group record to delete.
            if is_dead and self.remove_group(group) and generation > 0:
                tombstones.append((records.group_metadata_key(group_id), None))
            if tombstones:
                by_partition.setdefault(self.topic_partition_for(group_id), []).extend(tombstones)
        for tp, entries in by_partition.items():
            partition = self.replica_manager.get_partition(tp)
            if partition is None or not partition.is_leader:
                continue

            def logged(error: int, _offset: int, tp: TopicPartition = tp, n: int = len(entries)) -> None:
                if error:
                    log.warning("Failed to write %d tombstones to %s: %s", n, tp, ErrorCode(error).name)

            self._append(tp, self._build(entries), logged, required_acks=1)
        return removed_total

    def cleanup_expired_offsets(self) -> int:
        now = self.time.milliseconds()
        retention = self.config.offsets_retention_ms
        removed = self.cleanup_group_metadata(self.current_groups(),
                                              lambda g: g.remove_expired_offsets(now, retention))
        if removed:
            log.info("Removed %d expired offsets", removed)
        return removed

    # -- loading --------------------------------------------------------------------------------------

    def schedule_load_group_and_offsets(self, partition: int, epoch: int,
                                        on_group_loaded: Callable[[GroupMetadata], None]) -> None:
        with self._lock:
            current = self._epochs.get(partition)
            if current is not None and current > epoch:
                return
            self._epochs[partition] = epoch
            # Already loaded (or loading) under this leadership: a new epoch alone needs no reload.
            if partition in self._loading or partition in self._owned:
                return
            self._loading.add(partition)
            token = self._load_tokens[partition] = object()
        log.info("Scheduling loading of offsets and group metadata from %s-%d for epoch %d",
                 GROUP_METADATA_TOPIC_NAME, partition, epoch)
        self._load_executor(lambda: self._load_partition(partition, epoch, token, on_group_loaded))

    def _load_partition(self, partition: int, epoch: int, token: object,
                        on_group_loaded: Callable[[GroupMetadata], None]) -> None:
        start = self.time.hi_res_clock_ms()
        tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, partition)
        try:
            loaded_groups, loaded_offsets = self._read_partition(tp)
        except Exception:
            log.exception("Error loading offsets from %s", tp)
            with self._lock:
                if self._load_tokens.get(partition) is token:
                    self._loading.discard(partition)
            return
        with self._lock:
            if self._load_tokens.get(partition) is not token or self.shutting_down:
                return
        for group_id, group in loaded_groups.items():
            self._load_group(group, loaded_offsets.pop(group_id, {}), on_group_loaded, partition, token)
        for group_id, offsets in loaded_offsets.items():
            self._load_group(GroupMetadata(group_id, GroupState.EMPTY, self.time), offsets, on_group_loaded,
                             partition, token)
        with self._lock:
            if self._load_tokens.get(partition) is token:
                self._owned.add(partition)
                self._loading.discard(partition)
        log.info("Finished loading offsets and group metadata from %s in %d milliseconds for epoch %d "
                 "(%d groups, %d with offsets only)", tp, self.time.hi_res_clock_ms() - start, epoch,
                 len(loaded_groups), len(loaded_offsets))

    def _read_partition(self, tp: TopicPartition) -> tuple[dict[str, GroupMetadata],
                                                           dict[str, dict[TopicPartition, CommitRecordMetadataAndOffset]]]:
        partition = self.replica_manager.get_partition(tp)
        local_log = partition.log if partition is not None else None
        offsets: dict[tuple[str, TopicPartition], CommitRecordMetadataAndOffset] = {}
        # Transactional offset commits wait for their producer's COMMIT / ABORT marker.
        pending_txn: dict[int, dict[tuple[str, TopicPartition], CommitRecordMetadataAndOffset]] = {}
        groups: dict[str, GroupMetadata] = {}
        if local_log is None:
            return {}, {}
        position = local_log.log_start_offset
        end = local_log.log_end_offset
        while position < end and not self.shutting_down:
            info = local_log.read(position, self.config.load_buffer_size, max_offset=None, min_one_message=True)
            if info.records is None or info.records.length == 0:
                break
            read_any = False
            for batch in MemoryRecords(info.records.read_bytes()).batches():
                read_any = True
                position = batch.next_offset
                if batch.is_control_batch:
                    self._replay_marker(batch, pending_txn, offsets)
                    continue
                target = pending_txn.setdefault(batch.producer_id, {}) if batch.is_transactional else offsets
                for rec in batch.records():
                    self._replay(rec.key, rec.value, batch.base_offset, target, groups)
            if not read_any:
                break
        by_group: dict[str, dict[TopicPartition, CommitRecordMetadataAndOffset]] = {}
        for (group_id, topic_partition), committed in offsets.items():
            by_group.setdefault(group_id, {})[topic_partition] = committed
        for producer_id, pending in pending_txn.items():
            for (group_id, topic_partition), committed in pending.items():
                group = groups.get(group_id)
                if group is None:
                    group = groups[group_id] = GroupMetadata(group_id, GroupState.EMPTY, self.time)
                group.pending_transactional_offset_commits.setdefault(producer_id, {})[topic_partition] = committed
        return groups, by_group

    @staticmethod
    def _replay_marker(batch: Any, pending_txn: dict[int, dict[tuple[str, TopicPartition], CommitRecordMetadataAndOffset]],
                       offsets: dict[tuple[str, TopicPartition], CommitRecordMetadataAndOffset]) -> None:
        recs = batch.records()
        pending = pending_txn.pop(batch.producer_id, None)
        if not recs or pending is None:
            return
        if parse_control_type(recs[0].key) == ControlRecordType.COMMIT:
            for key, committed in pending.items():
                current = offsets.get(key)
                if current is None or current.older_than(committed):
                    offsets[key] = committed

    def _replay(self, key: Any, value: Any, base_offset: int,
                offsets: dict[tuple[str, TopicPartition], CommitRecordMetadataAndOffset],
                groups: dict[str, GroupMetadata]) -> None:
        try:
            k = records.read_key(key)
            if isinstance(k, records.OffsetKey):
                if value is None:
                    offsets.pop((k.group, k.topic_partition), None)
                else:
                    offsets[(k.group, k.topic_partition)] = CommitRecordMetadataAndOffset(
                        base_offset, records.read_offset_value(value))
            elif isinstance(k, records.GroupKey):
                if value is None:
                    groups.pop(k.group, None)
                else:
                    groups[k.group] = records.read_group_value(k.group, value, self.time)
        except (records.UnknownRecordError, ValueError) as e:
            log.warning("Skipping an unreadable __consumer_offsets record at batch %d: %s", base_offset, e)

    def _load_group(self, group: GroupMetadata, offsets: dict[TopicPartition, CommitRecordMetadataAndOffset],
                    on_group_loaded: Callable[[GroupMetadata], None], partition: int, token: object) -> None:
        group.initialize_offsets(offsets)
        with self._lock:
            # Checked with the cache lock held: a resignation (which drops the token) cannot interleave.
            if self._load_tokens.get(partition) is not token:
                return
            current = self._groups.setdefault(group.group_id, group)
        if current is not group:
            # A group created meanwhile (e.g. by a commit) keeps its state; the loaded offsets still count.
            with current.lock:
                for tp, committed in offsets.items():
                    current.offsets.setdefault(tp, committed)
            return
        on_group_loaded(group)

    def remove_groups_for_partition(self, partition: int, epoch: int | None,
                                    on_group_unloaded: Callable[[GroupMetadata], None]) -> None:
        with self._lock:
            current = self._epochs.get(partition)
            if epoch is not None and current is not None and current > epoch:
                return
            if epoch is not None:
                self._epochs[partition] = epoch
            was_known = partition in self._owned or partition in self._loading
            self._load_tokens.pop(partition, None)
            self._owned.discard(partition)
            self._loading.discard(partition)
            count = self.partition_count()
            unloaded = [g for gid, g in self._groups.items() if partition_for(gid, count) == partition]
            for g in unloaded:
                del self._groups[g.group_id]
        for group in unloaded:
            on_group_unloaded(group)
        if was_known or unloaded:
            log.info("Finished unloading %s-%d for coordinator epoch %s: removed %d cached groups",
                     GROUP_METADATA_TOPIC_NAME, partition, epoch, len(unloaded))
