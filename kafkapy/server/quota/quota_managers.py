"""QuotaManagers: the broker's client quota managers (Kafka's QuotaFactory) and the one place a response
learns its throttle time.

`produce` (producer_byte_rate, recorded with the Produce request's size), `fetch` (consumer_byte_rate,
recorded with the Fetch response's size; follower fetches are exempt), `request` (request_percentage,
recorded with the handler thread's time as a percentage of one second). `throttle_ms(...)` is
called once per response by RequestContext.respond; the response carries max(its throttle_time_ms, the
throttle) and the connection is muted that long (network/socket_server.py). The quotas are re-read from
the metadata store (ClientQuotaStore) at start, after AlterClientQuotas, and on a users/clients
config-change notification (cluster mode).
No byte format. Thread-safety: each manager locks itself; `reload` may run on any thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from kafkapy.common.file_region import FileRegion
from kafkapy.common.time import SYSTEM, Time
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.server.quota.client_quota_manager import ClientQuotaManager
from kafkapy.server.quota.client_quota_store import (
    CONSUMER_BYTE_RATE,
    PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
    ClientQuotaStore,
)

log = logging.getLogger("kafka.server.ClientQuotaManager")
_PRODUCE = int(ApiKey.PRODUCE)
_FETCH = int(ApiKey.FETCH)
# Requests Kafka never throttles on the request quota (ApiVersions, SASL, inter-broker/controller RPCs).
_REQUEST_QUOTA_EXEMPT = frozenset(int(k) for k in (
    ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE, ApiKey.LEADER_AND_ISR,
    ApiKey.STOP_REPLICA, ApiKey.UPDATE_METADATA, ApiKey.CONTROLLED_SHUTDOWN))


def _size(chunks: Sequence[Any]) -> int:
    return sum(c.length if isinstance(c, FileRegion) else len(c) for c in chunks)


class QuotaManagers:
    def __init__(self, store: Any, num_windows: int, window_size_s: int, time: Time = SYSTEM) -> None:
        self.store = ClientQuotaStore(store)
        self.produce = ClientQuotaManager(PRODUCER_BYTE_RATE, num_windows, window_size_s, time)
        self.fetch = ClientQuotaManager(CONSUMER_BYTE_RATE, num_windows, window_size_s, time)
        self.request = ClientQuotaManager(REQUEST_PERCENTAGE, num_windows, window_size_s, time)
        self.reload()

    def reload(self) -> None:
        snapshot = self.store.snapshot()
        for manager in (self.produce, self.fetch, self.request):
            manager.update_quotas(snapshot)

    def throttle_ms(self, api_key: int, user: str, client_id: str, request_size: int, chunks: Sequence[Any],
                    handler_ns: int, exempt: bool = False) -> int:
        """Record one answered request against the client's quotas; its throttle time (0 if none).
        `exempt`: a follower's Fetch (replication has its own throttle)."""
        throttle = 0
        if api_key == _PRODUCE and self.produce.quota_enabled():
            throttle = self.produce.record_and_get_throttle_time_ms(user, client_id, request_size)
        elif api_key == _FETCH and not exempt and self.fetch.quota_enabled():
            throttle = self.fetch.record_and_get_throttle_time_ms(user, client_id, _size(chunks))
        if handler_ns > 0 and api_key not in _REQUEST_QUOTA_EXEMPT and self.request.quota_enabled():
            # Kafka's nanosToPercentage: thread time as a percentage of one second.
            percent = handler_ns * 100.0 / 1e9
            throttle = max(throttle, self.request.record_and_get_throttle_time_ms(user, client_id, percent))
        return throttle
