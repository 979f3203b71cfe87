"""OAUTHBEARER validators (pure logic, tokens signed with keys generated here): Kafka's unsecured validator
with its JAAS options, the JWS-verifying validator over a file: JWKS (RSA and EC keys), the choice of
validator by sasl.server.callback.handler.class, the refreshing https JWKS resolver, and the SASL exchange's
error challenge for every malformed token."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from kafkapy.cluster.broker import EndPoint
from kafkapy.common.errors import SaslAuthenticationFailedError
from kafkapy.server.kafka_config import ConfigError, KafkaConfig
from kafkapy.server.network.listener_security import ListenerSecurity
from kafkapy.server.security.jwks_key_resolver import RefreshingHttpsJwksKeyResolver
from kafkapy.server.security.oauthbearer_callback_handlers import (
    OAuthBearerConfigError,
    build_oauthbearer_validator,
)
from kafkapy.server.security.oauthbearer_jwt_validator import OAuthBearerJwtValidator
from kafkapy.server.security.oauthbearer_token import OAuthBearerValidationError
from kafkapy.server.security.oauthbearer_unsecured_validator import OAuthBearerUnsecuredValidator
from kafkapy.server.security.sasl_server import OAuthBearerSaslServer

NOW_MS = 1_700_000_000_000
NOW = NOW_MS // 1000
SECURED = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"


def b64(obj: object) -> str:
    raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unsecured(claims: object, header: object = None, signature: str = "") -> str:
    return f"{b64(header or {'alg': 'none'})}.{b64(claims)}.{signature}"


def raw_claims(text: str) -> str:
    """A token whose claims segment is exactly `text` (JSON the json module would not write)."""
    return f"{b64({'alg': 'none'})}.{b64(text.encode())}."


def initial_response(token: str, authzid: str = "") -> bytes:
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {token}\x01\x01".encode()


# -- Kafka's unsecured validator ---------------------------------------------------------------------

def test_unsecured_accepts_alg_none_with_sub_and_future_exp():
    token = OAuthBearerUnsecuredValidator({}).validate(unsecured({"sub": "svc", "exp": NOW + 60, "iat": NOW}), NOW_MS)
    assert (token.principal_name, token.lifetime_ms, token.start_time_ms) == ("svc", NOW_MS + 60000, NOW_MS)


@pytest.mark.parametrize("token,reason", [
    (unsecured({"sub": "svc", "exp": NOW + 60}, header={"alg": "RS256"}), "'none' for an algorithm"),
    (unsecured({"sub": "svc", "exp": NOW + 60}, signature="c2ln"), "must not contain a digital signature"),
    (unsecured({"exp": NOW + 60}), "No principal name in JWT claim: sub"),
    (unsecured({"sub": "  ", "exp": NOW + 60}), "No principal name"),
    (unsecured({"sub": 7, "exp": NOW + 60}), "No principal name"),
    (unsecured({"sub": "svc"}), "Required claim missing: exp"),
    (unsecured({"sub": "svc", "exp": "soon"}), "incorrect type"),
    (unsecured({"sub": "svc", "exp": True}), "incorrect type"),
    (unsecured({"sub": "svc", "exp": NOW - 1}), "Expiration Time"),
    (unsecured({"sub": "svc", "exp": NOW + 60, "iat": NOW + 30}), "Issued At"),
    (unsecured({"sub": "svc", "exp": NOW + 60, "iat": "x"}), "incorrect type"),
    (unsecured(["not", "an", "object"]), "malformed JSON"),
    (raw_claims('{"sub": "svc", "exp": 1e400}'), "malformed JSON"),
    (raw_claims('{"sub": "svc", "exp": NaN}'), "malformed JSON"),
    (raw_claims('{"sub": "svc", "exp": Infinity}'), "malformed JSON"),
    (raw_claims('{"sub": "svc", "exp": 1' + "0" * 400 + "}"), "out of range"),
    (raw_claims('{"sub": "svc", "exp": '), "malformed JSON"),
    (raw_claims('[' * 100000), "malformed JSON"),
    (f"{b64({'alg': 'none'})}.!!!not-base64!!!.", "malformed Base64"),
    (f"{b64({'alg': 'none'})}.abcde.", "malformed Base64"),
    ("a.b", "3 dot-separated"),
    ("a..b", "contains '..'"),
])
def test_unsecured_refuses_malformed_tokens(token, reason):
    with pytest.raises(OAuthBearerValidationError, match=reason) as e:
        OAuthBearerUnsecuredValidator({}).validate(token, NOW_MS)
    assert e.value.error_json() == '{"status":"invalid_token"}'


def test_unsecured_jaas_options():
    validator = OAuthBearerUnsecuredValidator({
        "unsecuredValidatorPrincipalClaimName": "client_id", "unsecuredValidatorScopeClaimName": "scp",
        "unsecuredValidatorRequiredScope": "kafka.read kafka.write", "unsecuredValidatorAllowableClockSkewMs": "5000"})
    claims = {"client_id": "app", "exp": NOW - 2, "scp": ["kafka.read", "kafka.write", "other"]}
    assert validator.validate(unsecured(claims), NOW_MS).principal_name == "app"  # 2 s late, 5 s skew
    with pytest.raises(OAuthBearerValidationError) as e:
        validator.validate(unsecured({**claims, "scp": "kafka.read"}), NOW_MS)
    assert e.value.error_json() == '{"status":"insufficient_scope", "scope":"[kafka.read, kafka.write]"}'
    with pytest.raises(ValueError, match="must not be negative"):
        OAuthBearerUnsecuredValidator({"unsecuredValidatorAllowableClockSkewMs": "-1"})
    with pytest.raises(ValueError, match="not an integer"):
        OAuthBearerUnsecuredValidator({"unsecuredValidatorAllowableClockSkewMs": "soon"})


# -- the SASL exchange ---------------------------------------------------------------------------------

class Exploding:
    def validate(self, token: str, now_ms: int):
        raise OverflowError("cannot convert float infinity to integer")

    def close(self) -> None:
        pass


@pytest.mark.parametrize("validator", [OAuthBearerUnsecuredValidator({}), Exploding()])
def test_sasl_server_refused_token_is_the_error_challenge_then_failure(validator):
    server = OAuthBearerSaslServer(validator, lambda: NOW_MS)
    challenge, complete = server.evaluate(initial_response(raw_claims('{"sub": "admin", "exp": 1e400}')))
    assert (challenge, complete) == (b'{"status":"invalid_token"}', False)
    assert server.failure_reason.startswith("invalid OAUTHBEARER token: ")
    with pytest.raises(SaslAuthenticationFailedError) as e:
        server.evaluate(b"\x01")
    assert e.value.message == '{"status":"invalid_token"}'
    assert server.authorization_id is None


def test_sasl_server_accepts_and_sets_lifetime_and_checks_authzid():
    validator = OAuthBearerUnsecuredValidator({})
    token = unsecured({"sub": "svc", "exp": NOW + 60})
    server = OAuthBearerSaslServer(validator, lambda: NOW_MS)
    assert server.evaluate(initial_response(token, authzid="svc")) == (b"", True)
    assert (server.authorization_id, server.lifetime_ms) == ("svc", 60000)
    with pytest.raises(SaslAuthenticationFailedError, match="different from the token's principal name"):
        OAuthBearerSaslServer(validator, lambda: NOW_MS).evaluate(initial_response(token, authzid="admin"))


@pytest.mark.parametrize("message", [
    b"y,,\x01auth=Bearer a.b.c\x01\x01", b"n,,\x01auth=Basic abc\x01\x01", b"n,,\x01user=x\x01\x01",
    b"\xff\xfe", b"", b"\x01", b"n,,\x01auth=Bearer a b\x01\x01",
])
def test_sasl_server_malformed_client_message_fails_at_once(message):
    server = OAuthBearerSaslServer(OAuthBearerUnsecuredValidator({}), lambda: NOW_MS)
    with pytest.raises(SaslAuthenticationFailedError, match="invalid credentials with SASL mechanism OAUTHBEARER"):
        server.evaluate(message)


# -- the secured validator over a file: JWKS -------------------------------------------------------------

@pytest.fixture(scope="module")
def keys():
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return {"rsa": rsa_key, "ec": ec_key, "other": other}


@pytest.fixture(scope="module")
def jwks_url(keys, tmp_path_factory) -> str:
    jwks = {"keys": [{**RSAAlgorithm.to_jwk(keys["rsa"].public_key(), as_dict=True), "kid": "rsa-1", "use": "sig"},
                     {**ECAlgorithm.to_jwk(keys["ec"].public_key(), as_dict=True), "kid": "ec-1"}]}
    path: Path = tmp_path_factory.mktemp("jwks") / "jwks.json"
    path.write_text(json.dumps(jwks))
    return path.as_uri()


def secured(jwks_url: str, **settings: object):
    values = {"sasl.server.callback.handler.class": SECURED, "sasl.oauthbearer.jwks.endpoint.url": jwks_url,
              "sasl.oauthbearer.clock.skew.seconds": 30, **settings}
    return build_oauthbearer_validator(lambda key: (values.get(key), "listener.name.x.oauthbearer." + key), {})


def signed(key, alg: str, kid: str | None, **claims: object) -> str:
    body = {"sub": "alice", "iat": NOW, "exp": NOW + 300, **claims}
    return jwt.encode(body, key, algorithm=alg, headers={"kid": kid} if kid else None)


def test_secured_validator_is_chosen_and_accepts_rsa_and_ec_signed_tokens(keys, jwks_url):
    validator = secured(jwks_url)
    assert isinstance(validator, OAuthBearerJwtValidator)
    token = validator.validate(signed(keys["rsa"], "RS256", "rsa-1", scope="kafka"), NOW_MS)
    assert (token.principal_name, token.lifetime_ms, token.scope) == ("alice", NOW_MS + 300000, frozenset({"kafka"}))
    assert validator.validate(signed(keys["rsa"], "PS384", "rsa-1"), NOW_MS).principal_name == "alice"
    assert validator.validate(signed(keys["ec"], "ES256", "ec-1"), NOW_MS).principal_name == "alice"
    assert validator.validate(signed(keys["ec"], "ES256", None), NOW_MS).principal_name == "alice"  # no kid: any key


def hs256_keyed_with(secret: bytes, claims: dict, kid: str) -> str:
    signing_input = f"{b64({'alg': 'HS256', 'kid': kid})}.{b64(claims)}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(mac)}"


def test_secured_validator_refuses_forged_and_unsigned_tokens(keys, jwks_url):
    validator = secured(jwks_url)
    admin = {"sub": "admin", "iat": NOW, "exp": NOW + 300}
    public_pem = keys["rsa"].public_key().public_bytes(serialization.Encoding.PEM,
                                                       serialization.PublicFormat.SubjectPublicKeyInfo)
    forged = [
        unsecured(admin),                                        # alg none, no signature
        unsecured(admin, signature="c2ln"),
        unsecured(admin, header={"alg": "none", "kid": "rsa-1"}),
        unsecured(admin, header={"alg": "None", "kid": "rsa-1"}, signature="c2ln"),
        signed(keys["other"], "RS256", "rsa-1", sub="admin"),    # another key, same kid
        signed(keys["rsa"], "RS256", "unknown-kid", sub="admin"),
        signed(keys["ec"], "ES256", "rsa-1", sub="admin"),       # the kid of a key of another type
        hs256_keyed_with(public_pem, admin, "rsa-1"),            # algorithm confusion: HMAC keyed by the public key
        hs256_keyed_with(b"x" * 32, admin, "rsa-1"),
        signed(keys["rsa"], "RS256", "rsa-1")[:-6] + "AAAAAA",   # tampered signature
    ]
    for token in forged:
        with pytest.raises(OAuthBearerValidationError) as e:
            validator.validate(token, NOW_MS)
        assert e.value.error_json() == '{"status":"invalid_token"}', token


@pytest.mark.parametrize("claims,settings,reason", [
    ({"exp": NOW - 31}, {}, "Expiration Time"),
    ({"iat": None}, {}, "Required claim missing: iat"),
    ({"exp": None}, {}, "Required claim missing: exp"),
    ({"exp": "tomorrow"}, {}, "incorrect type"),
    ({"exp": float("inf")}, {}, "malformed JSON"),  # PyJWT writes Infinity
    ({"nbf": NOW + 120}, {}, "not yet valid"),
    ({"sub": None}, {}, "sub claim must be a non-blank string"),
    ({"sub": ["admin"]}, {}, "non-blank string"),
    ({"aud": "other"}, {"sasl.oauthbearer.expected.audience": ["kafka"]}, "(?i)audience"),
    ({"aud": "kafka"}, {}, "(?i)audience"),  # an aud with no expected audience fails, as jose4j does
    ({"iss": "https://evil"}, {"sasl.oauthbearer.expected.issuer": "https://idp"}, "issuer"),
    ({"scope": ["a", "a"]}, {}, "duplicates"),
])
def test_secured_validator_claims(keys, jwks_url, claims, settings, reason):
    body = {"sub": "alice", "iat": NOW, "exp": NOW + 300, **claims}
    token = jwt.encode({k: v for k, v in body.items() if v is not None}, keys["rsa"], algorithm="RS256",
                       headers={"kid": "rsa-1"})
    with pytest.raises(OAuthBearerValidationError, match=reason):
        secured(jwks_url, **settings).validate(token, NOW_MS)


def test_secured_validator_settings_accept(keys, jwks_url):
    validator = secured(jwks_url, **{"sasl.oauthbearer.expected.audience": ["kafka", "other"],
                                    "sasl.oauthbearer.expected.issuer": "https://idp",
                                    "sasl.oauthbearer.sub.claim.name": "client_id"})
    token = signed(keys["rsa"], "RS256", "rsa-1", aud="kafka", iss="https://idp", client_id="svc", exp=NOW - 20)
    assert validator.validate(token, NOW_MS).principal_name == "svc"  # 20 s late within the 30 s skew


def test_jwks_url_without_the_secured_handler_warns(jwks_url, caplog):
    caplog.set_level("WARNING",
                     logger="org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler")
    values = {"sasl.oauthbearer.jwks.endpoint.url": jwks_url}
    validator = build_oauthbearer_validator(lambda key: (values.get(key), "listener.name.x.oauthbearer." + key), {})
    assert isinstance(validator, OAuthBearerUnsecuredValidator)
    assert len(caplog.records) == 1 and "accepts unsigned tokens" in caplog.records[0].getMessage()


def test_callback_handler_class_choice(tmp_path, jwks_url):
    def lookup(values):
        return lambda key: (values.get(key), "listener.name.sasl_plaintext.oauthbearer." + key)

    assert isinstance(build_oauthbearer_validator(lookup({}), {}), OAuthBearerUnsecuredValidator)
    older = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler"
    assert isinstance(build_oauthbearer_validator(lookup({"sasl.server.callback.handler.class": older,
                                                          "sasl.oauthbearer.jwks.endpoint.url": jwks_url,
                                                          "sasl.oauthbearer.clock.skew.seconds": 30}), {}),
                      OAuthBearerJwtValidator)
    with pytest.raises(OAuthBearerConfigError,
                       match="for configuration listener.name.sasl_plaintext.oauthbearer.sasl.server.callback"):
        build_oauthbearer_validator(lookup({"sasl.server.callback.handler.class": "com.example.MyHandler"}), {})
    with pytest.raises(OAuthBearerConfigError, match="Missing required configuration sasl.oauthbearer.jwks"):
        build_oauthbearer_validator(lookup({"sasl.server.callback.handler.class": SECURED}), {})
    missing = (tmp_path / "absent.json").as_uri()
    with pytest.raises(OAuthBearerConfigError, match="cannot read the JWKS file"):
        secured(missing)
    (tmp_path / "empty.json").write_text('{"keys": []}')
    with pytest.raises(OAuthBearerConfigError, match="no usable signature key"):
        secured((tmp_path / "empty.json").as_uri())
    with pytest.raises(OAuthBearerConfigError, match="must be file:, https: or http:"):
        secured("ftp://idp/jwks")


# -- the listener's configuration --------------------------------------------------------------------------

def listener(props: dict[str, str]) -> ListenerSecurity:
    config = KafkaConfig({"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "OAUTHBEARER",
                          "inter.broker.listener.name": "SASL_PLAINTEXT", "log.dirs": "/tmp/unused", **props})
    return ListenerSecurity(config, EndPoint("SASL_PLAINTEXT", "127.0.0.1", 0, "SASL_PLAINTEXT"))


def test_listener_refuses_oauthbearer_without_jaas_and_unknown_handler(jwks_url):
    with pytest.raises(ConfigError, match="OAUTHBEARER is enabled but has no JAAS entry"):
        listener({})
    jaas = {"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config":
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'unsecuredValidatorPrincipalClaimName="uid";'}
    assert listener(jaas).oauthbearer_validator.principal_claim == "uid"
    with pytest.raises(ConfigError, match="listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class"):
        listener({**jaas, "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class": "x.Y"})
    with pytest.raises(ConfigError, match="Invalid value x.Y for configuration sasl.server.callback.handler.class"):
        listener({**jaas, "sasl.server.callback.handler.class": "x.Y"})
    with pytest.raises(ConfigError, match="listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class"):
        listener({**jaas, "sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER",
                  "listener.name.sasl_plaintext.plain.sasl.jaas.config": "x.PlainLoginModule required user_a=\"b\";",
                  "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class": "com.example.Plain"})
    secured_listener = listener({**jaas, "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class":
                                 SECURED, "listener.name.sasl_plaintext.sasl.oauthbearer.jwks.endpoint.url": jwks_url})
    assert isinstance(secured_listener.oauthbearer_validator, OAuthBearerJwtValidator)


# -- the refreshing https resolver (fetch injected: no network) -------------------------------------------

def wait_for(predicate, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert predicate()


def test_https_resolver_refreshes_on_schedule_and_on_unknown_kid(keys):
    first = {"keys": [{**RSAAlgorithm.to_jwk(keys["rsa"].public_key(), as_dict=True), "kid": "k1"}]}
    second = {"keys": [{**RSAAlgorithm.to_jwk(keys["other"].public_key(), as_dict=True), "kid": "k2"}]}
    served = [json.dumps(first).encode()]
    fetches = []
    lock = threading.Lock()

    def fetch() -> bytes:
        with lock:
            fetches.append(1)
            return served[-1]

    resolver = RefreshingHttpsJwksKeyResolver("https://idp/jwks", 60000, 1, 4, fetch=fetch, sleep=lambda s: None)
    assert [k["kid"] for k in resolver.keys_for("k1", NOW_MS)] == ["k1"]
    assert resolver.keys_for("k1", NOW_MS + 59999) and len(fetches) == 1  # not due yet
    served.append(json.dumps(second).encode())
    assert resolver.keys_for("k2", NOW_MS + 1000) == ()  # unknown kid: an early refresh starts
    wait_for(lambda: resolver.refreshes == 1)
    assert [k["kid"] for k in resolver.keys_for("k2", NOW_MS + 1001)] == ["k2"]
    resolver.keys_for("k9", NOW_MS + 1002)
    wait_for(lambda: resolver.refreshes == 2)
    resolver.keys_for("k9", NOW_MS + 2000)  # the same unknown kid again within a minute: no new fetch
    time.sleep(0.05)
    assert len(fetches) == 3
    resolver.keys_for("k2", NOW_MS + 1002 + 60000)  # scheduled refresh
    wait_for(lambda: resolver.refreshes == 3)


def test_https_resolver_keeps_keys_when_refresh_fails(keys):
    good = json.dumps({"keys": [{**RSAAlgorithm.to_jwk(keys["rsa"].public_key(), as_dict=True), "kid": "k1"}]})
    calls = []

    def fetch() -> bytes:
        calls.append(1)
        if len(calls) > 1:
            raise OSError("connection refused")
        return good.encode()

    sleeps: list[float] = []
    resolver = RefreshingHttpsJwksKeyResolver("https://idp/jwks", 1000, 100, 1000, fetch=fetch, sleep=sleeps.append)
    resolver.keys_for("k1", NOW_MS)
    resolver.keys_for("k1", NOW_MS + 1000)
    wait_for(lambda: not resolver._refreshing)
    assert sleeps == [0.1, 0.2, 0.4] and len(calls) == 5  # backoff doubles until 1000 ms in total would pass
    assert [k["kid"] for k in resolver.keys_for("k1", NOW_MS + 1001)] == ["k1"]
    with pytest.raises(ValueError):
        RefreshingHttpsJwksKeyResolver("https://idp/jwks", 1000, 100, 1000, fetch=lambda: b"{}")
