"""SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka does it: the math, the messages, and
the stored credential.

Stored credential (Kafka's ScramCredentialUtils, the value of `SCRAM-SHA-256` under a user's config):
`salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>`. SaltedPassword = Hi(password, salt, i)
(PBKDF2-HMAC), ClientKey = HMAC(SaltedPassword, "Client Key"), StoredKey = H(ClientKey), ServerKey =
HMAC(SaltedPassword, "Server Key"). Messages: client-first `n,,n=<user>,r=<nonce>` (optional
`a=<authzid>` and extensions), server-first `r=<nonce>,s=<b64 salt>,i=<n>`, client-final
`c=biws,r=<nonce>,p=<b64 proof>`, server-final `v=<b64 signature>` or `e=<error>`.
Pure functions and immutable values: thread-safe. The salt is base-36 text of 130 random bits, as
Kafka's ScramFormatter.secureRandomBytes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import NamedTuple

MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


class ScramError(ValueError):
    """A malformed or failing SCRAM exchange."""


def random_salt() -> bytes:
    """Kafka's ScramFormatter.secureRandomBytes: 130 random bits as base-36 text."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out.encode("ascii")


def salted_password(hash_name: str, password: bytes | str, salt: bytes, iterations: int) -> bytes:
    raw = password.encode("utf-8") if isinstance(password, str) else password
    return hashlib.pbkdf2_hmac(hash_name, raw, salt, iterations)


def _hmac(hash_name: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hash_name).digest()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError as e:
        raise ScramError(f"invalid base64: {e}") from None


class ScramCredential(NamedTuple):
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(cls, hash_name: str, salted: bytes, salt: bytes, iterations: int) -> ScramCredential:
        client_key = _hmac(hash_name, salted, b"Client Key")
        return cls(salt, hashlib.new(hash_name, client_key).digest(), _hmac(hash_name, salted, b"Server Key"),
                   iterations)

    @classmethod
    def from_password(cls, hash_name: str, password: str, salt: bytes, iterations: int) -> ScramCredential:
        return cls.from_salted_password(hash_name, salted_password(hash_name, password, salt, iterations), salt,
                                        iterations)

    def to_config_string(self) -> str:
        return (f"salt={b64(self.salt)},stored_key={b64(self.stored_key)},server_key={b64(self.server_key)},"
                f"iterations={self.iterations}")

    @classmethod
    def from_config_string(cls, text: str) -> ScramCredential:
        fields = dict(part.split("=", 1) for part in text.split(",") if "=" in part)
        try:
            return cls(unb64(fields["salt"]), unb64(fields["stored_key"]), unb64(fields["server_key"]),
                       int(fields["iterations"]))
        except (KeyError, ValueError) as e:
            raise ScramError(f"invalid stored SCRAM credential: {e}") from None


def parse_attributes(message: str) -> dict[str, str]:
    """`k=v,k=v` (values may contain '='); raises ScramError on a malformed attribute."""
    out: dict[str, str] = {}
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ScramError(f"invalid SCRAM attribute {part!r}")
        out[part[0]] = part[2:]
    return out


def sasl_name_decode(name: str) -> str:
    return name.replace("=2C", ",").replace("=3D", "=")


def sasl_name_encode(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def auth_message(client_first_bare: str, server_first: str, client_final_without_proof: str) -> bytes:
    return f"{client_first_bare},{server_first},{client_final_without_proof}".encode()


def client_proof(hash_name: str, salted: bytes, message: bytes) -> bytes:
    client_key = _hmac(hash_name, salted, b"Client Key")
    signature = _hmac(hash_name, hashlib.new(hash_name, client_key).digest(), message)
    return bytes(a ^ b for a, b in zip(client_key, signature, strict=True))


def verify_client_proof(hash_name: str, credential: ScramCredential, message: bytes, proof: bytes) -> bool:
    signature = _hmac(hash_name, credential.stored_key, message)
    if len(proof) != len(signature):
        return False
    client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
    return hmac.compare_digest(hashlib.new(hash_name, client_key).digest(), credential.stored_key)


def server_signature(hash_name: str, server_key: bytes, message: bytes) -> bytes:
    return _hmac(hash_name, server_key, message)


def nonce() -> str:
    return secrets.token_urlsafe(24)
