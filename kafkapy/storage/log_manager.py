"""LogManager: every partition log under `log.dirs`, plus each log dir's checkpoints and metadata files.

Per log dir (record-format.md section 10): `recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`,
`replication-offset-checkpoint` (HWs handed in by the replica manager), `meta.properties`, the
`.kafka_cleanshutdown` marker (written at shutdown, removed at startup) and a `.lock` file held with a
POSIX lock while the broker runs. Partition dirs are `<topic>-<partition>`; a deleted partition is renamed
`<topic>-<partition>.<32-hex uuid>-delete` and removed after file.delete.delay.ms; `-stray` dirs are left
alone. Startup after an unclean shutdown recovers segments past each log's recovery point; a dir's logs load
on num.recovery.threads.per.data.dir threads (Kafka's default 1), each topic's LogConfig built once.
Retention (cleanup_logs) and flushing (flush_dirty_logs) are driven by the server calling in with the time.

JBOD (Kafka's LogManager): a replica moving to another log dir (AlterReplicaLogDirs) gets a future log in
`<topic>-<partition>.<32-hex uuid>-future` there (`get_or_create_future_log`), filled by the broker's
ReplicaAlterLogDirsThread; `replace_current_with_future_log` renames the current dir `...-delete`, the future
one `<topic>-<partition>`, and swaps them in the map. A future dir found at startup is loaded as the partition's
future log when its current log is in another dir (the move resumes once the partition is hosted), else left
alone. A log dir whose I/O fails goes offline (KIP-112:
`mark_log_dir_offline`): its logs are dropped and closed, nothing is written to it again, partitions it held
cannot be created elsewhere until a restart, and `on_log_dir_failure(dir)` tells the broker. When the failing dir
is the last one online, the broker halts with exit status 1 (Kafka's "Shutdown broker because all log dirs in ...
have failed", common/exit.halt).

Thread-safety: one lock guards the partition map and the per-dir log counts, held only for map updates;
creating or deleting one partition's log also holds that partition's stripe of `_creation_locks`, so a
partition is never created twice or deleted while being created, while different partitions' logs are
created (files written and fsynced) in parallel. Each Log has its own lock. What a log defers (a new log's
partition.metadata, a new leadership's leader-epoch-checkpoint entry) is written by one background thread
(`flush-metadata-file`) in batches made durable together, by one batch at shutdown, or by the log's first append.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kafkapy.common.atomic_write_batch import PendingReplace, atomic_write_batch
from kafkapy.common.descriptor_reserve import is_descriptor_exhaustion
from kafkapy.common.errors import LogDirNotFoundError, ReplicaNotAvailableError
from kafkapy.common.exit import halt
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
from kafkapy.storage.log import Log, parse_log_dir_name
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

__all__ = ["LogManager", "delete_dir_name", "is_log_dir_failure", "future_dir_name", "LOCK_FILE", "DELETE_DIR_SUFFIX",
           "FUTURE_DIR_SUFFIX", "STRAY_DIR_SUFFIX"]

log = logging.getLogger("kafka.log.LogManager")

LOCK_FILE = ".lock"
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"

TopicIdLike = uuid.UUID | bytes | str
_CREATION_LOCK_STRIPES = 64


def delete_dir_name(tp: TopicPartition, dir_suffix: str = DELETE_DIR_SUFFIX) -> str:
    """`<topic>-<partition>.<uuid hex>-delete`, the topic cut so the name stays within 255 characters."""
    suffix = f"-{tp.partition}.{uuid.uuid4().hex}{dir_suffix}"
    return tp.topic[: max(0, min(len(tp.topic), 255 - len(suffix)))] + suffix


def future_dir_name(tp: TopicPartition) -> str:
    """`<topic>-<partition>.<uuid hex>-future` (Kafka's LocalLog.logFutureDirName)."""
    return delete_dir_name(tp, FUTURE_DIR_SUFFIX)


def is_log_dir_failure(e: BaseException) -> bool:
    """An I/O error that takes a log dir offline (Kafka: any IOException). Running out of file descriptors is
    the process's limit, not the disk's: it fails the one operation (the partition goes offline), not the dir."""
    return isinstance(e, OSError) and not is_descriptor_exhaustion(e)


def _to_uuid(topic_id: TopicIdLike | None) -> uuid.UUID | None:
    if topic_id is None or isinstance(topic_id, uuid.UUID):
        return topic_id
    if isinstance(topic_id, (bytes, bytearray)):
        return uuid.UUID(bytes=bytes(topic_id))
    return uuid.UUID(topic_id) if len(topic_id) == 36 else uuid_from_kafka_string(topic_id)


_CONFIG_CACHE_MAX = 4096  # distinct topic configs kept; more are rebuilt per log


class LogManager:
    def __init__(self, log_dirs: list[str], broker_defaults: Mapping[str, Any] | None = None,
                 time: Time = SYSTEM, topic_configs: Callable[[str], Mapping[str, Any]] | None = None) -> None:
        """`topic_configs(topic)` returns a topic's config overrides (used when loading logs at startup)."""
        self.log_dirs = [os.path.abspath(d) for d in log_dirs]
        if len(set(self.log_dirs)) != len(self.log_dirs):
            raise KafkaStorageError(f"Duplicate log directory found: {', '.join(log_dirs)}")
        self.broker_defaults = dict(broker_defaults or {})
        # LogConfigs by (broker defaults version, topic overrides): shared by the logs they configure.
        self._defaults_version = 0
        self._config_cache: dict[tuple[int, frozenset[tuple[str, Any]]], LogConfig] = {}
        self.default_config = LogConfig.from_props({}, self.broker_defaults)
        self.time = time
        self._topic_configs = topic_configs
        self._logs: dict[TopicPartition, Log] = {}
        self._lock = threading.RLock()
        # Logs per log dir, kept with the map: choosing a dir for a new log costs O(log dirs), not O(logs).
        self._dir_counts: dict[str, int] = dict.fromkeys(self.log_dirs, 0)
        self._creation_locks = [threading.Lock() for _ in range(_CREATION_LOCK_STRIPES)]
        self._metadata_flusher: ThreadPoolExecutor | None = None
        self._deferred_writes: dict[int, Log] = {}  # logs with deferred files, by id, for the flusher's next batch
        self._deferred_drain_scheduled = False
        self._logs_to_delete: list[tuple[int, Log]] = []
        self._dir_lock_fds: dict[str, int] = {}
        self.had_clean_shutdown: dict[str, bool] = {}
        self._started = False
        self.cleaner: LogCleaner | None = None
        self._future_logs: dict[TopicPartition, Log] = {}
        self._preferred_dirs: dict[TopicPartition, str] = {}  # AlterReplicaLogDirs before the log exists
        self._offline_dirs: frozenset[str] = frozenset()
        self._offline_partitions: dict[TopicPartition, str] = {}  # partition -> the offline dir it was in
        # Called (outside the lock) once per log dir that fails: the broker's LogDirFailureHandler.
        self.on_log_dir_failure: Callable[[str], None] | None = None

    # --- startup ------------------------------------------------------------------------------------

    def startup(self) -> None:
        """Create/lock log dirs and load every partition log in them (recovering after an unclean stop)."""
        with self._lock:
            for dir_ in self.log_dirs:
                os.makedirs(dir_, exist_ok=True)
                self._lock_dir(dir_)
            futures: list[tuple[str, str]] = []
            for dir_ in self.log_dirs:
                futures += self._load_logs(dir_)
            for dir_, name in futures:
                self._load_future_log(dir_, name)
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
        """The topic's LogConfig from its current overrides; one LogConfig per distinct overrides and broker
        defaults is built and shared (creating a topic's partitions builds it once, not once per partition)."""
        overrides = (self._topic_configs(topic) if self._topic_configs is not None else None) or {}
        version = self._defaults_version  # read before the defaults: a racing update can only make it newer
        try:
            key = (version, frozenset(overrides.items()))
        except TypeError:  # an unhashable value: nothing to share
            return LogConfig.from_props(overrides, self.broker_defaults)
        config = self._config_cache.get(key)
        if config is None:
            config = LogConfig.from_props(overrides, self.broker_defaults)
            if len(self._config_cache) >= _CONFIG_CACHE_MAX:
                self._config_cache.clear()
            self._config_cache[key] = config
        return config

    def _read_checkpoint(self, dir_: str, name: str) -> dict[TopicPartition, int]:
        try:
            return OffsetCheckpointFile(os.path.join(dir_, name)).read()
        except KafkaStorageError as exc:
            log.warning("Error reading %s of %s, resetting to 0: %s", name, dir_, exc)
            return {}

    def _recovery_threads(self) -> int:
        try:
            return max(1, int(self.broker_defaults.get("num.recovery.threads.per.data.dir", 1)))
        except (TypeError, ValueError):
            return 1

    def _load_future_log(self, dir_: str, name: str) -> None:
        """A move interrupted by a stop resumes (Kafka loads `-future` dirs as future logs): the future log is
        registered when the partition's current log is in another dir; otherwise the dir is left alone."""
        path = os.path.join(dir_, name)
        try:
            tp = parse_log_dir_name(name)
        except ValueError:
            tp = None
        current = self._logs.get(tp) if tp is not None else None
        if tp is None or current is None or os.path.dirname(current.dir) == dir_ or tp in self._future_logs:
            log.info("Leaving %s alone (future replica directory without a current log elsewhere)", path)
            return
        self._future_logs[tp] = Log.open(path, current.config, self.time, 0, 0, self.had_clean_shutdown[dir_],
                                         current.topic_id)
        log.info("Loaded the future log of %s in %s: its move resumes", tp, path)

    def _load_logs(self, dir_: str) -> list[tuple[str, str]]:
        """Load the dir's partition logs; returns its `-future` dirs (loaded once every current log is)."""
        clean = os.path.exists(os.path.join(dir_, CLEAN_SHUTDOWN_FILE))
        self.had_clean_shutdown[dir_] = clean
        recovery_points = self._read_checkpoint(dir_, RECOVERY_POINT_CHECKPOINT_FILE)
        start_offsets = self._read_checkpoint(dir_, LOG_START_OFFSET_CHECKPOINT_FILE)
        futures: list[tuple[str, str]] = []
        found: list[tuple[TopicPartition, str]] = []
        with os.scandir(dir_) as it:  # the entries' types come with the listing: no stat per partition
            entries = sorted((e.name, e.path) for e in it if not e.name.startswith(".") and e.is_dir())
        for name, path in entries:
            if name.endswith(DELETE_DIR_SUFFIX):
                shutil.rmtree(path, ignore_errors=True)  # finish a delete interrupted by a stop
                continue
            if name.endswith(FUTURE_DIR_SUFFIX):
                futures.append((dir_, name))
                continue
            if name.endswith(STRAY_DIR_SUFFIX):
                log.info("Leaving %s alone (stray replica directory)", path)
                continue
            try:
                tp = TopicPartition.parse(name)
            except ValueError:
                log.warning("Ignoring %s: not in the form topic-partition", path)
                continue
            found.append((tp, path))
        configs: dict[str, LogConfig] = {}  # one LogConfig per topic, not one per partition
        for tp, _path in found:
            if tp.topic not in configs:
                configs[tp.topic] = self._topic_config(tp.topic)

        def load(item: tuple[TopicPartition, str]) -> Log:
            tp, path = item
            return Log.open(path, configs[tp.topic], self.time, start_offsets.get(tp, 0), recovery_points.get(tp, 0),
                            clean)

        threads = min(self._recovery_threads(), len(found))
        if threads > 1:
            # Kafka's num.recovery.threads.per.data.dir: a dir's logs load on that many threads; opening
            # files and mapping indexes wait on the kernel outside the GIL.
            with ThreadPoolExecutor(threads, thread_name_prefix=f"log-recovery-{dir_}") as pool:
                loaded_logs = list(pool.map(load, found))
        else:
            loaded_logs = [load(item) for item in found]
        for (tp, path), loaded in zip(found, loaded_logs, strict=True):
            if tp in self._logs:
                raise KafkaStorageError(f"Duplicate log directories for {tp} are found in both "
                                        f"{self._logs[tp].dir} and {path}.")
            self._logs[tp] = loaded
            self._dir_counts[dir_] += 1
        try:
            os.unlink(os.path.join(dir_, CLEAN_SHUTDOWN_FILE))
        except FileNotFoundError:
            pass
        return futures

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

    def _next_log_dir(self, tp: TopicPartition) -> str:
        """The dir an AlterReplicaLogDirs chose for it, else the online log dir holding the fewest partitions
        (the first such). Caller holds `_lock`."""
        offline_in = self._offline_partitions.get(tp)
        if offline_in is not None:
            raise KafkaStorageError(f"Can not create log for {tp} because log directory {offline_in} is offline")
        preferred = self._preferred_dirs.pop(tp, None)
        if preferred is not None and preferred not in self._offline_dirs:
            return preferred
        online = [d for d in self.log_dirs if d not in self._offline_dirs]
        if not online:
            raise KafkaStorageError(f"Can not create log for {tp} because all log directories are offline")
        counts = self._dir_counts
        return min(online, key=lambda d: counts[d])  # min keeps the first of equals

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
            parent = self._next_log_dir(tp)
            self._dir_counts[parent] += 1  # counted now, so concurrent creations spread over the dirs
        try:
            config = log_config if log_config is not None else self._topic_config(tp.topic)
            created = Log.open(os.path.join(parent, str(tp)), config, self.time, 0, 0, True, tid)
        except BaseException as e:
            with self._lock:
                self._dir_counts[parent] -= 1
            if is_log_dir_failure(e):
                self.log_dir_failed(parent, e)
                raise KafkaStorageError(f"Error while creating log for {tp} in dir {parent}: {e}") from e
            raise
        with self._lock:
            self._logs[tp] = created
        if created.metadata_file_dirty:
            self.schedule_deferred_writes((created,))
        return created

    def schedule_deferred_writes(self, logs: Iterable[Log]) -> None:
        """Write these logs' deferred files (a new log's partition.metadata, a new leadership's epoch entry) soon,
        on one background thread (Kafka's scheduleOnce "flush-metadata-file"), in batches made durable together
        (common/atomic_write_batch: two barriers per batch, not two fsyncs per file), so neither creating a log
        nor making it a leader waits on their fsyncs; a log's first append, OffsetsForLeaderEpoch answer or
        close writes them first if the thread has not."""
        with self._lock:
            for lg in logs:
                self._deferred_writes[id(lg)] = lg
            if not self._deferred_writes or self._deferred_drain_scheduled:
                return
            if self._metadata_flusher is None:
                self._metadata_flusher = ThreadPoolExecutor(1, thread_name_prefix="flush-metadata-file")
            flusher = self._metadata_flusher
            self._deferred_drain_scheduled = True
        try:
            flusher.submit(self._drain_deferred_writes)
        except RuntimeError:  # shut down meanwhile: shutdown writes them
            pass

    def _drain_deferred_writes(self) -> None:
        with self._lock:
            self._deferred_drain_scheduled = False
            logs = list(self._deferred_writes.values())
            self._deferred_writes.clear()
        self._write_deferred(logs)

    def _write_deferred(self, logs: Iterable[Log]) -> None:
        items: list[tuple[PendingReplace, Log]] = []
        for lg in logs:
            items.extend((item, lg) for item in lg.pending_replaces())
        owners = {id(item): lg for item, lg in items}
        for item, error in atomic_write_batch(item for item, _ in items):
            lg = owners[id(item)]
            live = self._logs.get(lg.topic_partition) is lg
            if live and is_log_dir_failure(error):
                self.log_dir_failed(os.path.dirname(lg.dir), error)
            else:  # a deleted or moved log's files went with it; a live one writes them at its next append
                log.log(logging.WARNING if live else logging.DEBUG, "Could not write %s of %s: %s",
                        os.path.basename(item.path), lg.topic_partition, error)

    def update_broker_defaults(self, broker_defaults: Mapping[str, Any]) -> None:
        """New broker-level defaults (dynamic broker configs): every open log without a topic override for
        a changed key picks the new value up at once, as Kafka's DynamicLogConfig does."""
        with self._lock:
            self.broker_defaults = dict(broker_defaults)
            self._defaults_version += 1
            self._config_cache.clear()
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
        if tp in self._future_logs:
            self.remove_future_log(tp)
        with self._creation_lock(tp), self._lock:
            self._preferred_dirs.pop(tp, None)
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
            self._checkpoint_dir_or_fail(parent)
            delay = self.default_config.file_delete_delay_ms
            if delay <= 0:
                removed.delete()
            else:
                self._logs_to_delete.append((self.time.milliseconds() + delay, removed))
            return removed

    # --- moving a replica to another log dir (Kafka's future replica) --------------------------------------

    def check_log_dir_online(self, dir_: str) -> str:
        """The configured dir's absolute path; LogDirNotFoundError when not configured, KafkaStorageError when
        offline (Kafka's isLogDirOnline checks)."""
        path = os.path.abspath(dir_)
        if path not in self.log_dirs:
            raise LogDirNotFoundError(f"Log dir {path} is not found in the config.")
        if path in self._offline_dirs:
            raise KafkaStorageError(f"Log directory {path} is offline")
        return path

    def maybe_update_preferred_log_dir(self, tp: TopicPartition, dir_: str) -> None:
        """Where the partition's log goes when it is created later (AlterReplicaLogDirs before LeaderAndIsr)."""
        with self._lock:
            if tp not in self._logs:
                self._preferred_dirs[tp] = os.path.abspath(dir_)

    def future_log(self, tp: TopicPartition) -> Log | None:
        return self._future_logs.get(tp)

    def get_or_create_future_log(self, tp: TopicPartition, dir_: str) -> Log | None:
        """Kafka's Partition.maybeCreateFutureReplica: the future log of `tp` in `dir_`, created when the current
        log is elsewhere (None when the current log already is in `dir_`). A future log in another dir is
        removed first (the move's destination changed). Raises when the partition has no log here."""
        dest = self.check_log_dir_online(dir_)
        with self._creation_lock(tp):
            with self._lock:
                current = self._logs.get(tp)
                if current is None:
                    raise ReplicaNotAvailableError(f"Partition {tp} has no local replica")
                existing = self._future_logs.get(tp)
                if existing is not None and os.path.dirname(existing.dir) == dest:
                    return existing
            if existing is not None:
                self.remove_future_log(tp)
            if os.path.dirname(current.dir) == dest:
                return None
            try:
                future = Log.open(os.path.join(dest, future_dir_name(tp)), current.config, self.time, 0, 0, True,
                                  current.topic_id)
            except OSError as e:
                if is_log_dir_failure(e):
                    self.log_dir_failed(dest, e)
                raise KafkaStorageError(f"Error while creating future log for {tp} in dir {dest}: {e}") from e
            with self._lock:
                self._future_logs[tp] = future
            if self.cleaner is not None:
                self.cleaner.abort_cleaning(tp, os.path.dirname(current.dir))
            log.info("Created log for partition %s in %s (future replica of %s)", tp, future.dir, current.dir)
            return future

    def remove_future_log(self, tp: TopicPartition) -> None:
        """Abort a move: delete the future log."""
        with self._lock:
            future = self._future_logs.pop(tp, None)
        if future is not None:
            with future.lock:
                future.close()
                future.delete()

    def replace_current_with_future_log(self, tp: TopicPartition) -> Log:
        """Kafka's replaceCurrentWithFutureLog: the future log becomes the partition's log, the old one is
        deleted. The caller stops appends to both (the partition's lock) and has checked they hold the same
        offsets."""
        with self._creation_lock(tp), self._lock:
            future = self._future_logs.pop(tp)
            current = self._logs[tp]
            old_parent, new_parent = os.path.dirname(current.dir), os.path.dirname(future.dir)
            with current.lock:
                current.rename_dir(delete_dir_name(tp))
            with future.lock:
                future.rename_dir(str(tp))
            self._logs[tp] = future
            self._dir_counts[old_parent] -= 1
            self._dir_counts[new_parent] += 1
            self._logs_to_delete.append((self.time.milliseconds() + self.default_config.file_delete_delay_ms,
                                         current))
        for parent in (old_parent, new_parent):
            self._checkpoint_dir_or_fail(parent)
        log.info("The current replica of %s moved to %s", tp, future.dir)
        return future

    # --- offline log dirs (KIP-112) -------------------------------------------------------------------

    @property
    def offline_dirs(self) -> frozenset[str]:
        return self._offline_dirs

    def is_in_offline_dir(self, tp: TopicPartition) -> bool:
        return tp in self._offline_partitions

    def log_dir_failed(self, dir_: str, error: BaseException) -> None:
        """An I/O error in `dir_` (Kafka's LogDirFailureChannel.maybeAddOfflineLogDir): take it offline once."""
        path = os.path.abspath(dir_)
        if path not in self.log_dirs or path in self._offline_dirs:
            return
        if not is_log_dir_failure(error):
            # Out of descriptors (a checkpoint, a flush, an append at the process's limit): that one operation
            # failed and is answered or retried by its caller; a one-dir broker must not halt for it.
            log.error("Error in log dir %s, not taken offline (out of file descriptors): %s", path, error)
            return
        log.error("Error while writing to log dir %s: %s", path, error)
        if self._offline_dirs | {path} >= set(self.log_dirs):
            # Kafka's LogManager.handleLogDirFailure: a broker without a live log dir cannot serve anything.
            log.critical("Shutdown broker because all log dirs in %s have failed", ", ".join(self.log_dirs))
            halt(1)
            return  # only a test's halt procedure returns
        self.mark_log_dir_offline(path)
        if self.on_log_dir_failure is not None:
            self.on_log_dir_failure(path)

    def mark_log_dir_offline(self, dir_: str) -> list[TopicPartition]:
        """Stop using every log in `dir_` (Kafka's handleLogDirFailure on the LogManager side): the logs and
        future logs there are dropped and closed (their files are left as they are). Returns its partitions."""
        path = os.path.abspath(dir_)
        with self._lock:
            if path in self._offline_dirs:
                return []
            self._offline_dirs = self._offline_dirs | {path}
            gone = {tp: lg for tp, lg in self._logs.items() if os.path.dirname(lg.dir) == path}
            futures = {tp: lg for tp, lg in self._future_logs.items() if os.path.dirname(lg.dir) == path}
            for tp in gone:
                del self._logs[tp]
                self._offline_partitions[tp] = path
            for tp in futures:
                del self._future_logs[tp]
            self._dir_counts[path] = 0
        for tp, lg in list(gone.items()) + list(futures.items()):
            try:  # the disk is failing: the cleaner's checkpoint and closing may fail too
                if self.cleaner is not None:
                    self.cleaner.abort_cleaning(tp, path)
                lg.close()
            except Exception as e:
                log.debug("Closing %s in offline dir %s: %s", tp, path, e)
        fd = self._dir_lock_fds.pop(path, None)
        if fd is not None:
            os.close(fd)
        log.warning("Stopping serving logs in dir %s: %s", path, ",".join(str(tp) for tp in sorted(gone)))
        return sorted(gone)

    def _checkpoint_dir_or_fail(self, dir_: str) -> None:
        if dir_ in self._offline_dirs:
            return
        try:
            self._checkpoint_dir(dir_)
        except OSError as e:
            self.log_dir_failed(dir_, e)

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
            try:
                total += delete_old_segments(lg, now)
            except OSError as e:
                self.log_dir_failed(os.path.dirname(lg.dir), e)
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
            try:
                lg.flush_pending()
                if now - lg.last_flush_time >= lg.config.flush_ms:
                    lg.flush()
            except OSError as e:
                self.log_dir_failed(os.path.dirname(lg.dir), e)

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
                self._checkpoint_dir_or_fail(dir_)

    def checkpoint_high_watermarks(self, high_watermarks: Mapping[TopicPartition, int]) -> None:
        """Write replication-offset-checkpoint in each dir with the HWs of the partitions stored there."""
        with self._lock:
            by_dir: dict[str, dict[TopicPartition, int]] = {d: {} for d in self.log_dirs}
            for tp, hw in high_watermarks.items():
                lg = self._logs.get(tp)
                if lg is not None and os.path.dirname(lg.dir) in by_dir:
                    by_dir[os.path.dirname(lg.dir)][tp] = hw
            for dir_, hws in by_dir.items():
                if dir_ in self._offline_dirs:
                    continue
                try:
                    OffsetCheckpointFile(os.path.join(dir_, REPLICATION_OFFSET_CHECKPOINT_FILE)).write(hws)
                except OSError as e:
                    self.log_dir_failed(dir_, e)

    def read_high_watermarks(self) -> dict[TopicPartition, int]:
        result: dict[TopicPartition, int] = {}
        for dir_ in self.log_dirs:
            result.update(self._read_checkpoint(dir_, REPLICATION_OFFSET_CHECKPOINT_FILE))
        return result

    # --- describe -------------------------------------------------------------------------------------

    def describe_log_dirs(self) -> dict[str, list[tuple[TopicPartition, int, int, bool]]]:
        """Per log dir: (partition, size in bytes, offset lag, is_future), as DescribeLogDirs reports; a future
        log's lag is how far it is behind the current log's end. Offline dirs are listed empty (see
        `offline_dirs`)."""
        result: dict[str, list[tuple[TopicPartition, int, int, bool]]] = {d: [] for d in self.log_dirs}
        logs, futures = dict(self._logs), dict(self._future_logs)
        for tp, lg in sorted(logs.items()):
            parent = os.path.dirname(lg.dir)
            if parent in result:
                result[parent].append((tp, lg.size_in_bytes, 0, False))
        for tp, lg in sorted(futures.items()):
            parent, current = os.path.dirname(lg.dir), logs.get(tp)
            lag = max(0, current.log_end_offset - lg.log_end_offset) if current is not None else 0
            if parent in result:
                result[parent].append((tp, lg.size_in_bytes, lag, True))
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
            flusher, self._metadata_flusher = self._metadata_flusher, None
        if flusher is not None:
            flusher.shutdown(wait=True)
        with self._lock:
            self._deferred_writes.clear()
            open_logs = list(self._logs.values()) + list(self._future_logs.values())
        # Every log's deferred files in one batch, not two fsyncs per log as each close would.
        self._write_deferred(open_logs)
        with self._lock:
            for lg in list(self._logs.values()) + list(self._future_logs.values()):
                lg.flush()
                lg.close()  # a future log stays on disk: its move resumes at the next start
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
            self._future_logs.clear()
            self._dir_counts = dict.fromkeys(self.log_dirs, 0)
            self._started = False
