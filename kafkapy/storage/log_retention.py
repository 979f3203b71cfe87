"""LogRetention: the segment-deletion half of Log (retention.ms, retention.bytes, log start offset).

Kafka's rules: with cleanup.policy containing `delete`, whole segments go when their largest timestamp
is older than retention.ms, or while the log exceeds retention.bytes by at least a segment; in every
policy, segments wholly below the log start offset go. Segments at or past the high watermark are kept,
the active segment goes only if non-empty (a new one is rolled first). Deleted segments are renamed
`.deleted` and removed after file.delete.delay.ms (at once when it is 0), driven by the injected Time.
Removal unlinks the files but leaves each `.log` descriptor to be closed when its last FileRegion is
gone, so a response being sent from a deleted segment is never cut short.
Mixin for Log: uses Log's lock, segment snapshot and offsets. Thread-safety: mutations under Log.lock.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING

from kafkapy.storage.errors import OffsetOutOfRangeError
from kafkapy.storage.log_segment import DELETED_FILE_SUFFIX, LogSegment

if TYPE_CHECKING:
    from kafkapy.storage.log import Log

__all__ = ["LogRetention"]

Predicate = Callable[[LogSegment, "LogSegment | None"], bool]


class LogRetention:
    def maybe_increment_log_start_offset(self: Log, new_log_start_offset: int, reason: str = "client") -> bool:
        """Move the log start offset forward (DeleteRecords, retention) and drop whole segments below it.

        Raises OffsetOutOfRangeError beyond the high watermark. True if the start offset moved.
        """
        with self.lock:
            hw = self.high_watermark
            if new_log_start_offset > hw:
                raise OffsetOutOfRangeError(
                    f"Cannot increment the log start offset to {new_log_start_offset} of partition "
                    f"{self.topic_partition} since it is larger than the high watermark {hw}")
            if new_log_start_offset <= self._log_start_offset:
                return False
            self._log_start_offset = new_log_start_offset
            self.leader_epoch_cache.truncate_from_start(new_log_start_offset)
            # Snapshots of segments wholly below the new start are useless (Kafka deletes them with their segments).
            bases = self._bases
            floor = bases[max(0, bisect.bisect_right(bases, new_log_start_offset) - 1)] if bases else new_log_start_offset
            self.producer_state_manager.delete_snapshots_before(floor)
            if self._recovery_point < new_log_start_offset:
                self._recovery_point = new_log_start_offset
            if reason != "segment_deletion":
                self._delete_log_start_offset_breached_segments()
            return True

    def delete_old_segments(self: Log, now_ms: int | None = None) -> int:
        """Apply retention; returns the number of segments deleted. Also completes due `.deleted` removals."""
        now = self.time.milliseconds() if now_ms is None else now_ms
        with self.lock:
            if self._closed:
                return 0
            deleted = self._delete_log_start_offset_breached_segments()
            if self.config.delete:
                deleted += self._delete_retention_size_breached_segments()
                deleted += self._delete_retention_ms_breached_segments(now)
        self.process_pending_deletes(now)
        return deleted

    def _delete_log_start_offset_breached_segments(self: Log) -> int:
        lso = self._log_start_offset

        def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            return next_segment is not None and next_segment.base_offset <= lso

        return self._delete_segments_matching(breached)

    def _delete_retention_ms_breached_segments(self: Log, now: int) -> int:
        retention_ms = self.config.retention_ms
        if retention_ms < 0:
            return 0

        def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            return self._below_high_watermark(next_segment) and now - segment.largest_timestamp > retention_ms

        return self._delete_segments_matching(breached)

    def _delete_retention_size_breached_segments(self: Log) -> int:
        retention_size = self.config.retention_size
        size = self.size_in_bytes
        if retention_size < 0 or size < retention_size:
            return 0
        diff = [size - retention_size]

        def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            if not self._below_high_watermark(next_segment):
                return False
            if diff[0] - segment.size >= 0:
                diff[0] -= segment.size
                return True
            return False

        return self._delete_segments_matching(breached)

    def _below_high_watermark(self: Log, next_segment: LogSegment | None) -> bool:
        upper = next_segment.base_offset if next_segment is not None else self._next_offset
        return self.high_watermark >= upper

    def _delete_segments_matching(self: Log, predicate: Predicate) -> int:
        segments = self._segments
        deletable: list[LogSegment] = []
        for i, segment in enumerate(segments):
            next_segment = segments[i + 1] if i + 1 < len(segments) else None
            if next_segment is None and segment.size == 0:
                break
            if not predicate(segment, next_segment):
                break
            deletable.append(segment)
        if not deletable:
            return 0
        if len(deletable) == len(segments):
            # A log always keeps one segment: roll an empty one first.
            new_segment = self.roll()
            if deletable[-1] is new_segment:
                deletable.pop()
        remaining = [s for s in self._segments if s not in deletable]
        self._set_segments(remaining)
        self._delete_segment_files(deletable)
        self.maybe_increment_log_start_offset(remaining[0].base_offset, "segment_deletion")
        return len(deletable)

    def _delete_segment_files(self: Log, segments: list[LogSegment]) -> None:
        """Rename to `.deleted` now; remove after file.delete.delay.ms (at once when it is 0)."""
        if not segments:
            return
        delay = self.config.file_delete_delay_ms
        due = self.time.milliseconds() + delay
        for segment in segments:
            if not segment.has_suffix(DELETED_FILE_SUFFIX):
                try:
                    segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
                except FileNotFoundError:
                    pass
            if delay <= 0:
                segment.delete_if_exists()
            else:
                self._pending_deletes.append((due, segment))

    def process_pending_deletes(self: Log, now_ms: int | None = None) -> int:
        """Remove `.deleted` segments whose delay has passed; returns how many."""
        now = self.time.milliseconds() if now_ms is None else now_ms
        with self.lock:
            return self._finish_pending_deletes(now=now)

    def _finish_pending_deletes(self: Log, now: int | None = None, force: bool = False) -> int:
        done = [(due, s) for due, s in self._pending_deletes if force or (now is not None and due <= now)]
        if not done:
            return 0
        self._pending_deletes = [(due, s) for due, s in self._pending_deletes if (due, s) not in done]
        for _, segment in done:
            segment.delete_if_exists()
        return len(done)
