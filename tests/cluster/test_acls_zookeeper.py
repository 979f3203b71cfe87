"""ACLs in a ZooKeeper cluster: ACLs added through broker 0 (`kafkapy acls --add`) are stored as Kafka's JSON under
/kafka-acl/<Type>/<name> and /kafka-acl-extended/prefixed/<Type>/<prefix>, each change leaves a sequential
/kafka-acl-changes (or /kafka-acl-extended-changes) notification, and broker 1 picks them up through its watch:
DescribeAcls through broker 1 lists them, and a DENY on a topic led by broker 1 refuses a confluent-kafka produce
through broker 1 until the DENY is removed (again through broker 0).

The brokers run AclAuthorizer with allow.everyone.if.no.acl.found=true, so inter-broker PLAINTEXT traffic and the
test's own clients (User:ANONYMOUS) stay allowed wherever no ACL applies.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kafkapy.client.admin_types import NewTopic
from kafkapy.common.acl import AclBindingFilter

confluent_kafka = pytest.importorskip("confluent_kafka")

LITERAL_TOPIC = "payments"
PREFIX = "orders-"
GUARDED = "guarded"


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(2, overrides={
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
        "offsets.topic.replication.factor": "2",
        "transaction.state.log.replication.factor": "2",
    })


def acls(bootstrap: str, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "acls", "--bootstrap-server", bootstrap, *args],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def bindings_via(cluster, broker_id: int) -> set[tuple[str, str, str, str, str, str, str]]:
    admin = cluster.admin(cluster.brokers[broker_id].bootstrap)
    try:
        return {(b.pattern.resource_type.name, b.pattern.name, b.pattern.pattern_type.name, b.entry.principal,
                 b.entry.host, b.entry.operation.name, b.entry.permission_type.name)
                for b in admin.describe_acls(AclBindingFilter())}
    finally:
        admin.close()


def change_notifications(cluster, path: str) -> list[bytes]:
    zk = cluster.zk()
    return [zk.get(f"{path}/{c}")[0] for c in sorted(zk.get_children(path))]


def produce_error(bootstrap: str, value: bytes):
    """Produce one record through bootstrap only; the delivery error (None when it was acknowledged)."""
    errors: list = []
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all", "retries": 0,
                                  "message.timeout.ms": 5000, "topic.metadata.refresh.interval.ms": 500})
    try:
        p.produce(GUARDED, value, partition=0, on_delivery=lambda err, msg: errors.append(err))
    except confluent_kafka.KafkaException as e:
        return e.args[0]
    p.flush(10)
    return errors[0] if errors else "no delivery report"


def test_acls_persist_in_zookeeper_and_reach_the_other_broker(cluster) -> None:
    b0 = cluster.brokers[0].bootstrap
    acls(b0, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", LITERAL_TOPIC)
    acls(b0, "--add", "--allow-principal", "User:bob", "--operation", "Write", "--topic", PREFIX,
         "--resource-pattern-type", "prefixed")

    assert cluster.zk_json(f"/kafka-acl/Topic/{LITERAL_TOPIC}") == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"}]}
    assert cluster.zk_json(f"/kafka-acl-extended/prefixed/Topic/{PREFIX}") == {"version": 1, "acls": [
        {"principal": "User:bob", "permissionType": "Allow", "operation": "Write", "host": "*"}]}
    # Kafka's ZkAclChangeStore formats: literal changes are "Type:name" text, extended ones a JSON record.
    assert f"Topic:{LITERAL_TOPIC}".encode() in change_notifications(cluster, "/kafka-acl-changes")
    assert {"version": 1, "resourceType": "Topic", "name": PREFIX, "patternType": "PREFIXED"} in [
        json.loads(d) for d in change_notifications(cluster, "/kafka-acl-extended-changes")]
    assert all(c.startswith("acl_changes_") for c in cluster.zk().get_children("/kafka-acl-changes"))

    expected = {("TOPIC", LITERAL_TOPIC, "LITERAL", "User:alice", "*", "READ", "ALLOW"),
                ("TOPIC", PREFIX, "PREFIXED", "User:bob", "*", "WRITE", "ALLOW")}
    cluster.wait_for(lambda: bindings_via(cluster, 1) == expected, 15, what="broker 1 to describe both ACLs")
    assert bindings_via(cluster, 0) == expected


def test_a_deny_added_on_broker_0_is_enforced_by_broker_1_until_removed(cluster) -> None:
    b0, b1 = cluster.brokers[0].bootstrap, cluster.brokers[1].bootstrap
    admin = cluster.admin(b0)
    try:
        admin.create_topics([NewTopic(GUARDED, 1, replica_assignment={0: [1, 0]})])  # broker 1 leads
    finally:
        admin.close()
    cluster.wait_for(lambda: (cluster.partition_state(GUARDED, 0) or {}).get("leader") == 1, what="leader 1")
    cluster.wait_for(lambda: produce_error(b1, b"before") is None, 20, what="an unguarded produce through broker 1")

    deny = ("--deny-principal", "User:ANONYMOUS", "--operation", "Write", "--topic", GUARDED)
    acls(b0, "--add", *deny)
    assert cluster.zk_json(f"/kafka-acl/Topic/{GUARDED}") == {"version": 1, "acls": [
        {"principal": "User:ANONYMOUS", "permissionType": "Deny", "operation": "Write", "host": "*"}]}
    refused = confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED
    cluster.wait_for(lambda: getattr(produce_error(b1, b"denied"), "code", lambda: None)() == refused, 15,
                     what="broker 1 to refuse the produce with TOPIC_AUTHORIZATION_FAILED")

    acls(b0, "--remove", "--force", *deny)
    assert cluster.zk_json(f"/kafka-acl/Topic/{GUARDED}") is None
    cluster.wait_for(lambda: produce_error(b1, b"after") is None, 15, what="broker 1 to allow the produce again")

    c = confluent_kafka.Consumer({"bootstrap.servers": b1, "group.id": "acl-zk-check", "enable.auto.commit": False})
    try:
        c.assign([confluent_kafka.TopicPartition(GUARDED, 0, 0)])
        values: list[bytes] = []
        cluster.wait_for(lambda: values.extend(m.value() for m in c.consume(10, 1) if not m.error())
                         or b"after" in values, 15, what="the records")
    finally:
        c.close()
    assert b"denied" not in values
    assert values[0] == b"before" and values[-1] == b"after"
