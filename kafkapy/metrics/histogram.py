"""Histogram and Timer: Yammer 2.2's, over an exponentially decaying reservoir.

Kafka's latency metrics (`RequestMetrics` TotalTimeMs and its parts, `LogFlushRateAndTimeMs`,
`LeaderElectionRateAndTimeMs`, `ZooKeeperRequestLatencyMs`) are Yammer Histograms or Timers. As in Yammer 2.2:
Count, Min, Max, Mean and StdDev cover every value recorded (running sums of the values and their squares); the
percentiles come from a forward-decaying priority sample of 1028 values with alpha 0.015 (recent values
weigh more; priorities are rescaled every hour), and a quantile q of the sorted sample is read at position
q * (n + 1), interpolated. A Timer is a Meter plus a Histogram of milliseconds. No byte format.

Thread-safety: one lock per histogram; `update` costs a heap operation, done once per request.
"""

from __future__ import annotations

import heapq
import math
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from kafkapy.common.time import SYSTEM, Time
from kafkapy.metrics.meter import Meter

_V = TypeVar("_V")
RESERVOIR_SIZE = 1028
ALPHA = 0.015
RESCALE_THRESHOLD_NS = 3600 * 1_000_000_000
PERCENTILES = (("50thPercentile", 0.5), ("75thPercentile", 0.75), ("95thPercentile", 0.95),
               ("98thPercentile", 0.98), ("99thPercentile", 0.99), ("999thPercentile", 0.999))


def quantile(sorted_values: list[float], q: float) -> float:
    """Yammer 2.2 Snapshot.getValue: position q * (n + 1), linear interpolation, clamped to the ends."""
    n = len(sorted_values)
    if n == 0:
        return 0.0
    pos = q * (n + 1)
    if pos < 1:
        return float(sorted_values[0])
    if pos >= n:
        return float(sorted_values[-1])
    lower = sorted_values[int(pos) - 1]
    upper = sorted_values[int(pos)]
    return lower + (pos - math.floor(pos)) * (upper - lower)


class Histogram:
    __slots__ = ("_time", "_lock", "_heap", "_start_s", "_next_rescale_ns", "_count", "_min", "_max", "_sum",
                 "_sumsq", "_random", "_set", "_index")

    def __init__(self, time: Time = SYSTEM) -> None:
        self._time = time
        self._lock = threading.Lock()
        self._heap: list[tuple[float, float]] = []  # (priority, value); the smallest priority is evicted first
        now = time.nanoseconds()
        self._start_s = now // 1_000_000_000
        self._next_rescale_ns = now + RESCALE_THRESHOLD_NS
        self._count = 0
        self._min = 0.0
        self._max = 0.0
        self._sum = 0.0
        self._sumsq = 0.0
        self._random = random.random
        self._set: HistogramSet | None = None  # a member of a set: the sample is column _index of the set's heap
        self._index = 0

    def update(self, value: float) -> None:
        now = self._time.nanoseconds()
        with self._lock:
            if now >= self._next_rescale_ns:
                self._rescale(now)
            self._add(value, math.exp(ALPHA * (now // 1_000_000_000 - self._start_s)) / (self._random() or 1e-300))

    def _add(self, value: float, priority: float) -> None:
        """Record one value with its sample priority (the caller holds the lock)."""
        heap = self._heap
        if len(heap) < RESERVOIR_SIZE:
            heapq.heappush(heap, (priority, value))
        elif heap[0][0] < priority:
            heapq.heapreplace(heap, (priority, value))
        self._add_value(value)

    def _add_value(self, value: float) -> None:
        """Count, min, max, sum and sum of squares of one value (the caller holds the lock)."""
        if self._count == 0:
            self._min = self._max = value
        elif value < self._min:
            self._min = value
        elif value > self._max:
            self._max = value
        self._count += 1
        self._sum += value
        self._sumsq += value * value

    def _add_summary(self, count: int, lo: float, hi: float, total: float, sumsq: float, scale: float) -> None:
        """Count, min, max, sum and sum of squares of a batch already summed (raw values; x scale here; the
        caller holds the lock)."""
        lo, hi = lo * scale, hi * scale
        if self._count == 0:
            self._min, self._max = lo, hi
        else:
            self._min, self._max = min(self._min, lo), max(self._max, hi)
        self._count += count
        self._sum += total * scale
        self._sumsq += sumsq * scale * scale

    def _rescale(self, now: int) -> None:
        self._heap, self._start_s, self._next_rescale_ns = _rescaled(self._heap, self._start_s, now)

    @property
    def count(self) -> int:
        return self._count

    def _sample(self) -> list[float]:
        """The reservoir's values (the caller holds the lock)."""
        if self._set is None:
            return [v for _, v in self._heap]
        k = self._index
        return [values[k] for _, values in self._set._heap]

    def values(self) -> list[float]:
        with self._lock:
            return sorted(self._sample())

    def percentile(self, q: float) -> float:
        return quantile(self.values(), q)

    def attributes(self) -> dict[str, float | int | str]:
        """JMX attributes of Yammer's HistogramMBean."""
        with self._lock:
            values = sorted(self._sample())
            count, mn, mx = self._count, self._min, self._max
            mean = self._sum / count if count else 0.0
            var = (self._sumsq - self._sum * mean) / (count - 1) if count > 1 else 0.0
            std = math.sqrt(var) if var > 0 else 0.0
        attrs: dict[str, float | int | str] = {"Count": count, "Min": mn if count else 0.0,
                                               "Max": mx if count else 0.0, "Mean": mean if count else 0.0,
                                               "StdDev": std}
        for key, q in PERCENTILES:
            attrs[key] = quantile(values, q)
        return attrs


class HistogramSet:
    """Histograms always updated together (a request's TotalTimeMs, RequestQueueTimeMs, ... RequestBytes): one
    lock, one clock read and one sample priority per update (each member's reservoir stays an exponentially
    decaying sample of its own values; sharing the priority only correlates which requests the members keep).
    As the members' priorities are the same, their reservoirs are one heap of (priority, the members' values):
    one heap operation per sampled event for all members; member k reads column k."""

    def __init__(self, size: int, time: Time = SYSTEM) -> None:
        self._time = time
        self._lock = threading.Lock()
        self.members = [Histogram(time) for _ in range(size)]
        for k, h in enumerate(self.members):
            h._lock, h._set, h._index = self._lock, self, k
        self._heap: list[tuple[float, tuple[float, ...]]] = []
        self._start_s = self.members[0]._start_s
        self._next_rescale_ns = self.members[0]._next_rescale_ns
        self._random = random.random

    def update(self, values: tuple[float, ...], now: int | None = None) -> None:
        if now is None:
            now = self._time.nanoseconds()
        with self._lock:
            if now >= self._next_rescale_ns:
                self._rescale(now)
            priority = math.exp(ALPHA * (now // 1_000_000_000 - self._start_s)) / (self._random() or 1e-300)
            self._add_sample(priority, tuple(values))
            for h, v in zip(self.members, values, strict=True):
                h._add_value(v)

    def _add_sample(self, priority: float, values: tuple[float, ...]) -> None:
        heap = self._heap
        if len(heap) < RESERVOIR_SIZE:
            heapq.heappush(heap, (priority, values))
        elif heap[0][0] < priority:
            heapq.heapreplace(heap, (priority, values))

    def _rescale(self, now: int) -> None:
        self._heap, self._start_s, self._next_rescale_ns = _rescaled(self._heap, self._start_s, now)

    def update_batch(self, columns: Sequence[Sequence[float]], now: int,
                     scales: Sequence[float] | None = None) -> None:
        """Record n events at once: columns[k] holds member k's n raw values, each multiplied by scales[k]
        (ns columns scaled to ms only in the sums, in C). The statistics cover every value. For the reservoir,
        each event gets a priority weight / u as `update` gives it (one weight for the batch: the fold's clock),
        but only the events that can enter are drawn: the smallest u of the batch's n uniforms are generated
        in order (order statistics), each at a distinct event picked uniformly, until one falls below the
        reservoir's floor or the reservoir's size is reached; the same reservoir as offering all n, for work
        that grows with what enters, not with n."""
        n = len(columns[0])
        stats = [(min(c), max(c), sum(c), math.hypot(*c) ** 2) if n and any(c) else (0, 0, 0, 0.0)
                 for c in columns]  # C loops; hypot ** 2 is the sum of squares in one pass over doubles
        scales = scales or [1.0] * len(columns)
        self.update_summary(n, stats, now, scales,
                            lambda picked: [tuple(c[i] * s for c, s in zip(columns, scales, strict=True))
                                            for i in picked])

    def update_summary(self, n: int, stats: Sequence[tuple[float, float, float, float]], now: int,
                       scales: Sequence[float], rows_at: Callable[[list[int]], Sequence[tuple[float, ...]]]) -> None:
        """Record n events given as per-member (min, max, sum, sum of squares) of their raw values (each member
        scaled by scales[k]) and rows_at(indices), the scaled values of those events for every member (one call
        for all the events the draw picks): the statistics as update_batch's, and the same reservoir draw,
        which reads only the events it picks."""
        if not n:
            return
        with self._lock:
            if now >= self._next_rescale_ns:
                self._rescale(now)
            weight = math.exp(ALPHA * (now // 1_000_000_000 - self._start_s))
            heap = self._heap
            floor = heap[0][0] if len(heap) >= RESERVOIR_SIZE else 0.0
            priorities, picked = draw(n, weight, floor, RESERVOIR_SIZE, self._random)
            if priorities:
                offer(heap, RESERVOIR_SIZE, priorities, rows_at(picked))
            for h, (lo, hi, total, sumsq), scale in zip(self.members, stats, scales, strict=True):
                h._add_summary(n, lo, hi, total, sumsq, scale)


def _rescaled(heap: list[tuple[float, _V]], start_s: int, now: int) -> tuple[list[tuple[float, _V]], int, int]:
    """Yammer's rescale: priorities moved to a landmark at now (heap, landmark s, next rescale ns)."""
    new_start = now // 1_000_000_000
    factor = math.exp(-ALPHA * (new_start - start_s))
    rescaled = [(p * factor, v) for p, v in heap]
    heapq.heapify(rescaled)
    return rescaled, new_start, now + RESCALE_THRESHOLD_NS


def _top_priorities(n: int, weight: float, floor: float, rnd: Callable[[], float]) -> list[float]:
    """The largest of n priorities weight / u (u uniform on (0, 1)) that exceed floor, at most RESERVOIR_SIZE
    of them, largest first: the smallest u are drawn as order statistics, each the next smallest of the
    remaining m uniforms above the last, u + (1 - u) * (1 - V ** (1 / m)) (expm1/log keep it exact near 0)."""
    limit = weight / floor if floor > 0 else 2.0  # u >= limit: priority <= floor
    out: list[float] = []
    u = 0.0
    for m in range(n, max(0, n - RESERVOIR_SIZE), -1):
        u -= (1.0 - u) * math.expm1(math.log(1.0 - rnd()) / m)
        if u >= limit:
            break
        out.append(weight / (u or 1e-300))
    return out


def _draw_py(n: int, weight: float, floor: float, size: int,
             rnd: Callable[[], float]) -> tuple[list[float], list[int]]:
    """The batch draw: the priorities that can enter (_top_priorities; `size` is RESERVOIR_SIZE) and a distinct
    event index for each, picked uniformly."""
    priorities = _top_priorities(n, weight, floor, rnd)
    return priorities, random.sample(range(n), len(priorities))


def _offer_py(heap: list[tuple[float, _V]], size: int, priorities: list[float], rows: Sequence[_V]) -> None:
    """Offer (priority, row) pairs, largest priority first, to a reservoir heap of at most size."""
    for p, values in zip(priorities, rows, strict=True):
        if len(heap) < size:
            heapq.heappush(heap, (p, values))
        elif heap[0][0] < p:
            heapq.heapreplace(heap, (p, values))
        else:  # the rest are smaller still (largest first) and the floor only rises
            break


try:  # the compiled draw and offer (kafkapy/metrics/_reservoir.c: the same priorities from the same rnd)
    from kafkapy.metrics._reservoir import draw as _compiled_draw
    from kafkapy.metrics._reservoir import offer as _compiled_offer
except ImportError:  # pragma: no cover - _draw_py and _offer_py are the reference and the fallback
    _compiled_draw = None  # type: ignore[assignment]
    _compiled_offer = None  # type: ignore[assignment]

draw: Callable[[int, float, float, int, Callable[[], float]], tuple[list[float], list[int]]] = (
    _compiled_draw if _compiled_draw is not None else _draw_py)
offer: Callable[[list[Any], int, list[float], Sequence[Any]], None] = (
    _compiled_offer if _compiled_offer is not None else _offer_py)


class Timer:
    """Kafka's `*RateAndTimeMs`: a Meter of events plus a Histogram of their durations in milliseconds."""

    __slots__ = ("meter", "histogram")

    def __init__(self, time: Time = SYSTEM) -> None:
        self.meter = Meter("calls", "SECONDS", time)
        self.histogram = Histogram(time)

    def update(self, duration_ms: float) -> None:
        self.meter.mark()
        self.histogram.update(duration_ms)

    @property
    def count(self) -> int:
        return self.histogram.count

    def attributes(self) -> dict[str, float | int | str]:
        attrs = self.meter.attributes()
        attrs.update(self.histogram.attributes())
        attrs["LatencyUnit"] = "milliseconds"
        return attrs
