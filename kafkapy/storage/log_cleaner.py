"""LogCleaner: compaction of `cleanup.policy=compact` (and `compact,delete`) logs by cleaner threads.

`log.cleaner.threads` CleanerThreads each own a SkimpyOffsetMap of `log.cleaner.dedupe.buffer.size /
threads` bytes and a Cleaner; each loop asks the LogCleanerManager for the filthiest log, cleans it
(log_cleaner_pass.py), records the new first dirty offset in `cleaner-offset-checkpoint`, and backs off
`log.cleaner.backoff.ms` when nothing needs cleaning. Reads are throttled together to
`log.cleaner.io.max.bytes.per.second` by one Throttler (Kafka's utils.Throttler). `clean_once()` runs one
pass on the calling thread (tests drive it under MockTime).

Thread-safety: the Throttler and the manager are shared and locked; each thread's Cleaner is its own.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.log import Log
from kafkapy.storage.log_cleaner_manager import LogCleanerManager
from kafkapy.storage.log_cleaner_pass import Cleaner, CleanerStats, LogCleaningAbortedError
from kafkapy.storage.offset_map import SkimpyOffsetMap

__all__ = ["LogCleaner", "CleanerConfig", "Throttler"]

log = logging.getLogger("kafka.log.LogCleaner")


@dataclass
class CleanerConfig:
    """The broker's log.cleaner.* settings (KafkaServer passes the resolved values)."""

    num_threads: int = 1
    dedupe_buffer_size: int = 128 * 1024 * 1024
    dedupe_buffer_load_factor: float = 0.9
    io_buffer_size: int = 512 * 1024
    max_io_bytes_per_second: float = float("inf")
    backoff_ms: int = 15_000
    enable_cleaner: bool = True

    @classmethod
    def from_broker_config(cls, get: Callable[[str], Any]) -> CleanerConfig:
        return cls(
            num_threads=int(get("log.cleaner.threads")),
            dedupe_buffer_size=int(get("log.cleaner.dedupe.buffer.size")),
            dedupe_buffer_load_factor=float(get("log.cleaner.io.buffer.load.factor")),
            io_buffer_size=int(get("log.cleaner.io.buffer.size")),
            max_io_bytes_per_second=float(get("log.cleaner.io.max.bytes.per.second")),
            backoff_ms=int(get("log.cleaner.backoff.ms")),
            enable_cleaner=str(get("log.cleaner.enable")).lower() == "true",
        )

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> CleanerConfig:
        default = cls()
        fields = {"log.cleaner.threads": default.num_threads,
                  "log.cleaner.dedupe.buffer.size": default.dedupe_buffer_size,
                  "log.cleaner.io.buffer.load.factor": default.dedupe_buffer_load_factor,
                  "log.cleaner.io.buffer.size": default.io_buffer_size,
                  "log.cleaner.io.max.bytes.per.second": default.max_io_bytes_per_second,
                  "log.cleaner.backoff.ms": default.backoff_ms,
                  "log.cleaner.enable": "true"}
        return cls.from_broker_config(lambda k: props.get(k, fields[k]))


class Throttler:
    """Sleeps the caller so the observed byte rate stays under `rate` bytes/s (checked every 300 ms)."""

    def __init__(self, rate: float, time: Time = SYSTEM, check_interval_ms: int = 300) -> None:
        self.rate = rate
        self.time = time
        self.check_interval_ms = check_interval_ms
        self._lock = threading.Lock()
        self._period_start = time.milliseconds()
        self._observed = 0

    def maybe_throttle(self, observed: int) -> None:
        if self.rate == float("inf") or self.rate <= 0:
            return
        with self._lock:
            self._observed += observed
            now = self.time.milliseconds()
            elapsed = now - self._period_start
            if elapsed < self.check_interval_ms:
                return
            sleep_ms = self._observed * 1000.0 / self.rate - elapsed
            self._period_start = now
            self._observed = 0
        if sleep_ms > 0:
            self.time.sleep(sleep_ms)


class LogCleaner:
    def __init__(self, config: CleanerConfig, log_dirs: list[str], logs: Callable[[], list[Log]],
                 time: Time = SYSTEM, is_current: Callable[[Log], bool] | None = None) -> None:
        """`logs()` lists the broker's logs; `is_current(log)` is False once a log was deleted or replaced."""
        self.config = config
        self.time = time
        self.manager = LogCleanerManager(log_dirs, logs, time)
        self.throttler = Throttler(config.max_io_bytes_per_second, time)
        self._is_current = is_current or (lambda lg: True)
        self._threads: list[CleanerThread] = []
        self._cleaner_lock = threading.Lock()
        self._cleaner: Cleaner | None = None
        self.last_stats: CleanerStats | None = None
        self._shutting_down = False

    @property
    def threads(self) -> list[CleanerThread]:
        """The cleaner threads started (none before startup)."""
        return list(self._threads)

    def new_cleaner(self) -> Cleaner:
        threads = max(1, self.config.num_threads)
        offset_map = SkimpyOffsetMap(self.config.dedupe_buffer_size // threads, self.config.dedupe_buffer_load_factor)
        return Cleaner(offset_map, self.config.io_buffer_size, self.time, self.throttler.maybe_throttle,
                       self._check_done)

    def _check_done(self, lg: Log) -> None:
        if self._shutting_down:
            raise LogCleaningAbortedError("the cleaner is shutting down")
        if not self._is_current(lg):
            raise LogCleaningAbortedError(f"{lg.topic_partition} is no longer served from {lg.dir}")
        self.manager.check_cleaning_aborted(lg)

    def startup(self) -> None:
        log.info("Starting the log cleaner")
        self._shutting_down = False
        for i in range(self.config.num_threads):
            t = CleanerThread(self, i)
            self._threads.append(t)
            t.start()

    def shutdown(self) -> None:
        log.info("Shutting down the log cleaner.")
        self._shutting_down = True
        for t in self._threads:
            t.stop.set()
        for t in self._threads:
            t.join(30)
        self._threads.clear()

    def reconfigure(self, config: CleanerConfig) -> None:
        """Dynamic log.cleaner.* broker configs (Kafka's LogCleaner.reconfigure): the I/O rate changes at
        once; other changes restart the cleaner threads (a pass under way is abandoned and redone)."""
        old, self.config = self.config, config
        self.throttler.rate = config.max_io_bytes_per_second
        if old == config:
            return
        running = bool(self._threads)
        self.shutdown()
        with self._cleaner_lock:
            self._cleaner = None
        if running and config.enable_cleaner:
            self.startup()

    def clean_once(self, cleaner: Cleaner | None = None) -> bool:
        """Clean the filthiest log once; False if no log needed cleaning."""
        if cleaner is None:
            with self._cleaner_lock:
                if self._cleaner is None:
                    self._cleaner = self.new_cleaner()
                cleaner = self._cleaner
        ltc = self.manager.grab_filthiest_compacted_log()
        if ltc is None:
            return False
        lg = ltc.log
        dir_ = os.path.dirname(lg.dir)
        end_offset: int | None = None
        try:
            end_offset, stats = cleaner.clean(ltc)
            self.last_stats = stats
            log.info("Cleaned log %s: %d bytes read, %d written, %d/%d messages kept, up to offset %d",
                     lg.topic_partition, stats.bytes_read, stats.bytes_written, stats.messages_written,
                     stats.messages_read, end_offset)
        except LogCleaningAbortedError as exc:
            log.info("Cleaning of %s aborted: %s", lg.topic_partition, exc)
        except (OSError, ValueError) as exc:  # a corrupt batch, a full disk: leave the log as it is
            if self._is_current(lg):
                log.exception("Error cleaning log %s; marking it uncleanable: %s", lg.topic_partition, exc)
                self.manager.mark_uncleanable(lg.topic_partition)
        finally:
            self.manager.done_cleaning(lg, dir_, end_offset if self._is_current(lg) else None)
        return True

    def abort_cleaning(self, tp: TopicPartition, dir_: str | None = None) -> None:
        self.manager.abort_cleaning(tp, dir_)


class CleanerThread(threading.Thread):
    def __init__(self, owner: LogCleaner, index: int) -> None:
        super().__init__(name=f"kafka-log-cleaner-thread-{index}", daemon=True)
        self.owner = owner
        self.stop = threading.Event()
        self.cleaner = owner.new_cleaner()

    def run(self) -> None:
        log.info("[%s]: Starting", self.name)  # Kafka's ShutdownableThread
        backoff_s = self.owner.config.backoff_ms / 1000.0
        while not self.stop.is_set():
            try:
                cleaned = self.owner.clean_once(self.cleaner)
            except Exception:  # a bug in one pass must not end the thread
                log.exception("Uncaught error in %s", self.name)
                cleaned = False
            if not cleaned:
                self.stop.wait(backoff_s)
        log.info("[%s]: Stopped", self.name)
