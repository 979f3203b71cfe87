"""ReplicaAlterLogDirsThread: copies a partition's current log into its future log in another log dir, then swaps
them (Kafka's ReplicaAlterLogDirsThread + Partition.maybeReplaceCurrentWithFutureReplica).

Each round, per moving partition: the future log is first brought into the current log's range (truncated where
its leader epochs diverge from the current log's, started at the current log start offset when it lags behind
it, truncated when the current log was truncated below it), then
the next whole batches from the future log's end are read from the current log's segment files (at most
`chunk_bytes`, raw bytes: no record is decoded) and appended to the future log with their offsets and leader
epochs (Log.append_as_follower). When the future log has caught up, the partition's lock is taken (no append can
run), the rest is copied, the high watermark carried over, and the LogManager renames the dirs and swaps the
logs (`replace_current_with_future_log`); the partition then reads and writes the moved log.
`replica.alter.log.dirs.io.max.bytes.per.second` (read through `rate()` each round; <= 0 or None: unlimited)
bounds the copy rate: after each chunk the thread waits until the bytes copied fit the rate.

Thread-safety: one daemon thread; `add_partition` / `remove_partition` / `shutdown` may be called from any
thread (one lock guards the set of moving partitions; the wake-up is an Event). The copy itself runs without
that lock; appends to a future log happen only on this thread.
"""

from __future__ import annotations

import logging
import os
import threading
import time as _time
from collections.abc import Callable
from typing import Any

from kafkapy.common.topic_partition import TopicPartition

log = logging.getLogger("kafka.server.ReplicaAlterLogDirsThread")

DEFAULT_CHUNK_BYTES = 1024 * 1024
IDLE_WAIT_S = 0.05
MAX_SWAP_CHUNKS = 10_000  # bound on the copy done under the partition's lock (it only covers the last appends)


class ReplicaAlterLogDirsThread:
    def __init__(self, broker_id: int, get_partition: Callable[[TopicPartition], Any], log_manager: Any,
                 rate: Callable[[], int | None] = lambda: None, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
                 on_moved: Callable[[TopicPartition], None] | None = None) -> None:
        self.name = f"ReplicaAlterLogDirsThread-{broker_id}"
        self._get_partition = get_partition
        self._log_manager = log_manager
        self._rate = rate
        self._chunk_bytes = chunk_bytes
        self._on_moved = on_moved
        self._lock = threading.Lock()
        self._partitions: list[TopicPartition] = []
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._booked_until = _time.monotonic()

    # -- control ----------------------------------------------------------------------------------------

    def add_partition(self, tp: TopicPartition) -> None:
        with self._lock:
            if tp not in self._partitions:
                self._partitions.append(tp)
            if self._thread is None and not self._stopped.is_set():
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        self._wake.set()

    def remove_partition(self, tp: TopicPartition) -> None:
        with self._lock:
            if tp in self._partitions:
                self._partitions.remove(tp)

    def partitions(self) -> list[TopicPartition]:
        with self._lock:
            return list(self._partitions)

    def shutdown(self) -> None:
        self._stopped.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(10)

    # -- work -------------------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopped.is_set():
            copied = 0
            for tp in self.partitions():
                if self._stopped.is_set():
                    break
                try:
                    copied += self.do_work(tp)
                except OSError as e:  # a disk failing: its dir goes offline (the LogManager drops its logs)
                    self._on_io_error(tp, e)
                except Exception as e:
                    log.error("[%s] Error moving the replica of %s to its future log; the move is abandoned: %s",
                              self.name, tp, e)
                    self.remove_partition(tp)
                    self._log_manager.remove_future_log(tp)
            if copied == 0:
                self._wake.wait(IDLE_WAIT_S)
                self._wake.clear()

    def _on_io_error(self, tp: TopicPartition, error: OSError) -> None:
        partition, future = self._get_partition(tp), self._log_manager.future_log(tp)
        current = partition.log if partition is not None else None
        where = os.path.abspath(error.filename) if isinstance(error.filename, str) else ""
        for lg in (future, current):
            if lg is not None and where.startswith(os.path.dirname(lg.dir) + os.sep):
                self._log_manager.log_dir_failed(os.path.dirname(lg.dir), error)
                break
        else:
            log.error("[%s] I/O error moving the replica of %s; the move is abandoned: %s", self.name, tp, error)
        self.remove_partition(tp)
        if self._log_manager.future_log(tp) is not None:
            self._log_manager.remove_future_log(tp)

    def do_work(self, tp: TopicPartition) -> int:
        """One round for one partition: bytes copied (the swap is done when caught up)."""
        partition = self._get_partition(tp)
        future = self._log_manager.future_log(tp)
        current = partition.log if partition is not None else None
        if future is None or current is None:
            self.remove_partition(tp)
            return 0
        copied = self._copy_chunk(current, future)
        if copied:
            self._throttle(copied)
        if future.log_end_offset >= current.log_end_offset:
            self._maybe_swap(tp, partition)
        return copied

    def _truncate_diverged(self, current: Any, future: Any) -> None:
        """Kafka's truncation by leader epoch, with the current log as the leader: batches the current log no
        longer has (it was truncated and written again, e.g. a follower after a leader change) leave the future
        log."""
        epoch = future.latest_epoch()
        if epoch is None or future.log_end_offset == 0:
            return
        current_epoch, end = current.end_offset_for_epoch(epoch)
        if end < 0:
            future.truncate_fully_and_start_at(current.log_start_offset)
            return
        if current_epoch != epoch:
            end = min(end, future.end_offset_for_epoch(current_epoch)[1])
        if end < future.log_end_offset:
            future.truncate_to(max(end, 0))

    def _copy_chunk(self, current: Any, future: Any) -> int:
        self._truncate_diverged(current, future)
        if future.log_end_offset < current.log_start_offset:
            future.truncate_fully_and_start_at(current.log_start_offset)
        elif future.log_end_offset > current.log_end_offset:
            future.truncate_to(current.log_end_offset)
        if future.log_end_offset >= current.log_end_offset:
            return 0
        info = current.read(future.log_end_offset, self._chunk_bytes, None, True)
        if info.records is None:
            return 0
        data = info.records.read_bytes()
        appended = future.append_as_follower(data)
        return int(appended.valid_bytes) if appended.num_batches else 0

    def _maybe_swap(self, tp: TopicPartition, partition: Any) -> None:
        with partition.lock:  # no append to the current log while the last batches go over
            current, future = partition.log, self._log_manager.future_log(tp)
            if current is None or future is None:
                return
            for _ in range(MAX_SWAP_CHUNKS):
                if not self._copy_chunk(current, future):
                    break
            if future.log_end_offset != current.log_end_offset:
                return
            future.update_high_watermark(current.high_watermark)
            moved = self._log_manager.replace_current_with_future_log(tp)
            partition.log = moved
        self.remove_partition(tp)
        log.info("[%s] The replica of %s moved to %s", self.name, tp, moved.dir)
        if self._on_moved is not None:
            self._on_moved(tp)

    def _throttle(self, copied: int) -> None:
        """Wait until `copied` more bytes fit the rate: each byte books 1/rate s after the previous ones (a copy
        idle for a while starts afresh, it does not catch up in a burst)."""
        rate = self._rate()
        now = _time.monotonic()
        if rate is None or rate <= 0:
            self._booked_until = now
            return
        self._booked_until = max(self._booked_until, now) + copied / rate
        wait = self._booked_until - now
        if wait > 0:
            self._stopped.wait(min(wait, 10.0))
