"""DelegationTokenManager: Kafka's delegation tokens (KIP-48) over the metadata store, as Kafka's
DelegationTokenManagerZk keeps them in ZooKeeper.

Node `/delegation_token/tokens/<tokenId>` (ZooKeeper in cluster mode; the embedded store's file, 0600,
otherwise) holds Kafka's version-3 JSON:
  {"version":3,"owner":"User%3Aalice","tokenRequester":"User%3Aalice","renewers":["User%3Abob"],
   "issueTimestamp":..,"maxTimestamp":..,"expiryTimestamp":..,"tokenId":"<22 chars>"}
(principals URL-encoded by Kafka's Sanitizer). The HMAC is never stored: it is HMAC-SHA512 of the token
id keyed by `delegation.token.secret.key` (or the older `delegation.token.master.key`), so every broker
with the same secret derives it. The token id is a random UUID in unpadded URL-safe base64.
A token logs in with SCRAM: username = token id, password = base64(HMAC), client-first extension
`tokenauth=true`; its SCRAM credential is derived from that password (4096 iterations) once per token and
mechanism (an LRU of 1024), as Kafka's DelegationTokenCache holds it.
Lifetimes: max = min(requested, `delegation.token.max.lifetime.ms`) (<= 0: the config), expiry = issue +
`delegation.token.expiry.time.ms` capped at max; renew sets now + period (< 0: the expiry config) capped
at max; expire with a negative period deletes the token at once. Expired tokens are never used and are
removed by `expire_tokens()` (run at most every `delegation.token.expiry.check.interval.ms`, on the
broker's token requests). Token information is read from the store every time (a token created on one broker
works on every broker at once). Renew and expire find the token presented by its HMAC through an index
(Kafka's DelegationTokenCache hmac -> tokenId map): each token id's HMAC is computed once, when this broker
creates the token or first sees its id in the store; a miss re-lists the ids and hashes only the new ones, so
a request costs no HMAC per stored token, and the match is confirmed with hmac.compare_digest. A broker has one
manager (BrokerServices.delegation_token_manager), whose lock serialises its mutations. Thread-safe.
"""

from __future__ import annotations

import base64
import hashlib
import hmac as hmac_lib
import logging
import threading
import urllib.parse
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from kafkapy.common import scram
from kafkapy.common.errors import (
    DelegationTokenAuthDisabledError,
    DelegationTokenExpiredError,
    DelegationTokenNotFoundError,
    DelegationTokenOwnerMismatchError,
)
from kafkapy.common.kafka_principal import KafkaPrincipal
from kafkapy.zk import zk_data

log = logging.getLogger("kafka.server.DelegationTokenManager")

TOKENS_PATH = zk_data.DELEGATION_TOKENS_PATH
CURRENT_VERSION = 3
ERROR_TIMESTAMP = -1
SCRAM_TOKEN_ITERATIONS = 4096  # ScramMechanism.minIterations

CREDENTIAL_CACHE_SIZE = 1024



def sanitize(text: str) -> str:
    """Kafka's Sanitizer.sanitize: URL-encoding that keeps only letters, digits and -_.~ literal."""
    return urllib.parse.quote(text, safe="")


def desanitize(text: str) -> str:
    return urllib.parse.unquote_plus(text)


def create_hmac(token_id: str, secret_key: str) -> bytes:
    return hmac_lib.new(secret_key.encode("utf-8"), token_id.encode("utf-8"), hashlib.sha512).digest()


def new_token_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


@dataclass(frozen=True, slots=True)
class TokenInformation:
    token_id: str
    owner: KafkaPrincipal
    token_requester: KafkaPrincipal
    renewers: tuple[KafkaPrincipal, ...]
    issue_timestamp: int
    max_timestamp: int
    expiry_timestamp: int

    def owner_or_renewer(self, principal: KafkaPrincipal) -> bool:
        return principal in (self.owner, self.token_requester) or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        return self.max_timestamp < now_ms or self.expiry_timestamp < now_ms

    def to_json(self) -> dict[str, Any]:
        return {"version": CURRENT_VERSION, "owner": sanitize(str(self.owner)),
                "tokenRequester": sanitize(str(self.token_requester)),
                "renewers": [sanitize(str(r)) for r in self.renewers], "issueTimestamp": self.issue_timestamp,
                "maxTimestamp": self.max_timestamp, "expiryTimestamp": self.expiry_timestamp,
                "tokenId": self.token_id}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TokenInformation:
        version = int(data["version"])
        if not 0 < version <= CURRENT_VERSION:
            raise ValueError(f"unsupported delegation token version {version}")
        owner = KafkaPrincipal.from_string(desanitize(data["owner"]))
        requester = KafkaPrincipal.from_string(desanitize(data["tokenRequester"])) if version >= 3 else owner
        return cls(str(data["tokenId"]), owner, requester,
                   tuple(KafkaPrincipal.from_string(desanitize(r)) for r in data["renewers"]),
                   int(data["issueTimestamp"]), int(data["maxTimestamp"]), int(data["expiryTimestamp"]))


@dataclass(frozen=True, slots=True)
class DelegationToken:
    info: TokenInformation
    hmac: bytes

    @property
    def hmac_base64(self) -> str:
        return base64.b64encode(self.hmac).decode()


class TokenStore:
    """The token nodes, through the metadata store's node primitives."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def ids(self) -> list[str]:
        return sorted(self._store.children(TOKENS_PATH))

    def get(self, token_id: str) -> TokenInformation | None:
        data = self._store.get_json(f"{TOKENS_PATH}/{token_id}")
        if not isinstance(data, dict):
            return None
        try:
            return TokenInformation.from_json(data)
        except (KeyError, TypeError, ValueError) as e:
            log.error("Error while getting Token for tokenId: %s: %s", token_id, e)
            return None

    def put(self, info: TokenInformation) -> None:
        self._store.set_delegation_token(info.token_id, info.to_json())

    def delete(self, token_id: str) -> None:
        self._store.delete_delegation_token(token_id)


class DelegationTokenManager:
    def __init__(self, config: Any, store: Any, now_ms: Callable[[], int]) -> None:
        secret = config.get("delegation.token.secret.key") or config.get("delegation.token.master.key")
        self.secret_key: str | None = str(secret) if secret else None
        self.max_lifetime_ms = int(config.get("delegation.token.max.lifetime.ms"))
        self.default_renew_ms = int(config.get("delegation.token.expiry.time.ms"))
        self.check_interval_ms = int(config.get("delegation.token.expiry.check.interval.ms"))
        self._tokens = TokenStore(store)
        self._store = store
        self._now_ms = now_ms
        self._mutation_lock = threading.Lock()
        # (mechanism, token id, password) -> its SCRAM credential: PBKDF2 (4096 rounds, ~3-12 ms) once per token,
        # not per login; keyed by the password too, so a token re-created under a new secret never matches.
        self._credentials: OrderedDict[tuple[str, str, str], scram.ScramCredential] = OrderedDict()
        self._credential_lock = threading.Lock()
        # The HMAC index: token id -> HMAC and HMAC -> token id, for the ids this broker has seen in the store.
        self._hmac_by_id: dict[str, bytes] = {}
        self._id_by_hmac: dict[bytes, str] = {}
        self._index_lock = threading.Lock()
        self._last_sweep_ms = -(2**62)

    @property
    def enabled(self) -> bool:
        return self.secret_key is not None

    def _hmac(self, token_id: str) -> bytes:
        """The token id's HMAC, from the index (computed and indexed on first use)."""
        with self._index_lock:
            mac = self._hmac_by_id.get(token_id)
        if mac is None:
            assert self.secret_key is not None
            mac = create_hmac(token_id, self.secret_key)
            with self._index_lock:
                self._hmac_by_id[token_id] = mac
                self._id_by_hmac[mac] = token_id
        return mac

    def _unindex(self, token_id: str) -> None:
        with self._index_lock:
            mac = self._hmac_by_id.pop(token_id, None)
            if mac is not None:
                self._id_by_hmac.pop(mac, None)

    def _reindex(self) -> None:
        """Index the store's token ids: HMACs of ids not seen yet, forget ids that are gone."""
        ids = set(self._tokens.ids())
        with self._index_lock:
            gone = [token_id for token_id in self._hmac_by_id if token_id not in ids]
            new = [token_id for token_id in ids if token_id not in self._hmac_by_id]
        for token_id in gone:
            self._unindex(token_id)
        for token_id in new:
            self._hmac(token_id)

    def _require_enabled(self) -> None:
        if not self.enabled:
            raise DelegationTokenAuthDisabledError("Delegation Token feature is not enabled")

    def create(self, owner: KafkaPrincipal, requester: KafkaPrincipal, renewers: Iterable[KafkaPrincipal],
               max_lifetime_ms: int) -> DelegationToken:
        self._require_enabled()
        with self._mutation_lock:
            token_id = new_token_id()
            issued = self._now_ms()
            lifetime = self.max_lifetime_ms if max_lifetime_ms <= 0 else min(max_lifetime_ms, self.max_lifetime_ms)
            max_ts = issued + lifetime
            info = TokenInformation(token_id, owner, requester, tuple(renewers), issued, max_ts,
                                    min(max_ts, issued + self.default_renew_ms))
            self._tokens.put(info)
        log.info("Created a delegation token: %s for owner: %s", token_id, owner)
        return DelegationToken(info, self._hmac(token_id))

    def _by_hmac(self, mac: bytes) -> TokenInformation | None:
        with self._index_lock:
            token_id = self._id_by_hmac.get(mac)
        if token_id is None:  # perhaps created on another broker since: index the new ids, then look again
            self._reindex()
            with self._index_lock:
                token_id = self._id_by_hmac.get(mac)
        if token_id is None or not hmac_lib.compare_digest(self._hmac(token_id), mac):
            return None
        info = self._tokens.get(token_id)
        if info is None:  # deleted (on any broker)
            self._unindex(token_id)
        return info

    def renew(self, principal: KafkaPrincipal, mac: bytes, renew_period_ms: int) -> int:
        """The new expiry timestamp; raises Kafka's token errors."""
        self._require_enabled()
        with self._mutation_lock:
            info = self._authorized_token(principal, mac)
            now = self._now_ms()
            if info.expired(now):
                raise DelegationTokenExpiredError("Delegation Token is expired.")
            period = self.default_renew_ms if renew_period_ms < 0 else renew_period_ms
            expiry = min(info.max_timestamp, now + period)
            self._tokens.put(replace(info, expiry_timestamp=expiry))
        log.info("Delegation token renewed for token: %s for owner: %s", info.token_id, info.owner)
        return expiry

    def expire(self, principal: KafkaPrincipal, mac: bytes, expiry_period_ms: int) -> int:
        self._require_enabled()
        with self._mutation_lock:
            info = self._authorized_token(principal, mac)
            now = self._now_ms()
            if expiry_period_ms < 0:
                self._tokens.delete(info.token_id)
                self._unindex(info.token_id)
                log.info("Token expired for token: %s for owner: %s", info.token_id, info.owner)
                return now
            if info.expired(now):
                raise DelegationTokenExpiredError("Delegation Token is expired.")
            expiry = min(info.max_timestamp, now + expiry_period_ms)
            self._tokens.put(replace(info, expiry_timestamp=expiry))
        log.info("Updated expiry time for token: %s for owner: %s", info.token_id, info.owner)
        return expiry

    def _authorized_token(self, principal: KafkaPrincipal, mac: bytes) -> TokenInformation:
        info = self._by_hmac(mac)
        if info is None:
            raise DelegationTokenNotFoundError("Delegation Token is not found on server.")
        if principal != info.owner and principal not in info.renewers:
            raise DelegationTokenOwnerMismatchError("Specified Principal is not valid Owner/Renewer.")
        return info

    def tokens(self, eligible: Callable[[TokenInformation], bool]) -> list[DelegationToken]:
        self._require_enabled()
        now = self._now_ms()
        out = []
        for token_id in self._tokens.ids():
            info = self._tokens.get(token_id)
            if info is not None and not info.expired(now) and eligible(info):
                out.append(DelegationToken(info, self._hmac(token_id)))
        return out

    def scram_credential(self, mechanism: str, token_id: str) -> tuple[scram.ScramCredential, str, int] | None:
        """(credential, owner name, ms until expiry) of a live token for a SCRAM tokenauth login; else None."""
        if not self.enabled or not token_id or "/" in token_id:
            return None
        info = self._tokens.get(token_id)
        now = self._now_ms()
        if info is None or info.expired(now):
            return None
        password = base64.b64encode(self._hmac(token_id)).decode()
        key = (mechanism, token_id, password)
        with self._credential_lock:
            credential = self._credentials.get(key)
            if credential is not None:
                self._credentials.move_to_end(key)
        if credential is None:  # Kafka's DelegationTokenCache keeps one per token and mechanism likewise
            credential = scram.ScramCredential.from_password(scram.MECHANISMS[mechanism], password,
                                                             scram.random_salt(), SCRAM_TOKEN_ITERATIONS)
            with self._credential_lock:
                self._credentials[key] = credential
                while len(self._credentials) > CREDENTIAL_CACHE_SIZE:
                    self._credentials.popitem(last=False)
        return credential, info.owner.name, max(1, info.expiry_timestamp - now)

    def maybe_expire_tokens(self) -> None:
        """Kafka's periodic expireTokens, run from token requests at most once per check interval."""
        now = self._now_ms()
        with self._mutation_lock:
            if now - self._last_sweep_ms < self.check_interval_ms:
                return
            self._last_sweep_ms = now
            for token_id in self._tokens.ids():
                info = self._tokens.get(token_id)
                if info is not None and info.expired(now):
                    log.info("Delegation token expired for token: %s for owner: %s", token_id, info.owner)
                    self._tokens.delete(token_id)
                    self._unindex(token_id)

