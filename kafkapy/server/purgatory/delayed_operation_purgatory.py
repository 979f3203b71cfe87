"""DelayedOperationPurgatory: holds delayed operations until they complete or expire.

Anything that waits (a fetch waiting for fetch.min.bytes, a produce with acks=all, a JoinGroup
waiting for members) becomes a DelayedOperation (delayed_operation.py). The purgatory first tries to
complete it; if it cannot, the operation is watched under one or more keys (a TopicPartition, a group id, ...) and
added to a timer. `check_and_complete(key)` retries the operations watching a key after the state
they wait on changed; the timer completes the rest when their delay elapses. Completion happens
exactly once: `force_complete()` is won by one caller, which runs `on_complete()`; on expiry the
timer's thread then also runs `on_expiration()`. Completed operations leave the watch lists lazily
(on the next check of their key, or by a purge once enough completed ones accumulate).

No byte format. Thread-safety: every public method may be called from any thread. The purgatory
lock guards only the watch lists; operation code (`try_complete`, `on_complete`) always runs
outside it, under the operation's own (reentrant, optionally shared) lock.
The expiration reaper thread starts with the first operation that has to wait, not with the purgatory
(Kafka's starts at once): a broker builds several purgatories at start-up, most of which a single node never
uses, and an idle reaper wakes five times a second for nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

from kafkapy.common.time import SYSTEM, Time
from kafkapy.server.purgatory.delayed_operation import DelayedOperation
from kafkapy.server.purgatory.timer import SystemTimer

log = logging.getLogger("kafka.server.DelayedOperationPurgatory")


T = TypeVar("T", bound=DelayedOperation)


class DelayedOperationPurgatory(Generic[T]):
    """Holds DelayedOperations of one kind (Fetch, Produce, Rebalance, ...) by watch key."""

    def __init__(
        self,
        name: str,
        time: Time = SYSTEM,
        purge_interval: int = 1000,
        reaper_enabled: bool = True,
        timer_enabled: bool = True,
        broker_id: int = 0,
        timer: SystemTimer | None = None,
    ) -> None:
        self.name = name
        self.purge_interval = purge_interval
        self._time = time
        self._timer_enabled = timer_enabled
        self._timer = timer if timer is not None else SystemTimer(name, time)
        self._lock = threading.Lock()
        self._watchers: dict[Hashable, list[T]] = {}
        # Operations ever watched minus those purged: an upper bound of watch-list entries.
        self._estimated_total = 0
        self._running = True
        self._reaper_enabled = reaper_enabled
        self._reaper_name = f"ExpirationReaper-{broker_id}-{name}"
        self._reaper_lock = threading.Lock()
        self._reaper: threading.Thread | None = None

    def try_complete_else_watch(self, operation: T, watch_keys: Iterable[Hashable]) -> bool:
        """Complete `operation` now if it can; otherwise watch it under every key and start its
        timer. Returns True if it completed during this call."""
        keys = list(watch_keys)
        if not keys:
            raise ValueError("The watch key list can't be empty")

        def watch() -> None:
            with self._lock:
                for key in keys:
                    self._watchers.setdefault(key, []).append(operation)
                self._estimated_total += 1

        if operation.safe_try_complete_or_else(watch):
            return True
        if self._reaper is None and self._reaper_enabled:
            self._start_reaper()
        if not operation.is_completed:
            if self._timer_enabled:
                self._timer.add(operation)
            if operation.is_completed:
                # Completed by another thread between the check and the timer add.
                operation.cancel()
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """Retry the operations watching `key`; returns how many completed in this call."""
        # Lock-free peek (most appends have nobody waiting): an operation watched after this read runs its
        # own second try_complete once it is in the list (safe_try_complete_or_else), so it cannot miss the
        # state change that preceded this call.
        if key not in self._watchers:
            return 0
        with self._lock:
            ops = self._watchers.get(key)
            if not ops:
                return 0
            snapshot = list(ops)
        completed = 0
        for op in snapshot:
            if not op.is_completed and op.safe_try_complete():
                completed += 1
        with self._lock:
            ops = self._watchers.get(key)
            if ops is not None:
                remaining = [op for op in ops if not op.is_completed]
                if remaining:
                    self._watchers[key] = remaining
                else:
                    del self._watchers[key]
        return completed

    def cancel_for_key(self, key: Hashable) -> list[T]:
        """Stop watching `key` and cancel the timers of its pending operations (not completing
        them); returns those operations."""
        with self._lock:
            ops = self._watchers.pop(key, [])
            self._estimated_total = max(0, self._estimated_total - len(ops))
        pending = [op for op in ops if not op.is_completed]
        for op in pending:
            op.cancel()
        return pending

    @property
    def watched(self) -> int:
        """Watch-list entries, including completed operations not yet purged."""
        with self._lock:
            return sum(len(ops) for ops in self._watchers.values())

    @property
    def num_delayed(self) -> int:
        """Operations waiting in the timer (neither completed nor expired)."""
        return self._timer.size

    delayed = num_delayed

    def watch_keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._watchers)

    def advance_clock(self, timeout_ms: int) -> bool:
        """Expire due operations (waiting up to timeout_ms for one) and purge completed ones from
        the watch lists when more than purge_interval have accumulated. Tests under MockTime call
        this with 0 after advancing the clock; the reaper thread calls it in a loop."""
        fired = self._timer.advance_clock(timeout_ms)
        delayed = self._timer.size
        with self._lock:
            if self._estimated_total - delayed > self.purge_interval:
                self._purge_completed_locked(delayed)
        return fired

    def purge_completed(self) -> int:
        with self._lock:
            return self._purge_completed_locked(self._timer.size)

    def shutdown(self) -> None:
        with self._reaper_lock:
            self._running = False
            reaper = self._reaper
        self._timer.shutdown()
        if reaper is not None and reaper is not threading.current_thread():
            reaper.join(timeout=5)

    def _start_reaper(self) -> None:
        with self._reaper_lock:
            if self._reaper is not None or not self._running:
                return
            self._reaper = threading.Thread(target=self._reaper_loop, name=self._reaper_name, daemon=True)
            self._reaper.start()

    def _purge_completed_locked(self, delayed: int) -> int:
        purged = 0
        for key in list(self._watchers):
            ops = self._watchers[key]
            remaining = [op for op in ops if not op.is_completed]
            purged += len(ops) - len(remaining)
            if remaining:
                self._watchers[key] = remaining
            else:
                del self._watchers[key]
        # More may complete while we purge; an overestimate only triggers an earlier next purge.
        self._estimated_total = delayed
        log.debug("Purged %d completed operations from %s watch lists", purged, self.name)
        return purged

    def _reaper_loop(self) -> None:
        while self._running:
            try:
                self.advance_clock(200)
            except Exception:
                log.exception("Expiration reaper of %s failed; continuing", self.name)
