"""ClientQuotaManager with MockTime: Kafka's entity precedence, shared vs per-client rates, the
throttle time formula over the sampled windows, and ClientQuotaStore round trips on a real store."""

from __future__ import annotations

import pytest

from kafkapy.common.errors import InvalidRequestError
from kafkapy.common.time import MockTime
from kafkapy.controller.local_store import LocalMetadataStore
from kafkapy.server.quota.client_quota_manager import ClientQuotaManager
from kafkapy.server.quota.client_quota_store import (
    CLIENT_ID,
    DEFAULT,
    MATCH_DEFAULT,
    MATCH_EXACT,
    MATCH_SPECIFIED,
    USER,
    ClientQuotaStore,
)
from kafkapy.server.quota.sampled_rate import SampledRate

KEY = "producer_byte_rate"


def manager(snapshot, time=None, num_windows=11):
    m = ClientQuotaManager(KEY, num_windows, 1, time or MockTime())
    m.update_quotas({k: {KEY: v} for k, v in snapshot.items()})
    return m


def test_precedence_follows_kafkas_order() -> None:
    levels = [(("u", "c"), ("u", "c")), (("u", DEFAULT), ("u", "c")), (("u", None), ("u", None)),
              ((DEFAULT, "c"), ("u", "c")), ((DEFAULT, DEFAULT), ("u", "c")), ((DEFAULT, None), ("u", None)),
              ((None, "c"), (None, "c")), ((None, DEFAULT), (None, "c"))]
    for i, (_entity, rate_key) in enumerate(levels):
        # every level below this one is also set: the higher one wins
        m = manager({e: float(100 + j) for j, (e, _) in enumerate(levels) if j >= i})
        assert m.quota("u", "c") == (100.0 + i, rate_key)
    assert manager({}).quota("u", "c") is None
    assert manager({("other", None): 5.0}).quota("u", "c") is None


def test_no_quota_never_throttles() -> None:
    assert manager({}).record_and_get_throttle_time_ms("u", "c", 10**9) == 0


def test_throttle_time_is_kafkas_formula() -> None:
    time = MockTime()
    m = manager({(None, "c"): 1000.0}, time)
    # 11 windows of 1 s: the rate is judged over at least 10 s, so 10,000 bytes are just within.
    assert m.record_and_get_throttle_time_ms("u", "c", 10_000) == 0
    # 20,000 bytes over 10 s = 2,000 B/s: (2000 - 1000) / 1000 * 10 s = 10 s
    assert m.record_and_get_throttle_time_ms("u", "c", 10_000) == 10_000
    # the samples expire after 11 windows: a fresh start
    time.advance(11_000)
    assert m.record_and_get_throttle_time_ms("u", "c", 5_000) == 0


def test_throttle_is_capped_at_the_sampled_span() -> None:
    m = manager({(None, "c"): 1.0})
    assert m.record_and_get_throttle_time_ms("u", "c", 10**9) == 11_000


def test_client_quota_is_shared_by_users_and_default_is_per_client() -> None:
    m = manager({(None, "c"): 1000.0, (DEFAULT, None): 1000.0})
    assert m.record_and_get_throttle_time_ms("alice", "x", 10_000) == 0
    assert m.record_and_get_throttle_time_ms("bob", "x", 10_000) == 0  # bob's own default-user rate
    m = manager({(None, "c"): 1000.0})
    assert m.record_and_get_throttle_time_ms("alice", "c", 10_000) == 0
    assert m.record_and_get_throttle_time_ms("bob", "c", 10_000) > 0  # one client-id rate for both


def test_small_window_count_settles_fast() -> None:
    time = MockTime()
    m = manager({(None, "c"): 1000.0}, time, num_windows=2)
    assert m.record_and_get_throttle_time_ms("u", "c", 1000) == 0
    assert m.record_and_get_throttle_time_ms("u", "c", 500) == 500
    # judged over at least one window: 1,500 bytes are over 1,000 B/s until 1.5 s have passed
    time.advance(500)
    assert m.record_and_get_throttle_time_ms("u", "c", 0) == 500
    time.advance(1000)
    assert m.record_and_get_throttle_time_ms("u", "c", 0) == 0


def test_sampled_rate_window_size() -> None:
    r = SampledRate(3, 1000)
    r.record(300, 0)
    assert r.window_size_ms(0) == 2000 and r.rate(0) == 150.0
    r.record(300, 2500)
    assert r.window_size_ms(2500) == 2500 and r.rate(2500) == 240.0
    assert r.rate(3000) == 150.0  # the first sample expired at 3 windows


@pytest.fixture
def store(tmp_path):
    return ClientQuotaStore(LocalMetadataStore(str(tmp_path)))


def test_store_round_trip_and_filters(store) -> None:
    store.alter({USER: "alice"}, [(KEY, 2048.0, False)], False)
    store.alter({USER: "alice", CLIENT_ID: "app"}, [(KEY, 1024.0, False)], False)
    store.alter({CLIENT_ID: None}, [("consumer_byte_rate", 512.0, False)], False)
    store.alter({USER: "a/b"}, [("request_percentage", 12.5, False)], False)
    assert store.snapshot() == {("alice", None): {KEY: 2048.0}, ("alice", "app"): {KEY: 1024.0},
                                (None, DEFAULT): {"consumer_byte_rate": 512.0},
                                ("a/b", None): {"request_percentage": 12.5}}
    assert store.describe([(USER, MATCH_EXACT, "alice")], True) == [({USER: "alice"}, {KEY: 2048.0})]
    assert [e for e, _ in store.describe([(USER, MATCH_EXACT, "alice")], False)] == [
        {USER: "alice"}, {USER: "alice", CLIENT_ID: "app"}]
    assert [e for e, _ in store.describe([(CLIENT_ID, MATCH_DEFAULT, None)], True)] == [{CLIENT_ID: None}]
    assert len(store.describe([(USER, MATCH_SPECIFIED, None)], False)) == 3
    store.alter({USER: "alice"}, [(KEY, 0.0, True)], False)
    assert ("alice", None) not in store.snapshot()


def test_store_validation(store) -> None:
    with pytest.raises(InvalidRequestError):
        store.alter({USER: "alice"}, [("no_such_quota", 1.0, False)], False)
    with pytest.raises(InvalidRequestError):
        store.alter({USER: "alice"}, [(KEY, 1.5, False)], False)
    with pytest.raises(InvalidRequestError):
        store.alter({USER: "alice"}, [(KEY, -1.0, False)], False)
    with pytest.raises(InvalidRequestError):
        store.describe([(USER, MATCH_EXACT, None)], False)
    store.alter({USER: "alice"}, [(KEY, 100.0, False)], True)  # validate only
    assert store.snapshot() == {}


def test_quota_managers_record_each_quantity(tmp_path) -> None:
    from kafkapy.protocol.api_keys import ApiKey
    from kafkapy.server.quota.quota_managers import QuotaManagers

    time = MockTime()
    qm = QuotaManagers(LocalMetadataStore(str(tmp_path)), 2, 1, time)
    assert qm.throttle_ms(ApiKey.PRODUCE, "u", "c", 10**6, [], 10**9) == 0  # no quotas at all
    qm.store.alter({CLIENT_ID: "c"}, [("producer_byte_rate", 1000.0, False), ("consumer_byte_rate", 100.0, False),
                                      ("request_percentage", 10.0, False)], False)
    qm.reload()
    # Produce: the request's size; 2,000 bytes over the 1 s minimum window at 1,000 B/s: 1 s
    assert qm.throttle_ms(ApiKey.PRODUCE, "u", "c", 2000, [], 0) == 1000
    # Fetch: the response's size; a follower's fetch is exempt
    assert qm.throttle_ms(ApiKey.FETCH, "u", "c", 50, [b"x" * 300], 0) == 2000
    assert qm.throttle_ms(ApiKey.FETCH, "u", "other", 50, [b"x" * 300], 0, exempt=False) == 0
    assert qm.throttle_ms(ApiKey.FETCH, "u", "c", 50, [b"x" * 10**6], 0, exempt=True) == 0
    # Request time: 200 ms of handler time = 20% of a second, twice the 10% quota
    assert qm.throttle_ms(ApiKey.METADATA, "u", "c", 50, [], 200_000_000) == 1000
    assert qm.throttle_ms(ApiKey.API_VERSIONS, "u", "c", 50, [], 10**9) == 0  # exempt
