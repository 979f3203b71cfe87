"""Apache Kafka's Java client (kafka-clients 3.9.1, the reference client, from the PyPI wheel
shigawire-apache-flink-libraries: pyflink/lib/) against kafkapy's security: a delegation token created by the Java
AdminClient logs in with the Java client's SCRAM `tokenauth=true` extension and produces/consumes, and a token
session may not create tokens (UnsupportedByAuthenticationException = DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
OAUTHBEARER with the Java OAuthBearerLoginModule's unsecured login works on Kafka's unsecured-validator listener and
is refused on a listener with the secured OAuthBearerValidatorCallbackHandler with Kafka's {"status":"invalid_token"}.
JavaSecurityCheck.java is compiled once per module (javac: Debian's openjdk-17-jdk-headless, Makefile test-deps)."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

pytestmark = pytest.mark.timeout(180)

HERE = Path(__file__).resolve().parent
JARS = ("kafka-clients", "slf4j-api", "jackson-annotations", "jackson-core", "jackson-databind", "lz4-java",
        "snappy-java", "zstd-jni")
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="b";'
OAUTH_JAAS = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
SECURED = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"


@pytest.fixture(scope="module")
def java_classpath(compile_java) -> str:
    return compile_java(HERE / "JavaSecurityCheck.java", JARS)


@pytest.fixture(scope="module")
def java_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwks = tmp_path_factory.mktemp("java-jwks") / "jwks.json"
    jwks.write_text(json.dumps({"keys": [{**RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "k"}]}))
    server = KafkaServer(KafkaConfig.from_properties(None, {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,OPEN://127.0.0.1:0,SECURED://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,OPEN:SASL_PLAINTEXT,"
                                          "SECURED:SASL_PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT", "log.dirs": str(tmp_path_factory.mktemp("java-data")),
        "num.network.threads": "2", "num.io.threads": "2",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512", "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "listener.name.open.sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.open.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
        "listener.name.secured.sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.secured.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
        "listener.name.secured.oauthbearer.sasl.server.callback.handler.class": SECURED,
        "listener.name.secured.sasl.oauthbearer.jwks.endpoint.url": jwks.as_uri(),
        "delegation.token.secret.key": "java-token-secret"}))
    server.startup()
    try:
        yield server
    finally:
        server.shutdown()


def java(classpath: str, *args: str) -> dict[str, str]:
    r = subprocess.run(["java", "-cp", classpath, "JavaSecurityCheck", *args], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line and line.split(" ", 1)[0].isupper())


def test_java_client_delegation_token_login(java_broker, java_classpath):
    facts = java(java_classpath, "token", f"127.0.0.1:{java_broker.bound_port('SASL_PLAINTEXT')}")
    token_id, hmac_b64, owner, renewers = facts["TOKEN"].split(" ", 3)
    assert (len(token_id), owner, renewers) == (22, "User:alice", "[User:bob]")
    assert facts["DESCRIBED"] == "1"
    assert facts["ROUNDTRIP"] == ",".join(f"{i}:v{i}" for i in range(10))
    assert facts["TOKEN_SESSION_CREATE"].startswith("UnsupportedByAuthenticationException")


def test_java_client_oauthbearer(java_broker, java_classpath):
    results: dict[str, dict[str, str]] = {}

    def run(listener: str) -> None:
        results[listener] = java(java_classpath, "oauth", f"127.0.0.1:{java_broker.bound_port(listener)}", "admin")

    threads = [threading.Thread(target=run, args=(name,)) for name in ("OPEN", "SECURED")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(150)
    assert results["OPEN"]["ROUNDTRIP"] == ",".join(f"{i}:v{i}" for i in range(10))
    assert results["SECURED"]["FAILED"] == 'SaslAuthenticationException: {"status":"invalid_token"}'
