"""OAUTHBEARER as Kafka configures it, with confluent-kafka's oauth_cb and raw frames: on a listener with
Kafka's secured OAuthBearerValidatorCallbackHandler (keys from a file: JWKS this module writes) a forged
`alg: none` token for `admin` is refused and an RS256-signed one produces and consumes; the unsecured default
listener still takes unsigned tokens; malformed tokens (exp 1e400, NaN, strings, no sub, bad base64) get
SASL_AUTHENTICATION_FAILED with {"status":"invalid_token"} and one log line; a broker configured with a handler
class kafkapy cannot run, or OAUTHBEARER without a JAAS entry, refuses to start naming the key."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from security_helpers import OAUTH_JAAS, ck_roundtrip, kafkapy_roundtrip, run_tool

from kafkapy.protocol.messages.metadata import MetadataRequest
from kafkapy.protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from kafkapy.protocol.messages.sasl_handshake import SaslHandshakeRequest

pytestmark = pytest.mark.timeout(120)

AUTH_LOGGER = "org.apache.kafka.common.network.Selector"
SECURED_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
INVALID_TOKEN = '{"status":"invalid_token"}'


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


NONE_HEADER = b64(b'{"alg":"none"}')


def unsigned(claims_json: str) -> str:
    return f"{NONE_HEADER}.{b64(claims_json.encode())}."


def oauth_overrides(log_dir: str, jwks_url: str) -> dict[str, str]:
    return {
        "listeners": "PLAINTEXT://127.0.0.1:0,SECURED://127.0.0.1:0,OPEN://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SECURED:SASL_PLAINTEXT,OPEN:SASL_PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": log_dir,
        "num.network.threads": "1",
        "num.io.threads": "2",
        "sasl.enabled.mechanisms": "OAUTHBEARER",
        "connection.failed.authentication.delay.ms": "0",
        "listener.name.secured.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
        "listener.name.secured.oauthbearer.sasl.server.callback.handler.class": SECURED_HANDLER,
        "listener.name.secured.sasl.oauthbearer.jwks.endpoint.url": jwks_url,
        "listener.name.secured.sasl.oauthbearer.expected.audience": "kafka",
        "listener.name.secured.sasl.oauthbearer.expected.issuer": "https://idp.test",
        "listener.name.open.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
    }


class OAuthBroker:
    def __init__(self, server: Any, key: Any, log_dir: str, jwks_url: str) -> None:
        self.server, self.key, self.log_dir, self.jwks_url = server, key, log_dir, jwks_url

    def bootstrap(self, listener: str) -> str:
        return f"127.0.0.1:{self.server.bound_port(listener)}"

    def signed(self, sub: str, lifetime_s: int = 600, **claims: Any) -> tuple[str, float]:
        now = int(time.time())
        body = {"sub": sub, "iat": now, "exp": now + lifetime_s, "aud": "kafka", "iss": "https://idp.test", **claims}
        return jwt.encode(body, self.key, algorithm="RS256", headers={"kid": "idp-1"}), float(now + lifetime_s)


@pytest.fixture(scope="module")
def oauth_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OAuthBroker]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwks = {"keys": [{**RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "idp-1", "use": "sig"}]}
    jwks_path: Path = tmp_path_factory.mktemp("jwks") / "jwks.json"
    jwks_path.write_text(json.dumps(jwks))
    log_dir = str(tmp_path_factory.mktemp("oauth-data"))
    server = KafkaServer(KafkaConfig.from_properties(None, oauth_overrides(log_dir, jwks_path.as_uri())))
    server.startup()
    try:
        yield OAuthBroker(server, key, log_dir, jwks_path.as_uri())
    finally:
        server.shutdown()


def ck_conf(broker: OAuthBroker, listener: str, token_cb, client_id: str) -> dict:
    return {"bootstrap.servers": broker.bootstrap(listener), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER", "oauth_cb": token_cb, "client.id": client_id}


def failure_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Failed authentication")]


def test_forged_alg_none_admin_token_is_refused_on_the_secured_listener(oauth_broker, caplog):
    import confluent_kafka as ck

    caplog.set_level("INFO", logger=AUTH_LOGGER)
    forged = unsigned(json.dumps({"sub": "admin", "iat": int(time.time()), "exp": int(time.time()) + 600,
                                  "aud": "kafka", "iss": "https://idp.test"}))
    errors: list[Any] = []
    conf = ck_conf(oauth_broker, "SECURED", lambda _cfg: (forged, time.time() + 600, "admin", {}), "ck-forged")
    producer = ck.Producer({**conf, "error_cb": errors.append, "message.timeout.ms": 1000})  # it cannot log in
    deadline = time.time() + 15
    while not any(e.code() == ck.KafkaError._AUTHENTICATION for e in errors) and time.time() < deadline:
        producer.poll(0.2)
    producer.produce("forged-topic", value=b"x")
    assert producer.flush(10) == 0
    auth = [e for e in errors if e.code() == ck.KafkaError._AUTHENTICATION]
    assert auth and INVALID_TOKEN in auth[0].str()
    lines = failure_lines(caplog)
    assert lines and all("invalid OAUTHBEARER token" in line and "Unsecured" not in line for line in lines)
    assert not (Path(oauth_broker.log_dir) / "forged-topic-0").exists()


def test_signed_token_produces_and_consumes_on_the_secured_listener(oauth_broker):
    def token_cb(_cfg: str) -> tuple[str, float, str, dict]:
        token, expiry = oauth_broker.signed("svc-writer")
        return token, expiry, "svc-writer", {}

    conf = ck_conf(oauth_broker, "SECURED", token_cb, "ck-signed")
    assert ck_roundtrip(conf, "oauth-signed", 50) == [b"oauth-signed-%d" % i for i in range(50)]


def test_unsecured_default_listener_still_takes_unsigned_tokens(oauth_broker):
    conf = {"bootstrap.servers": oauth_broker.bootstrap("OPEN"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": "principal=svc-open lifeSeconds=600", "client.id": "ck-open"}
    assert ck_roundtrip(conf, "oauth-open", 20) == [b"oauth-open-%d" % i for i in range(20)]


def malformed_tokens() -> list[str]:
    soon = int(time.time()) + 600
    return [
        unsigned('{"sub":"admin","exp":1e400}'),
        unsigned('{"sub":"admin","exp":NaN}'),
        unsigned('{"sub":"admin","exp":"never"}'),
        unsigned(f'{{"exp":{soon}}}'),
        f"{NONE_HEADER}.%%%%.",
        f"{NONE_HEADER}.{b64(b'{not json')}.",
    ]


@pytest.mark.parametrize("listener", ["SECURED", "OPEN"])
def test_malformed_tokens_are_authentication_failures(oauth_broker, wire_client, caplog, listener):
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    port = oauth_broker.server.bound_port(listener)
    tokens = malformed_tokens()
    for token in tokens:
        client = wire_client(port)
        assert client.request(SaslHandshakeRequest(mechanism="OAUTHBEARER"), 1).error_code == 0
        message = f"n,,\x01auth=Bearer {token}\x01\x01".encode()
        challenge = client.request(SaslAuthenticateRequest(auth_bytes=message), 2)
        if b"%" in message:  # not even token syntax: the client message itself is malformed
            assert challenge.error_code == 58
            assert challenge.error_message.endswith("invalid credentials with SASL mechanism OAUTHBEARER")
        else:
            assert (challenge.error_code, bytes(challenge.auth_bytes)) == (0, INVALID_TOKEN.encode())
            final = client.request(SaslAuthenticateRequest(auth_bytes=b"\x01"), 2)
            assert (final.error_code, final.error_message) == (58, INVALID_TOKEN)
        assert client.is_closed()
    lines = failure_lines(caplog)
    assert len(lines) == len(tokens), lines
    assert not [r for r in caplog.records if r.exc_info]
    client = wire_client(oauth_broker.server.bound_port("PLAINTEXT"))
    assert client.request(MetadataRequest(topics=None), 1).brokers  # still serving


@pytest.mark.parametrize("override,key", [
    ({"listener.name.secured.oauthbearer.sasl.server.callback.handler.class": "com.example.CustomHandler"},
     "listener.name.secured.oauthbearer.sasl.server.callback.handler.class"),
    ({"listener.name.secured.sasl.oauthbearer.jwks.endpoint.url": None}, "sasl.oauthbearer.jwks.endpoint.url"),
    ({"listener.name.open.oauthbearer.sasl.jaas.config": None}, "listener.name.open.oauthbearer.sasl.jaas.config"),
])
def test_unsupported_oauthbearer_configuration_refuses_to_start(oauth_broker, tmp_path, capsys, override, key):
    from kafkapy.cli import server as srv

    props = {**oauth_overrides(str(tmp_path), oauth_broker.jwks_url), **override}
    args = [a for k, v in props.items() if v is not None for a in ("--override", f"{k}={v}")]
    assert srv.start_main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: Fatal error during KafkaServer startup: ") and key in err
    assert err.count("\n") == 1


class JwksHttpsServer:
    """An https JWKS endpoint on 127.0.0.1 (the test PKI's broker certificate) whose key set the test swaps."""

    def __init__(self, pki: Any) -> None:
        import http.server
        import ssl
        import threading

        self.body = b"{}"
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                outer.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(outer.body)))
                self.end_headers()
                self.wfile.write(outer.body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(pki.broker))
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}/jwks.json"

    def serve(self, *keys: tuple[Any, str]) -> None:
        self.body = json.dumps({"keys": [{**RSAAlgorithm.to_jwk(k.public_key(), as_dict=True), "kid": kid}
                                         for k, kid in keys]}).encode()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


def test_https_jwks_endpoint_with_rotation(pki):
    from kafkapy.server.security.oauthbearer_callback_handlers import (
        OAuthBearerConfigError,
        build_oauthbearer_validator,
    )
    from kafkapy.server.security.oauthbearer_token import OAuthBearerValidationError

    old_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    new_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    endpoint = JwksHttpsServer(pki)
    try:
        endpoint.serve((old_key, "old"))
        settings = {"sasl.server.callback.handler.class": SECURED_HANDLER,
                    "sasl.oauthbearer.jwks.endpoint.url": endpoint.url,
                    "sasl.oauthbearer.jwks.endpoint.refresh.ms": 3600000,
                    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": 10,
                    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": 100,
                    "sasl.oauthbearer.clock.skew.seconds": 30}

        def lookup(key: str) -> tuple[Any, str]:
            return settings.get(key), key

        jaas = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca)}
        validator = build_oauthbearer_validator(lookup, jaas)
        now = int(time.time())
        claims = {"sub": "rotated", "iat": now, "exp": now + 300}
        now_ms = now * 1000
        assert validator.validate(jwt.encode(claims, old_key, "RS256", headers={"kid": "old"}), now_ms).principal_name \
            == "rotated"
        assert endpoint.requests == 1
        endpoint.serve((new_key, "new"))  # the identity provider rotates its key
        rotated = jwt.encode(claims, new_key, "RS256", headers={"kid": "new"})
        with pytest.raises(OAuthBearerValidationError, match="suitable verification key"):
            validator.validate(rotated, now_ms)  # unknown kid: refused now, an early refresh starts
        deadline = time.time() + 10
        while endpoint.requests < 2 and time.time() < deadline:
            time.sleep(0.02)
        ok = None
        while ok is None and time.time() < deadline:
            try:
                ok = validator.validate(rotated, now_ms)
            except OAuthBearerValidationError:
                time.sleep(0.02)
        assert ok is not None and ok.principal_name == "rotated"
        with pytest.raises(OAuthBearerConfigError, match="initializing the VerificationKeyResolver"):
            build_oauthbearer_validator(lookup, {})  # the test CA is not among the system's trusted CAs
    finally:
        endpoint.close()


def test_a_mechanism_bug_is_an_authentication_failure_not_a_server_error(oauth_broker, wire_client, caplog,
                                                                          monkeypatch):
    from kafkapy.server.security.sasl_server import OAuthBearerSaslServer

    def broken(self, token: bytes):
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setattr(OAuthBearerSaslServer, "evaluate", broken)
    caplog.set_level("INFO", logger=AUTH_LOGGER)
    client = wire_client(oauth_broker.server.bound_port("OPEN"))
    assert client.request(SaslHandshakeRequest(mechanism="OAUTHBEARER"), 1).error_code == 0
    resp = client.request(SaslAuthenticateRequest(auth_bytes=b"n,,\x01auth=Bearer a.b.\x01\x01"), 2)
    assert (resp.error_code, resp.error_message) == (
        58, "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER")
    assert client.is_closed()
    lines = failure_lines(caplog)
    assert len(lines) == 1 and "OverflowError: cannot convert float infinity to integer" in lines[0]
    assert not [r for r in caplog.records if r.exc_info]


def test_kafkapy_client_and_tools_log_in_with_oauthbearer(oauth_broker, tmp_path):
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.errors import SaslAuthenticationFailedError

    unsecured = {"bootstrap.servers": oauth_broker.bootstrap("OPEN"), "security.protocol": "SASL_PLAINTEXT",
                 "sasl.mechanism": "OAUTHBEARER", "client.id": "own-oauth",
                 "sasl.jaas.config": 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                                     'unsecuredLoginStringClaim_sub="svc-kafkapy";'}
    values = [b"own-oauth-%d" % i for i in range(20)]
    assert kafkapy_roundtrip(unsecured, "own-oauth", values) == list(enumerate(values))
    token_file = tmp_path / "token.jwt"
    token_file.write_text(oauth_broker.signed("svc-signed")[0] + "\n")
    signed = {"bootstrap.servers": oauth_broker.bootstrap("SECURED"), "security.protocol": "SASL_PLAINTEXT",
              "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": token_file.as_uri(),
              "sasl.login.callback.handler.class":
                  "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
              "sasl.jaas.config": OAUTH_JAAS}
    assert kafkapy_roundtrip(signed, "own-oauth-signed", values) == list(enumerate(values))
    props = tmp_path / "client.properties"
    props.write_text("".join(f"{k}={v}\n" for k, v in signed.items() if k != "bootstrap.servers"))
    listed = run_tool("topics", "--bootstrap-server", oauth_broker.bootstrap("SECURED"), "--command-config",
                      str(props), "--list")
    assert listed.rc == 0 and "own-oauth-signed" in listed.out.split(), listed.err
    forged = AdminClient({**unsecured, "bootstrap.servers": oauth_broker.bootstrap("SECURED"),
                          "request.timeout.ms": "5000"})
    try:
        with pytest.raises(SaslAuthenticationFailedError, match='invalid_token'):
            forged.list_topics()
    finally:
        forged.close()
