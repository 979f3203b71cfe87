"""LogManager: every partition log under `log.dirs`, plus each log dir's checkpoints and metadata files.

Per log dir (record-format.md section 10): `recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`,
`replication-offset-checkpoint` (HWs handed in by the replica manager), `meta.properties`, the
`.kafka_cleanshutdown` marker (written at shutdown, removed at startup) and a `.lock` file held with a
POSIX lock while the broker runs. Partition dirs are `<topic>-<partition>`; a deleted partition is renamed
`<topic>-<partition>.<32-hex uuid>-delete` and removed after file.delete.delay.ms; `-future` and `-stray`
dirs are left alone. Startup after an unclean shutdown recovers segments past each log's recovery point.
Retention (cleanup_logs) and flushing (flush_dirty_logs) are driven by the server calling in with the time.

Thread-safety: one lock guards the partition map and the per-dir log counts, held only for map updates;
creating or deleting one partition's log also holds that partition's stripe of `_creation_locks`, so a
partition is never created twice or deleted while being created, while different partitions' logs are
created (files written and fsynced) in parallel. Each Log has its own lock.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.checkpoint_file import (
    LOG_START_OFFSET_CHECKPOINT_FILE,
    RECOVERY_POINT_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
    OffsetCheckpointFile,
    uuid_from_kafka_string,
)
from kafkapy.storage.errors import (
    InconsistentClusterIdError,
    InconsistentTopicIdError,
    KafkaStorageError,
)
from kafkapy.storage.log import Log
from kafkapy.storage.log_cleaner import CleanerConfig, LogCleaner
from kafkapy.storage.log_config import LogConfig
from kafkapy.storage.log_retention import delete_old_segments
from kafkapy.storage.meta_properties import (
    CLEAN_SHUTDOWN_FILE,
    MetaProperties,
    generate_directory_id,
    read_meta_properties,
    write_clean_shutdown_file,
    write_meta_properties,
)

__all__ = ["LogManager", "delete_dir_name", "LOCK_FILE", "DELETE_DIR_SUFFIX", "FUTURE_DIR_SUFFIX", "STRAY_DIR_SUFFIX"]

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"

TopicIdLike = uuid.UUID | bytes | str
_CREATION_LOCK_STRIPES = 64


def delete_dir_name(tp: TopicPartition) -> str:
    """`<topic>-<partition>.<uuid hex>-delete`, the topic cut so the name stays within 255 characters."""
    suffix = f"-{tp.partition}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"
    return tp.topic[: max(0, min(len(tp.topic), 255 - len(suffix)))] + suffix


def _to_uuid(topic_id: TopicIdLike | None) -> uuid.UUID | None:
    if topic_id is None or isinstance(topic_id, uuid.UUID):
        return topic_id
    if isinstance(topic_id, (bytes, bytearray)):
        return uuid.UUID(bytes=bytes(topic_id))
    return uuid.UUID(topic_id) if len(topic_id) == 36 else uuid_from_kafka_string(topic_id)


class LogManager:
    def __init__(self, log_dirs: list[str], broker_defaults: Mapping[str, Any] | None = None,
                 time: Time = SYSTEM, topic_configs: Callable[[str], Mapping[str, Any]] | None = None) -> None:
        """`topic_configs(topic)` returns a topic's config overrides (used when loading logs at startup)."""
        self.log_dirs = [os.path.abspath(d) for d in log_dirs]
        if len(set(self.log_dirs)) != len(self.log_dirs):
            raise KafkaStorageError(f"Duplicate log directory found: {', '.join(log_dirs)}")
        self.broker_defaults = dict(broker_defaults or {})
        self.default_config = LogConfig.from_props({}, self.broker_defaults)
        self.time = time
        self._topic_configs = topic_configs
        self._logs: dict[TopicPartition, Log] = {}
        self._lock = threading.RLock()
        # Logs per log dir, kept with the map: choosing a dir for a new log costs O(log dirs), not O(logs).
        self._dir_counts: dict[str, int] = dict.fromkeys(self.log_dirs, 0)
        self._creation_locks = [threading.Lock() for _ in range(_CREATION_LOCK_STRIPES)]
        self._logs_to_delete: list[tuple[int, Log]] = []
        self._dir_lock_fds: dict[str, int] = {}
        self.had_clean_shutdown: dict[str, bool] = {}
        self._started = False
        self.cleaner: LogCleaner | None = None

    # --- startup ------------------------------------------------------------------------------------

    def startup(self) -> None:
        """Create/lock log dirs and load every partition log in them (recovering after an unclean stop)."""
        with self._lock:
            for dir_ in self.log_dirs:
                os.makedirs(dir_, exist_ok=True)
                self._lock_dir(dir_)
            for dir_ in self.log_dirs:
                self._load_logs(dir_)
            self._started = True

    def start_log_cleaner(self, config: CleanerConfig | None = None, threads: bool = True) -> LogCleaner:
        """Create the LogCleaner over these logs (Kafka's LogManager owns it); start its threads if asked."""
        cfg = config or CleanerConfig.from_props(self.broker_defaults)
        self.cleaner = LogCleaner(cfg, self.log_dirs, self.all_logs, self.time,
                                  is_current=lambda lg: self._logs.get(lg.topic_partition) is lg)
        if threads and cfg.enable_cleaner:
            self.cleaner.startup()
        return self.cleaner

    def _lock_dir(self, dir_: str) -> None:
        fd = os.open(os.path.join(dir_, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise KafkaStorageError(f"Failed to acquire lock on file .lock in {dir_}. A Kafka instance in another "
                                    "process or thread is using this directory.") from None
        self._dir_lock_fds[dir_] = fd

    def _topic_config(self, topic: str) -> LogConfig:
        overrides = self._topic_configs(topic) if self._topic_configs is not None else {}
        return LogConfig.from_props(overrides or {}, self.broker_defaults)

    def _read_checkpoint(self, dir_: str, name: str) -> dict[TopicPartition, int]:
        try:
            return OffsetCheckpointFile(os.path.join(dir_, name)).read()
        except KafkaStorageError as exc:
            log.warning("Error reading %s of %s, resetting to 0: %s", name, dir_, exc)
            return {}

    def _load_logs(self, dir_: str) -> None:
        clean = os.path.exists(os.path.join(dir_, CLEAN_SHUTDOWN_FILE))
        self.had_clean_shutdown[dir_] = clean
        recovery_points = self._read_checkpoint(dir_, RECOVERY_POINT_CHECKPOINT_FILE)
        start_offsets = self._read_checkpoint(dir_, LOG_START_OFFSET_CHECKPOINT_FILE)
        for name in sorted(os.listdir(dir_)):
            path = os.path.join(dir_, name)
            if not os.path.isdir(path) or name.startswith("."):
                continue
            if name.endswith(DELETE_DIR_SUFFIX):
                shutil.rmtree(path, ignore_errors=True)  # finish a delete interrupted by a stop
                continue
            if name.endswith(FUTURE_DIR_SUFFIX) or name.endswith(STRAY_DIR_SUFFIX):
                log.info("Leaving %s alone (future/stray replica directory)", path)
                continue
            try:
                tp = TopicPartition.parse(name)
            except ValueError:
                log.warning("Ignoring %s: not in the form topic-partition", path)
                continue
            loaded = Log.open(path, self._topic_config(tp.topic), self.time, start_offsets.get(tp, 0),
                              recovery_points.get(tp, 0), clean)
            if tp in self._logs:
                raise KafkaStorageError(f"Duplicate log directories for {tp} are found in both "
                                        f"{self._logs[tp].dir} and {path}.")
            self._logs[tp] = loaded
            self._dir_counts[dir_] += 1
        try:
            os.unlink(os.path.join(dir_, CLEAN_SHUTDOWN_FILE))
        except FileNotFoundError:
            pass

    # --- meta.properties ----------------------------------------------------------------------------

    def ensure_meta_properties(self, cluster_id: str, node_id: int, kraft: bool = True) -> dict[str, MetaProperties]:
        """Check or write each dir's meta.properties (version 1 + node.id in KRaft mode, version 0 + broker.id
        in ZooKeeper mode), giving every dir a distinct directory.id. Raises on a cluster or node id mismatch."""
        result: dict[str, MetaProperties] = {}
        seen_ids: set[str] = set()
        for dir_ in self.log_dirs:
            os.makedirs(dir_, exist_ok=True)
            existing = read_meta_properties(dir_)
            if existing is not None:
                if existing.cluster_id is not None and existing.cluster_id != cluster_id:
                    raise InconsistentClusterIdError(
                        f"The Cluster ID {cluster_id} doesn't match stored clusterId Some({existing.cluster_id}) "
                        f"in meta.properties. The broker is trying to join the wrong cluster. Configured "
                        f"zookeeper.connect may be wrong.")
                if existing.node_id is not None and existing.node_id != node_id:
                    raise KafkaStorageError(f"Stored node id {existing.node_id} doesn't match previous node id "
                                            f"{node_id} in meta.properties in {dir_}.")
            directory_id = existing.directory_id if existing and existing.directory_id else None
            if directory_id is None or directory_id in seen_ids:
                directory_id = generate_directory_id()
            seen_ids.add(directory_id)
            version = existing.version if existing is not None else (1 if kraft else 0)
            meta = MetaProperties(version, cluster_id, node_id, directory_id)
            if meta != existing:
                write_meta_properties(dir_, meta)
            result[dir_] = meta
        return result

    def directory_id(self, dir_: str) -> str | None:
        meta = read_meta_properties(os.path.abspath(dir_))
        return meta.directory_id if meta else None

    # --- partition logs -------------------------------------------------------------------------------

    def get_log(self, tp: TopicPartition) -> Log | None:
        return self._logs.get(tp)

    def all_logs(self) -> list[Log]:
        return list(self._logs.values())

    def logs_by_partition(self) -> dict[TopicPartition, Log]:
        return dict(self._logs)

    def log_dir_of(self, tp: TopicPartition) -> str | None:
        found = self._logs.get(tp)
        return os.path.dirname(found.dir) if found else None

    def _next_log_dir(self) -> str:
        """The log dir holding the fewest partitions (the first such). Caller holds `_lock`."""
        counts = self._dir_counts
        return min(self.log_dirs, key=lambda d: counts[d])  # min keeps the first of equals

    def _creation_lock(self, tp: TopicPartition) -> threading.Lock:
        return self._creation_locks[hash(tp) % _CREATION_LOCK_STRIPES]

    def get_or_create_log(self, tp: TopicPartition, log_config: LogConfig | None = None,
                          topic_id: TopicIdLike | None = None) -> Log:
        """The partition's log, created in the log dir holding the fewest partitions if it does not exist."""
        tid = _to_uuid(topic_id)
        with self._creation_lock(tp):
            return self._get_or_create_log(tp, log_config, tid)

    def _get_or_create_log(self, tp: TopicPartition, log_config: LogConfig | None, tid: uuid.UUID | None) -> Log:
        with self._lock:
            existing = self._logs.get(tp)
            if existing is not None:
                if tid is not None:
                    if existing.topic_id is not None and existing.topic_id != tid:
                        raise InconsistentTopicIdError(
                            f"Tried to assign topic ID {tid} to log for topic partition {tp}, but log already "
                            f"contained topic ID {existing.topic_id}")
                    if existing.topic_id is None:
                        from kafkapy.storage.checkpoint_file import (
                            PARTITION_METADATA_FILE,
                            PartitionMetadataFile,
                        )

                        PartitionMetadataFile(os.path.join(existing.dir, PARTITION_METADATA_FILE)).write(tid)
                        existing.topic_id = tid
                return existing
            parent = self._next_log_dir()
            self._dir_counts[parent] += 1  # counted now, so concurrent creations spread over the dirs
        try:
            config = log_config if log_config is not None else self._topic_config(tp.topic)
            created = Log.open(os.path.join(parent, str(tp)), config, self.time, 0, 0, True, tid)
        except BaseException:
            with self._lock:
                self._dir_counts[parent] -= 1
            raise
        with self._lock:
            self._logs[tp] = created
        return created

    def update_broker_defaults(self, broker_defaults: Mapping[str, Any]) -> None:
        """New broker-level defaults (dynamic broker configs): every open log without a topic override for
        a changed key picks the new value up at once, as Kafka's DynamicLogConfig does."""
        with self._lock:
            self.broker_defaults = dict(broker_defaults)
            self.default_config = LogConfig.from_props({}, self.broker_defaults)
            logs = list(self._logs.items())
        for tp, lg in logs:
            lg.update_config(self._topic_config(tp.topic))
        if self.cleaner is not None:
            self.cleaner.reconfigure(CleanerConfig.from_props(self.broker_defaults))

    def update_topic_config(self, topic: str, overrides: Mapping[str, Any]) -> None:
        """Apply new topic overrides (AlterConfigs) to the topic's open logs."""
        config = LogConfig.from_props(overrides, self.broker_defaults)
        for tp, lg in list(self._logs.items()):
            if tp.topic == topic:
                lg.update_config(config)

    def async_delete(self, tp: TopicPartition) -> Log | None:
        """Forget the partition, rename its dir `...-delete`, remove it after file.delete.delay.ms."""
        with self._creation_lock(tp), self._lock:
            removed = self._logs.pop(tp, None)
            if removed is None:
                return None
            parent = os.path.dirname(removed.dir)
            if parent in self._dir_counts:
                self._dir_counts[parent] -= 1
            if self.cleaner is not None:
                self.cleaner.abort_cleaning(tp, parent)
            with removed.lock:
                # Not closed here: a fetch response may still be sending from its files.
                removed.rename_dir(delete_dir_name(tp))
            self._checkpoint_dir(parent)
            delay = self.default_config.file_delete_delay_ms
            if delay <= 0:
                removed.delete()
            else:
                self._logs_to_delete.append((self.time.milliseconds() + delay, removed))
            return removed

    # --- periodic work --------------------------------------------------------------------------------

    def remove_expired_producers(self, expiration_ms: int, now_ms: int | None = None) -> int:
        """Kafka's PeriodicProducerExpirationCheck over every log. Returns producers removed."""
        now = self.time.milliseconds() if now_ms is None else now_ms
        return sum(lg.remove_expired_producers(now, expiration_ms) for lg in self.all_logs())

    def cleanup_logs(self, now_ms: int | None = None) -> int:
        """Retention on every log, and removal of deleted partitions whose delay passed. Returns segments deleted."""
        now = self.time.milliseconds() if now_ms is None else now_ms
        total = 0
        for lg in self.all_logs():
            total += delete_old_segments(lg, now)
        with self._lock:
            due = [(t, lg) for t, lg in self._logs_to_delete if t <= now]
            self._logs_to_delete = [(t, lg) for t, lg in self._logs_to_delete if t > now]
        for _, lg in due:
            lg.delete()
        return total

    def flush_dirty_logs(self, now_ms: int | None = None) -> None:
        """Flush rolled segments, and logs whose last flush is older than their flush.ms."""
        now = self.time.milliseconds() if now_ms is None else now_ms
        for lg in self.all_logs():
            lg.flush_pending()
            if now - lg.last_flush_time >= lg.config.flush_ms:
                lg.flush()

    # --- checkpoints ----------------------------------------------------------------------------------

    def _logs_in_dir(self, dir_: str) -> dict[TopicPartition, Log]:
        return {tp: lg for tp, lg in self._logs.items() if os.path.dirname(lg.dir) == dir_}

    def _checkpoint_dir(self, dir_: str) -> None:
        logs = self._logs_in_dir(dir_)
        OffsetCheckpointFile(os.path.join(dir_, RECOVERY_POINT_CHECKPOINT_FILE)).write(
            {tp: lg.recovery_point for tp, lg in logs.items()})
        OffsetCheckpointFile(os.path.join(dir_, LOG_START_OFFSET_CHECKPOINT_FILE)).write(
            {tp: lg.log_start_offset for tp, lg in logs.items()
             if lg.log_start_offset > lg.segments[0].base_offset})

    def checkpoint_all(self) -> None:
        """Write recovery-point-offset-checkpoint and log-start-offset-checkpoint in every dir."""
        with self._lock:
            for dir_ in self.log_dirs:
                self._checkpoint_dir(dir_)

    def checkpoint_high_watermarks(self, high_watermarks: Mapping[TopicPartition, int]) -> None:
        """Write replication-offset-checkpoint in each dir with the HWs of the partitions stored there."""
        with self._lock:
            by_dir: dict[str, dict[TopicPartition, int]] = {d: {} for d in self.log_dirs}
            for tp, hw in high_watermarks.items():
                lg = self._logs.get(tp)
                if lg is not None and os.path.dirname(lg.dir) in by_dir:
                    by_dir[os.path.dirname(lg.dir)][tp] = hw
            for dir_, hws in by_dir.items():
                OffsetCheckpointFile(os.path.join(dir_, REPLICATION_OFFSET_CHECKPOINT_FILE)).write(hws)

    def read_high_watermarks(self) -> dict[TopicPartition, int]:
        result: dict[TopicPartition, int] = {}
        for dir_ in self.log_dirs:
            result.update(self._read_checkpoint(dir_, REPLICATION_OFFSET_CHECKPOINT_FILE))
        return result

    # --- describe -------------------------------------------------------------------------------------

    def describe_log_dirs(self) -> dict[str, list[tuple[TopicPartition, int, int, bool]]]:
        """Per log dir: (partition, size in bytes, offset lag 0, is_future False), as DescribeLogDirs reports."""
        result: dict[str, list[tuple[TopicPartition, int, int, bool]]] = {d: [] for d in self.log_dirs}
        for tp, lg in sorted(self._logs.items()):
            parent = os.path.dirname(lg.dir)
            if parent in result:
                result[parent].append((tp, lg.size_in_bytes, 0, False))
        return result

    @staticmethod
    def log_dir_usage(dir_: str) -> tuple[int, int]:
        """(total bytes, usable bytes) of the file system holding `dir_`."""
        usage = shutil.disk_usage(dir_)
        return usage.total, usage.free

    # --- shutdown -------------------------------------------------------------------------------------

    def shutdown(self, broker_epoch: int = -1) -> None:
        """Flush and close every log, write checkpoints and the clean-shutdown marker, release the dir locks."""
        if self.cleaner is not None:
            self.cleaner.shutdown()
        with self._lock:
            for lg in self._logs.values():
                lg.flush()
                lg.close()
            for dir_ in self.log_dirs:
                if dir_ in self._dir_lock_fds:
                    self._checkpoint_dir(dir_)
            for _, lg in self._logs_to_delete:
                lg.delete()
            self._logs_to_delete.clear()
            for dir_ in self.log_dirs:
                if dir_ in self._dir_lock_fds:
                    write_clean_shutdown_file(dir_, broker_epoch)
            for fd in self._dir_lock_fds.values():
                os.close(fd)
            self._dir_lock_fds.clear()
            self._logs.clear()
            self._dir_counts = dict.fromkeys(self.log_dirs, 0)
            self._started = False
