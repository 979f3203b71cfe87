"""BrokerConnection / NetworkClient against scripted fake brokers on loopback.

Covers ApiVersions negotiation (min of ours and theirs, the UNSUPPORTED_VERSION v0 fallback),
pipelining with correlation ids, and failures: a broker that closes mid-request or never answers
gives a clean retriable error in bounded time, never a hang.
"""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from client_fake_broker import (
    CLOSE,
    FULL_TABLE,
    HANG,
    api_versions_response,
    metadata_response,
    standard_handler,
)

from kafkapy.client.admin import AdminClient
from kafkapy.client.config import AdminClientConfig
from kafkapy.client.connection import BrokerConnection, our_version_range
from kafkapy.client.errors import ClientUnsupportedVersionError, DisconnectError, KafkaTimeoutError
from kafkapy.client.network_client import NetworkClient
from kafkapy.common.errors import KafkaError


def test_api_versions_negotiation_picks_min_of_ours_and_theirs(fake_broker) -> None:
    table = {0: (3, 7), 3: (0, 5), 18: (0, 3), 2: (1, 50)}
    broker = fake_broker(standard_handler(table))
    conn = BrokerConnection(-1, "127.0.0.1", broker.port, client_id="t")
    try:
        conn.connect(2000)
        api_key, version, body = broker.requests[0]
        assert (api_key, version) == (18, our_version_range(18)[1])
        assert body.client_software_name == "kafkapy"
        assert body.client_software_version
        assert conn.api_versions == table
        assert conn.pick_version(0) == 7  # theirs lower
        assert conn.pick_version(3) == 5
        assert conn.pick_version(2) == our_version_range(2)[1]  # ours lower
        assert conn.pick_version(3, max_version=4) == 4
        with pytest.raises(ClientUnsupportedVersionError):
            conn.pick_version(1)  # Fetch not advertised
    finally:
        conn.close()


def test_api_versions_unsupported_version_falls_back(fake_broker) -> None:
    table = {3: (0, 9), 18: (0, 2)}

    def handle(header: Any, body: Any) -> Any:
        if header.api_key == 18 and header.api_version > 2:
            # What Kafka does: UNSUPPORTED_VERSION with a v0 body listing its ApiVersions range.
            return 0, api_versions_response({18: (0, 2)}, error=35)
        if header.api_key == 18:
            return api_versions_response(table)
        return HANG

    broker = fake_broker(handle)
    conn = BrokerConnection(-1, "127.0.0.1", broker.port)
    try:
        conn.connect(2000)
        assert [(k, v) for k, v, _ in broker.requests] == [(18, our_version_range(18)[1]), (18, 2)]
        assert conn.api_versions == table
        assert conn.pick_version(3) == 9
    finally:
        conn.close()


def test_pipelined_requests_match_correlation_ids(fake_broker) -> None:
    port_holder: list[int] = []
    broker = fake_broker(standard_handler(FULL_TABLE, lambda h, b: metadata_response(port_holder[0])))
    port_holder.append(broker.port)
    conn = BrokerConnection(-1, "127.0.0.1", broker.port)
    try:
        conn.connect(2000)
        from kafkapy.protocol.messages import MetadataRequest

        futures = [conn.send(MetadataRequest(topics=[])) for _ in range(5)]
        results = [conn.wait(f, 2000) for f in futures]
        assert all(r.cluster_id == "fake" for r in results)
        assert conn.in_flight_count == 0
    finally:
        conn.close()


def test_broker_closing_mid_request_gives_retriable_error(fake_broker) -> None:
    broker = fake_broker(standard_handler(FULL_TABLE, lambda h, b: CLOSE))
    client = NetworkClient(AdminClientConfig({"bootstrap.servers": f"127.0.0.1:{broker.port}"}))
    try:
        start = time.monotonic()
        with pytest.raises(DisconnectError) as info:
            client.request(-1, client._metadata_request([], False), 2000, api_key=3)  # one attempt
        assert info.value.retriable
        assert time.monotonic() - start < 5
    finally:
        client.close()


def test_admin_call_against_closing_broker_is_bounded(fake_broker) -> None:
    broker = fake_broker(standard_handler(FULL_TABLE, lambda h, b: CLOSE))
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{broker.port}", "retry.backoff.ms": 20,
                         "reconnect.backoff.ms": 10})
    try:
        start = time.monotonic()
        with pytest.raises(KafkaError) as info:
            admin.list_topics(timeout_ms=1000)
        elapsed = time.monotonic() - start
        assert info.value.retriable
        assert 0.5 < elapsed < 5
        assert len([r for r in broker.requests if r[0] == 3]) >= 2  # it did retry
    finally:
        admin.close()


def test_silent_broker_times_out_and_disconnects(fake_broker) -> None:
    broker = fake_broker(standard_handler(FULL_TABLE))  # never answers Metadata
    client = NetworkClient(AdminClientConfig({
        "bootstrap.servers": f"127.0.0.1:{broker.port}", "request.timeout.ms": 300,
    }))
    try:
        start = time.monotonic()
        with pytest.raises(KafkaTimeoutError):
            client.request(-1, client._metadata_request([], False), api_key=3)
        assert time.monotonic() - start < 3
        # An in-flight request past request.timeout.ms closes the connection (as Java does).
        conn = client.get_connection(-1)
        from kafkapy.protocol.messages import MetadataRequest

        fut = conn.send(MetadataRequest(topics=[]))
        deadline = time.monotonic() + 3
        while not fut.done() and time.monotonic() < deadline:
            conn.poll(50)
        assert isinstance(fut.exception(), KafkaTimeoutError)
        assert not conn.is_connected()
    finally:
        client.close()


def test_connection_refused_is_retriable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conn = BrokerConnection(-1, "127.0.0.1", port)
    with pytest.raises(DisconnectError) as info:
        conn.connect(1000)
    assert info.value.retriable
