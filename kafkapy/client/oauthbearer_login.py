"""Where a kafkapy client gets its OAUTHBEARER token, as Kafka's Java client configures it:

- `sasl.oauthbearer.token.endpoint.url=file:/path` (Kafka's FileTokenRetriever, with
  `sasl.login.callback.handler.class=...OAuthBearerLoginCallbackHandler`): the token is the file's trimmed
  text, read at every login (a token rotated on disk is picked up);
- otherwise Kafka's unsecured login (OAuthBearerUnsecuredLoginCallbackHandler) from the
  OAuthBearerLoginModule JAAS options: an unsigned JWS `{"alg":"none"}` with `exp` = now +
  `unsecuredLoginLifetimeSeconds` (3600), `iat` = now, `unsecuredLoginStringClaim_<name>`,
  `unsecuredLoginNumberClaim_<name>`, `unsecuredLoginListClaim_<name>` (first character = delimiter); the
  principal claim (`unsecuredLoginPrincipalClaimName`, default `sub`) must be set; or librdkafka's
  `sasl.oauthbearer.config` (`principal=<name> lifeSeconds=<n> scope=<a,b>`).
An https token endpoint (client credentials) is not supported: a one-line ValueError. Pure (reads the
token file); thread-safe.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

OPTION_PREFIX = "unsecuredLogin"
TokenSource = Callable[[], str]


def _b64(obj: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()


def unsecured_token(claims: Mapping[str, Any], lifetime_s: float, now_s: float | None = None) -> str:
    # Whole milliseconds, as Java's time.milliseconds() / 1000.0: an iat a fraction of a ms ahead of the broker's
    # clock would be "issued in the future" to Kafka's validator.
    now = int(time.time() * 1000) / 1000 if now_s is None else now_s
    body = {"exp": now + lifetime_s, "iat": now, **claims}
    return f"{_b64({'alg': 'none'})}.{_b64(body)}."


def _claims_from_jaas(options: Mapping[str, str]) -> tuple[dict[str, Any], float]:
    claims: dict[str, Any] = {}
    for key, value in options.items():
        for kind in ("StringClaim_", "NumberClaim_", "ListClaim_"):
            prefix = OPTION_PREFIX + kind
            if not key.startswith(prefix):
                continue
            name = key[len(prefix):]
            if name in ("iat", "exp"):
                raise ValueError(f"Invalid value for configuration sasl.jaas.config: Cannot explicitly set the "
                                 f"'{name}' claim")
            if kind == "StringClaim_":
                claims[name] = value
            elif kind == "NumberClaim_":
                claims[name] = float(value) if "." in value else int(value)
            else:
                claims[name] = [v for v in value[1:].split(value[0])] if value else []
    principal_claim = options.get(OPTION_PREFIX + "PrincipalClaimName") or "sub"
    if not str(claims.get(principal_claim, "")).strip():
        raise ValueError(f"Invalid value for configuration sasl.jaas.config: the OAUTHBEARER unsecured login needs "
                         f"{OPTION_PREFIX}StringClaim_{principal_claim}")
    return claims, float(options.get(OPTION_PREFIX + "LifetimeSeconds") or 3600)


def _claims_from_librdkafka(config: str) -> tuple[dict[str, Any], float]:
    fields = dict(part.partition("=")[::2] for part in config.split())
    if not fields.get("principal"):
        raise ValueError("Invalid value for configuration sasl.oauthbearer.config: principal=<name> is required")
    claims: dict[str, Any] = {"sub": fields["principal"]}
    if fields.get("scope"):
        claims["scope"] = fields["scope"].split(",")
    return claims, float(fields.get("lifeSeconds") or 3600)


def token_source(raw: Callable[[str], Any], jaas_options: Mapping[str, str]) -> TokenSource:
    url = raw("sasl.oauthbearer.token.endpoint.url")
    if url:
        parsed = urllib.parse.urlparse(str(url))
        if parsed.scheme != "file":
            raise ValueError(f"Invalid value {url} for configuration sasl.oauthbearer.token.endpoint.url: kafkapy's "
                             "client reads tokens from a file: URL only")
        from urllib.request import url2pathname  # only here: it loads http.client and email (client start-up)

        path = url2pathname(parsed.path)

        def from_file() -> str:
            with open(path, encoding="utf-8") as f:
                return f.read().strip()

        return from_file
    librdkafka = raw("sasl.oauthbearer.config")
    claims, lifetime = (_claims_from_jaas(jaas_options) if any(k.startswith(OPTION_PREFIX) for k in jaas_options)
                        or not librdkafka else _claims_from_librdkafka(str(librdkafka)))
    return lambda: unsecured_token(claims, lifetime)
