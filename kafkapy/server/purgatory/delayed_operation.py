"""DelayedOperation: an operation that completes when its condition holds or when its delay elapses.

Anything that waits (a fetch waiting for fetch.min.bytes, a produce with acks=all, a JoinGroup waiting
for members, an admin request waiting for the controller) is a DelayedOperation held by a
DelayedOperationPurgatory. Completion happens exactly once: `force_complete()` is won by one caller,
which runs `on_complete()`; on expiry the timer's thread then also runs `on_expiration()`.

No byte format. Thread-safety: `try_complete` / `on_complete` run under the operation's own (reentrant,
optionally shared) lock; `force_complete` may be called from any thread and wins once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kafkapy.server.purgatory.timer import TimerTask


class DelayedOperation(TimerTask):
    """An operation that completes when `try_complete()` says so or when delay_ms elapses.

    Subclasses implement `try_complete()` (check the condition; if met, call and return
    `force_complete()`), `on_complete()` (build and send the response) and optionally
    `on_expiration()`. `lock` may be shared with other state (e.g. a consumer group's lock).
    """

    def __init__(self, delay_ms: int, lock: threading.RLock | None = None) -> None:
        super().__init__(delay_ms)
        self.lock = lock if lock is not None else threading.RLock()
        self._completed = False
        self._completed_guard = threading.Lock()

    def try_complete(self) -> bool:
        raise NotImplementedError

    def on_complete(self) -> None:
        raise NotImplementedError

    def on_expiration(self) -> None:
        """Called after on_complete() when the operation completed by expiring."""

    def force_complete(self) -> bool:
        """Complete now; True only for the one caller that completed it (who ran on_complete)."""
        with self._completed_guard:
            if self._completed:
                return False
            self._completed = True
        self.cancel()
        self.on_complete()
        return True

    @property
    def is_completed(self) -> bool:
        return self._completed

    def run(self) -> None:
        # The timer calls run() when delay_ms has elapsed.
        if self.force_complete():
            self.on_expiration()

    def safe_try_complete(self) -> bool:
        with self.lock:
            return self.try_complete()

    def safe_try_complete_or_else(self, f: Callable[[], None]) -> bool:
        """try_complete(); if that fails run f() (start watching) and try once more, all under the
        operation lock, so a completion signalled between the two checks is not missed."""
        with self.lock:
            if self.try_complete():
                return True
            f()
            return self.try_complete()
