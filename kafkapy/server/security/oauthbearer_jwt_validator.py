"""Kafka's secured OAUTHBEARER validator (OAuthBearerValidatorCallbackHandler with its
ValidatorAccessTokenValidator): a JWS signed by a key of the listener's JWKS, checked with PyJWT.

Token: `<b64url header>.<b64url claims>.<b64url signature>` (three non-empty sections). The header's
`alg` must be a signature algorithm (`none` is refused, as jose4j's DISALLOW_NONE) matching the key's
type (RSA: RS*/PS*, EC: ES*, OKP: EdDSA, oct: HS*) and the key's own `alg` when it declares one; the
key is chosen by `kid` (any key of the set when the token names none). Claims, as Kafka requires:
`exp` and `iat` present and finite, now - `sasl.oauthbearer.clock.skew.seconds` < exp, `nbf` (when
present) <= now + skew, `aud` one of `sasl.oauthbearer.expected.audience` (a token with an `aud`
and no expected audience is refused, as jose4j does), `iss` equal to `sasl.oauthbearer.expected.issuer`
when set, the subject claim (`sasl.oauthbearer.sub.claim.name`, default `sub`) a non-blank string,
the scope claim (`sasl.oauthbearer.scope.claim.name`) a string or a list without duplicates.
Every refusal is `invalid_token`. Immutable after construction (the resolver refreshes itself): thread-safe.
"""

from __future__ import annotations

from typing import Any

import jwt

from kafkapy.server.security.jwks_key_resolver import KeyResolver
from kafkapy.server.security.oauthbearer_token import (
    OAuthBearerToken,
    OAuthBearerValidationError,
    decode_json_segment,
    numeric_date_ms,
    scope_of,
)

_ALGORITHMS_BY_KEY_TYPE = {
    "RSA": ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
    "EC": ("ES256", "ES384", "ES512", "ES256K"),
    "OKP": ("EdDSA", "Ed25519"),
    "oct": ("HS256", "HS384", "HS512"),
}
_SIGNATURE_ALGORITHMS = frozenset(a for algs in _ALGORITHMS_BY_KEY_TYPE.values() for a in algs)
_DECODE_OPTIONS: Any = {
    "verify_signature": True, "verify_aud": True, "verify_iss": True,
    # Time claims are checked below against the caller's clock (finite values only), not PyJWT's.
    "verify_exp": False, "verify_iat": False, "verify_nbf": False,
    "verify_sub": False, "verify_jti": False, "require": [],
}


class OAuthBearerJwtValidator:
    def __init__(self, resolver: KeyResolver, clock_skew_seconds: int, expected_audience: list[str],
                 expected_issuer: str | None, scope_claim: str = "scope", sub_claim: str = "sub") -> None:
        self._resolver = resolver
        self._skew_ms = clock_skew_seconds * 1000
        self._audience = list(expected_audience) or None
        self._issuer = expected_issuer or None
        self._scope_claim = scope_claim
        self._sub_claim = sub_claim

    def validate(self, token: str, now_ms: int) -> OAuthBearerToken:
        sections = token.split(".")
        if len(sections) != 3 or not all(sections):
            raise OAuthBearerValidationError("Malformed JWT provided; expected three non-empty sections "
                                             "(header, payload, and signature)")
        header = decode_json_segment(sections[0], "header")
        decode_json_segment(sections[1], "payload")  # malformed claims fail the same way as with jose4j
        alg, kid = header.get("alg"), header.get("kid")
        if not isinstance(alg, str) or alg not in _SIGNATURE_ALGORITHMS:
            raise OAuthBearerValidationError(f"The JWS algorithm {alg!r} is not allowed")
        if kid is not None and not isinstance(kid, str):
            raise OAuthBearerValidationError("The JWS key id (kid) is not a string")
        claims = self._verify(token, alg, self._resolver.keys_for(kid, now_ms))
        exp_ms = numeric_date_ms(claims, "exp", required=True)
        iat_ms = numeric_date_ms(claims, "iat", required=True)
        nbf_ms = numeric_date_ms(claims, "nbf", required=False)
        assert exp_ms is not None and iat_ms is not None
        if now_ms - self._skew_ms >= exp_ms:
            raise OAuthBearerValidationError("The JWT is no longer valid: the Expiration Time has passed")
        if nbf_ms is not None and nbf_ms > now_ms + self._skew_ms:
            raise OAuthBearerValidationError("The JWT is not yet valid (nbf)")
        if exp_ms < 0 or iat_ms < 0:
            raise OAuthBearerValidationError("exp and iat must be non-negative")
        sub = claims.get(self._sub_claim)
        if not isinstance(sub, str) or not sub.strip():
            raise OAuthBearerValidationError(f"The {self._sub_claim} claim must be a non-blank string")
        raw_scope = claims.get(self._scope_claim)
        if isinstance(raw_scope, list) and len({s.strip() for s in raw_scope if isinstance(s, str)}) != len(raw_scope):
            raise OAuthBearerValidationError(f"{self._scope_claim} value must not contain duplicates")
        return OAuthBearerToken(token, sub.strip(), scope_of(claims, self._scope_claim), exp_ms, iat_ms)

    def _verify(self, token: str, alg: str, candidates: tuple[dict[str, Any], ...]) -> dict[str, Any]:
        usable = [k for k in candidates
                  if alg in _ALGORITHMS_BY_KEY_TYPE.get(str(k.get("kty")), ()) and k.get("alg", alg) == alg]
        if not usable:
            raise OAuthBearerValidationError(f"Unable to find a suitable verification key for alg {alg}")
        last: Exception | None = None
        for jwk in usable:
            try:
                key = jwt.PyJWK(jwk, algorithm=alg)
                claims: dict[str, Any] = jwt.decode(token, key=key.key, algorithms=[alg], options=_DECODE_OPTIONS,
                                                    audience=self._audience, issuer=self._issuer)
                return claims
            except jwt.InvalidSignatureError as e:
                last = e
            except jwt.PyJWTError as e:  # audience, issuer, a malformed section
                raise OAuthBearerValidationError(f"Could not validate the access token: {e}") from None
        raise OAuthBearerValidationError(f"Could not validate the access token: {last}")

    def close(self) -> None:
        self._resolver.close()
