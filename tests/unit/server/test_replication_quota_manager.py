"""ReplicationQuotaManager under MockTime: Kafka's sampled rate (windows, expiry, the minimum span of all
but one window), the quota bound, and which replicas a *.replication.throttled.replicas value names."""

from __future__ import annotations

from kafkapy.common.time import MockTime
from kafkapy.server.replication_quota_manager import UNLIMITED, ReplicationQuotaManager, is_throttled_replica


def test_unlimited_by_default_records_nothing() -> None:
    quota = ReplicationQuotaManager(time=MockTime())
    assert not quota.is_enabled() and quota.bound == UNLIMITED
    quota.record(10 ** 12)
    assert quota.rate() == 0.0 and not quota.is_quota_exceeded()


def test_rate_over_windows_and_expiry() -> None:
    time = MockTime()
    quota = ReplicationQuotaManager(1000, num_windows=3, window_size_s=1, time=time)
    quota.record(1500)
    # One sample: judged over at least (3 - 1) windows, not the 0 ms since it started.
    assert quota.rate() == 750.0 and not quota.is_quota_exceeded()
    quota.record(600)
    assert quota.rate() == 1050.0 and quota.is_quota_exceeded()
    time.advance(1000)
    quota.record(300)  # a second window
    assert quota.rate() == 1200.0
    time.advance(1500)  # 2.5 s since the first sample: 2400 bytes over 2.5 s
    assert quota.rate() == 960.0 and not quota.is_quota_exceeded()
    time.advance(500)  # the first window expires after 3 windows: only the 300 bytes remain
    assert quota.rate() == 150.0
    quota.update_quota(100)
    assert quota.is_quota_exceeded()
    quota.update_quota(0)  # 0 (or unset) means no throttle, as an absent Kafka config
    assert not quota.is_enabled() and not quota.is_quota_exceeded()


def test_throttled_replicas_value() -> None:
    assert is_throttled_replica(["*"], 7, 3)
    assert is_throttled_replica("0:1,1:2", 1, 2)
    assert is_throttled_replica(["0:1", " 1:2"], 1, 2)
    assert not is_throttled_replica("0:1,1:2", 1, 1)
    assert not is_throttled_replica([], 0, 0) and not is_throttled_replica(None, 0, 0)
