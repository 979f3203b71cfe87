"""Build an ssl.SSLContext from Kafka's `ssl.*` configs (PEM stores), for the broker and the clients.

Keys read (Kafka's names; values as strings or lists): `ssl.keystore.type` (PEM only),
`ssl.keystore.location` (a PEM file holding the private key and its certificate chain) or
`ssl.keystore.certificate.chain` + `ssl.keystore.key` (inline PEM text), `ssl.key.password`
(encrypted key), `ssl.truststore.type` (PEM only), `ssl.truststore.location` (PEM CA file) or
`ssl.truststore.certificates` (inline PEM), `ssl.enabled.protocols` (TLSv1.2,TLSv1.3),
`ssl.cipher.suites` (Java/IANA or OpenSSL names; TLS 1.3 suites cannot be restricted from Python
and are left as OpenSSL enables them), `ssl.endpoint.identification.algorithm` (client: "https"
checks the host name, "" does not), `ssl.client.auth` (server: none|requested|required).

Errors are `SslConfigError(ValueError)` with one line naming the key. Contexts are built once and
are thread-safe to share afterwards.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Callable
from typing import Any

ConfigGetter = Callable[[str], Any]

_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3,
              "TLSv1.1": ssl.TLSVersion.TLSv1_1, "TLSv1": ssl.TLSVersion.TLSv1}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_TLS13_SUITES = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
                 "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256"}


class SslConfigError(ValueError):
    """An ssl.* config that cannot be used; the message names the key."""


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    return [v.strip() for v in str(value).split(",") if v.strip()]


def _text(get: ConfigGetter, key: str) -> str | None:
    value = get(key)
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def openssl_cipher_name(name: str) -> str:
    """Kafka's (Java/IANA) cipher suite name as OpenSSL spells it; OpenSSL names pass through."""
    if not name.startswith("TLS_") or "_WITH_" not in name:
        return name
    kx, cipher = name[4:].split("_WITH_", 1)
    kx = kx.replace("_", "-")
    cipher = cipher.replace("AES_128_", "AES128-").replace("AES_256_", "AES256-").replace("_", "-")
    cipher = cipher.replace("CHACHA20-POLY1305-SHA256", "CHACHA20-POLY1305")
    if kx == "RSA":
        return cipher
    return f"{kx}-{cipher}"


def build_ssl_context(get: ConfigGetter, server_side: bool, client_auth: str | None = None) -> ssl.SSLContext:
    """An SSLContext configured from `get(key)` (None for unset keys)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server_side else ssl.PROTOCOL_TLS_CLIENT)
    ctx.options |= ssl.OP_NO_COMPRESSION
    if hasattr(ssl, "OP_NO_RENEGOTIATION"):
        ctx.options |= ssl.OP_NO_RENEGOTIATION
    _set_protocols(ctx, _as_list(get("ssl.enabled.protocols")) or ["TLSv1.2", "TLSv1.3"])
    suites = _as_list(get("ssl.cipher.suites"))
    legacy = [openssl_cipher_name(s) for s in suites if s not in _TLS13_SUITES]
    if legacy:
        try:
            ctx.set_ciphers(":".join(legacy))
        except ssl.SSLError as e:
            raise SslConfigError(f"Invalid value {','.join(suites)} for configuration ssl.cipher.suites: {e}") from None
    _load_keystore(ctx, get, required=server_side)
    trusted = _load_truststore(ctx, get)
    if server_side:
        mode = (client_auth or _text(get, "ssl.client.auth") or "none").lower()
        if mode not in _CLIENT_AUTH:
            raise SslConfigError(f"Invalid value {mode} for configuration ssl.client.auth: "
                                 "String must be one of: required, requested, none")
        if mode != "none" and not trusted:
            raise SslConfigError(f"ssl.client.auth={mode} needs ssl.truststore.location or ssl.truststore.certificates")
        ctx.verify_mode = _CLIENT_AUTH[mode]
        # Session tickets would be written after the handshake completes, outside the reactor's
        # handshake step; Kafka clients do not resume sessions anyway.
        ctx.num_tickets = 0
    else:
        algorithm = get("ssl.endpoint.identification.algorithm")
        ctx.check_hostname = str("https" if algorithm is None else algorithm).strip().lower() == "https"
        if not trusted:
            ctx.load_default_certs()
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def _set_protocols(ctx: ssl.SSLContext, names: list[str]) -> None:
    versions = []
    for name in names:
        if name not in _PROTOCOLS:
            raise SslConfigError(f"Invalid value {','.join(names)} for configuration ssl.enabled.protocols: "
                                 f"unsupported protocol {name}")
        versions.append(_PROTOCOLS[name])
    ctx.minimum_version = min(versions)
    ctx.maximum_version = max(versions)


def _check_pem_type(get: ConfigGetter, key: str) -> None:
    kind = _text(get, key)
    if kind is not None and kind.upper() != "PEM":
        raise SslConfigError(f"Invalid value {kind} for configuration {key}: only PEM stores are supported "
                             "(convert with openssl pkcs12 / keytool -exportcert)")


def _load_keystore(ctx: ssl.SSLContext, get: ConfigGetter, required: bool) -> None:
    location = _text(get, "ssl.keystore.location")
    chain = _text(get, "ssl.keystore.certificate.chain")
    key = _text(get, "ssl.keystore.key")
    password = _text(get, "ssl.key.password") or _text(get, "ssl.keystore.password")
    if location is None and chain is None:
        if required:
            raise SslConfigError("Missing required configuration ssl.keystore.location "
                                 "(or ssl.keystore.certificate.chain and ssl.keystore.key) for an SSL listener")
        return
    _check_pem_type(get, "ssl.keystore.type")
    try:
        if location is not None:
            ctx.load_cert_chain(location, password=password)
            return
        if key is None or chain is None:
            raise SslConfigError("ssl.keystore.certificate.chain is set without ssl.keystore.key")
        # load_cert_chain reads files only: write the inline PEM to a private temporary file.
        with tempfile.TemporaryDirectory(prefix="kafkapy-ssl-") as tmp:
            path = os.path.join(tmp, "keystore.pem")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(key.strip() + "\n" + chain.strip() + "\n")
            ctx.load_cert_chain(path, password=password)
    except (ssl.SSLError, OSError) as e:
        what = "ssl.keystore.location" if location is not None else "ssl.keystore.certificate.chain"
        raise SslConfigError(f"Invalid value for configuration {what}: cannot load the key store: {e}") from None


def _load_truststore(ctx: ssl.SSLContext, get: ConfigGetter) -> bool:
    location = _text(get, "ssl.truststore.location")
    inline = _text(get, "ssl.truststore.certificates")
    if location is None and inline is None:
        return False
    _check_pem_type(get, "ssl.truststore.type")
    try:
        if location is not None:
            ctx.load_verify_locations(cafile=location)
        else:
            ctx.load_verify_locations(cadata=inline)
    except (ssl.SSLError, OSError) as e:
        what = "ssl.truststore.location" if location is not None else "ssl.truststore.certificates"
        raise SslConfigError(f"Invalid value for configuration {what}: cannot load the trust store: {e}") from None
    return True
