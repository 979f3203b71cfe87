"""Test certificates generated at test time with `cryptography` (nothing checked in, nothing expires):
a CA, a broker certificate for 127.0.0.1/localhost, client certificates, and a second, untrusted CA."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass
class Pki:
    dir: Path
    ca: Path            # trusted CA certificate (PEM)
    broker: Path        # broker key + chain (PEM keystore)
    client: Path        # client key + certificate signed by the CA
    client_cert: Path
    client_key: Path
    rogue_client: Path  # key + certificate signed by an untrusted CA
    rogue_cert: Path
    rogue_key: Path
    broker_key_encrypted: Path  # the broker key encrypted with password "keypass" + chain


def _name(cn: str, ou: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COUNTRY_NAME, "US"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafkapy")]
    if ou:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def _cert(subject: x509.Name, key, issuer: x509.Name, issuer_key, *, ca: bool = False, sans=None, server=False):
    now = datetime.datetime.now(datetime.UTC)
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
         .not_valid_after(now + datetime.timedelta(days=2))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        b = b.add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        b = b.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    else:
        b = b.add_extension(x509.ExtendedKeyUsage(
            [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def _pem_key(key, password: bytes | None = None) -> bytes:
    enc = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc)


def _pem_cert(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def generate(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("kafkapy test CA")
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True)
    rogue_key_ca = ec.generate_private_key(ec.SECP256R1())
    rogue_name = _name("rogue CA")
    _cert(rogue_name, rogue_key_ca, rogue_name, rogue_key_ca, ca=True)  # its issuer only; never trusted

    broker_key = ec.generate_private_key(ec.SECP256R1())
    sans = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    broker = _cert(_name("localhost", "broker"), broker_key, ca_name, ca_key, sans=sans, server=True)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _cert(_name("client", "eng"), client_key, ca_name, ca_key)
    rogue_client_key = ec.generate_private_key(ec.SECP256R1())
    rogue_client = _cert(_name("mallory", "eng"), rogue_client_key, rogue_name, rogue_key_ca)

    def write(name: str, data: bytes) -> Path:
        p = directory / name
        p.write_bytes(data)
        return p

    return Pki(
        dir=directory,
        ca=write("ca.pem", _pem_cert(ca)),
        broker=write("broker.pem", _pem_key(broker_key) + _pem_cert(broker) + _pem_cert(ca)),
        client=write("client.pem", _pem_key(client_key) + _pem_cert(client)),
        client_cert=write("client-cert.pem", _pem_cert(client)),
        client_key=write("client-key.pem", _pem_key(client_key)),
        rogue_client=write("rogue.pem", _pem_key(rogue_client_key) + _pem_cert(rogue_client)),
        rogue_cert=write("rogue-cert.pem", _pem_cert(rogue_client)),
        rogue_key=write("rogue-key.pem", _pem_key(rogue_client_key)),
        broker_key_encrypted=write("broker-enc.pem", _pem_key(broker_key, b"keypass") + _pem_cert(broker)),
    )
