"""SASL mechanism servers: PLAIN (RFC 4616, users from the listener's JAAS `user_<name>="<password>"`
options), SCRAM-SHA-256/512 (RFC 5802/7677, credentials from the metadata store; with Kafka's `tokenauth=true`
extension the user name is a delegation token id, the credential derived from its HMAC and the
principal the token's owner) and OAUTHBEARER
(RFC 7628 client initial response `n,[a=authzid],%x01auth=Bearer <token>%x01[k=v%x01]...%x01`; the token
is checked by the listener's validator: Kafka's unsecured one or the JWS-verifying one).

`evaluate(token) -> (challenge, complete)`; a bad token or wrong credential raises
SaslAuthenticationFailedError with Kafka's message ("Authentication failed: Invalid username or
password" for PLAIN; "Authentication failed during authentication due to invalid credentials with
SASL mechanism SCRAM-SHA-256" for SCRAM). `authorization_id` is the authenticated user.
One instance per exchange, used by one request at a time (the connection is muted): not shared.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable

from kafkapy.common import scram
from kafkapy.common.errors import IllegalSaslStateError, SaslAuthenticationFailedError
from kafkapy.server.security.oauthbearer_token import OAuthBearerValidationError, OAuthBearerValidator

OAUTHBEARER_GENERIC_FAILURE = ("Authentication failed during authentication due to invalid credentials with "
                               "SASL mechanism OAUTHBEARER")

CredentialLookup = Callable[[str, str], "scram.ScramCredential | None"]  # (mechanism, user)
# (mechanism, token id) -> (SCRAM credential, owner name, ms until the token expires) | None
TokenLookup = Callable[[str, str], "tuple[scram.ScramCredential, str, int] | None"]


class SaslServer:
    mechanism = ""
    authorization_id: str | None = None
    lifetime_ms: int | None = None  # credential lifetime (OAUTHBEARER tokens); None = unbounded
    failure_reason: str | None = None  # logged (not sent) when the exchange fails

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
    def __init__(self, mechanism: str, lookup: CredentialLookup, token_lookup: TokenLookup | None = None) -> None:
        self.mechanism = mechanism
        self._hash = scram.MECHANISMS[mechanism]
        self._lookup = lookup
        self._token_lookup = token_lookup
        self.token_authenticated = False  # the `tokenauth=true` extension: a delegation token logged in
        self._step = 0
        self._credential: scram.ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._user = ""
        self._owner = ""

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
        # Kafka's ClientFirstMessage: n=<saslname>,r=<nonce> then extensions `,<letters>=<value>` (tokenauth=true).
        parts = bare.split(",")
        try:
            attrs = scram.parse_attributes(",".join(parts[:2]))
        except scram.ScramError as e:
            raise SaslAuthenticationFailedError(f"Invalid SCRAM client-first message: {e}") from None
        extensions = dict(p.partition("=")[::2] for p in parts[2:])
        if any(not k.isalpha() or not k.isascii() for k in extensions):
            raise SaslAuthenticationFailedError("Invalid SCRAM client-first message: malformed extension")
        user, client_nonce = attrs.get("n"), attrs.get("r")
        if not user or not client_nonce:
            raise SaslAuthenticationFailedError("Invalid SCRAM client-first message")
        self._user = scram.sasl_name_decode(user)
        if authzid and scram.sasl_name_decode(authzid[2:]) != self._user:
            raise SaslAuthenticationFailedError("Authentication failed: Client requested an authorization id "
                                                "that is different from username")
        if extensions.get("tokenauth", "").lower() == "true":
            # Kafka's DelegationTokenCredentialCallback: the user name is a token id, the principal its owner.
            token = self._token_lookup(self.mechanism, self._user) if self._token_lookup is not None else None
            if token is None:
                self.failure_reason = f"Token Authentication failed: Invalid tokenId : {self._user}"
                raise self._fail()
            self._credential, self._owner, self.lifetime_ms = token
            self.token_authenticated = True
        else:
            self._credential = self._lookup(self.mechanism, self._user)
            self._owner = self._user
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
        self.authorization_id = self._owner
        signature = scram.server_signature(self._hash, self._credential.server_key, message)
        return f"v={scram.b64(signature)}".encode()


# Kafka's OAuthBearerClientInitialResponse grammar (RFC 7628 section 3.1, gs2 header "n," only).
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7e \t\r\n]+\x01)*"
_CLIENT_INITIAL_RESPONSE = re.compile(f"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01")
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)")


class OAuthBearerSaslServer(SaslServer):
    """Kafka's OAuthBearerSaslServer over a validator (oauthbearer_callback_handlers.py picks which).

    A malformed client message fails the exchange at once; a token the validator refuses is answered
    with Kafka's error challenge (`{"status":"invalid_token"}`), and the client's %x01 reply then fails
    with that JSON as the error message. Any exception out of the validator counts as a refused token
    (the reason is kept in `failure_reason` for the one log line, never sent to the client).
    """

    mechanism = "OAUTHBEARER"

    def __init__(self, validator: OAuthBearerValidator, now_ms: Callable[[], int]) -> None:
        self._validator = validator
        self._now_ms = now_ms
        self._error_json: str | None = None

    def evaluate(self, token: bytes) -> tuple[bytes, bool]:
        data = bytes(token)
        if self._error_json is not None:
            if data == b"\x01":
                raise SaslAuthenticationFailedError(self._error_json)
            self._error_json = None
        try:
            match = _CLIENT_INITIAL_RESPONSE.fullmatch(data.decode("utf-8"))
        except UnicodeDecodeError:
            match = None
        auth = None
        if match is not None:
            pairs = dict(kv.partition("=")[::2] for kv in match.group("kvpairs").split("\x01") if kv)
            auth = _AUTH.fullmatch(pairs.get("auth", ""))
        if auth is None or auth.group("scheme").lower() != "bearer":
            self.failure_reason = "Invalid OAUTHBEARER client first message"
            raise SaslAuthenticationFailedError(OAUTHBEARER_GENERIC_FAILURE)
        assert match is not None
        try:
            validated = self._validator.validate(auth.group("token"), self._now_ms())
        except OAuthBearerValidationError as e:
            return self._refuse(e.error_json(), e.reason)
        except Exception as e:  # noqa: BLE001 - whatever a token does to a validator, it is a refused token
            return self._refuse('{"status":"invalid_token"}', f"{type(e).__name__}: {e}")
        authzid = match.group("authzid")
        if authzid and authzid != validated.principal_name:
            raise SaslAuthenticationFailedError(
                f"Authentication failed: Client requested an authorization id ({authzid}) that is different "
                f"from the token's principal name ({validated.principal_name})")
        self.authorization_id = validated.principal_name
        self.lifetime_ms = max(0, validated.lifetime_ms - self._now_ms())
        return b"", True

    def _refuse(self, error_json: str, reason: str) -> tuple[bytes, bool]:
        # RFC 7628 3.2.2: the error challenge; the client acknowledges it with %x01 and the exchange fails.
        self._error_json = error_json
        self.failure_reason = f"invalid OAUTHBEARER token: {reason}"
        return error_json.encode(), False
