"""ConnectionQuotas: per-IP limits with overrides, the broker-wide limit, the exempt listener."""

from __future__ import annotations

import pytest

from kafkapy.server.network.connection_quotas import ConnectionQuotas, parse_overrides


def test_parse_overrides() -> None:
    assert parse_overrides("127.0.0.2:5, 10.0.0.1:0") == {"127.0.0.2": 5, "10.0.0.1": 0}
    assert parse_overrides("") == {}
    with pytest.raises(ValueError):
        parse_overrides("127.0.0.1")


def test_per_ip_limit_and_override() -> None:
    q = ConnectionQuotas(100, 2, {"10.0.0.9": 1})
    assert q.inc("PLAINTEXT", "10.0.0.1") and q.inc("PLAINTEXT", "10.0.0.1")
    assert not q.inc("PLAINTEXT", "10.0.0.1")
    assert q.inc("PLAINTEXT", "10.0.0.9") and not q.inc("PLAINTEXT", "10.0.0.9")
    q.dec("10.0.0.1")
    assert q.get("10.0.0.1") == 1 and q.inc("PLAINTEXT", "10.0.0.1")
    q.dec("10.0.0.7")  # never counted: ignored
    assert q.get("10.0.0.7") == 0


def test_broker_wide_limit_exempts_the_inter_broker_listener() -> None:
    q = ConnectionQuotas(2, 100, {}, exempt_listener="REPLICATION")
    assert q.inc("PLAINTEXT", "a") and q.inc("PLAINTEXT", "b")
    assert not q.inc("PLAINTEXT", "c")
    assert q.inc("REPLICATION", "d")
    q.dec("a")
    q.dec("d")
    assert q.inc("PLAINTEXT", "c")
