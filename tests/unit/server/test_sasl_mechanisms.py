"""SASL mechanism servers against kafkapy's SASL clients (pure logic): PLAIN, SCRAM-SHA-256/512
(RFC 7677's test vector for the math), OAUTHBEARER unsecured tokens, JAAS parsing."""

from __future__ import annotations

import base64
import json
import time

import pytest

from kafkapy.client.sasl_client import PlainSaslClient, ScramSaslClient
from kafkapy.common import scram
from kafkapy.common.errors import SaslAuthenticationFailedError
from kafkapy.common.jaas_config import JaasConfigError, parse_jaas_config
from kafkapy.server.security.oauthbearer_unsecured_validator import OAuthBearerUnsecuredValidator
from kafkapy.server.security.sasl_server import (
    OAuthBearerSaslServer,
    PlainSaslServer,
    ScramSaslServer,
)


def run(client, server):
    token = client.initial()
    while True:
        challenge, complete = server.evaluate(token)
        token = client.evaluate(challenge)
        if complete:
            assert token is None and client.complete
            return server.authorization_id


def test_plain():
    assert run(PlainSaslClient("alice", "pw"), PlainSaslServer({"alice": "pw"})) == "alice"
    with pytest.raises(SaslAuthenticationFailedError, match="Invalid username or password"):
        run(PlainSaslClient("alice", "bad"), PlainSaslServer({"alice": "pw"}))
    with pytest.raises(SaslAuthenticationFailedError):
        PlainSaslServer({"alice": "pw"}).evaluate(b"no-separators")


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_round_trip_and_wrong_password(mechanism):
    cred = scram.ScramCredential.from_password(scram.MECHANISMS[mechanism], "s3cret", scram.random_salt(), 4096)
    stored = scram.ScramCredential.from_config_string(cred.to_config_string())
    assert stored == cred

    def lookup(mech, user):
        return stored if (mech, user) == (mechanism, "bob") else None

    assert run(ScramSaslClient(mechanism, "bob", "s3cret"), ScramSaslServer(mechanism, lookup)) == "bob"
    with pytest.raises(SaslAuthenticationFailedError, match="invalid credentials"):
        run(ScramSaslClient(mechanism, "bob", "wrong"), ScramSaslServer(mechanism, lookup))
    with pytest.raises(SaslAuthenticationFailedError, match="invalid credentials"):
        run(ScramSaslClient(mechanism, "eve", "s3cret"), ScramSaslServer(mechanism, lookup))


def test_rfc7677_vector():
    # RFC 7677 section 3: user "user", password "pencil", SCRAM-SHA-256.
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    salted = scram.salted_password("sha256", "pencil", salt, 4096)
    first_bare = "n=user,r=rOprNGfwEbeRWgbNEkqO"
    server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    without_proof = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    message = scram.auth_message(first_bare, server_first, without_proof)
    assert scram.b64(scram.client_proof("sha256", salted, message)) == "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    cred = scram.ScramCredential.from_salted_password("sha256", salted, salt, 4096)
    assert scram.b64(scram.server_signature("sha256", cred.server_key, message)) == \
        "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def _jws(claims: dict) -> bytes:
    def enc(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    token = f"{enc({'alg': 'none'})}.{enc(claims)}."
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


def test_oauthbearer_unsecured():
    def now_ms() -> int:
        return int(time.time() * 1000)

    server = OAuthBearerSaslServer(OAuthBearerUnsecuredValidator({}), now_ms)
    assert server.evaluate(_jws({"sub": "svc", "exp": time.time() + 60})) == (b"", True)
    assert server.authorization_id == "svc" and 59000 < server.lifetime_ms <= 60001  # exp rounds to the ms
    expired = OAuthBearerSaslServer(OAuthBearerUnsecuredValidator({}), now_ms)
    challenge, complete = expired.evaluate(_jws({"sub": "svc", "exp": time.time() - 1}))
    assert not complete and json.loads(challenge) == {"status": "invalid_token"}
    with pytest.raises(SaslAuthenticationFailedError):
        expired.evaluate(b"\x01")


def test_jaas():
    cfg = parse_jaas_config('org.apache.kafka.common.security.plain.PlainLoginModule required username="a b" '
                            'password="p\\"w" user_x=y;')
    assert cfg.login_module.endswith("PlainLoginModule") and cfg.control_flag == "required"
    assert cfg.options == {"username": "a b", "password": 'p"w', "user_x": "y"}
    with pytest.raises(JaasConfigError):
        parse_jaas_config("PlainLoginModule required username=a")  # no terminating ;
