"""LogCleanerManager: which compacted log to clean next, cleaning states, and `cleaner-offset-checkpoint`.

Per log dir the `cleaner-offset-checkpoint` file (Kafka's OffsetCheckpointFile format: version 0, count,
`topic partition offset` lines) holds each compacted partition's first dirty offset. The filthiest log
is the one with the highest dirty ratio (cleanable bytes / total bytes, at segment granularity) among
those over `min.cleanable.dirty.ratio` or whose oldest dirty record is older than `max.compaction.lag.ms`;
the cleanable range ends at the first uncleanable offset: min(last stable offset, active segment base,
first segment with a record newer than now - `min.compaction.lag.ms`).

Thread-safety: one lock guards the in-progress map and the checkpoint files; cleaner threads and the
LogManager (deletion, shutdown) call in concurrently.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.checkpoint_file import CLEANER_OFFSET_CHECKPOINT_FILE, OffsetCheckpointFile
from kafkapy.storage.errors import KafkaStorageError
from kafkapy.storage.log import Log
from kafkapy.storage.log_cleaner_pass import LogCleaningAbortedError, LogToClean

__all__ = ["LogCleanerManager", "LOG_CLEANING_IN_PROGRESS", "LOG_CLEANING_ABORTED", "LOG_CLEANING_PAUSED"]

log = logging.getLogger("kafka.log.LogCleaner")  # Kafka's loggerName = LogCleaner

LOG_CLEANING_IN_PROGRESS = "LogCleaningInProgress"
LOG_CLEANING_ABORTED = "LogCleaningAborted"
LOG_CLEANING_PAUSED = "LogCleaningPaused"


def cleanable_offsets(lg: Log, checkpoint: int | None, now: int) -> tuple[int, int, bool]:
    """(first dirty offset, first uncleanable offset, need compaction now) of a compacted log."""
    log_start = lg.log_start_offset
    first_dirty = log_start if checkpoint is None or not log_start <= checkpoint <= lg.log_end_offset else checkpoint
    segments = lg.segments
    active_base = segments[-1].base_offset
    config = lg.config.values
    candidates = [lg.last_stable_offset, active_base]
    min_lag = config["min.compaction.lag.ms"]
    dirty = [s for i, s in enumerate(segments[:-1]) if segments[i + 1].base_offset > first_dirty]
    if min_lag > 0:
        for s in dirty:
            if s.largest_timestamp > now - min_lag:
                candidates.append(s.base_offset)
                break
    need_now = False
    max_lag = config["max.compaction.lag.ms"]
    if dirty and max_lag < 2**62:
        first_ts = dirty[0].first_batch_timestamp()
        need_now = 0 <= first_ts < now - max_lag
    return first_dirty, max(first_dirty, min(candidates)), need_now


class LogCleanerManager:
    def __init__(self, log_dirs: list[str], logs: Callable[[], list[Log]], time: Time) -> None:
        self.log_dirs = log_dirs
        self._logs = logs
        self.time = time
        self._lock = threading.Condition()
        self._states: dict[TopicPartition, str] = {}
        self._paused: dict[TopicPartition, int] = {}
        self.uncleanable: set[TopicPartition] = set()  # Kafka's uncleanable partitions: a pass failed

    # --- checkpoints --------------------------------------------------------------------------------

    def _checkpoint_file(self, dir_: str) -> OffsetCheckpointFile:
        return OffsetCheckpointFile(os.path.join(dir_, CLEANER_OFFSET_CHECKPOINT_FILE))

    def all_cleaner_checkpoints(self) -> dict[TopicPartition, int]:
        out: dict[TopicPartition, int] = {}
        for dir_ in self.log_dirs:
            try:
                out.update(self._checkpoint_file(dir_).read())
            except KafkaStorageError as exc:
                log.warning("Error reading %s of %s, resetting: %s", CLEANER_OFFSET_CHECKPOINT_FILE, dir_, exc)
        return out

    def update_checkpoint(self, dir_: str, tp: TopicPartition, offset: int | None) -> None:
        """Set (or with None remove) one partition's first dirty offset in its dir's checkpoint."""
        with self._lock:
            f = self._checkpoint_file(dir_)
            try:
                current = f.read()
            except KafkaStorageError:
                current = {}
            if offset is None:
                if tp not in current:
                    return
                current.pop(tp)
            else:
                current[tp] = offset
            f.write(current)

    # --- choosing ---------------------------------------------------------------------------------------

    def grab_filthiest_compacted_log(self) -> LogToClean | None:
        """The dirtiest log eligible for cleaning, marked in progress; None if none needs it."""
        now = self.time.milliseconds()
        checkpoints = self.all_cleaner_checkpoints()
        logs = self._logs()  # outside our lock: the LogManager may call in (abort) holding its own
        with self._lock:
            candidates = []
            for lg in logs:
                tp = lg.topic_partition
                if not lg.config.compact or tp in self._states or tp in self.uncleanable or len(lg.segments) < 2:
                    continue
                first_dirty, first_uncleanable, need_now = cleanable_offsets(lg, checkpoints.get(tp), now)
                clean_bytes = cleanable_bytes = 0
                segments = lg.segments
                for i, s in enumerate(segments):
                    next_base = segments[i + 1].base_offset if i + 1 < len(segments) else lg.log_end_offset + 1
                    if s.base_offset < first_dirty:
                        clean_bytes += s.size
                    if s.base_offset < first_uncleanable and next_base > first_dirty:
                        cleanable_bytes += s.size
                ltc = LogToClean(lg, first_dirty, first_uncleanable, clean_bytes, cleanable_bytes, need_now)
                if ltc.cleanable_bytes > 0 and first_uncleanable > first_dirty and (
                        need_now or ltc.cleanable_ratio > lg.config.values["min.cleanable.dirty.ratio"]):
                    candidates.append(ltc)
            if not candidates:
                return None
            chosen = max(candidates, key=lambda c: (c.need_compaction_now, c.cleanable_ratio))
            self._states[chosen.log.topic_partition] = LOG_CLEANING_IN_PROGRESS
            return chosen

    # --- states -----------------------------------------------------------------------------------------

    def check_cleaning_aborted(self, lg: Log) -> None:
        with self._lock:
            if self._states.get(lg.topic_partition) == LOG_CLEANING_ABORTED:
                raise LogCleaningAbortedError(f"Cleaning of {lg.topic_partition} aborted")

    def mark_uncleanable(self, tp: TopicPartition) -> None:
        with self._lock:
            self.uncleanable.add(tp)

    def done_cleaning(self, lg: Log, dir_: str, end_offset: int | None) -> None:
        """The pass ended; record the new first dirty offset (None: an aborted pass records nothing)."""
        tp = lg.topic_partition
        if end_offset is not None:
            self.update_checkpoint(dir_, tp, end_offset)
        with self._lock:
            state = self._states.pop(tp, None)
            if state == LOG_CLEANING_ABORTED:
                self._paused[tp] = self._paused.get(tp, 0) + 1
                self._states[tp] = LOG_CLEANING_PAUSED
            self._lock.notify_all()

    def abort_and_pause_cleaning(self, tp: TopicPartition, timeout_s: float = 30.0) -> None:
        """Stop a running pass on `tp` (waiting for it) and keep the log out of cleaning until resumed."""
        with self._lock:
            state = self._states.get(tp)
            if state is None:
                self._states[tp] = LOG_CLEANING_PAUSED
                self._paused[tp] = 1
                return
            if state == LOG_CLEANING_PAUSED:
                self._paused[tp] = self._paused.get(tp, 0) + 1
                return
            self._states[tp] = LOG_CLEANING_ABORTED
            self._lock.wait_for(lambda: self._states.get(tp) == LOG_CLEANING_PAUSED, timeout_s)

    def resume_cleaning(self, tp: TopicPartition) -> None:
        with self._lock:
            if self._states.get(tp) != LOG_CLEANING_PAUSED:
                return
            left = self._paused.get(tp, 1) - 1
            if left <= 0:
                self._paused.pop(tp, None)
                self._states.pop(tp, None)
            else:
                self._paused[tp] = left

    def abort_cleaning(self, tp: TopicPartition, dir_: str | None = None) -> None:
        """The partition is going away: stop its pass and forget its checkpoint."""
        self.abort_and_pause_cleaning(tp)
        with self._lock:
            self._states.pop(tp, None)
            self._paused.pop(tp, None)
        if dir_ is not None:
            self.update_checkpoint(dir_, tp, None)

    def cleaning_state(self, tp: TopicPartition) -> str | None:
        with self._lock:
            return self._states.get(tp)
