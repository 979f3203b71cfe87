"""NetworkClient's unreachable-bootstrap rule, on a MockTime clock: hard connect failures (refused,
unresolvable, not Kafka) of every bootstrap address end in BootstrapUnreachableError after
BOOTSTRAP_FAIL_FAST_MS; timeouts never do."""

from __future__ import annotations

import socket

import pytest

from kafkapy.client.config import AdminClientConfig
from kafkapy.client.errors import (
    BootstrapUnreachableError,
    DisconnectError,
    KafkaTimeoutError,
    NotKafkaPeerError,
)
from kafkapy.client.network_client import BOOTSTRAP_FAIL_FAST_MS, NetworkClient, hard_failure_cause
from kafkapy.common.time import MockTime


def _caused(error: Exception, cause: BaseException) -> Exception:
    error.__cause__ = cause
    return error


def test_hard_failure_causes() -> None:
    assert hard_failure_cause(_caused(DisconnectError("x"), ConnectionRefusedError(111, "Connection refused"))) == \
        "connection refused"
    assert hard_failure_cause(_caused(DisconnectError("x"), socket.gaierror(-2, "Name or service not known"))) == \
        "Name or service not known"
    assert hard_failure_cause(NotKafkaPeerError("m", detail="frame too large")) == "not a Kafka broker: frame too large"
    assert hard_failure_cause(_caused(DisconnectError("x"), TimeoutError("timed out"))) is None
    assert hard_failure_cause(KafkaTimeoutError("slow")) is None


def test_refused_bootstrap_gives_up_after_the_fail_fast_window() -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
    time = MockTime()
    client = NetworkClient(AdminClientConfig({"bootstrap.servers": f"127.0.0.1:{port}"}), time=time)
    try:
        started = time.milliseconds()
        with pytest.raises(DisconnectError):
            client.get_connection(-1)  # the first refusal is still retried
        with pytest.raises(BootstrapUnreachableError) as e:
            for _ in range(50):
                try:
                    client.get_connection(-1)
                except DisconnectError:
                    continue
        assert time.milliseconds() - started >= BOOTSTRAP_FAIL_FAST_MS
        assert str(e.value) == f"Could not connect to any bootstrap server: 127.0.0.1:{port} (connection refused)"
        assert not e.value.retriable
    finally:
        client.close()
