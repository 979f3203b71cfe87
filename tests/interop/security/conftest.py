"""One in-process broker per test module with every kind of listener, and test certificates.

Listeners: PLAINTEXT, SSL (ssl.client.auth=requested, DEFAULT principal mapping), MTLS (an SSL
listener with ssl.client.auth=required and a mapping rule: `CN=client,OU=eng,...` -> `client@eng`),
SASL_PLAINTEXT (PLAIN, SCRAM-SHA-256/512) and SASL_SSL (the same mechanisms over TLS).
PLAIN users come from the listener's JAAS config; SCRAM users are created by the tests through
AlterUserScramCredentials. `SecureBroker.principals` records (listener, client_id, principal) of
every request the broker handled, by wrapping KafkaApis.handle (a spy on the real broker).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from security_certs import Pki, generate

PLAIN_USERS = {"admin": "admin-secret", "alice": "alice-secret"}
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" ' + " ".join(f'user_{u}="{p}"' for u, p in PLAIN_USERS.items()) + ";")
SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required;'


@dataclass
class SecureBroker:
    server: Any
    pki: Pki
    log_dir: str
    principals: list[tuple[str, str, str]] = field(default_factory=list)

    def port(self, listener: str) -> int:
        return self.server.bound_port(listener)

    def bootstrap(self, listener: str) -> str:
        return f"127.0.0.1:{self.port(listener)}"

    def principals_of(self, client_id: str) -> set[tuple[str, str]]:
        return {(listener, principal) for listener, cid, principal in list(self.principals) if cid == client_id}


def broker_overrides(pki: Pki, log_dir: str) -> dict[str, str]:
    return {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                                          "SASL_SSL:SASL_SSL",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": log_dir,
        "num.network.threads": "2",
        "num.io.threads": "4",
        "log.retention.check.interval.ms": "300000",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(pki.broker),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.ca),
        "ssl.client.auth": "requested",
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.principal.mapping.rules": "RULE:^CN=([^,]*),OU=([^,]*),.*$/$1@$2/L,DEFAULT",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
        "connection.failed.authentication.delay.ms": "100",
    }


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return generate(Path(tmp_path_factory.mktemp("pki")))


@pytest.fixture(scope="module")
def secure_broker(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    from kafkapy.protocol.header import decode_request_header
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    log_dir = str(tmp_path_factory.mktemp("secure-data"))
    server = KafkaServer(KafkaConfig.from_properties(None, broker_overrides(pki, log_dir)))
    server.startup()
    handle = SecureBroker(server, pki, log_dir)
    lock = threading.Lock()
    real_handle = server.apis.handle

    def spy(request: Any) -> None:
        try:
            header, _ = decode_request_header(request.frame)
            with lock:
                handle.principals.append((request.listener_name, header.client_id or "", str(request.principal)))
        except Exception:
            pass
        real_handle(request)

    server.apis.handle = spy
    try:
        yield handle
    finally:
        server.shutdown()
