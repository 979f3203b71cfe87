"""LeaderEpochFileCache: leader epoch -> start offset, persisted in `leader-epoch-checkpoint`.

Byte format: see checkpoint_file.py (version 0, count, `epoch startOffset` lines). Semantics follow
Kafka's LeaderEpochFileCache: epochs and start offsets both strictly increase; `assign` drops entries
that would break that; `end_offset_for` answers OffsetsForLeaderEpoch; truncation from the end follows
log truncation, truncation from the start follows log start offset increments.
Thread-safety: an internal lock guards the entries; every change is written (fsynced) to the file before
returning, except truncations with `sync=False` (Kafka's truncateFromEndAsyncFlush /
truncateFromStartAsyncFlush), which leave the file to the next write: a truncation not yet written leaves
entries past the log end (or before its start) that the next load truncates again, while `assign` is always
written and fsynced, so the file never misses an entry.
`assign(..., flush=False)` is the one deferred assign: a new leader's epoch starting at its log end, before any
record of that epoch exists. The entry is then `unflushed` until `flush_unflushed()` or a batch write
(`pending_replace()` through common/atomic_write_batch, many partitions' files made durable together) writes it;
the Log does that before it appends, answers OffsetsForLeaderEpoch or closes, so the file still never misses
an entry that records or a follower's truncation rely on.
"""

from __future__ import annotations

import bisect
import threading

from kafkapy.common.atomic_write_batch import PendingReplace
from kafkapy.storage.checkpoint_file import LeaderEpochCheckpointFile

__all__ = ["LeaderEpochFileCache", "EpochEntry", "UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET"]

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

EpochEntry = tuple[int, int]  # (epoch, start_offset)


class LeaderEpochFileCache:
    def __init__(self, checkpoint: LeaderEpochCheckpointFile | None) -> None:
        self._checkpoint = checkpoint
        self._lock = threading.RLock()
        self._epochs: list[int] = []
        self._offsets: list[int] = []
        # What the file durably holds (read at load, or last written with fsync): a write of the same entries
        # is skipped. A restarted leader re-assigns the epoch its empty log's load truncated, same as on disk.
        self._on_disk: list[EpochEntry] | None = None
        # A deferred assign not yet written (see assign(flush=False)); _version counts changes of the entries.
        self._unflushed = False
        self._version = 0
        if checkpoint is not None:
            read = checkpoint.read()
            for epoch, start in read:
                self._assign_locked(epoch, start)
            self._on_disk = read or None

    # --- reads ----------------------------------------------------------------------------------------

    def epoch_entries(self) -> list[EpochEntry]:
        with self._lock:
            return list(zip(self._epochs, self._offsets, strict=True))

    def is_empty(self) -> bool:
        return not self._epochs

    def latest_epoch(self) -> int | None:
        with self._lock:
            return self._epochs[-1] if self._epochs else None

    def latest_entry(self) -> EpochEntry | None:
        with self._lock:
            return (self._epochs[-1], self._offsets[-1]) if self._epochs else None

    def earliest_entry(self) -> EpochEntry | None:
        with self._lock:
            return (self._epochs[0], self._offsets[0]) if self._epochs else None

    def previous_epoch(self) -> int | None:
        with self._lock:
            return self._epochs[-2] if len(self._epochs) >= 2 else None

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch whose range holds `offset`, or None if the offset is before every known epoch."""
        with self._lock:
            i = bisect.bisect_right(self._offsets, offset)
            return self._epochs[i - 1] if i > 0 else None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetsForLeaderEpoch, as Kafka's endOffsetFor computes it.

        The latest epoch ends at the log end offset; an older epoch ends where the next larger epoch
        starts, reported with the largest known epoch <= the requested one; unknown -> (-1, -1).
        """
        with self._lock:
            if requested_epoch == UNDEFINED_EPOCH:
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            if self._epochs and self._epochs[-1] == requested_epoch:
                return requested_epoch, log_end_offset
            higher = bisect.bisect_right(self._epochs, requested_epoch)
            if higher >= len(self._epochs):
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            if higher == 0:
                return requested_epoch, self._offsets[0]
            return self._epochs[higher - 1], self._offsets[higher]

    # --- writes ---------------------------------------------------------------------------------------

    def assign(self, epoch: int, start_offset: int, flush: bool = True) -> bool:
        """Record that `epoch` starts at `start_offset`; True if the cache changed (and was flushed).

        flush=False leaves the write to flush_unflushed() or a batch (pending_replace): only for an epoch no
        record has yet (a new leader's epoch at its log end), whose owner writes it before appending to it."""
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry ({epoch}, {start_offset})")
        if not self._is_update_needed(epoch, start_offset):
            return False
        with self._lock:
            if not self._assign_locked(epoch, start_offset):
                return False
            if flush:
                self._flush()
            elif self._checkpoint is not None:
                # Nothing to write when the file already holds these entries: a restarted leader re-assigns
                # the epoch its log's load truncated, and a start-up must not rewrite every partition's file.
                self._unflushed = list(zip(self._epochs, self._offsets, strict=True)) != self._on_disk
            return True

    @property
    def unflushed(self) -> bool:
        """A deferred assign is not yet in the file."""
        return self._unflushed

    def flush_unflushed(self) -> None:
        """Write (fsynced) a deferred assign now, if one is still unwritten."""
        if self._unflushed:
            with self._lock:
                if self._unflushed:
                    self._flush()

    def pending_replace(self) -> PendingReplace | None:
        """The file's replacement for a batch write (common/atomic_write_batch), or None if nothing is unflushed.
        Skipped by the batch if the entries change or are written meanwhile."""
        with self._lock:
            checkpoint = self._checkpoint
            if not self._unflushed or checkpoint is None:
                return None
            entries = list(zip(self._epochs, self._offsets, strict=True))
            version, path = self._version, checkpoint.path

            def current() -> bool:
                return self._unflushed and self._version == version and checkpoint.path == path

            def durable() -> None:
                self._on_disk = entries
                self._unflushed = False

            return PendingReplace(path, checkpoint.encode(entries), self._lock, current, durable)

    def _is_update_needed(self, epoch: int, start_offset: int) -> bool:
        if not self._epochs:
            return True
        return epoch != self._epochs[-1] or start_offset < self._offsets[-1]

    def _assign_locked(self, epoch: int, start_offset: int) -> bool:
        if not self._is_update_needed(epoch, start_offset):
            return False
        # Drop entries that would make epochs or start offsets non-monotonic with the new one.
        while self._epochs and (self._epochs[-1] >= epoch or self._offsets[-1] >= start_offset):
            self._epochs.pop()
            self._offsets.pop()
        self._epochs.append(epoch)
        self._offsets.append(start_offset)
        self._version += 1
        return True

    def truncate_from_end(self, end_offset: int, sync: bool = True) -> None:
        """Remove entries starting at or after `end_offset` (the log was truncated to it)."""
        with self._lock:
            if end_offset < 0 or not self._offsets or self._offsets[-1] < end_offset:
                return
            keep = bisect.bisect_left(self._offsets, end_offset)
            del self._epochs[keep:]
            del self._offsets[keep:]
            self._version += 1
            if sync:
                self._flush()

    def truncate_from_start(self, start_offset: int, sync: bool = True) -> None:
        """Drop epochs wholly before `start_offset`; the epoch holding it now starts there."""
        with self._lock:
            if start_offset < 0 or not self._offsets or self._offsets[0] >= start_offset:
                return
            last_removed = bisect.bisect_right(self._offsets, start_offset) - 1
            epoch = self._epochs[last_removed]
            del self._epochs[: last_removed + 1]
            del self._offsets[: last_removed + 1]
            self._epochs.insert(0, epoch)
            self._offsets.insert(0, start_offset)
            self._version += 1
            if sync:
                self._flush()

    def clear_and_flush(self) -> None:
        with self._lock:
            self._epochs.clear()
            self._offsets.clear()
            self._version += 1
            self._flush()

    def _flush(self) -> None:
        if self._checkpoint is not None:
            entries = list(zip(self._epochs, self._offsets, strict=True))
            if entries == self._on_disk:
                self._unflushed = False
                return
            self._on_disk = None  # unknown until this write is done
            self._checkpoint.write(entries)
            self._on_disk = entries
            self._unflushed = False

    def __repr__(self) -> str:
        return f"LeaderEpochFileCache({self.epoch_entries()})"
