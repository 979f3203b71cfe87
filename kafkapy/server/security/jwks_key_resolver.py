"""Where the secured OAUTHBEARER validator finds its verification keys: a JSON Web Key Set (RFC 7517,
`{"keys": [{"kty": "RSA", "kid": ..., "n": ..., "e": ...}, ...]}`) from `sasl.oauthbearer.jwks.endpoint.url`.

- `file:` URL (JwksFileKeyResolver): read once when the listener starts, as Kafka 3.9's
  JwksFileVerificationKeyResolver does; an unreadable file or a set without a usable key stops the start.
- `https:` (or `http:`) URL (RefreshingHttpsJwksKeyResolver, Kafka's RefreshingHttpsJwks): fetched once
  at start (a failure stops the start), then again every `sasl.oauthbearer.jwks.endpoint.refresh.ms`;
  a token naming a key id the set lacks triggers an early refresh, at most once a minute per id (ids over
  1000 characters never do). A refresh retries with exponential backoff from
  `sasl.oauthbearer.jwks.endpoint.retry.backoff.ms` up to `...retry.backoff.max.ms` in total, then keeps
  the previous keys. Refreshes run on a short-lived daemon thread (one at a time), never on a handler
  thread; bodies over 1 MiB are refused.

Thread-safety: the key list is an immutable tuple swapped whole; the refresh bookkeeping is under a lock.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.parse
import urllib.request
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

import jwt

log = logging.getLogger("org.apache.kafka.common.security.oauthbearer.internals.secured.RefreshingHttpsJwks")

MAX_JWKS_BYTES = 1 << 20
MISSING_KEY_ID_CACHE_MAX_ENTRIES = 16
MISSING_KEY_ID_CACHE_IN_FLIGHT_MS = 60000
MISSING_KEY_ID_MAX_KEY_LENGTH = 1000
FETCH_TIMEOUT_S = 10.0

JwkDict = dict[str, Any]


class KeyResolver(Protocol):
    def keys_for(self, key_id: str | None, now_ms: int) -> tuple[JwkDict, ...]: ...

    def close(self) -> None: ...


def parse_jwks(text: bytes | str, source: str) -> tuple[JwkDict, ...]:
    """The signature keys of a JWK Set; ValueError when it holds none PyJWT can use."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{source}: not a JSON Web Key Set: {e}") from None
    keys = doc.get("keys") if isinstance(doc, dict) else None
    if not isinstance(keys, list):
        raise ValueError(f"{source}: not a JSON Web Key Set: no \"keys\" array")
    usable = []
    for key in keys:
        if not isinstance(key, dict) or key.get("use", "sig") != "sig":
            continue
        try:
            jwt.PyJWK(key)
        except jwt.PyJWTError:
            continue  # an unsupported kty/crv, as jose4j skips it
        usable.append(key)
    if not usable:
        raise ValueError(f"{source}: the JSON Web Key Set holds no usable signature key")
    return tuple(usable)


def _select(keys: tuple[JwkDict, ...], key_id: str | None) -> tuple[JwkDict, ...]:
    if key_id is None:
        return keys
    return tuple(k for k in keys if k.get("kid") == key_id)


class JwksFileKeyResolver:
    def __init__(self, url: str) -> None:
        path = urllib.request.url2pathname(urllib.parse.urlparse(url).path)
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_JWKS_BYTES + 1)
        except OSError as e:
            raise ValueError(f"cannot read the JWKS file {path}: {e.strerror or e}") from None
        if len(data) > MAX_JWKS_BYTES:
            raise ValueError(f"the JWKS file {path} is over {MAX_JWKS_BYTES} bytes")
        self._keys = parse_jwks(data, path)

    def keys_for(self, key_id: str | None, now_ms: int) -> tuple[JwkDict, ...]:
        return _select(self._keys, key_id)

    def close(self) -> None:
        pass


class RefreshingHttpsJwksKeyResolver:
    def __init__(self, url: str, refresh_ms: int, retry_backoff_ms: int, retry_backoff_max_ms: int,
                 ssl_context: Any = None, fetch: Callable[[], bytes] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._url = url
        self._refresh_ms = max(1, refresh_ms)
        self._backoff_ms = max(1, retry_backoff_ms)
        self._backoff_max_ms = max(self._backoff_ms, retry_backoff_max_ms)
        self._ssl_context = ssl_context
        self._fetch = fetch or self._http_get
        self._sleep = sleep
        self._lock = threading.Lock()
        self._closed = False
        self._refreshing = False
        self._missing: OrderedDict[str, int] = OrderedDict()
        self._keys = parse_jwks(self._fetch(), url)  # start fails when the first fetch does, as Kafka's init
        self._next_refresh_ms = 0  # set by the first keys_for (the caller's clock)
        self.refreshes = 0

    def _http_get(self) -> bytes:
        request = urllib.request.Request(self._url, headers={"Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S, context=self._ssl_context) as response:
            data: bytes = response.read(MAX_JWKS_BYTES + 1)
        if len(data) > MAX_JWKS_BYTES:
            raise ValueError(f"the JWKS at {self._url} is over {MAX_JWKS_BYTES} bytes")
        return data

    def keys_for(self, key_id: str | None, now_ms: int) -> tuple[JwkDict, ...]:
        keys = self._keys
        found = _select(keys, key_id)
        with self._lock:
            if not self._next_refresh_ms:
                self._next_refresh_ms = now_ms + self._refresh_ms
            due = now_ms >= self._next_refresh_ms
            if not found and key_id is not None and len(key_id) <= MISSING_KEY_ID_MAX_KEY_LENGTH:
                next_check = self._missing.get(key_id)
                if next_check is None or now_ms >= next_check:
                    self._missing[key_id] = now_ms + MISSING_KEY_ID_CACHE_IN_FLIGHT_MS
                    self._missing.move_to_end(key_id)
                    while len(self._missing) > MISSING_KEY_ID_CACHE_MAX_ENTRIES:
                        self._missing.popitem(last=False)
                    due = True
            start = due and not self._refreshing and not self._closed
            if start:
                self._refreshing = True
                self._next_refresh_ms = now_ms + self._refresh_ms
        if start:
            threading.Thread(target=self.refresh, name="jwks-refresh", daemon=True).start()
        return found

    def refresh(self) -> None:
        """Fetch the set again with Kafka's bounded retry; the old keys stay when every attempt fails."""
        try:
            waited_ms, backoff_ms = 0, self._backoff_ms
            for _attempt in range(64):
                try:
                    self._keys = parse_jwks(self._fetch(), self._url)
                    self.refreshes += 1
                    return
                except (OSError, ValueError) as e:
                    if self._closed or waited_ms + backoff_ms > self._backoff_max_ms:
                        log.warning("Refreshing the JWKS from %s failed, keeping the previous keys: %s",
                                    self._url, e)
                        return
                    self._sleep(backoff_ms / 1000)
                    waited_ms += backoff_ms
                    backoff_ms = min(backoff_ms * 2, self._backoff_max_ms)
        finally:
            with self._lock:
                self._refreshing = False

    def close(self) -> None:
        self._closed = True
