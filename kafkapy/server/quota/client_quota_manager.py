"""ClientQuotaManager: Kafka's per-client quota on one quantity (produce bytes, fetch bytes, or request
handler time as a percentage), with Kafka's entity precedence and throttle time.

The quota of a request from (user, client-id) is the first configured value of this manager's key in
Kafka's order: /config/users/<user>/clients/<client-id>, users/<user>/clients/<default>, users/<user>,
users/<default>/clients/<client-id>, users/<default>/clients/<default>, users/<default>,
clients/<client-id>, clients/<default>. Clients sharing the matched entity share one rate (a user quota
is shared by all of that user's client-ids; a default quota gives each its own). No quota: no throttle.

Each rate is a SampledRate of `quota.window.num` windows of `quota.window.size.seconds`. The value is
recorded first; when the rate is then above the quota the throttle time is Kafka's
(rate - quota) / quota * window size, at most the full sampled span. The caller answers at once with that
throttle_time_ms and mutes the connection for as long (Kafka 2.0+).
No byte format. Thread-safety: one lock; `update_quotas` may be called from any thread.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from kafkapy.common.time import SYSTEM, Time
from kafkapy.server.quota.client_quota_store import DEFAULT, EntityKey
from kafkapy.server.quota.sampled_rate import SampledRate

DEFAULT_NUM_WINDOWS = 11
DEFAULT_WINDOW_SIZE_S = 1


def _precedence(user: str, client_id: str) -> tuple[tuple[EntityKey, EntityKey], ...]:
    """(config entity, rate key) pairs in Kafka's order; the rate key names whose rate is shared."""
    both = (user, client_id)
    return (
        ((user, client_id), both), ((user, DEFAULT), both), ((user, None), (user, None)),
        ((DEFAULT, client_id), both), ((DEFAULT, DEFAULT), both), ((DEFAULT, None), (user, None)),
        ((None, client_id), (None, client_id)), ((None, DEFAULT), (None, client_id)),
    )


class ClientQuotaManager:
    def __init__(self, quota_key: str, num_windows: int = DEFAULT_NUM_WINDOWS,
                 window_size_s: int = DEFAULT_WINDOW_SIZE_S, time: Time = SYSTEM) -> None:
        self.quota_key = quota_key
        self._time = time
        self._num_windows = max(2, num_windows)
        self._window_ms = max(1, window_size_s) * 1000
        self._lock = threading.Lock()
        self._quotas: dict[EntityKey, float] = {}
        self._rates: dict[EntityKey, SampledRate] = {}

    def update_quotas(self, snapshot: Mapping[EntityKey, Mapping[str, float]]) -> None:
        """Take every entity's value of this manager's key (ClientQuotaStore.snapshot())."""
        quotas = {k: v[self.quota_key] for k, v in snapshot.items() if self.quota_key in v}
        with self._lock:
            self._quotas = quotas

    def quota_enabled(self) -> bool:
        return bool(self._quotas)

    def quota(self, user: str, client_id: str) -> tuple[float, EntityKey] | None:
        """(quota, rate key) for this client, or None when no entity sets one."""
        quotas = self._quotas
        if not quotas:
            return None
        for entity, rate_key in _precedence(user, client_id):
            bound = quotas.get(entity)
            if bound is not None:
                return bound, rate_key
        return None

    def record_and_get_throttle_time_ms(self, user: str, client_id: str, value: float) -> int:
        found = self.quota(user, client_id)
        if found is None:
            return 0
        bound, rate_key = found
        now = self._time.milliseconds()
        with self._lock:
            rate = self._rates.get(rate_key)
            if rate is None:
                rate = self._rates[rate_key] = SampledRate(self._num_windows, self._window_ms)
            rate.record(value, now)
            observed = rate.rate(now)
            if observed <= bound:
                return 0
            window_ms = rate.window_size_ms(now)
        throttle = int((observed - bound) / bound * window_ms)
        return min(throttle, self._num_windows * self._window_ms)
