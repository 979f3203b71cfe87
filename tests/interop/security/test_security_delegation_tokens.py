"""Delegation tokens (issue 17 item 14): one broker (module scope) with PLAINTEXT and SASL_PLAINTEXT (PLAIN users
admin (super user), alice (ALL on topics), bob, carol; SCRAM), an AclAuthorizer and
`delegation.token.secret.key`; tokens created, renewed, expired and described
with `kafkapy delegation-tokens` (Kafka's flags and text) over SASL, stored as Kafka's JSON under
/delegation_token/tokens in the 0600 metadata file, HMAC-SHA512 of the token id; a token logs in with
kafkapy's own client (SCRAM-SHA-256/512 with the `tokenauth=true` extension: librdkafka, hence
confluent-kafka and kcat, cannot send SCRAM extensions) as its owner and produces/consumes; token requests
over PLAINTEXT and from a token session get DELEGATION_TOKEN_REQUEST_NOT_ALLOWED."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from security_helpers import kafkapy_roundtrip

from kafkapy.common.kafka_principal import KafkaPrincipal

pytestmark = pytest.mark.timeout(120)

SECRET = "token-secret-key"
USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}
JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")
HOUR, TEN_MINUTES = 3600000, 600000


class TokenBroker:
    def __init__(self, server: Any, log_dir: str, conf_dir: Path) -> None:
        self.server, self.log_dir, self.conf_dir = server, log_dir, conf_dir
        self.principals: list[tuple[str, str]] = []  # (client id, principal) of every request handled

    def bootstrap(self, listener: str) -> str:
        return f"127.0.0.1:{self.server.bound_port(listener)}"

    def plain_conf(self, user: str) -> dict[str, str]:
        return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": user,
                "sasl.password": USERS[user]}

    def command_config(self, user: str | None) -> str:
        path = self.conf_dir / f"{user or 'plaintext'}.properties"
        props = self.plain_conf(user) if user else {"security.protocol": "PLAINTEXT"}
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        return str(path)


@pytest.fixture(scope="module")
def token_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TokenBroker]:
    from kafkapy.protocol.header import decode_request_header
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    log_dir = str(tmp_path_factory.mktemp("token-data"))
    server = KafkaServer(KafkaConfig.from_properties(None, {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "log.dirs": log_dir,
        "num.network.threads": "1", "num.io.threads": "2", "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS, "connection.failed.authentication.delay.ms": "0",
        "delegation.token.secret.key": SECRET, "delegation.token.max.lifetime.ms": str(HOUR),
        "delegation.token.expiry.time.ms": str(TEN_MINUTES),
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "User:admin"}))
    server.startup()
    broker = TokenBroker(server, log_dir, tmp_path_factory.mktemp("token-conf"))
    grant_alice_topics(broker)
    lock, real_handle = threading.Lock(), server.apis.handle

    def spy(request: Any) -> None:
        try:
            header, _ = decode_request_header(request.frame)
            if header.api_key not in (17, 18, 36):
                with lock:
                    broker.principals.append((header.client_id or "", str(request.principal)))
        except Exception:
            pass
        real_handle(request)

    server.apis.handle = spy
    try:
        yield broker
    finally:
        server.shutdown()


def grant_alice_topics(broker: TokenBroker) -> None:
    """ALL on every topic for alice (her tokens act as her); nobody else gets an ACL."""
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.acl import (
        AccessControlEntry,
        AclBinding,
        AclOperation,
        AclPermissionType,
        PatternType,
        ResourcePattern,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), **broker.plain_conf("admin")})
    try:
        binding = AclBinding(ResourcePattern(ResourceType.TOPIC, "*", PatternType.LITERAL),
                             AccessControlEntry("User:alice", "*", AclOperation.ALL, AclPermissionType.ALLOW))
        assert admin.create_acls([binding]) == {binding: None}
    finally:
        admin.close()


def tool(capsys, *argv: str) -> tuple[int, str, str]:
    from kafkapy.cli import delegation_tokens

    capsys.readouterr()
    rc = delegation_tokens.main(list(argv))
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def create_token(broker: TokenBroker, capsys, user: str = "alice", *extra: str) -> dict[str, Any]:
    rc, out, err = tool(capsys, "--bootstrap-server", broker.bootstrap("SASL_PLAINTEXT"), "--command-config",
                        broker.command_config(user), "--create", "--max-life-time-period", "-1", "--output", "json",
                        *extra)
    assert rc == 0, err
    return json.loads(out)


def token_conf(broker: TokenBroker, token: dict[str, Any], mechanism: str = "SCRAM-SHA-256",
               password: str | None = None) -> dict[str, str]:
    jaas = (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{token["tokenId"]}" '
            f'password="{password or token["hmac"]}" tokenauth="true";')
    return {"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism, "sasl.jaas.config": jaas}


def test_create_prints_kafkas_text_and_stores_kafkas_json(token_broker, capsys):
    rc, out, err = tool(capsys, "--bootstrap-server", token_broker.bootstrap("SASL_PLAINTEXT"), "--command-config",
                        token_broker.command_config("alice"), "--create", "--max-life-time-period", "-1",
                        "--renewer-principal", "User:bob")
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[0] == "Calling create token operation with renewers :[User:bob] , max-life-time-period :-1"
    token_id = re.fullmatch(r"Created delegation token with tokenId : (\S{22})", lines[1]).group(1)
    assert lines[2] == ""
    assert lines[3] == ("TOKENID         HMAC                           OWNER           REQUESTER       "
                        "RENEWERS                  ISSUEDATE       EXPIRYDATE      MAXDATE        ")
    assert lines[4] == "" and lines[6:] == [""]
    row = lines[5].split()
    mac = hmac.new(SECRET.encode(), token_id.encode(), hashlib.sha512).digest()
    assert row[:5] == [token_id, base64.b64encode(mac).decode(), "User:alice", "User:alice", "[User:bob]"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d", d) for d in row[5:])
    path = Path(token_broker.log_dir) / "__kafkapy_metadata.json"
    stored = json.loads(path.read_text())["nodes"][f"/delegation_token/tokens/{token_id}"]["data"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert {k: stored[k] for k in ("version", "owner", "tokenRequester", "renewers", "tokenId")} == {
        "version": 3, "owner": "User%3Aalice", "tokenRequester": "User%3Aalice", "renewers": ["User%3Abob"],
        "tokenId": token_id}
    assert stored["maxTimestamp"] - stored["issueTimestamp"] == HOUR
    assert stored["expiryTimestamp"] - stored["issueTimestamp"] == TEN_MINUTES


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_token_logs_in_as_its_owner_and_produces_and_consumes(token_broker, capsys, mechanism):
    token = create_token(token_broker, capsys)
    conf = {**token_conf(token_broker, token, mechanism), "client.id": f"token-{mechanism}"}
    values = [b"tok-%d" % i for i in range(30)]
    topic = f"token-{mechanism.lower()}"
    assert kafkapy_roundtrip(conf, topic, values) == list(enumerate(values))
    assert {p for cid, p in token_broker.principals if cid == f"token-{mechanism}"} == {"User:alice"}


def test_token_requests_refused_over_plaintext_and_from_a_token_session(token_broker, capsys):
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.errors import DelegationTokenRequestNotAllowedError

    rc, out, err = tool(capsys, "--bootstrap-server", token_broker.bootstrap("PLAINTEXT"), "--command-config",
                        token_broker.command_config(None), "--describe")
    assert rc == 1 and out == "Calling describe token operation for current user.\n"
    assert "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED" in err and err.count("\n") == 1
    token = create_token(token_broker, capsys)
    admin = AdminClient(token_conf(token_broker, token))
    try:
        assert admin.list_topics() is not None  # the token session itself is fine
        with pytest.raises(DelegationTokenRequestNotAllowedError):
            admin.create_delegation_token()
        with pytest.raises(DelegationTokenRequestNotAllowedError):
            admin.describe_delegation_token()
    finally:
        admin.close()


def test_renew_expire_and_describe_by_owner_renewer_and_stranger(token_broker, capsys):
    token = create_token(token_broker, capsys, "alice", "--renewer-principal", "User:bob")
    sasl = token_broker.bootstrap("SASL_PLAINTEXT")

    def as_user(user: str, *argv: str) -> tuple[int, str, str]:
        return tool(capsys, "--bootstrap-server", sasl, "--command-config", token_broker.command_config(user), *argv)

    before = int(time.time() * 1000)
    rc, out, err = as_user("bob", "--renew", "--hmac", token["hmac"], "--renew-time-period", "120000")
    assert rc == 0, err
    assert out.startswith(f"Calling renew token operation with hmac :{token['hmac']} , renew-time-period :120000\n"
                          "Completed renew operation. New expiry date : ") and not out.endswith("\n")
    rc, out, err = as_user("bob", "--renew", "--hmac", token["hmac"], "--renew-time-period", "120000",
                           "--output", "json")
    assert rc == 0 and before + 120000 <= json.loads(out)["expiryTimestamp"] <= int(time.time() * 1000) + 120000
    rc, out, err = as_user("carol", "--renew", "--hmac", token["hmac"], "--renew-time-period", "1000")
    assert rc == 1 and "DELEGATION_TOKEN_OWNER_MISMATCH" in err
    rc, out, err = as_user("carol", "--describe", "--output", "json")
    assert rc == 0 and json.loads(out) == []  # not owner, requester or renewer, and no DESCRIBE ACL
    rc, out, err = as_user("admin", "--describe", "--output", "json")  # a super user sees every token
    assert rc == 0 and token["tokenId"] in {t["tokenId"] for t in json.loads(out)}
    rc, out, err = as_user("bob", "--describe", "--owner-principal", "User:alice", "--output", "json")
    described = [t for t in json.loads(out) if t["tokenId"] == token["tokenId"]]
    assert rc == 0 and len(described) == 1 and described[0]["renewers"] == ["User:bob"]
    rc, out, err = as_user("alice", "--describe", "--owner-principal", "User:alice")
    assert rc == 0 and out.startswith("Calling describe token operation for owners: [User:alice]\n"
                                      "Total number of tokens : ")
    assert token["tokenId"] in out
    rc, out, err = as_user("alice", "--expire", "--hmac", token["hmac"], "--expiry-time-period", "-1")
    assert rc == 0 and out.startswith(f"Calling expire token operation with hmac :{token['hmac']} , "
                                      "expire-time-period :-1\nCompleted expire operation. New expiry date : ")
    rc, out, err = as_user("alice", "--renew", "--hmac", token["hmac"], "--renew-time-period", "1000")
    assert rc == 1 and "DELEGATION_TOKEN_NOT_FOUND" in err
    from kafkapy.client.admin import AdminClient

    with pytest.raises(Exception, match="(?i)authentication"):
        admin = AdminClient({**token_conf(token_broker, token), "request.timeout.ms": "5000"})
        try:
            admin.list_topics()
        finally:
            admin.close()


def test_wrong_hmac_and_unknown_token_id_are_refused(token_broker, capsys):
    from kafkapy.client.admin import AdminClient

    token = create_token(token_broker, capsys)
    for conf in (token_conf(token_broker, token, password=base64.b64encode(b"x" * 64).decode()),
                 token_conf(token_broker, {**token, "tokenId": "no-such-token-id-00000"})):
        admin = AdminClient({**conf, "request.timeout.ms": "5000"})
        try:
            with pytest.raises(Exception, match="(?i)authentication"):
                admin.list_topics()
        finally:
            admin.close()


def test_usage_errors(capsys):
    rc, out, err = tool(capsys, "--bootstrap-server", "127.0.0.1:1", "--command-config", "x", "--create")
    assert rc == 2 and 'Missing required argument "[max-life-time-period]"' in err
    rc, out, err = tool(capsys, "--bootstrap-server", "127.0.0.1:1", "--command-config", "x", "--create", "--renew")
    assert rc == 2 and "exactly one action" in err
    rc, out, err = tool(capsys, "--bootstrap-server", "127.0.0.1:1", "--describe")
    assert rc == 2 and 'Missing required argument "[command-config]"' in err


def test_principal_parsing():
    from kafkapy.tools.delegation_tokens import DelegationTokenToolError, parse_principals

    assert parse_principals([" User:bob "]) == [KafkaPrincipal("User", "bob")]
    with pytest.raises(DelegationTokenToolError):
        parse_principals(["bob"])


def test_one_way_ssl_is_refused_and_mutual_tls_is_let_through(secure_broker):
    """Kafka's allowTokenRequests on SSL: ANONYMOUS (no client certificate) is refused; a certificate principal
    gets through to the token manager (this broker has no secret key: DELEGATION_TOKEN_AUTH_DISABLED)."""
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.errors import DelegationTokenAuthDisabledError, DelegationTokenRequestNotAllowedError

    pki = secure_broker.pki
    for listener, extra, error in (("SSL", {}, DelegationTokenRequestNotAllowedError),
                                   ("MTLS", {"ssl.keystore.location": str(pki.client)}, DelegationTokenAuthDisabledError)):
        admin = AdminClient({"bootstrap.servers": secure_broker.bootstrap(listener), "security.protocol": "SSL",
                             "ssl.truststore.location": str(pki.ca), **extra})
        try:
            with pytest.raises(error):
                admin.create_delegation_token()
            with pytest.raises(error):
                admin.describe_delegation_token()
        finally:
            admin.close()
