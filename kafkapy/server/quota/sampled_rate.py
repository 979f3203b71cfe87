"""SampledRate: Kafka's sampled Rate (SampledStat + Rate.windowSize), the one windowed rate behind the
client quotas (ClientQuotaManager) and the replication throttle (ReplicationQuotaManager).

`num_windows` windows of `window_ms` each; a sample expires `num_windows` windows after it started. The
rate is the total of the live samples over the time they span, but over at least all but one full
window, so a burst after idling is not judged over a tiny interval. No byte format.
Thread-safety: none; the owner holds its own lock.
"""

from __future__ import annotations

from collections import deque


class SampledRate:
    __slots__ = ("_num_windows", "_window_ms", "_samples")

    def __init__(self, num_windows: int, window_ms: int) -> None:
        self._num_windows = max(2, num_windows)
        self._window_ms = max(1, window_ms)
        self._samples: deque[list[int | float]] = deque()  # [window start ms, value]

    def record(self, value: float, now_ms: int) -> None:
        self._purge(now_ms)
        samples = self._samples
        if samples and now_ms < samples[-1][0] + self._window_ms:
            samples[-1][1] += value
        else:
            samples.append([now_ms, value])

    def _purge(self, now_ms: int) -> None:
        expire_age = self._num_windows * self._window_ms
        samples = self._samples
        while samples and now_ms - samples[0][0] >= expire_age:
            samples.popleft()

    def window_size_ms(self, now_ms: int) -> int:
        """Kafka's Rate.windowSize: the span of the live samples, at least num_windows - 1 windows."""
        self._purge(now_ms)
        elapsed = now_ms - self._samples[0][0] if self._samples else 0
        return int(max(elapsed, (self._num_windows - 1) * self._window_ms))

    def rate(self, now_ms: int) -> float:
        """Value per second over the sampled windows."""
        self._purge(now_ms)
        if not self._samples:
            return 0.0
        total = sum(s[1] for s in self._samples)
        return total * 1000.0 / self.window_size_ms(now_ms)
