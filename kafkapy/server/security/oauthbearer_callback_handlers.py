"""Which validator an OAUTHBEARER listener uses, chosen as Kafka's SaslChannelBuilder chooses the server
callback handler: `listener.name.<l>.oauthbearer.sasl.server.callback.handler.class` (else the
unprefixed `sasl.server.callback.handler.class`).

- unset: Kafka's OAuthBearerUnsecuredValidatorCallbackHandler (oauthbearer_unsecured_validator.py),
  its options from the OAUTHBEARER JAAS entry;
- `org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler` (or its older
  `...oauthbearer.secured.` name): the JWS-verifying validator (oauthbearer_jwt_validator.py) with keys
  from `sasl.oauthbearer.jwks.endpoint.url` (required; file:, https: or http:);
- the unsecured handler's own class name selects the unsecured validator; any other class refuses
  the start with one line naming the key (a Java class cannot run here, and silently accepting
  unsigned tokens instead is what an attacker wants).
The `sasl.oauthbearer.*` keys are read listener-prefixed and mechanism-prefixed first, as Kafka's
ConfigurationUtils does. PyJWT is imported only when the secured validator is configured.
Runs once per listener at start; no shared state.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from kafkapy.server.security.oauthbearer_token import OAuthBearerValidator
from kafkapy.server.security.oauthbearer_unsecured_validator import OAuthBearerUnsecuredValidator

CALLBACK_HANDLER_KEY = "sasl.server.callback.handler.class"
SECURED_HANDLERS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler",
)
UNSECURED_HANDLER = ("org.apache.kafka.common.security.oauthbearer.internals.unsecured."
                     "OAuthBearerUnsecuredValidatorCallbackHandler")
JWKS_ENDPOINT_URL = "sasl.oauthbearer.jwks.endpoint.url"

log = logging.getLogger("org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler")

# A lookup returns (value, the key it was found under); value None when unset everywhere.
Lookup = Callable[[str], tuple[Any, str]]


class OAuthBearerConfigError(ValueError):
    pass


def build_oauthbearer_validator(lookup: Lookup, jaas_options: Mapping[str, str]) -> OAuthBearerValidator:
    handler, handler_key = lookup(CALLBACK_HANDLER_KEY)
    name = str(handler).strip() if handler else ""
    if not name or name == UNSECURED_HANDLER:
        url, url_key = lookup(JWKS_ENDPOINT_URL)
        if url:
            log.warning("%s is set but %s is not %s: Kafka's unsecured validator is used and accepts unsigned "
                        "tokens", url_key, handler_key, SECURED_HANDLERS[0])
        try:
            return OAuthBearerUnsecuredValidator(jaas_options)
        except ValueError as e:
            raise OAuthBearerConfigError(f"Invalid OAUTHBEARER JAAS option: {e}") from None
    if name not in SECURED_HANDLERS:
        raise OAuthBearerConfigError(f"Invalid value {name} for configuration {handler_key}: kafkapy supports "
                                     f"{SECURED_HANDLERS[0]} and Kafka's unsecured default (unset)")
    return _secured(lookup, jaas_options)


def _secured(lookup: Lookup, jaas_options: Mapping[str, str]) -> OAuthBearerValidator:
    from kafkapy.server.security.jwks_key_resolver import (
        JwksFileKeyResolver,
        KeyResolver,
        RefreshingHttpsJwksKeyResolver,
    )
    from kafkapy.server.security.oauthbearer_jwt_validator import OAuthBearerJwtValidator

    url, url_key = lookup(JWKS_ENDPOINT_URL)
    if not url:
        raise OAuthBearerConfigError(f"Missing required configuration {JWKS_ENDPOINT_URL}: "
                                     "the OAuthBearerValidatorCallbackHandler verifies tokens with its keys")
    scheme = urllib.parse.urlparse(str(url)).scheme.lower()

    def number(key: str) -> int:
        value, where = lookup(key)
        try:
            result = int(value)
        except (TypeError, ValueError):
            raise OAuthBearerConfigError(f"Invalid value {value} for configuration {where}") from None
        if result < 0:
            raise OAuthBearerConfigError(f"Invalid value {value} for configuration {where}: must be >= 0")
        return result

    resolver: KeyResolver
    try:
        if scheme == "file":
            resolver = JwksFileKeyResolver(str(url))
        elif scheme in ("https", "http"):
            resolver = RefreshingHttpsJwksKeyResolver(
                str(url), number("sasl.oauthbearer.jwks.endpoint.refresh.ms"),
                number("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms"),
                number("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms"),
                _jwks_ssl_context(jaas_options) if scheme == "https" else None)
        else:
            raise OAuthBearerConfigError(f"Invalid value {url} for configuration {url_key}: "
                                         "the URL must be file:, https: or http:")
    except (OSError, ValueError) as e:
        if isinstance(e, OAuthBearerConfigError):
            raise
        raise OAuthBearerConfigError(f"The OAuth validator configuration encountered an error when initializing "
                                     f"the VerificationKeyResolver ({url_key}={url}): {e}") from None
    audience, _ = lookup("sasl.oauthbearer.expected.audience")
    if isinstance(audience, str):
        audience = [a.strip() for a in audience.split(",") if a.strip()]
    issuer, _ = lookup("sasl.oauthbearer.expected.issuer")
    scope_claim, _ = lookup("sasl.oauthbearer.scope.claim.name")
    sub_claim, _ = lookup("sasl.oauthbearer.sub.claim.name")
    return OAuthBearerJwtValidator(resolver, number("sasl.oauthbearer.clock.skew.seconds"), list(audience or []),
                                   str(issuer) if issuer else None, str(scope_claim or "scope").strip(),
                                   str(sub_claim or "sub").strip())


def _jwks_ssl_context(jaas_options: Mapping[str, str]) -> Any:
    """The TLS client context for the JWKS endpoint: `ssl.*` options of the JAAS entry (as Kafka's
    JaasOptionsUtils), else the system's trusted CAs."""
    from kafkapy.common.ssl_config import SslConfigError, build_ssl_context

    try:
        return build_ssl_context(lambda key: jaas_options.get(key), server_side=False)
    except SslConfigError as e:
        raise OAuthBearerConfigError(f"OAUTHBEARER JAAS ssl options: {e}") from None
