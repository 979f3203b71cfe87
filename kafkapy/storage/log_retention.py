"""Log retention: which old segments of a Log go (retention.ms, retention.bytes, log start offset).

An operation applied to a Log (the LogManager's kafka-log-retention task calls `delete_old_segments(log)`
for every log); the Log itself offers the primitives (`delete_old_segments_matching(predicate)`, the log
start offset, the high watermark) and never imports this module.
Kafka's rules: with cleanup.policy containing `delete`, whole segments go when their largest timestamp
is older than retention.ms, or while the log exceeds retention.bytes by at least a segment; in every
policy, segments wholly below the log start offset go. Segments at or past the high watermark are kept,
the active segment goes only if non-empty (a new one is rolled first). Deleted segments wait out
file.delete.delay.ms (pending_segment_deletes.py). No byte format of its own.
Thread-safety: runs under the Log's lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.storage.log_segment import LogSegment

if TYPE_CHECKING:
    from kafkapy.storage.log import Log

__all__ = ["delete_old_segments"]


def delete_old_segments(log: Log, now_ms: int | None = None) -> int:
    """Apply retention to `log`; returns the number of segments deleted. Also completes due `.deleted`
    removals."""
    now = log.time.milliseconds() if now_ms is None else now_ms
    with log.lock:
        if log.is_closed:
            return 0
        deleted = log.delete_log_start_offset_breached_segments()
        if log.config.delete:
            deleted += _delete_retention_size_breached_segments(log)
            deleted += _delete_retention_ms_breached_segments(log, now)
    log.process_pending_deletes(now)
    return deleted


def _below_high_watermark(log: Log, next_segment: LogSegment | None) -> bool:
    upper = next_segment.base_offset if next_segment is not None else log.log_end_offset
    return log.high_watermark >= upper


def _delete_retention_ms_breached_segments(log: Log, now: int) -> int:
    retention_ms = log.config.retention_ms
    if retention_ms < 0:
        return 0

    def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
        return _below_high_watermark(log, next_segment) and now - segment.largest_timestamp > retention_ms

    return log.delete_old_segments_matching(breached)


def _delete_retention_size_breached_segments(log: Log) -> int:
    retention_size = log.config.retention_size
    size = log.size_in_bytes
    if retention_size < 0 or size < retention_size:
        return 0
    diff = size - retention_size

    def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
        nonlocal diff
        if not _below_high_watermark(log, next_segment):
            return False
        if diff - segment.size >= 0:
            diff -= segment.size
            return True
        return False

    return log.delete_old_segments_matching(breached)
