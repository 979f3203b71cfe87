"""Histogram and Timer: Yammer 2.2's, over an exponentially decaying reservoir.

Kafka's latency metrics (`RequestMetrics` TotalTimeMs and its parts, `LogFlushRateAndTimeMs`,
`LeaderElectionRateAndTimeMs`, `ZooKeeperRequestLatencyMs`) are Yammer Histograms or Timers. As in Yammer 2.2:
Count, Min, Max, Mean and StdDev cover every value recorded (running sums, Welford's variance); the
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

from kafkapy.common.time import SYSTEM, Time
from kafkapy.metrics.meter import Meter

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
                 "_m", "_s", "_random")

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
        self._m = 0.0  # Welford's running mean and sum of squares
        self._s = 0.0
        self._random = random.random

    def update(self, value: float) -> None:
        now = self._time.nanoseconds()
        with self._lock:
            if now >= self._next_rescale_ns:
                self._rescale(now)
            weight = math.exp(ALPHA * (now // 1_000_000_000 - self._start_s))
            priority = weight / (self._random() or 1e-300)
            heap = self._heap
            if len(heap) < RESERVOIR_SIZE:
                heapq.heappush(heap, (priority, value))
            elif heap[0][0] < priority:
                heapq.heapreplace(heap, (priority, value))
            count = self._count = self._count + 1
            if count == 1:
                self._min = self._max = self._m = value
                self._s = 0.0
            else:
                if value < self._min:
                    self._min = value
                if value > self._max:
                    self._max = value
                old_m = self._m
                self._m = old_m + (value - old_m) / count
                self._s += (value - old_m) * (value - self._m)
            self._sum += value

    def _rescale(self, now: int) -> None:
        old_start = self._start_s
        self._start_s = now // 1_000_000_000
        self._next_rescale_ns = now + RESCALE_THRESHOLD_NS
        factor = math.exp(-ALPHA * (self._start_s - old_start))
        self._heap = [(p * factor, v) for p, v in self._heap]
        heapq.heapify(self._heap)

    @property
    def count(self) -> int:
        return self._count

    def values(self) -> list[float]:
        with self._lock:
            return sorted(v for _, v in self._heap)

    def percentile(self, q: float) -> float:
        return quantile(self.values(), q)

    def attributes(self) -> dict[str, float | int | str]:
        """JMX attributes of Yammer's HistogramMBean."""
        with self._lock:
            values = sorted(v for _, v in self._heap)
            count, mn, mx, mean = self._count, self._min, self._max, self._m
            std = math.sqrt(self._s / (count - 1)) if count > 1 else 0.0
        attrs: dict[str, float | int | str] = {"Count": count, "Min": mn if count else 0.0,
                                               "Max": mx if count else 0.0, "Mean": mean if count else 0.0,
                                               "StdDev": std}
        for key, q in PERCENTILES:
            attrs[key] = quantile(values, q)
        return attrs


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
