"""Clocks: Time (the interface), SystemTime and MockTime.

Everything that times out takes a Time so tests advance a MockTime instead of sleeping.
Thread-safety: SystemTime is stateless; MockTime guards its clock with a lock and wakes
sleepers/waiters when advanced.
"""

from __future__ import annotations

import threading
import time as _time


class Time:
    """Kafka's Time: wall-clock milliseconds, a monotonic clock, and sleep."""

    def milliseconds(self) -> int:
        raise NotImplementedError

    def hi_res_clock_ms(self) -> int:
        return self.nanoseconds() // 1_000_000

    def nanoseconds(self) -> int:
        raise NotImplementedError

    def sleep(self, ms: float) -> None:
        raise NotImplementedError

    def wait_on(self, cond: threading.Condition, timeout_ms: float) -> None:
        """Wait on a held condition for at most timeout_ms of this clock's time."""
        cond.wait(timeout_ms / 1000.0)


class SystemTime(Time):
    def milliseconds(self) -> int:
        return _time.time_ns() // 1_000_000

    def nanoseconds(self) -> int:
        return _time.monotonic_ns()

    def sleep(self, ms: float) -> None:
        if ms > 0:
            _time.sleep(ms / 1000.0)


SYSTEM = SystemTime()


class MockTime(Time):
    """A clock that moves only when told to (or by auto_tick_ms on every read)."""

    def __init__(self, start_ms: int = 1_700_000_000_000, auto_tick_ms: int = 0) -> None:
        self._lock = threading.Condition()
        self._ms = start_ms
        self._nanos = 0
        self._auto_tick_ms = auto_tick_ms

    def milliseconds(self) -> int:
        with self._lock:
            self._tick(self._auto_tick_ms)
            return self._ms

    def nanoseconds(self) -> int:
        with self._lock:
            self._tick(self._auto_tick_ms)
            return self._nanos

    def sleep(self, ms: float) -> None:
        self.advance(ms)

    def advance(self, ms: float) -> None:
        with self._lock:
            self._tick(ms)
            self._lock.notify_all()

    def wait_on(self, cond: threading.Condition, timeout_ms: float) -> None:
        # Under MockTime nothing should block for real; yield briefly so other threads run.
        cond.wait(0.001)

    def _tick(self, ms: float) -> None:
        self._ms += int(ms)
        self._nanos += int(ms * 1_000_000)
