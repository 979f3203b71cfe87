"""ReplicationQuotaManager: Kafka's throttle on replication traffic (one for the leader side, one for the
follower side of this broker), with the rates `leader.replication.throttled.rate` /
`follower.replication.throttled.rate` (dynamic broker configs, bytes/s, unlimited by default) and the
replicas it applies to from the topic configs `leader.replication.throttled.replicas` /
`follower.replication.throttled.replicas` ("partition:brokerId,..." or "*"), which reassign-partitions
--throttle sets on the moving replicas.

The rate is Kafka's sampled Rate (quota/sampled_rate.py): `replication.quota.window.num` windows of
`replication.quota.window.size.seconds` each. The quota
is exceeded when that rate is above the configured bound. Throttled partitions are only held back, never
failed: the leader answers them with no records, the follower leaves them out of its fetch.
No byte format. Thread-safety: one lock around the samples; the rate may change at any time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from kafkapy.common.time import SYSTEM, Time
from kafkapy.server.quota.sampled_rate import SampledRate

UNLIMITED = (1 << 63) - 1  # Kafka's Long.MaxValue: no throttle
ALL_REPLICAS = "*"
LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
DEFAULT_NUM_WINDOWS = 11
DEFAULT_WINDOW_SIZE_S = 1


def is_throttled_replica(throttled_replicas: Iterable[str] | str | None, partition: int, broker_id: int) -> bool:
    """Whether the topic config value (a list, or its comma-separated text) names this broker's replica
    of `partition`: "*" names every replica; "0:1" names partition 0 on broker 1."""
    if not throttled_replicas:
        return False
    entries = throttled_replicas.split(",") if isinstance(throttled_replicas, str) else throttled_replicas
    wanted = f"{partition}:{broker_id}"
    for entry in entries:
        e = entry.strip()
        if e == ALL_REPLICAS or e == wanted:
            return True
    return False


class ReplicationQuotaManager:
    def __init__(self, bound_bytes_per_s: int = UNLIMITED, num_windows: int = DEFAULT_NUM_WINDOWS,
                 window_size_s: int = DEFAULT_WINDOW_SIZE_S, time: Time = SYSTEM) -> None:
        self._time = time
        self._lock = threading.Lock()
        self._bound = bound_bytes_per_s
        self._rate = SampledRate(num_windows, max(1, window_size_s) * 1000)

    @property
    def bound(self) -> int:
        return self._bound

    def update_quota(self, bound_bytes_per_s: int) -> None:
        with self._lock:
            self._bound = bound_bytes_per_s if bound_bytes_per_s > 0 else UNLIMITED

    def is_enabled(self) -> bool:
        return self._bound < UNLIMITED

    def record(self, nbytes: int) -> None:
        if nbytes <= 0 or self._bound >= UNLIMITED:
            return
        now = self._time.milliseconds()
        with self._lock:
            self._rate.record(nbytes, now)

    def rate(self) -> float:
        """Bytes per second over the sampled windows."""
        now = self._time.milliseconds()
        with self._lock:
            return self._rate.rate(now)

    def is_quota_exceeded(self) -> bool:
        if self._bound >= UNLIMITED:
            return False
        return self.rate() > self._bound
