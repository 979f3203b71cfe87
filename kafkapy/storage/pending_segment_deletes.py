"""PendingSegmentDeletes: a Log's deleted segments waiting out file.delete.delay.ms.

Kafka deletes a segment in two steps: its files are renamed with the `.deleted` suffix at once (so the
directory no longer shows them as live and a new segment may reuse the base offset), then removed after
file.delete.delay.ms (at once when it is 0), driven by the injected Time. Removal unlinks the files but
leaves each `.log` descriptor to be closed when its last FileRegion is gone, so a response being sent
from a deleted segment is never cut short.
Thread-safety: none of its own; the owning Log calls it under its lock.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkapy.storage.log_segment import DELETED_FILE_SUFFIX, LogSegment


class PendingSegmentDeletes:
    def __init__(self) -> None:
        self._pending: list[tuple[int, LogSegment]] = []  # (due ms, segment)

    def delete(self, segments: Iterable[LogSegment], delay_ms: int, now_ms: int) -> None:
        """Rename to `.deleted` now; remove after delay_ms (at once when it is 0)."""
        due = now_ms + delay_ms
        for segment in segments:
            if not segment.has_suffix(DELETED_FILE_SUFFIX):
                try:
                    segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
                except FileNotFoundError:
                    pass
            if delay_ms <= 0:
                segment.delete_if_exists()
            else:
                self._pending.append((due, segment))

    def finish(self, now_ms: int | None = None, force: bool = False) -> int:
        """Remove the segments due by now_ms (all of them with force); returns how many."""
        done = [(due, s) for due, s in self._pending if force or (now_ms is not None and due <= now_ms)]
        if not done:
            return 0
        self._pending = [(due, s) for due, s in self._pending if (due, s) not in done]
        for _, segment in done:
            segment.delete_if_exists()
        return len(done)

    def update_parent_dir(self, new_dir: str) -> None:
        for _, segment in self._pending:
            segment.update_parent_dir(new_dir)

    def __len__(self) -> int:
        return len(self._pending)
