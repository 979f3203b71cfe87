"""SASL mechanism servers: PLAIN (RFC 4616, users from the listener's JAAS `user_<name>="<password>"`
options), SCRAM-SHA-256/512 (RFC 5802/7677, credentials from the metadata store) and OAUTHBEARER
(RFC 7628 with Kafka's default unsecured JWS validation: `alg: none`, a `sub` claim, `exp` in the future).

`evaluate(token) -> (challenge, complete)`; a bad token or wrong credential raises
SaslAuthenticationFailedError with Kafka's message ("Authentication failed: Invalid username or
password" for PLAIN; "Authentication failed during authentication due to invalid credentials with
SASL mechanism SCRAM-SHA-256" for SCRAM). `authorization_id` is the authenticated user.
One instance per exchange, used by one request at a time (the connection is muted): not shared.
"""

from __future__ import annotations

import base64
import hmac
import json
import time
from collections.abc import Callable

from kafkapy.common import scram
from kafkapy.common.errors import IllegalSaslStateError, SaslAuthenticationFailedError

CredentialLookup = Callable[[str, str], "scram.ScramCredential | None"]  # (mechanism, user)


class SaslServer:
    mechanism = ""
    authorization_id: str | None = None
    lifetime_ms: int | None = None  # credential lifetime (OAUTHBEARER tokens); None = unbounded

    def evaluate(self, token: bytes) -> tuple[bytes, bool]:
        raise NotImplementedError


class PlainSaslServer(SaslServer):
    mechanism = "PLAIN"

    def __init__(self, users: dict[str, str]) -> None:
        self._users = users

    def evaluate(self, token: bytes) -> tuple[bytes, bool]:
        parts = bytes(token).split(b"\x00")
        if len(parts) != 3:
            raise SaslAuthenticationFailedError("Invalid SASL/PLAIN response: expected 3 tokens")
        try:
            authzid, user, password = (p.decode("utf-8") for p in parts)
        except UnicodeDecodeError:
            raise SaslAuthenticationFailedError("Invalid SASL/PLAIN response: not UTF-8") from None
        if not user:
            raise SaslAuthenticationFailedError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationFailedError("Authentication failed: password not specified")
        expected = self._users.get(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise SaslAuthenticationFailedError("Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise SaslAuthenticationFailedError("Authentication failed: Client requested an authorization id "
                                                "that is different from username")
        self.authorization_id = user
        return b"", True


class ScramSaslServer(SaslServer):
    def __init__(self, mechanism: str, lookup: CredentialLookup) -> None:
        self.mechanism = mechanism
        self._hash = scram.MECHANISMS[mechanism]
        self._lookup = lookup
        self._step = 0
        self._credential: scram.ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._user = ""

    def _fail(self) -> SaslAuthenticationFailedError:
        return SaslAuthenticationFailedError("Authentication failed during authentication due to invalid "
                                             f"credentials with SASL mechanism {self.mechanism}")

    def evaluate(self, token: bytes) -> tuple[bytes, bool]:
        try:
            text = bytes(token).decode("utf-8")
        except UnicodeDecodeError:
            raise SaslAuthenticationFailedError("Invalid SCRAM message: not UTF-8") from None
        if self._step == 0:
            return self._client_first(text), False
        if self._step == 1:
            return self._client_final(text), True
        raise IllegalSaslStateError("Unexpected SASL request after the SCRAM exchange completed")

    def _client_first(self, text: str) -> bytes:
        # gs2-header: "n," / "y," then an optional "a=authzid," ; then the bare message.
        gs2, sep, rest = text.partition(",")
        authzid, sep2, bare = rest.partition(",")
        if not sep or not sep2 or gs2 not in ("n", "y") or (authzid and not authzid.startswith("a=")):
            raise SaslAuthenticationFailedError("Invalid SCRAM client-first message")
        try:
            attrs = scram.parse_attributes(bare)
        except scram.ScramError as e:
            raise SaslAuthenticationFailedError(f"Invalid SCRAM client-first message: {e}") from None
        user, client_nonce = attrs.get("n"), attrs.get("r")
        if not user or not client_nonce:
            raise SaslAuthenticationFailedError("Invalid SCRAM client-first message")
        self._user = scram.sasl_name_decode(user)
        if authzid and scram.sasl_name_decode(authzid[2:]) != self._user:
            raise SaslAuthenticationFailedError("Authentication failed: Client requested an authorization id "
                                                "that is different from username")
        self._credential = self._lookup(self.mechanism, self._user)
        if self._credential is None:
            raise self._fail()
        self._client_first_bare = bare
        self._nonce = client_nonce + scram.nonce()
        c = self._credential
        self._server_first = f"r={self._nonce},s={scram.b64(c.salt)},i={c.iterations}"
        self._step = 1
        return self._server_first.encode()

    def _client_final(self, text: str) -> bytes:
        self._step = 2
        without_proof, sep, proof_part = text.rpartition(",p=")
        if not sep:
            raise SaslAuthenticationFailedError("Invalid SCRAM client-final message")
        try:
            attrs = scram.parse_attributes(without_proof)
            proof = scram.unb64(proof_part)
        except scram.ScramError as e:
            raise SaslAuthenticationFailedError(f"Invalid SCRAM client-final message: {e}") from None
        # Kafka checks endsWith, not equality: librdkafka before 2.x sent its own nonce + the combined one.
        if not attrs.get("r", "").endswith(self._nonce):
            raise SaslAuthenticationFailedError("Invalid SCRAM client-final message: nonce mismatch")
        message = scram.auth_message(self._client_first_bare, self._server_first, without_proof)
        assert self._credential is not None
        if not scram.verify_client_proof(self._hash, self._credential, message, proof):
            raise self._fail()
        self.authorization_id = self._user
        signature = scram.server_signature(self._hash, self._credential.server_key, message)
        return f"v={scram.b64(signature)}".encode()


def _b64url_json(part: str) -> dict:
    padded = part + "=" * (-len(part) % 4)
    value = json.loads(base64.urlsafe_b64decode(padded.encode()))
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


class OAuthBearerUnsecuredSaslServer(SaslServer):
    """Kafka's OAuthBearerUnsecuredValidatorCallbackHandler: an unsigned JWS whose `sub` is the principal."""

    mechanism = "OAUTHBEARER"

    def __init__(self, principal_claim: str = "sub", allowable_clock_skew_ms: int = 0) -> None:
        self._principal_claim = principal_claim
        self._skew_ms = allowable_clock_skew_ms
        self._failed = False

    def evaluate(self, token: bytes) -> tuple[bytes, bool]:
        if self._failed:
            # RFC 7628: the client answers the error challenge with a single 0x01; fail then.
            raise SaslAuthenticationFailedError("Authentication failed: invalid OAUTHBEARER token")
        try:
            text = bytes(token).decode("utf-8")
            gs2, _, rest = text.partition("\x01")
            kvs = dict(kv.split("=", 1) for kv in rest.split("\x01") if "=" in kv)
            auth = kvs.get("auth", "")
            if not gs2.startswith(("n,", "y,")) or not auth.startswith("Bearer "):
                raise ValueError("no Bearer token")
            header_b64, payload_b64, _sig = auth[7:].strip().split(".")
            header, claims = _b64url_json(header_b64), _b64url_json(payload_b64)
            if header.get("alg") != "none":
                raise ValueError("the unsecured validator accepts alg none only")
            sub = claims.get(self._principal_claim)
            exp = claims.get("exp")
            now_ms = time.time() * 1000
            if not isinstance(sub, str) or not sub:
                raise ValueError(f"no {self._principal_claim} claim")
            if not isinstance(exp, (int, float)) or exp * 1000 + self._skew_ms <= now_ms:
                raise ValueError("the token expired")
        except (ValueError, UnicodeDecodeError):
            # RFC 7628 3.2.2: an error challenge; the client acknowledges it and the exchange fails.
            self._failed = True
            return json.dumps({"status": "invalid_token"}).encode(), False
        self.authorization_id = sub
        self.lifetime_ms = max(0, int(exp * 1000 - now_ms))
        return b"", True
