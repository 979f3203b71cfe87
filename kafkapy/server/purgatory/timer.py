"""Timer for delayed operations: TimerTask and SystemTimer (a heap keyed by expiration time).

Kafka uses a hierarchical timing wheel; a binary heap gives the same contract (O(log n) add,
O(1) cancel, expirations in deadline order) with less machinery in Python. The clock is the
injected Time's `hi_res_clock_ms()` (monotonic), so under MockTime a test advances the clock and
calls `advance_clock(0)` to fire due tasks deterministically in its own thread. No byte format.

Thread-safety: `add`, `cancel` and `advance_clock` may be called from any thread; one Condition
guards the heap. Expired tasks run outside that lock, in the thread calling `advance_clock` (the
purgatory's reaper thread in production), or in the caller of `add` when the task is already due.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading

from kafkapy.common.time import SYSTEM, Time

log = logging.getLogger("org.apache.kafka.server.util.timer.SystemTimer")


class TimerTask:
    """A task run once when its delay elapses, unless cancelled first."""

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = int(delay_ms)
        self._timer_entry: _TimerEntry | None = None

    def run(self) -> None:
        raise NotImplementedError

    def cancel(self) -> None:
        entry = self._timer_entry
        if entry is not None:
            entry.timer._cancel(entry)
            self._timer_entry = None


class _TimerEntry:
    __slots__ = ("timer", "task", "expiration_ms", "state")

    # state: 0 = pending in the heap, 1 = cancelled (still in the heap, skipped), 2 = fired/removed
    def __init__(self, timer: SystemTimer, task: TimerTask, expiration_ms: int) -> None:
        self.timer = timer
        self.task = task
        self.expiration_ms = expiration_ms
        self.state = 0


class SystemTimer:
    """Heap-based timer: add tasks, advance the clock, run what expired."""

    # Rebuild the heap when cancelled entries exceed this many and half of it.
    _COMPACT_MIN = 256

    def __init__(self, executor_name: str, time: Time = SYSTEM) -> None:
        self.executor_name = executor_name
        self._time = time
        self._cond = threading.Condition()
        self._heap: list[tuple[int, int, _TimerEntry]] = []
        self._seq = itertools.count()
        self._live = 0
        self._cancelled_in_heap = 0
        self._shutdown = False

    def add(self, task: TimerTask) -> None:
        """Schedule `task` to run `task.delay_ms` from now; a task already due runs right away."""
        now = self._time.hi_res_clock_ms()
        expiration = now + task.delay_ms
        if task.delay_ms <= 0:
            self._run(task)
            return
        entry = _TimerEntry(self, task, expiration)
        old = task._timer_entry
        if old is not None:
            self._cancel(old)
        task._timer_entry = entry
        with self._cond:
            if self._shutdown:
                return
            earliest = self._heap[0][0] if self._heap else None
            heapq.heappush(self._heap, (expiration, next(self._seq), entry))
            self._live += 1
            if earliest is None or expiration < earliest:
                self._cond.notify_all()

    def advance_clock(self, timeout_ms: int) -> bool:
        """Wait up to timeout_ms (of the injected clock) for a task to expire, then run every due
        task. Returns True when at least one task ran. `advance_clock(0)` never waits."""
        due: list[TimerTask] = []
        with self._cond:
            if self._shutdown:
                return False
            now = self._time.hi_res_clock_ms()
            self._drop_cancelled_head()
            head = self._heap[0][0] if self._heap else None
            if timeout_ms > 0 and (head is None or head > now):
                wait_ms = timeout_ms if head is None else min(timeout_ms, head - now)
                self._time.wait_on(self._cond, wait_ms)
                now = self._time.hi_res_clock_ms()
            while self._heap and self._heap[0][0] <= now:
                _, _, entry = heapq.heappop(self._heap)
                if entry.state == 1:
                    self._cancelled_in_heap -= 1
                    continue
                entry.state = 2
                self._live -= 1
                if entry.task._timer_entry is entry:
                    entry.task._timer_entry = None
                due.append(entry.task)
        for task in due:
            self._run(task)
        return bool(due)

    @property
    def size(self) -> int:
        """Number of tasks scheduled and not yet run nor cancelled."""
        return self._live

    def shutdown(self) -> None:
        with self._cond:
            self._shutdown = True
            self._heap.clear()
            self._live = 0
            self._cancelled_in_heap = 0
            self._cond.notify_all()

    def _cancel(self, entry: _TimerEntry) -> None:
        with self._cond:
            if entry.state != 0:
                return
            entry.state = 1
            self._live -= 1
            self._cancelled_in_heap += 1
            if self._cancelled_in_heap > self._COMPACT_MIN and self._cancelled_in_heap * 2 > len(self._heap):
                self._heap = [item for item in self._heap if item[2].state == 0]
                heapq.heapify(self._heap)
                self._cancelled_in_heap = 0

    def _drop_cancelled_head(self) -> None:
        while self._heap and self._heap[0][2].state == 1:
            heapq.heappop(self._heap)
            self._cancelled_in_heap -= 1

    def _run(self, task: TimerTask) -> None:
        try:
            task.run()
        except Exception:
            log.exception("Timer task %r of %s failed", task, self.executor_name)
