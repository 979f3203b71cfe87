"""Kafka's OAuthBearerUnsecuredValidatorCallbackHandler: the validator an OAUTHBEARER listener uses when
no `sasl.server.callback.handler.class` is configured (development only: nothing is signed).

Token: an unsecured JWS compact serialization `<b64url header>.<b64url claims>.` with `alg: none`
and an empty signature. Checked as Kafka does: the principal claim (JAAS option
`unsecuredValidatorPrincipalClaimName`, default `sub`) is a non-blank string; `exp` is required and a
number, `iat` optional and a number; now - skew < exp; iat <= now + skew; exp > iat; every scope of
`unsecuredValidatorRequiredScope` (space separated) is in the scope claim
(`unsecuredValidatorScopeClaimName`, default `scope`), else `insufficient_scope`.
`unsecuredValidatorAllowableClockSkewMs` (default 0) must be a non-negative int: checked at start.
Immutable after construction: thread-safe.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafkapy.server.security.oauthbearer_token import (
    OAuthBearerToken,
    OAuthBearerValidationError,
    decode_json_segment,
    numeric_date_ms,
    scope_of,
)

PRINCIPAL_CLAIM_NAME_OPTION = "unsecuredValidatorPrincipalClaimName"
SCOPE_CLAIM_NAME_OPTION = "unsecuredValidatorScopeClaimName"
REQUIRED_SCOPE_OPTION = "unsecuredValidatorRequiredScope"
ALLOWABLE_CLOCK_SKEW_MS_OPTION = "unsecuredValidatorAllowableClockSkewMs"


class OAuthBearerUnsecuredValidator:
    def __init__(self, options: Mapping[str, str]) -> None:
        """`options`: the OAUTHBEARER JAAS entry's options. Raises ValueError on a bad clock skew."""
        self.principal_claim = (options.get(PRINCIPAL_CLAIM_NAME_OPTION) or "").strip() or "sub"
        self.scope_claim = (options.get(SCOPE_CLAIM_NAME_OPTION) or "").strip() or "scope"
        self.required_scope = [s for s in (options.get(REQUIRED_SCOPE_OPTION) or "").split(" ") if s]
        skew = (options.get(ALLOWABLE_CLOCK_SKEW_MS_OPTION) or "").strip() or "0"
        try:
            self.skew_ms = int(skew)
        except ValueError:
            raise ValueError(f"{ALLOWABLE_CLOCK_SKEW_MS_OPTION}: not an integer: {skew}") from None
        if self.skew_ms < 0:
            raise ValueError(f"Allowable clock skew millis must not be negative: {skew}")

    def validate(self, token: str, now_ms: int) -> OAuthBearerToken:
        if ".." in token:
            raise OAuthBearerValidationError("Malformed compact serialization contains '..'")
        parts = token.split(".")
        if len(parts) != 3:
            raise OAuthBearerValidationError(
                "Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
        header = decode_json_segment(parts[0], "header")
        claims = decode_json_segment(parts[1], "claims")
        if header.get("alg") != "none":
            raise OAuthBearerValidationError("Unsecured JWS must have 'none' for an algorithm")
        if parts[2]:
            raise OAuthBearerValidationError("Unsecured JWS must not contain a digital signature")
        scope = scope_of(claims, self.scope_claim)
        exp_ms = numeric_date_ms(claims, "exp", required=True)
        assert exp_ms is not None
        principal = claims.get(self.principal_claim)
        if not isinstance(principal, str) or not principal.strip():
            raise OAuthBearerValidationError(f"No principal name in JWT claim: {self.principal_claim}")
        iat_ms = numeric_date_ms(claims, "iat", required=False)
        if iat_ms is not None and iat_ms > now_ms + self.skew_ms:
            raise OAuthBearerValidationError("The Issued At value was after the indicated time plus allowable "
                                             "clock skew")
        if now_ms - self.skew_ms >= exp_ms:
            raise OAuthBearerValidationError("The indicated time minus allowable clock skew was on or after the "
                                             "Expiration Time value")
        if iat_ms is not None and exp_ms <= iat_ms:
            raise OAuthBearerValidationError("The Expiration Time time was not after the Issued At time")
        missing = [s for s in self.required_scope if s not in scope]
        if missing:
            raise OAuthBearerValidationError(
                f"The provided scope ({sorted(scope)}) was missing a required scope ({missing[0]})",
                status="insufficient_scope", scope="[" + ", ".join(self.required_scope) + "]")
        return OAuthBearerToken(token, principal, scope, exp_ms, iat_ms)

    def close(self) -> None:
        pass
