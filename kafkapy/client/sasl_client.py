"""SASL client mechanisms for BrokerConnection: PLAIN (RFC 4616), SCRAM-SHA-256/512 (RFC 5802) and
OAUTHBEARER (RFC 7628; the token comes from client/oauthbearer_login.py).

A mechanism produces the first token (`initial()`), then answers each server token
(`evaluate(token) -> bytes | None`, None once complete). PLAIN sends `\\0user\\0password`; SCRAM
sends client-first (with Kafka's extensions, e.g. `tokenauth=true` for a delegation token), then
client-final with the proof, and checks the server's signature (a wrong
signature raises SaslAuthenticationFailedError: the broker did not prove it knows the credential).
One instance per authentication, used by one thread.
"""

from __future__ import annotations

from kafkapy.common import scram
from kafkapy.common.errors import SaslAuthenticationFailedError, UnsupportedSaslMechanismError


class SaslClient:
    complete = False

    def initial(self) -> bytes:
        raise NotImplementedError

    def evaluate(self, token: bytes) -> bytes | None:
        raise NotImplementedError


class PlainSaslClient(SaslClient):
    def __init__(self, username: str, password: str) -> None:
        self._token = b"\x00" + username.encode() + b"\x00" + password.encode()

    def initial(self) -> bytes:
        return self._token

    def evaluate(self, token: bytes) -> bytes | None:
        self.complete = True
        return None


class ScramSaslClient(SaslClient):
    def __init__(self, mechanism: str, username: str, password: str,
                 extensions: dict[str, str] | None = None) -> None:
        self._hash = scram.MECHANISMS[mechanism]
        self._username = username
        self._password = password
        self._nonce = scram.nonce()
        # Kafka's ClientFirstMessage: extensions (e.g. tokenauth=true for a delegation token) follow the nonce.
        extra = "".join(f",{k}={v}" for k, v in (extensions or {}).items())
        self._first_bare = f"n={scram.sasl_name_encode(username)},r={self._nonce}{extra}"
        self._auth_message = b""
        self._salted = b""
        self._step = 0

    def initial(self) -> bytes:
        return ("n,," + self._first_bare).encode()

    def evaluate(self, token: bytes) -> bytes | None:
        try:
            text = bytes(token).decode()
            attrs = scram.parse_attributes(text)
        except (UnicodeDecodeError, scram.ScramError) as e:
            raise SaslAuthenticationFailedError(f"Invalid SCRAM server message: {e}") from None
        if "e" in attrs:
            raise SaslAuthenticationFailedError(f"SCRAM authentication failed: {attrs['e']}")
        if self._step == 0:
            self._step = 1
            server_nonce, salt, iterations = attrs.get("r", ""), attrs.get("s"), attrs.get("i", "0")
            if not server_nonce.startswith(self._nonce) or salt is None or not iterations.isdigit():
                raise SaslAuthenticationFailedError("Invalid SCRAM server-first message")
            self._salted = scram.salted_password(self._hash, self._password, scram.unb64(salt), int(iterations))
            without_proof = f"c=biws,r={server_nonce}"
            self._auth_message = scram.auth_message(self._first_bare, text, without_proof)
            proof = scram.client_proof(self._hash, self._salted, self._auth_message)
            return f"{without_proof},p={scram.b64(proof)}".encode()
        credential = scram.ScramCredential.from_salted_password(self._hash, self._salted, b"", 0)
        expected = scram.server_signature(self._hash, credential.server_key, self._auth_message)
        if scram.unb64(attrs.get("v", "")) != expected:
            raise SaslAuthenticationFailedError("Invalid server signature in SCRAM server-final message")
        self.complete = True
        return None


class OAuthBearerSaslClient(SaslClient):
    """RFC 7628's client initial response `n,,%x01auth=Bearer <token>%x01%x01`; a server error challenge
    (`{"status":"invalid_token"}`) is acknowledged with %x01, after which the broker fails the exchange."""

    def __init__(self, token: str) -> None:
        self._token = token

    def initial(self) -> bytes:
        return f"n,,\x01auth=Bearer {self._token}\x01\x01".encode()

    def evaluate(self, token: bytes) -> bytes | None:
        if token:
            return b"\x01"
        self.complete = True
        return None


def sasl_client(mechanism: str, username: str, password: str,
                extensions: dict[str, str] | None = None) -> SaslClient:
    if mechanism == "PLAIN":
        return PlainSaslClient(username, password)
    if mechanism in scram.MECHANISMS:
        return ScramSaslClient(mechanism, username, password, extensions)
    raise UnsupportedSaslMechanismError(f"SASL mechanism {mechanism} is not supported by this client")
