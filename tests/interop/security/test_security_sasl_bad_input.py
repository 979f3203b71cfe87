"""SASL at the wire: v0 raw-token framing, re-authentication, and each bad input (wrong password,
exchange out of order, a request before authentication, an oversized token, an unsupported mechanism)
refused on that connection only, with one log line, while the broker keeps serving."""

from __future__ import annotations

import time

import pytest

from kafkapy.protocol.messages.api_versions import ApiVersionsRequest
from kafkapy.protocol.messages.metadata import MetadataRequest
from kafkapy.protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from kafkapy.protocol.messages.sasl_handshake import SaslHandshakeRequest

pytestmark = pytest.mark.timeout(120)

AUTH_LOGGER = "org.apache.kafka.common.network.Selector"


def plain_token(user: str, password: str) -> bytes:
    return b"\x00" + user.encode() + b"\x00" + password.encode()


def failure_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Failed authentication")]


def login(client, user: str = "alice", password: str = "alice-secret", version: int = 2):
    hs = client.request(SaslHandshakeRequest(mechanism="PLAIN"), 1)
    assert hs.error_code == 0 and "PLAIN" in hs.mechanisms
    return client.request(SaslAuthenticateRequest(auth_bytes=plain_token(user, password)), version)


def assert_serves(secure_broker, wire_client, listener: str = "SASL_PLAINTEXT") -> None:
    client = wire_client(secure_broker.port(listener), client_id="still-serving")
    assert login(client).error_code == 0
    assert client.request(MetadataRequest(topics=None), 1).brokers


def test_wrong_password_is_refused_after_the_delay(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"))
    client.request(SaslHandshakeRequest(mechanism="PLAIN"), 1)
    start = time.monotonic()
    resp = client.request(SaslAuthenticateRequest(auth_bytes=plain_token("alice", "nope")), 2)
    elapsed = time.monotonic() - start
    assert resp.error_code == 58  # SASL_AUTHENTICATION_FAILED
    assert resp.error_message == "Authentication failed: Invalid username or password"
    assert elapsed >= 0.09  # connection.failed.authentication.delay.ms=100
    assert client.is_closed()
    assert len(failure_lines(caplog)) == 1
    assert_serves(secure_broker, wire_client)


def test_unknown_scram_user_is_refused(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"))
    assert client.request(SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), 1).error_code == 0
    resp = client.request(SaslAuthenticateRequest(auth_bytes=b"n,,n=nobody,r=abcdefghijkl"), 2)
    assert resp.error_code == 58
    assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in resp.error_message
    assert client.is_closed()
    assert len(failure_lines(caplog)) == 1


def test_sasl_authenticate_before_handshake_is_illegal(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"))
    resp = client.request(SaslAuthenticateRequest(auth_bytes=plain_token("alice", "alice-secret")), 1)
    assert resp.error_code == 34  # ILLEGAL_SASL_STATE
    assert client.is_closed()
    assert len(failure_lines(caplog)) == 1
    assert_serves(secure_broker, wire_client)


def test_request_before_authentication_closes_the_connection(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"))
    assert client.request(ApiVersionsRequest(), 0).error_code == 0  # allowed before authentication
    client.send(MetadataRequest(topics=None), 1)
    assert client.is_closed()
    lines = failure_lines(caplog)
    assert len(lines) == 1 and "Unexpected Kafka request of type 3 during SASL handshake" in lines[0]
    assert_serves(secure_broker, wire_client)


def test_second_handshake_is_illegal(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"))
    assert client.request(SaslHandshakeRequest(mechanism="PLAIN"), 1).error_code == 0
    assert client.request(SaslHandshakeRequest(mechanism="PLAIN"), 1).error_code == 34
    assert client.is_closed()
    assert len(failure_lines(caplog)) == 1


def test_oversized_token_is_refused_before_allocation(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"))
    client.request(SaslHandshakeRequest(mechanism="PLAIN"), 1)
    # A SaslAuthenticate frame claiming 100 MB (> sasl.server.max.receive.size 524288): refused on its size.
    client.send_raw((100 * 1024 * 1024).to_bytes(4, "big") + b"\x00\x24\x00\x02")
    assert client.is_closed()
    lines = failure_lines(caplog)
    assert len(lines) == 1 and "sasl.server.max.receive.size" in lines[0]
    assert_serves(secure_broker, wire_client)


def test_unsupported_mechanism(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"))
    resp = client.request(SaslHandshakeRequest(mechanism="GSSAPI"), 1)
    assert resp.error_code == 33  # UNSUPPORTED_SASL_MECHANISM
    assert resp.mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
    assert client.is_closed()
    assert len(failure_lines(caplog)) == 1


def test_sasl_requests_on_a_plaintext_listener(secure_broker, wire_client):
    client = wire_client(secure_broker.port("PLAINTEXT"))
    assert client.request(SaslHandshakeRequest(mechanism="PLAIN"), 1).error_code == 34
    assert client.request(SaslAuthenticateRequest(auth_bytes=b"x"), 1).error_code == 34
    assert client.request(MetadataRequest(topics=None), 1).brokers  # still open, still served


def test_sasl_authenticate_after_authentication_is_answered_and_the_connection_stays(secure_broker, wire_client):
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"))
    assert login(client).error_code == 0
    resp = client.request(SaslAuthenticateRequest(auth_bytes=plain_token("alice", "alice-secret")), 1)
    assert resp.error_code == 34
    assert resp.error_message == "SaslAuthenticate request received after successful authentication"
    assert client.request(MetadataRequest(topics=None), 1).brokers


def test_v0_handshake_then_raw_tokens(secure_broker, wire_client):
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"), client_id="raw-v0")
    hs = client.request(SaslHandshakeRequest(mechanism="PLAIN"), 0)
    assert hs.error_code == 0
    token = plain_token("alice", "alice-secret")
    client.send_raw(len(token).to_bytes(4, "big") + token)  # bare token, no request header
    assert client.recv_frame() == b""  # PLAIN's (empty) server token, also bare
    assert client.request(MetadataRequest(topics=None), 1).brokers
    assert secure_broker.principals_of("raw-v0") == {("SASL_PLAINTEXT", "User:alice")}


def test_v0_raw_token_with_a_wrong_password_closes_without_response(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("SASL_PLAINTEXT"))
    client.request(SaslHandshakeRequest(mechanism="PLAIN"), 0)
    token = plain_token("alice", "wrong")
    client.send_raw(len(token).to_bytes(4, "big") + token)
    assert client.is_closed()
    assert len(failure_lines(caplog)) == 1


def test_reauthentication_extends_the_session_and_expiry_closes(secure_broker, wire_client):
    client = wire_client(secure_broker.port("REAUTH"), client_id="reauth")
    resp = login(client)
    assert resp.error_code == 0 and resp.session_lifetime_ms == 1500
    assert client.request(MetadataRequest(topics=None), 1).brokers
    time.sleep(1.0)
    resp = login(client)  # re-authentication on the same connection, before expiry
    assert resp.error_code == 0 and resp.session_lifetime_ms == 1500
    time.sleep(0.8)  # past the first session's expiry, within the second
    assert client.request(MetadataRequest(topics=None), 1).brokers
    time.sleep(1.0)  # past the second session too: the next request closes the connection
    client.send(MetadataRequest(topics=None), 1)
    assert client.is_closed()


def test_reauthentication_cannot_change_the_principal(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("REAUTH"))
    assert login(client).error_code == 0
    resp = login(client, "admin", "admin-secret")
    assert resp.error_code == 58 and "Cannot change principals" in resp.error_message
    assert client.is_closed()
    assert len(failure_lines(caplog)) == 1


def test_a_plaintext_kafka_client_on_sasl_ssl_is_refused(secure_broker, wire_client, caplog):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(secure_broker.port("SASL_SSL"))
    client.send(SaslHandshakeRequest(mechanism="PLAIN"), 1)
    assert client.is_closed()
    lines = failure_lines(caplog)
    assert len(lines) == 1 and "SSL handshake failed" in lines[0]
    assert_serves(secure_broker, wire_client)
