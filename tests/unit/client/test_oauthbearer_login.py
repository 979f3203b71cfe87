"""Client-side OAUTHBEARER tokens (kafkapy/client/oauthbearer_login.py): Kafka's unsecured login from the
OAuthBearerLoginModule JAAS options (string, number and list claims, lifetime, principal claim name), librdkafka's
sasl.oauthbearer.config, a file: token endpoint read at each login, and the SASL client's initial response and
error acknowledgement."""

from __future__ import annotations

import base64
import json

import pytest

from kafkapy.client.client_security import ClientSecurity
from kafkapy.client.oauthbearer_login import token_source, unsecured_token
from kafkapy.client.sasl_client import OAuthBearerSaslClient


def claims_of(token: str) -> tuple[dict, dict, str]:
    header, claims, signature = token.split(".")

    def dec(part: str) -> dict:
        return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))

    return dec(header), dec(claims), signature


def test_unsecured_login_claims():
    options = {"unsecuredLoginStringClaim_sub": "svc", "unsecuredLoginNumberClaim_level": "3",
               "unsecuredLoginListClaim_scope": ",read,write", "unsecuredLoginLifetimeSeconds": "60"}
    header, claims, signature = claims_of(token_source(lambda key: None, options)())
    assert header == {"alg": "none"} and signature == ""
    assert (claims["sub"], claims["level"], claims["scope"]) == ("svc", 3, ["read", "write"])
    assert claims["exp"] - claims["iat"] == pytest.approx(60) and claims["iat"] * 1000 == int(claims["iat"] * 1000)
    assert claims_of(unsecured_token({"sub": "x"}, 10, now_s=100.0))[1] == {"exp": 110.0, "iat": 100.0, "sub": "x"}
    with pytest.raises(ValueError, match="Cannot explicitly set the 'exp' claim"):
        token_source(lambda key: None, {"unsecuredLoginNumberClaim_exp": "1", "unsecuredLoginStringClaim_sub": "a"})
    with pytest.raises(ValueError, match="unsecuredLoginStringClaim_uid"):
        token_source(lambda key: None, {"unsecuredLoginPrincipalClaimName": "uid"})


def test_librdkafka_config_and_file_endpoint(tmp_path):
    conf = {"sasl.oauthbearer.config": "principal=app lifeSeconds=120 scope=a,b"}
    _, claims, _ = claims_of(token_source(conf.get, {})())
    assert (claims["sub"], claims["scope"], round(claims["exp"] - claims["iat"])) == ("app", ["a", "b"], 120)
    path = tmp_path / "token"
    path.write_text("header.claims.sig\n")
    source = token_source({"sasl.oauthbearer.token.endpoint.url": path.as_uri()}.get, {})
    assert source() == "header.claims.sig"
    path.write_text("rotated.token.sig")
    assert source() == "rotated.token.sig"  # read at every login
    with pytest.raises(ValueError, match="file: URL only"):
        token_source({"sasl.oauthbearer.token.endpoint.url": "https://idp/token"}.get, {})


def test_sasl_client_messages_and_client_security():
    client = OAuthBearerSaslClient("a.b.c")
    assert client.initial() == b"n,,\x01auth=Bearer a.b.c\x01\x01"
    assert client.evaluate(b'{"status":"invalid_token"}') == b"\x01" and not client.complete
    assert client.evaluate(b"") is None and client.complete
    security = ClientSecurity({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
                               "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
                                                   'required unsecuredLoginStringClaim_sub="me";'})
    token = security.sasl_client().initial().split(b"Bearer ")[1].split(b"\x01")[0].decode()
    assert claims_of(token)[1]["sub"] == "me"
