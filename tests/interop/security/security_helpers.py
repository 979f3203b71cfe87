"""Helpers of the security interop tests: the broker's listener configuration, SecureBroker, running the tools,
creating SCRAM users with `kafkapy configs`, a confluent-kafka round trip.

Listeners: PLAINTEXT, SSL (ssl.client.auth=requested, DEFAULT principal mapping), MTLS (an SSL
listener with ssl.client.auth=required and a mapping rule: `CN=client,OU=eng,...` -> `client@eng`),
SASL_PLAINTEXT (PLAIN, SCRAM-SHA-256/512), SASL_SSL (the same mechanisms over TLS) and REAUTH (a
SASL_PLAINTEXT listener with PLAIN only and connections.max.reauth.ms=1500), TLS12 (an SSL listener with
ssl.enabled.protocols=TLSv1.2 and one cipher suite).
PLAIN users come from the listener's JAAS config; SCRAM users are created by the tests through
AlterUserScramCredentials. `SecureBroker.principals` records (listener, client_id, principal) of
every request the broker handled, by wrapping KafkaApis.handle (a spy on the real broker).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from security_certs import Pki

PLAIN_USERS = {"admin": "admin-secret", "alice": "alice-secret"}
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" ' + " ".join(f'user_{u}="{p}"' for u, p in PLAIN_USERS.items()) + ";")
SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required;'
OAUTH_JAAS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;'


@dataclass
class SecureBroker:
    server: Any
    pki: Pki
    log_dir: str
    principals: list[tuple[str, str, str, int]] = field(default_factory=list)

    def port(self, listener: str) -> int:
        return self.server.bound_port(listener)

    def bootstrap(self, listener: str) -> str:
        return f"127.0.0.1:{self.port(listener)}"

    def principals_of(self, client_id: str) -> set[tuple[str, str]]:
        """(listener, principal) of the client's requests after authentication (not ApiVersions / SASL ones)."""
        return {(listener, principal) for listener, cid, principal, api_key in list(self.principals)
                if cid == client_id and api_key not in (17, 18, 36)}


def broker_overrides(pki: Pki, log_dir: str) -> dict[str, str]:
    return {
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0,"
                     "SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,REAUTH://127.0.0.1:0,TLS12://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                                          "SASL_SSL:SASL_SSL,REAUTH:SASL_PLAINTEXT,TLS12:SSL",
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
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
        # OAUTHBEARER: Kafka's unsecured validator (no sasl.server.callback.handler.class); it needs a JAAS entry.
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
        "listener.name.sasl_ssl.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
        "connection.failed.authentication.delay.ms": "100",
        # REAUTH: PLAIN only, sessions of 1.5 s (connections.max.reauth.ms) to test re-authentication.
        "listener.name.reauth.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.reauth.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.reauth.connections.max.reauth.ms": "1500",
        # TLS12: TLS 1.2 only, one cipher suite (Kafka's Java name).
        "listener.name.tls12.ssl.enabled.protocols": "TLSv1.2",
        "listener.name.tls12.ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "group.initial.rebalance.delay.ms": "0",  # ck_roundtrip's group join does not wait Kafka's default 3 s
    }


@dataclass
class ToolResult:
    rc: int
    out: str
    err: str


def run_tool(*argv: str, stdin: str | None = None, timeout: float = 90) -> ToolResult:
    """`kafkapy <argv>` as a subprocess (the real console script path, with this checkout's package)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, KAFKAPY_PLAIN="1")
    proc = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", *argv], input=stdin, capture_output=True,
                          text=True, timeout=timeout, env=env)
    return ToolResult(proc.returncode, proc.stdout, proc.stderr)


def add_scram_user(broker: SecureBroker, user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> None:
    """What an operator does: `kafkapy configs --alter --add-config 'SCRAM-SHA-512=[password=...]'`."""
    r = run_tool("configs", "--bootstrap-server", broker.bootstrap("PLAINTEXT"), "--alter", "--entity-type", "users",
                 "--entity-name", user, "--add-config", f"{mechanism}=[iterations=4096,password={password}]")
    assert r.rc == 0, r.err


def ck_roundtrip(conf: dict, topic: str, n: int = 200) -> list[bytes]:
    """Produce n values `<topic>-<i>` with confluent-kafka, consume them back in a group; the values read."""
    import confluent_kafka as ck

    producer = ck.Producer({**conf, "linger.ms": 5})
    for i in range(n):
        producer.produce(topic, value=b"%s-%d" % (topic.encode(), i))
    assert producer.flush(30) == 0
    consumer = ck.Consumer({**conf, "group.id": f"g-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.time() + 30
    try:
        while len(got) < n and time.time() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                got.append(msg.value())
    finally:
        consumer.close()
    return got


def kafkapy_roundtrip(conf: dict, topic: str, values: list[bytes]) -> list[tuple[int, bytes]]:
    """Produce `values` with kafkapy's KafkaProducer, read them back from offset 0 with its KafkaConsumer:
    the (offset, value) pairs read."""
    from kafkapy.client.consumer import KafkaConsumer
    from kafkapy.client.producer import KafkaProducer
    from kafkapy.common.topic_partition import TopicPartition

    producer = KafkaProducer(conf)
    try:
        futures = [producer.send(topic, value=v) for v in values]
        producer.flush(30)
        assert [f.result().offset for f in futures] == list(range(len(values)))
    finally:
        producer.close()
    consumer = KafkaConsumer(conf)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        consumer.seek_to_beginning()
        got: list = []
        deadline = time.time() + 30
        while len(got) < len(values) and time.time() < deadline:
            got += consumer.poll(500)
    finally:
        consumer.close()
    return [(r.offset, r.value) for r in got]
