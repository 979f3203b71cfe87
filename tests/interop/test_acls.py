"""ACLs end to end: a broker with authorizer.class.name set and a SASL_PLAINTEXT listener (PLAIN users admin,
alice, bob); admin is a super user and manages ACLs with `kafkapy acls --command-config`; alice and bob use
confluent-kafka and kafka-python. Without ACLs alice can neither produce, consume, create nor see a topic; once
`kafkapy acls --add` grants it she can; a PREFIXED ACL covers topics created later; DENY beats ALLOW.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" '
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")


class Broker:
    def __init__(self, server, tmp: Path) -> None:
        self.server = server
        self.sasl = f"127.0.0.1:{server.bound_port('SASL_PLAINTEXT')}"
        self.admin_config = tmp / "admin.properties"
        self.admin_config.write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
            'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
            'password="admin-secret";\n')

    def acls(self, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        env = dict(os.environ, KAFKAPY_PLAIN="1")
        return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "acls", "--bootstrap-server", self.sasl,
                               "--command-config", str(self.admin_config), *argv], input=stdin, capture_output=True,
                              text=True, timeout=60, env=env)

    def conf(self, user: str) -> dict:
        return {"bootstrap.servers": self.sasl, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                "sasl.username": user, "sasl.password": USERS[user], "client.id": f"acl-{user}"}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    tmp = tmp_path_factory.mktemp("acls")
    overrides = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(tmp / "data"),
        "group.initial.rebalance.delay.ms": "0",  # _consume's group join does not wait Kafka's default 3 s
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:admin;User:ANONYMOUS",
        "num.network.threads": "2",
        "num.io.threads": "4",
        "offsets.topic.num.partitions": "2",
    }
    server = KafkaServer(KafkaConfig.from_properties(None, overrides))
    server.startup()
    try:
        yield Broker(server, tmp)
    finally:
        server.shutdown()


def _produce(conf: dict, topic: str, values: list[bytes]) -> list:
    """Produce and flush; the delivery errors (None for each delivered record)."""
    errors: list = []
    p = confluent_kafka.Producer({**conf, "message.timeout.ms": 8000, "retries": 0})
    for v in values:
        p.produce(topic, v, on_delivery=lambda err, msg: errors.append(err))
    p.flush(15)
    return errors


def _consume(conf: dict, topic: str, group: str, n: int, timeout: float = 15) -> tuple[list[bytes], list]:
    c = confluent_kafka.Consumer({**conf, "group.id": group, "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got: list[bytes] = []
    errors: list = []
    deadline = time.time() + timeout
    try:
        while len(got) < n and time.time() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                errors.append(m.error())
                if m.error().code() in (confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED,
                                        confluent_kafka.KafkaError.GROUP_AUTHORIZATION_FAILED):
                    break
                continue
            got.append(m.value())
    finally:
        c.close()
    return got, errors


def _admin_topics(conf: dict) -> set[str]:
    from confluent_kafka.admin import AdminClient

    return set(AdminClient(conf).list_topics(timeout=10).topics)


def test_no_acl_then_granted_with_kafkapy_acls(broker: Broker) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    alice = broker.conf("alice")
    # Create: alice has no CREATE.
    alice_admin = AdminClient(alice)
    fut = alice_admin.create_topics([NewTopic("secret", 1, 1)])["secret"]
    with pytest.raises(confluent_kafka.KafkaException) as e:
        fut.result(15)
    assert e.value.args[0].code() == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED
    # admin (super user) creates it and produces; alice cannot see, produce or consume.
    super_admin = AdminClient(broker.conf("admin"))
    fut = super_admin.create_topics([NewTopic("secret", 1, 1)])["secret"]
    fut.result(15)
    assert _produce(broker.conf("admin"), "secret", [b"s0", b"s1"]) == [None, None]
    assert "secret" not in _admin_topics(alice)
    assert "secret" in _admin_topics(broker.conf("admin"))
    errors = _produce(alice, "secret", [b"a0"])
    assert errors and errors[0] is not None and errors[0].code() == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED
    got, cerrors = _consume(alice, "secret", "alice-group", 2, timeout=8)
    assert got == [] and cerrors

    # Grant with kafkapy acls (Kafka's output), then alice can do all of it.
    r = broker.acls("--add", "--allow-principal", "User:alice", "--producer", "--topic", "secret")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=secret, "
                               "patternType=LITERAL)`: \n \t(principal=User:alice, host=*, operation=")
    assert "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=secret, patternType=LITERAL)`: " \
        in r.stdout
    r = broker.acls("--add", "--allow-principal", "User:alice", "--consumer", "--topic", "secret", "--group",
                    "alice-group")
    assert r.returncode == 0, r.stderr
    assert "secret" in _admin_topics(alice)
    assert _produce(alice, "secret", [b"a0", b"a1"]) == [None, None]
    got, _ = _consume(alice, "secret", "alice-group", 4)
    assert got == [b"s0", b"s1", b"a0", b"a1"]

    r = broker.acls("--list", "--topic", "secret", "--output", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [(d["resourceType"], d["name"], d["patternType"]) for d in doc] == [("TOPIC", "secret", "LITERAL")]
    assert sorted(a["operation"] for a in doc[0]["acls"]) == ["CREATE", "DESCRIBE", "READ", "WRITE"]


def test_prefixed_acl_covers_new_topics_and_deny_wins(broker: Broker) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    bob = broker.conf("bob")
    r = broker.acls("--add", "--allow-principal", "User:bob", "--operation", "All", "--topic", "bob-",
                    "--resource-pattern-type", "prefixed")
    assert r.returncode == 0, r.stderr
    assert "patternType=PREFIXED" in r.stdout
    # A topic created after the ACL, by bob himself.
    bob_admin = AdminClient(bob)
    bob_admin.create_topics([NewTopic("bob-new", 1, 1)])["bob-new"].result(15)
    assert _produce(bob, "bob-new", [b"b0"]) == [None]
    errors = _produce(bob, "other-topic", [b"x"])
    assert errors[0] is not None and errors[0].code() == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED

    # DENY WRITE on the one topic beats the prefixed ALLOW All.
    r = broker.acls("--add", "--deny-principal", "User:bob", "--operation", "Write", "--topic", "bob-new")
    assert r.returncode == 0, r.stderr
    errors = _produce(bob, "bob-new", [b"b1"])
    assert errors[0] is not None and errors[0].code() == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert "bob-new" in _admin_topics(bob)  # DESCRIBE still allowed

    # --remove --force drops the DENY; bob writes again.
    r = broker.acls("--remove", "--force", "--deny-principal", "User:bob", "--operation", "Write", "--topic",
                    "bob-new")
    assert r.returncode == 0, r.stderr
    assert _produce(bob, "bob-new", [b"b2"]) == [None]
    r = broker.acls("--list", "--principal", "User:bob")
    assert r.stdout.splitlines()[0] == "ACLs for principal `User:bob`"
    assert "ResourcePattern(resourceType=TOPIC, name=bob-, patternType=PREFIXED)" in r.stdout
    assert "DENY" not in r.stdout


def test_kafka_python_admin_acls_and_errors(broker: Broker) -> None:
    kafka = pytest.importorskip("kafka")
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePattern,
        ResourcePatternFilter,
        ResourceType,
    )

    admin = KafkaAdminClient(bootstrap_servers=broker.sasl, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                             sasl_plain_username="admin", sasl_plain_password="admin-secret")
    try:
        acl = ACL("User:carol", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                  ResourcePattern(ResourceType.GROUP, "carol-", ACLResourcePatternType.PREFIXED))
        result = admin.create_acls([acl])
        assert result["failed"] == [] and len(result["succeeded"]) == 1
        flt = ACLFilter("User:carol", None, ACLOperation.ANY, ACLPermissionType.ANY,
                        ResourcePatternFilter(ResourceType.GROUP, "carol-group", ACLResourcePatternType.MATCH))
        acls, error = admin.describe_acls(flt)
        assert [(a.principal, a.resource_pattern.resource_name) for a in acls] == [("User:carol", "carol-")]
        deleted = admin.delete_acls([flt])
        assert len(deleted[0][1]) == 1
        acls, error = admin.describe_acls(flt)
        assert acls == []
    finally:
        admin.close()
    _ = kafka


def test_group_and_transactional_id_need_their_acls(broker: Broker) -> None:
    """READ on the topic is not enough to consume in a group (GROUP_AUTHORIZATION_FAILED), and a transactional
    producer needs WRITE on its transactional.id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) until granted."""
    from confluent_kafka.admin import AdminClient, NewTopic

    super_admin = AdminClient(broker.conf("admin"))
    super_admin.create_topics([NewTopic("carol-t", 1, 1)])["carol-t"].result(15)
    assert _produce(broker.conf("admin"), "carol-t", [b"c0"]) == [None]
    r = broker.acls("--add", "--allow-principal", "User:bob", "--operation", "Read", "--topic", "carol-t")
    assert r.returncode == 0, r.stderr
    got, errors = _consume(broker.conf("bob"), "carol-t", "bob-group", 1, timeout=10)
    assert got == [] and any(e.code() == confluent_kafka.KafkaError.GROUP_AUTHORIZATION_FAILED for e in errors)
    r = broker.acls("--add", "--allow-principal", "User:bob", "--operation", "Read", "--group", "bob-group")
    assert r.returncode == 0, r.stderr
    got, _ = _consume(broker.conf("bob"), "carol-t", "bob-group", 1)
    assert got == [b"c0"]

    conf = {**broker.conf("bob"), "transactional.id": "bob-tx", "message.timeout.ms": 8000}
    p = confluent_kafka.Producer(conf)
    with pytest.raises(confluent_kafka.KafkaException) as e:
        p.init_transactions(10)
    assert e.value.args[0].code() == confluent_kafka.KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    r = broker.acls("--add", "--allow-principal", "User:bob", "--producer", "--transactional-id", "bob-tx",
                    "--topic", "bob-")
    assert r.returncode == 0, r.stderr
    p = confluent_kafka.Producer(conf)
    p.init_transactions(15)
    p.begin_transaction()
    p.produce("bob-new", b"in-txn")
    p.commit_transaction(15)


def test_kafkapy_admin_client_sees_authorization_errors(broker: Broker) -> None:
    """kafkapy's own AdminClient as bob: DeleteRecords needs DELETE on the topic, DescribeClientQuotas
    DESCRIBE_CONFIGS on the cluster, DescribeAcls DESCRIBE on the cluster."""
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.acl import AclBindingFilter
    from kafkapy.common.errors import (
        ClusterAuthorizationFailedError,
        TopicAuthorizationFailedError,
    )
    from kafkapy.common.topic_partition import TopicPartition

    admin = AdminClient({"bootstrap.servers": broker.sasl, "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": "PLAIN", "sasl.jaas.config":
                         'org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" '
                         'password="bob-secret";'})
    try:
        result = admin.delete_records({TopicPartition("carol-t", 0): 1}, raise_errors=False)
        assert isinstance(result[TopicPartition("carol-t", 0)], TopicAuthorizationFailedError)
        with pytest.raises(ClusterAuthorizationFailedError):
            admin.describe_client_quotas([])
        with pytest.raises(ClusterAuthorizationFailedError):
            admin.describe_acls(AclBindingFilter())
    finally:
        admin.close()
