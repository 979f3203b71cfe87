"""What an OAUTHBEARER validator hands back (Kafka's OAuthBearerToken) and how it refuses a token.

`OAuthBearerToken`: the principal, the scope set and the expiry (ms since the epoch) of a validated
token. `OAuthBearerValidationError(status, scope, reason)`: a refused token; `status` and `scope`
become Kafka's RFC 7628 error challenge (`{"status":"invalid_token"}`,
`{"status":"insufficient_scope", "scope":"[a, b]"}`), `reason` is logged only, never sent.
`OAuthBearerValidator` is the interface both validators implement (`validate(token, now_ms)`).
Also the claim-value helpers both validators share: strict base64url JSON segments and finite
NumericDate values. Pure and immutable: thread-safe.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from typing import Any, NamedTuple, Protocol

_B64URL = re.compile(r"[A-Za-z0-9_\-+/]*={0,2}")


class OAuthBearerToken(NamedTuple):
    value: str
    principal_name: str
    scope: frozenset[str]
    lifetime_ms: int  # expiry, ms since the epoch
    start_time_ms: int | None = None


class OAuthBearerValidationError(ValueError):
    def __init__(self, reason: str, status: str = "invalid_token", scope: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.scope = scope

    def error_json(self) -> str:
        """Kafka's OAuthBearerSaslServer.jsonErrorResponse, byte for byte."""
        text = f'{{"status":"{self.status}"'
        if self.scope is not None:
            text += f', "scope":"{self.scope}"'
        return text + "}"


class OAuthBearerValidator(Protocol):
    def validate(self, token: str, now_ms: int) -> OAuthBearerToken: ...

    def close(self) -> None: ...


def _no_constants(name: str) -> Any:
    raise ValueError(f"non-numeric number {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


def decode_json_segment(segment: str, what: str) -> dict[str, Any]:
    """One base64url (or base64) JSON-object segment of a compact JWS; non-finite numbers are malformed."""
    if not _B64URL.fullmatch(segment) or len(segment.rstrip("=")) % 4 == 1:
        raise OAuthBearerValidationError(f"malformed Base64 URL encoded value in the {what}")
    text = segment.rstrip("=").replace("+", "-").replace("/", "_")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise OAuthBearerValidationError(f"malformed Base64 URL encoded value in the {what}") from None
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_no_constants, parse_float=_finite_float)
    except (ValueError, RecursionError):
        raise OAuthBearerValidationError(f"malformed JSON in the {what}") from None
    if not isinstance(value, dict):
        raise OAuthBearerValidationError(f"malformed JSON in the {what}: not an object")
    return value


def numeric_date_ms(claims: dict[str, Any], name: str, required: bool) -> int | None:
    """A NumericDate claim (seconds, integer or fraction) in ms; a bool, string, huge or non-finite value fails."""
    value = claims.get(name)
    if value is None:
        if required:
            raise OAuthBearerValidationError(f"Required claim missing: {name}")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OAuthBearerValidationError(f"The {name} claim had the incorrect type: {type(value).__name__}")
    try:
        ms = float(value) * 1000
    except OverflowError:
        ms = math.inf
    if not math.isfinite(ms) or not -(2**63) < ms < 2**63:
        raise OAuthBearerValidationError(f"The {name} claim is out of range")
    return round(ms)


def scope_of(claims: dict[str, Any], name: str) -> frozenset[str]:
    """Kafka's scope claim: one space-less string or a list of strings; blanks dropped."""
    value = claims.get(name)
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset([value.strip()]) if value.strip() else frozenset()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(v.strip() for v in value if v.strip())
    raise OAuthBearerValidationError(f"The {name} claim had the incorrect type: {type(value).__name__}")
