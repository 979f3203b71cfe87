"""SASL listeners with real clients: SCRAM-SHA-512 over SASL_SSL and PLAIN over SASL_PLAINTEXT with
confluent-kafka and kafka-python, kcat over SASL_SSL, kafkapy's own client; SCRAM users created with
`kafkapy configs --alter --add-config 'SCRAM-SHA-512=[...]'`; the authenticated principal on each request."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from security_helpers import add_scram_user, ck_roundtrip, kafkapy_roundtrip, run_tool

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def scram_users(secure_broker):
    add_scram_user(secure_broker, "bob", "bob-secret", "SCRAM-SHA-512")
    add_scram_user(secure_broker, "carol", "carol-secret", "SCRAM-SHA-256")
    return secure_broker


def ck_conf(broker, listener: str, mechanism: str, user: str, password: str, **extra) -> dict:
    return {"bootstrap.servers": broker.bootstrap(listener), "security.protocol": listener,
            "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password,
            "ssl.ca.location": str(broker.pki.ca), **extra}


def test_confluent_kafka_sasl_ssl_scram_sha_512(scram_users):
    conf = ck_conf(scram_users, "SASL_SSL", "SCRAM-SHA-512", "bob", "bob-secret", **{"client.id": "ck-scram"})
    assert ck_roundtrip(conf, "sasl-ssl-scram") == [b"sasl-ssl-scram-%d" % i for i in range(200)]
    assert scram_users.principals_of("ck-scram") == {("SASL_SSL", "User:bob")}


def test_confluent_kafka_sasl_plaintext_plain(secure_broker):
    conf = ck_conf(secure_broker, "SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret", **{"client.id": "ck-plain"})
    assert ck_roundtrip(conf, "sasl-plain") == [b"sasl-plain-%d" % i for i in range(200)]
    assert secure_broker.principals_of("ck-plain") == {("SASL_PLAINTEXT", "User:alice")}


@pytest.mark.parametrize("listener,mechanism,user,password", [
    ("SASL_SSL", "SCRAM-SHA-512", "bob", "bob-secret"),
    ("SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret"),
])
def test_kafka_python_sasl(scram_users, listener, mechanism, user, password):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    topic = f"kp-{mechanism.lower()}"
    conf = {"bootstrap_servers": scram_users.bootstrap(listener), "security_protocol": listener,
            "sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password,
            "ssl_cafile": str(scram_users.pki.ca), "client_id": f"kp-{user}"}
    producer = KafkaProducer(**conf)
    for i in range(100):
        producer.send(topic, value=b"kp-%d" % i)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(**conf, consumer_timeout_ms=10000)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = []
    for record in consumer:
        got.append((record.offset, record.value))
        if len(got) == 100:
            break
    consumer.close()
    assert got == [(i, b"kp-%d" % i) for i in range(100)]
    assert scram_users.principals_of(f"kp-{user}") == {(listener, f"User:{user}")}


def test_kcat_over_sasl_ssl(scram_users, tmp_path):
    broker = scram_users
    args = ["-b", broker.bootstrap("SASL_SSL"), "-X", "security.protocol=SASL_SSL", "-X",
            "sasl.mechanisms=SCRAM-SHA-256", "-X", "sasl.username=carol", "-X", "sasl.password=carol-secret",
            "-X", f"ssl.ca.location={broker.pki.ca}"]
    lines = "".join(f"line-{i}\n" for i in range(50))
    produced = subprocess.run(["kcat", *args, "-P", "-t", "kcat-sasl"], input=lines, text=True,
                              capture_output=True, timeout=60)
    assert produced.returncode == 0, produced.stderr
    consumed = subprocess.run(["kcat", *args, "-C", "-t", "kcat-sasl", "-o", "beginning", "-e", "-f", "%o:%s\n"],
                              text=True, capture_output=True, timeout=60)
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == [f"{i}:line-{i}" for i in range(50)]


def test_kafkapy_client_scram_sha_256_over_sasl_plaintext(scram_users):
    conf = {"bootstrap.servers": scram_users.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256", "client.id": "own-scram",
            "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                'username="carol" password="carol-secret";'}
    values = [b"own-%d" % i for i in range(50)]
    assert kafkapy_roundtrip(conf, "own-scram", values) == list(enumerate(values))
    assert scram_users.principals_of("own-scram") == {("SASL_PLAINTEXT", "User:carol")}


def test_describe_and_delete_scram_credentials_with_the_configs_tool(scram_users):
    bootstrap = scram_users.bootstrap("PLAINTEXT")
    add_scram_user(scram_users, "dave", "dave-secret", "SCRAM-SHA-256")
    from kafkapy.client.admin import AdminClient

    # (`configs --describe --entity-type users` also needs DescribeClientQuotas, which quotas will bring.)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        described = admin.describe_user_scram_credentials(["dave"])["dave"]
    finally:
        admin.close()
    assert [(i.mechanism.mechanism_name, i.iterations) for i in described.credential_infos] == [("SCRAM-SHA-256", 4096)]
    r = run_tool("configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "users",
                 "--entity-name", "dave", "--delete-config", "SCRAM-SHA-256")
    assert r.rc == 0, r.err
    import confluent_kafka as ck
    import confluent_kafka.admin  # noqa: F401  (ck.admin)

    # The deleted credential is refused at login (librdkafka's _AUTHENTICATION error, seen as soon as the
    # client's bootstrap connection fails its SASL exchange), so no request gets through either.
    errors: list = []
    ck_admin = ck.admin.AdminClient({**ck_conf(scram_users, "SASL_PLAINTEXT", "SCRAM-SHA-256", "dave", "dave-secret"),
                                     "error_cb": errors.append})
    deadline = time.monotonic() + 15
    while not any(e.code() == ck.KafkaError._AUTHENTICATION for e in errors) and time.monotonic() < deadline:
        ck_admin.poll(0.1)
    assert any(e.code() == ck.KafkaError._AUTHENTICATION for e in errors), errors
    with pytest.raises(ck.KafkaException):
        ck_admin.list_topics(timeout=1)


def test_confluent_kafka_oauthbearer_unsecured_jws(secure_broker):
    conf = {"bootstrap.servers": secure_broker.bootstrap("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": "principal=svc-reporter lifeSeconds=600", "client.id": "ck-oauth"}
    assert ck_roundtrip(conf, "sasl-oauth", 50) == [b"sasl-oauth-%d" % i for i in range(50)]
    assert secure_broker.principals_of("ck-oauth") == {("SASL_PLAINTEXT", "User:svc-reporter")}


def test_kafkapy_client_reauthenticates_before_the_session_expires(secure_broker, caplog):
    from kafkapy.client.producer import KafkaProducer

    caplog.set_level("INFO", logger="org.apache.kafka.common.network.Selector")
    producer = KafkaProducer({"bootstrap.servers": secure_broker.bootstrap("REAUTH"),
                              "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                              "sasl.username": "alice", "sasl.password": "alice-secret", "client.id": "own-reauth"})
    try:
        offsets = []
        for i in range(4):  # 4 x 0.8 s spans two 1.5 s sessions
            offsets.append(producer.send("own-reauth", value=b"r-%d" % i).result(10).offset)
            time.sleep(0.8)
    finally:
        producer.close()
    assert offsets == [0, 1, 2, 3]
    assert not [r for r in caplog.records if "expired" in r.getMessage()]  # never cut off by the broker
    handshakes = [p for p in secure_broker.principals if p[1] == "own-reauth" and p[3] == 17]
    assert len(handshakes) >= 3  # the first login per connection plus re-authentications


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (needed to run kafkajs)")
def test_kafkajs_sasl_ssl_scram_sha_256(scram_users):
    js_dir = Path(__file__).resolve().parents[1] / "js"
    if not (js_dir / "node_modules" / "kafkajs").is_dir():
        pytest.skip("kafkajs is not installed (make test-deps runs npm ci in tests/interop/js)")
    # kafkajs creates no topics on produce; make it first.
    add_topic = run_tool("topics", "--bootstrap-server", scram_users.bootstrap("PLAINTEXT"), "--create", "--topic",
                         "kafkajs-sasl")
    assert add_topic.rc == 0, add_topic.err
    proc = subprocess.run(["node", str(js_dir / "kafkajs_sasl_ssl.js"), scram_users.bootstrap("SASL_SSL"),
                           str(scram_users.pki.ca), "scram-sha-256", "carol", "carol-secret", "kafkajs-sasl"],
                          capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"produced": list(range(20)), "consumed": [f"js-{i}" for i in range(20)]}
    assert scram_users.principals_of("kafkajs-sasl-ssl") == {("SASL_SSL", "User:carol")}


def test_aiokafka_sasl_ssl_scram_sha_512_and_ssl_with_a_client_certificate(scram_users):
    import asyncio
    import ssl

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    pki = scram_users.pki

    async def roundtrip(**conf) -> list[tuple[int, bytes]]:
        producer = AIOKafkaProducer(**conf, acks="all")
        await producer.start()
        try:
            first = (await producer.send_and_wait("aio-secure", b"aio-0")).offset
            for i in range(1, 30):
                await producer.send_and_wait("aio-secure", b"aio-%d" % i)
        finally:
            await producer.stop()  # closes TLS cleanly: the broker answers close_notify
        consumer = AIOKafkaConsumer(**conf, enable_auto_commit=False)
        await consumer.start()
        try:
            tp = TopicPartition("aio-secure", 0)
            consumer.assign([tp])
            consumer.seek(tp, first)
            got: list[tuple[int, bytes]] = []
            while len(got) < 30:
                batch = await consumer.getmany(tp, timeout_ms=1000)
                got += [(r.offset, r.value) for r in batch.get(tp, [])]
            return got
        finally:
            await consumer.stop()

    context = ssl.create_default_context(cafile=str(pki.ca))
    got = asyncio.run(asyncio.wait_for(roundtrip(
        bootstrap_servers=scram_users.bootstrap("SASL_SSL"), security_protocol="SASL_SSL", ssl_context=context,
        sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="bob", sasl_plain_password="bob-secret",
        client_id="aio-scram"), 20))
    assert got == [(i, b"aio-%d" % i) for i in range(30)]
    assert scram_users.principals_of("aio-scram") == {("SASL_SSL", "User:bob")}
    mtls = ssl.create_default_context(cafile=str(pki.ca))
    mtls.load_cert_chain(str(pki.client_cert), str(pki.client_key))
    got = asyncio.run(asyncio.wait_for(roundtrip(
        bootstrap_servers=scram_users.bootstrap("MTLS"), security_protocol="SSL", ssl_context=mtls,
        client_id="aio-mtls"), 20))
    assert got == [(30 + i, b"aio-%d" % i) for i in range(30)]
    assert scram_users.principals_of("aio-mtls") == {("MTLS", "User:client@eng")}
