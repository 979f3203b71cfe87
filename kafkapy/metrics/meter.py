"""Meter: Yammer's rate meter (Count, MeanRate and 1/5/15-minute exponentially weighted moving averages).

Kafka's `*PerSec` metrics are Yammer 2.2 Meters: `mark(n)` adds n events; every 5 seconds of elapsed time the
events counted since the last tick update three EWMAs with alpha = 1 - exp(-5 s / 60 s / minutes), the first
tick setting the rate outright. Rates are per second (events per nanosecond for Kafka's idle-ratio meters,
whose `rate_unit` is NANOSECONDS, so a rate is a 0..1 fraction). As Yammer 2.2, `mark` only adds (no clock
read); the ticks are run every 5 s by the registry's tick thread (`tick()`) and, for any tick due, on read
(so MockTime tests need no thread). No byte format.

Thread-safety: one small lock per meter; `mark` is called once per batch or request, never per record.
"""

from __future__ import annotations

import math
import threading
from threading import get_ident

from kafkapy.common.time import SYSTEM, Time

TICK_NS = 5_000_000_000
_SECONDS_PER_UNIT = {"NANOSECONDS": 1e-9, "MICROSECONDS": 1e-6, "MILLISECONDS": 1e-3, "SECONDS": 1.0,
                     "MINUTES": 60.0, "HOURS": 3600.0}


def _alpha(minutes: int) -> float:
    return 1.0 - math.exp(-5.0 / 60.0 / minutes)


_ALPHAS = (_alpha(1), _alpha(5), _alpha(15))


class Meter:
    __slots__ = ("event_type", "rate_unit", "_time", "_lock", "_count", "_uncounted", "_rates", "_initialized",
                 "_start_ns", "_last_tick_ns", "_unit_seconds")

    def __init__(self, event_type: str = "events", rate_unit: str = "SECONDS", time: Time = SYSTEM) -> None:
        self.event_type = event_type
        self.rate_unit = rate_unit
        self._unit_seconds = _SECONDS_PER_UNIT[rate_unit]
        self._time = time
        self._lock = threading.Lock()
        self._count = 0
        self._uncounted = 0
        self._rates = [0.0, 0.0, 0.0]  # events per second
        self._initialized = False
        self._start_ns = self._last_tick_ns = time.nanoseconds()

    def mark(self, n: int = 1) -> None:
        with self._lock:
            self._count += n
            self._uncounted += n

    def tick(self) -> None:
        """Run the ticks due (the registry's tick thread calls it every 5 s)."""
        with self._lock:
            self._tick()

    def _tick_to(self, now: int) -> None:
        ticks = (now - self._last_tick_ns) // TICK_NS
        self._last_tick_ns += ticks * TICK_NS
        for _ in range(min(ticks, 720)):  # an hour of idle ticks decays any rate to ~0; bound the work
            instant = self._uncounted / 5.0
            self._uncounted = 0
            if self._initialized:
                self._rates = [r + a * (instant - r) for r, a in zip(self._rates, _ALPHAS, strict=True)]
            else:
                self._rates = [instant, instant, instant]
                self._initialized = True
        if ticks > 720:
            self._rates = [0.0, 0.0, 0.0]

    def _tick(self) -> None:
        now = self._time.nanoseconds()
        if now - self._last_tick_ns >= TICK_NS:
            self._tick_to(now)

    @property
    def count(self) -> int:
        return self._count

    def _per_unit(self, per_second: float) -> float:
        return per_second * self._unit_seconds

    @property
    def mean_rate(self) -> float:
        elapsed_s = (self._time.nanoseconds() - self._start_ns) / 1e9
        return 0.0 if elapsed_s <= 0 else self._per_unit(self._count / elapsed_s)

    def _rate(self, index: int) -> float:
        with self._lock:
            self._tick()
            return self._per_unit(self._rates[index])

    @property
    def ticked(self) -> bool:
        """Whether the moving averages have a first value yet (5 s after the first event)."""
        with self._lock:
            self._tick()
            return self._initialized

    @property
    def one_minute_rate(self) -> float:
        return self._rate(0)

    @property
    def five_minute_rate(self) -> float:
        return self._rate(1)

    @property
    def fifteen_minute_rate(self) -> float:
        return self._rate(2)

    def attributes(self) -> dict[str, float | int | str]:
        """JMX attributes of Yammer's MeterMBean, in its order."""
        with self._lock:
            self._tick()
            rates = [self._per_unit(r) for r in self._rates]
        return {"Count": self._count, "EventType": self.event_type, "RateUnit": self.rate_unit,
                "MeanRate": self.mean_rate, "OneMinuteRate": rates[0], "FiveMinuteRate": rates[1],
                "FifteenMinuteRate": rates[2]}


class Accumulator:
    """A single-writer counter for a hot loop (one handler thread's or processor's idle ns): `mark` is a plain
    add, no lock (only its own thread writes); whoever folds it (`drain`, one caller at a time) marks the
    shared Meter with the delta."""

    __slots__ = ("total", "_drained")

    def __init__(self) -> None:
        self.total = 0
        self._drained = 0

    def mark(self, n: int = 1) -> None:
        self.total += n

    def drain(self) -> int:
        total = self.total
        delta, self._drained = total - self._drained, total
        return delta


class ThreadAccumulator:
    """An Accumulator for several writer threads: each thread adds to its own slot (its thread id), so no add
    is lost without a lock; `drain` sums the slots' growth."""

    __slots__ = ("_slots", "_drained")

    def __init__(self) -> None:
        self._slots: dict[int, int] = {}
        self._drained = 0

    def mark(self, n: int = 1) -> None:
        slots = self._slots
        ident = get_ident()
        slots[ident] = slots.get(ident, 0) + n

    def drain(self) -> int:
        total = sum(list(self._slots.values()))
        delta, self._drained = total - self._drained, total
        return delta
