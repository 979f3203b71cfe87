"""build_ssl_context from Kafka's ssl.* keys: PEM keystore file or inline chain + key, encrypted keys
(ssl.key.password), trust stores, protocols, cipher-suite names, and one-line errors for what cannot work."""

from __future__ import annotations

import importlib.util
import ssl
import sys
from pathlib import Path

import pytest

from kafkapy.common.ssl_config import SslConfigError, build_ssl_context, openssl_cipher_name

_CERTS = Path(__file__).resolve().parents[2] / "interop" / "security" / "security_certs.py"
_spec = importlib.util.spec_from_file_location("kafkapy_unit_security_certs", _CERTS)
assert _spec is not None and _spec.loader is not None
security_certs = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = security_certs  # its dataclass looks its module up
_spec.loader.exec_module(security_certs)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return security_certs.generate(tmp_path_factory.mktemp("pki"))


def getter(values: dict):
    return values.get


def test_server_context_from_a_pem_keystore_file(pki):
    ctx = build_ssl_context(getter({"ssl.keystore.location": str(pki.broker), "ssl.truststore.location": str(pki.ca),
                                    "ssl.client.auth": "required"}), server_side=True)
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2 and ctx.maximum_version == ssl.TLSVersion.TLSv1_3


def test_inline_chain_and_encrypted_key(pki):
    text = pki.broker_key_encrypted.read_text()
    key = text[: text.index("-----END ENCRYPTED PRIVATE KEY-----") + len("-----END ENCRYPTED PRIVATE KEY-----")]
    chain = text[len(key):]
    ctx = build_ssl_context(getter({"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": chain,
                                    "ssl.keystore.key": key, "ssl.key.password": "keypass",
                                    "ssl.enabled.protocols": "TLSv1.3"}), server_side=True)
    assert ctx.minimum_version == ctx.maximum_version == ssl.TLSVersion.TLSv1_3
    with pytest.raises(SslConfigError, match="ssl.keystore.location"):
        build_ssl_context(getter({"ssl.keystore.location": str(pki.broker_key_encrypted),
                                  "ssl.key.password": "wrong"}), server_side=True)


def test_client_context_trusts_inline_certificates_and_checks_host_names(pki):
    ctx = build_ssl_context(getter({"ssl.truststore.certificates": pki.ca.read_text()}), server_side=False)
    assert ctx.check_hostname and ctx.verify_mode == ssl.CERT_REQUIRED
    ctx = build_ssl_context(getter({"ssl.truststore.location": str(pki.ca),
                                    "ssl.endpoint.identification.algorithm": ""}), server_side=False)
    assert not ctx.check_hostname


def test_errors_name_the_key(pki):
    with pytest.raises(SslConfigError, match="ssl.keystore.location"):
        build_ssl_context(getter({}), server_side=True)
    with pytest.raises(SslConfigError, match="ssl.keystore.type: only PEM"):
        build_ssl_context(getter({"ssl.keystore.type": "JKS", "ssl.keystore.location": str(pki.broker)}), True)
    with pytest.raises(SslConfigError, match="ssl.enabled.protocols"):
        build_ssl_context(getter({"ssl.enabled.protocols": "SSLv3", "ssl.keystore.location": str(pki.broker)}), True)
    with pytest.raises(SslConfigError, match="ssl.cipher.suites"):
        build_ssl_context(getter({"ssl.cipher.suites": "NOT_A_CIPHER", "ssl.keystore.location": str(pki.broker)}), True)
    with pytest.raises(SslConfigError, match="truststore"):
        build_ssl_context(getter({"ssl.client.auth": "required", "ssl.keystore.location": str(pki.broker)}), True)


def test_cipher_names():
    assert openssl_cipher_name("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256") == "ECDHE-ECDSA-AES128-GCM-SHA256"
    assert openssl_cipher_name("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384") == "ECDHE-RSA-AES256-GCM-SHA384"
    assert openssl_cipher_name("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256") == "ECDHE-RSA-CHACHA20-POLY1305"
    assert openssl_cipher_name("ECDHE-RSA-AES128-GCM-SHA256") == "ECDHE-RSA-AES128-GCM-SHA256"
    ctx = build_ssl_context(getter({"ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256",
                                    "ssl.enabled.protocols": "TLSv1.2"}), server_side=False)
    names = {c["name"] for c in ctx.get_ciphers() if c["protocol"] == "TLSv1.2"}
    assert names == {"ECDHE-ECDSA-AES128-GCM-SHA256"}
