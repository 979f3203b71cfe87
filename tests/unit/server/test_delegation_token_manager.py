"""DelegationTokenManager over a LocalMetadataStore with MockTime: Kafka's lifetimes (max lifetime capped by
the config, expiry = issue + expiry time capped at max, renew and expire periods, negative = defaults / now),
owner/renewer checks, HMAC-SHA512 of the token id, Kafka's version-3 JSON with sanitized principals, the
periodic sweep of expired tokens, the disabled manager, and the SCRAM credential of a token login."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from kafkapy.common import scram
from kafkapy.common.errors import (
    DelegationTokenAuthDisabledError,
    DelegationTokenExpiredError,
    DelegationTokenNotFoundError,
    DelegationTokenOwnerMismatchError,
)
from kafkapy.common.kafka_principal import KafkaPrincipal
from kafkapy.common.time import MockTime
from kafkapy.controller.local_store import LocalMetadataStore
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.security.delegation_token_manager import DelegationTokenManager, TokenInformation

ALICE, BOB, CAROL = (KafkaPrincipal.user(n) for n in ("alice", "bob", "carol"))
HOUR = 3600000
TOKENS = 50  # stored tokens: what a renew must not hash one by one


def token_config(log_dir: str) -> KafkaConfig:
    return KafkaConfig({"log.dirs": log_dir, "delegation.token.secret.key": "k",
                        "delegation.token.max.lifetime.ms": str(HOUR), "delegation.token.expiry.time.ms": "600000",
                        "delegation.token.expiry.check.interval.ms": "1000"})


@pytest.fixture
def env(tmp_path):
    time = MockTime()
    store = LocalMetadataStore(str(tmp_path))
    yield DelegationTokenManager(token_config(str(tmp_path)), store, time.milliseconds), time, store
    store.close()


def test_create_lifetimes_hmac_and_json(env):
    manager, time, store = env
    now = time.milliseconds()
    token = manager.create(ALICE, ALICE, [BOB], -1)
    info = token.info
    assert (info.issue_timestamp, info.max_timestamp, info.expiry_timestamp) == (now, now + HOUR, now + 600000)
    assert len(info.token_id) == 22 and token.hmac == hmac.new(b"k", info.token_id.encode(), hashlib.sha512).digest()
    stored = store.get_json(f"/delegation_token/tokens/{info.token_id}")
    assert stored == {"version": 3, "owner": "User%3Aalice", "tokenRequester": "User%3Aalice",
                      "renewers": ["User%3Abob"], "issueTimestamp": now, "maxTimestamp": now + HOUR,
                      "expiryTimestamp": now + 600000, "tokenId": info.token_id}
    assert TokenInformation.from_json(stored) == info
    short = manager.create(BOB, ALICE, [], 300000).info  # requested under the expiry time: expiry = max
    assert (short.max_timestamp, short.expiry_timestamp, short.token_requester) == (now + 300000, now + 300000, ALICE)
    assert manager.create(ALICE, ALICE, [], 10 * HOUR).info.max_timestamp == now + HOUR  # capped by the config


def test_renew_expire_and_ownership(env):
    manager, time, _ = env
    token = manager.create(ALICE, ALICE, [BOB], -1)
    time.advance(1000)
    now = time.milliseconds()
    assert manager.renew(BOB, token.hmac, 5000) == now + 5000
    assert manager.renew(ALICE, token.hmac, -1) == now + 600000  # the default renew time
    assert manager.renew(ALICE, token.hmac, 10 * HOUR) == token.info.max_timestamp
    with pytest.raises(DelegationTokenOwnerMismatchError):
        manager.renew(CAROL, token.hmac, 1000)
    with pytest.raises(DelegationTokenNotFoundError):
        manager.renew(ALICE, b"x" * 64, 1000)
    assert manager.expire(ALICE, token.hmac, 2000) == now + 2000
    time.advance(2001)
    with pytest.raises(DelegationTokenExpiredError):
        manager.renew(ALICE, token.hmac, 1000)
    assert manager.scram_credential("SCRAM-SHA-256", token.info.token_id) is None  # expired: no login
    assert manager.expire(ALICE, token.hmac, -1) == time.milliseconds()  # negative: removed at once
    with pytest.raises(DelegationTokenNotFoundError):
        manager.expire(ALICE, token.hmac, -1)


def test_sweep_removes_expired_tokens_once_per_interval(env):
    manager, time, store = env
    doomed = manager.create(ALICE, ALICE, [], 2000).info.token_id
    kept = manager.create(ALICE, ALICE, [], -1).info.token_id
    time.advance(3000)
    manager.maybe_expire_tokens()
    assert store.children("/delegation_token/tokens") == [kept]
    assert [t.info.token_id for t in manager.tokens(lambda info: True)] == [kept]
    assert doomed not in store.children("/delegation_token/tokens")


def test_token_scram_credential_is_derived_from_the_hmac(env):
    manager, time, _ = env
    token = manager.create(ALICE, ALICE, [], -1)
    credential, owner, lifetime = manager.scram_credential("SCRAM-SHA-512", token.info.token_id)
    password = base64.b64encode(token.hmac).decode()
    assert owner == "alice" and lifetime == 600000 and credential.iterations == 4096
    expected = scram.ScramCredential.from_password(scram.MECHANISMS["SCRAM-SHA-512"], password, credential.salt, 4096)
    assert credential == expected
    assert manager.scram_credential("SCRAM-SHA-512", "unknown") is None
    assert manager.scram_credential("SCRAM-SHA-512", "../x") is None


def test_renew_and_expire_find_the_token_by_its_hmac_without_hashing_every_token(env, tmp_path, monkeypatch):
    """The HMAC index: a request costs no HMAC per stored token. This broker's own tokens are indexed when created
    (0 HMACs per renew/expire); a token created on another broker costs exactly 1 (its id, once); a wrong HMAC
    costs none and is DELEGATION_TOKEN_NOT_FOUND; a broker that starts cold hashes each stored id once."""
    manager, time, store = env
    from kafkapy.server.security import delegation_token_manager as module

    computed: list[str] = []
    real = module.create_hmac

    def counting(token_id: str, secret_key: str) -> bytes:
        computed.append(token_id)
        return real(token_id, secret_key)

    monkeypatch.setattr(module, "create_hmac", counting)
    tokens = [manager.create(ALICE, ALICE, [BOB], -1) for _ in range(TOKENS)]
    assert len(computed) == TOKENS  # one per create
    computed.clear()
    now = time.milliseconds()
    assert manager.renew(BOB, tokens[37].hmac, 5000) == now + 5000
    assert manager.expire(ALICE, tokens[3].hmac, 1000) == now + 1000
    with pytest.raises(DelegationTokenNotFoundError):
        manager.renew(ALICE, b"\x00" * 64, 1000)
    with pytest.raises(DelegationTokenNotFoundError):
        manager.expire(ALICE, tokens[5].hmac[:-1] + bytes([tokens[5].hmac[-1] ^ 1]), 1000)
    assert computed == []

    other = DelegationTokenManager(token_config(str(tmp_path)), store, time.milliseconds)  # another broker, same store
    computed.clear()
    assert other.renew(ALICE, tokens[0].hmac, 2000) == now + 2000
    assert len(computed) == TOKENS  # cold: each stored id hashed once
    computed.clear()
    assert other.renew(ALICE, tokens[-1].hmac, 3000) == now + 3000
    assert computed == []
    fresh = manager.create(ALICE, ALICE, [], -1)  # created on the first broker
    computed.clear()
    assert other.renew(ALICE, fresh.hmac, 4000) == now + 4000
    assert computed == [fresh.info.token_id]  # one HMAC: the new id only
    computed.clear()
    assert other.expire(ALICE, fresh.hmac, -1) == now  # deleted at once ...
    with pytest.raises(DelegationTokenNotFoundError):  # ... on every broker
        manager.renew(ALICE, fresh.hmac, 1000)
    assert computed == []
    described = {t.info.token_id: t.hmac for t in other.tokens(lambda info: True)}
    assert described == {t.info.token_id: t.hmac for t in tokens} and computed == []


def test_disabled_without_a_secret_key(tmp_path):
    store = LocalMetadataStore(str(tmp_path))
    manager = DelegationTokenManager(KafkaConfig({"log.dirs": str(tmp_path)}), store, MockTime().milliseconds)
    assert not manager.enabled
    with pytest.raises(DelegationTokenAuthDisabledError):
        manager.create(ALICE, ALICE, [], -1)
    assert manager.scram_credential("SCRAM-SHA-256", "any") is None
    legacy = DelegationTokenManager(KafkaConfig({"log.dirs": str(tmp_path), "delegation.token.master.key": "m"}),
                                    store, MockTime().milliseconds)
    assert legacy.enabled
    store.close()
