"""`kafkapy topics --zookeeper` (Kafka 2.x's ZooKeeper path) against a 3-broker cluster: create writes
Kafka's znodes and the brokers serve the topic, describe reads Leader/Replicas/Isr from the partition
state znodes, alter adds partitions, delete marks the topic and the controller removes it."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3)


def topics(cluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "topics", "--zookeeper", cluster.zk_connect,
                           *args], capture_output=True, text=True, timeout=120)


def test_create_describe_alter_delete_through_zookeeper(cluster) -> None:
    r = topics(cluster, "--create", "--topic", "zkt", "--partitions", "3", "--replication-factor", "3",
               "--config", "min.insync.replicas=2")
    assert (r.returncode, r.stdout, r.stderr) == (0, "Created topic zkt.\n", "")
    stored = cluster.zk_json("/brokers/topics/zkt")
    assert stored["version"] == 3 and len(stored["topic_id"]) == 22
    assignment = {int(p): replicas for p, replicas in stored["partitions"].items()}
    assert sorted(assignment) == [0, 1, 2] and all(sorted(r) == [0, 1, 2] for r in assignment.values())
    # AdminUtils: consecutive partitions' first replicas go round the brokers
    assert sorted(r[0] for r in assignment.values()) == [0, 1, 2]
    assert cluster.zk_json("/config/topics/zkt") == {"version": 1, "config": {"min.insync.replicas": "2"}}
    # the controller elected the preferred leaders and every broker serves them
    cluster.wait_for(lambda: all(leader == assignment[p][0] and sorted(isr) == [0, 1, 2]
                                 for p, (leader, _r, isr) in cluster.describe("zkt").items())
                     and len(cluster.describe("zkt")) == 3, what="zkt online")

    r = topics(cluster, "--describe", "--topic", "zkt")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == (f"Topic: zkt\tTopicId: {stored['topic_id']}\tPartitionCount: 3\tReplicationFactor: 3\t"
                        "Configs: min.insync.replicas=2")
    for p in range(3):
        state = cluster.zk_json(f"/brokers/topics/zkt/partitions/{p}/state")
        assert lines[1 + p] == (f"\tTopic: zkt\tPartition: {p}\tLeader: {state['leader']}\tReplicas: "
                                + ",".join(map(str, assignment[p])) + "\tIsr: " + ",".join(map(str, state["isr"])))
    for flag in ("--under-replicated-partitions", "--under-min-isr-partitions", "--at-min-isr-partitions",
                 "--unavailable-partitions"):
        r = topics(cluster, "--describe", "--topic", "zkt", flag)
        assert (r.returncode, r.stdout) == (0, ""), flag

    assert "zkt" in topics(cluster, "--list").stdout.splitlines()
    r = topics(cluster, "--create", "--topic", "zkt", "--partitions", "1", "--replication-factor", "1")
    assert (r.returncode, r.stderr) == (1, "Error while executing topic command : Topic 'zkt' already exists.\n")

    assert topics(cluster, "--alter", "--topic", "zkt", "--partitions", "4").returncode == 0
    assert len(cluster.zk_json("/brokers/topics/zkt")["partitions"]) == 4
    cluster.wait_for(lambda: len(cluster.describe("zkt")) == 4, what="partition 3 in metadata")

    r = topics(cluster, "--delete", "--topic", "zkt")
    assert (r.returncode, r.stdout) == (0, "Topic zkt is marked for deletion.\n"
                                           "Note: This will have no impact if delete.topic.enable is not set to "
                                           "true.\n")
    cluster.wait_for(lambda: "zkt" not in topics(cluster, "--list").stdout.splitlines(), timeout_s=60,
                     what="zkt deleted by the controller")
    assert topics(cluster, "--describe", "--topic", "zkt").returncode == 1


def test_zookeeper_flag_checks(cluster) -> None:
    r = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "topics", "--list", "--zookeeper", "x:1",
                        "--bootstrap-server", "y:2"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Only one of --bootstrap-server or --zookeeper must be specified" in r.stderr


def configs(cluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "configs", "--zookeeper", cluster.zk_connect,
                           *args], capture_output=True, text=True, timeout=120)


def test_configs_through_zookeeper_reach_every_broker(cluster) -> None:
    from kafkapy.client.admin_types import ConfigResource, ConfigResourceType

    assert topics(cluster, "--create", "--topic", "zkc", "--partitions", "1", "--replication-factor", "3"
                  ).returncode == 0
    r = configs(cluster, "--alter", "--entity-type", "topics", "--entity-name", "zkc",
                "--add-config", "retention.ms=3600000,cleanup.policy=[compact,delete]")
    assert (r.returncode, r.stdout, r.stderr) == (0, "Completed updating config for entity: topic 'zkc'.\n", "")
    assert cluster.zk_json("/config/topics/zkc") == {
        "version": 1, "config": {"retention.ms": "3600000", "cleanup.policy": "compact,delete"}}
    changes = sorted(cluster.zk().get_children("/config/changes"))
    assert changes and changes[-1].startswith("config_change_")
    assert cluster.zk_json("/config/changes/" + changes[-1]) == {"version": 2, "entity_path": "topics/zkc"}
    r = configs(cluster, "--describe", "--entity-type", "topics", "--entity-name", "zkc")
    assert r.stdout == "Configs for topic 'zkc' are retention.ms=3600000,cleanup.policy=compact,delete\n"

    def applied_everywhere() -> bool:
        for broker in cluster.brokers.values():
            admin = cluster.admin(broker.bootstrap)
            try:
                res = ConfigResource(ConfigResourceType.TOPIC, "zkc")
                if admin.describe_configs([res])[res].entries["retention.ms"].value != "3600000":
                    return False
            finally:
                admin.close()
        return True

    cluster.wait_for(applied_everywhere, what="retention.ms applied by every broker")
    r = configs(cluster, "--alter", "--entity-type", "topics", "--entity-name", "zkc", "--delete-config",
                "retention.ms")
    assert r.returncode == 0
    assert cluster.zk_json("/config/topics/zkc")["config"] == {"cleanup.policy": "compact,delete"}
    r = configs(cluster, "--alter", "--entity-type", "clients", "--entity-default", "--add-config",
                "producer_byte_rate=1024")
    assert r.stdout == "Completed updating config for entity: default client-id.\n"
    assert cluster.zk_json("/config/clients/<default>") == {"version": 1, "config": {"producer_byte_rate": "1024"}}
    r = configs(cluster, "--alter", "--entity-type", "topics", "--entity-name", "nope", "--add-config", "a=b")
    assert r.returncode == 1


def tool(cluster, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", name, "--zookeeper", cluster.zk_connect,
                           *args], capture_output=True, text=True, timeout=120)


def test_reassign_and_preferred_election_through_zookeeper(cluster, tmp_path) -> None:
    from confluent_kafka import Consumer, Producer

    assert topics(cluster, "--create", "--topic", "zkr", "--replica-assignment", "0").returncode == 0
    cluster.wait_for(lambda: cluster.describe("zkr").get(0, (None,))[0] == 0, what="zkr led by broker 0")
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(200):
        producer.produce("zkr", value=b"r%d" % i)
    assert producer.flush(30) == 0

    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"zkr","partition":0,"replicas":[1,2]}]}')
    r = tool(cluster, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan),
             "--throttle", "50000000")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-2:] == ["The inter-broker throttle limit was set to 50000000 B/s",
                                          "Successfully started partition reassignment for zkr-0"]
    assert '"replicas":[0]' in r.stdout  # the rollback plan: the current assignment
    assert cluster.zk_json("/config/topics/zkr")["config"]["leader.replication.throttled.replicas"] == "0:0"

    def verified() -> str | None:
        out = tool(cluster, "reassign-partitions", "--verify", "--reassignment-json-file", str(plan)).stdout
        return out if "Reassignment of partition zkr-0 is completed." in out else None

    out = cluster.wait_for(verified, timeout_s=90, what="reassignment completed")
    assert "Clearing broker-level throttles on brokers" in out and "Clearing topic-level throttles on topic zkr" in out
    assert "leader.replication.throttled.replicas" not in cluster.zk_json("/config/topics/zkr")["config"]
    assert cluster.zk_json("/brokers/topics/zkr")["partitions"] == {"0": [1, 2]}
    cluster.wait_for(lambda: cluster.describe("zkr")[0][0] == 1, what="broker 1 leads zkr-0")
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "zkr", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe(["zkr"])
        values: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(values) < 200 and time.monotonic() < deadline:
            values += [m.value() for m in consumer.consume(200, 1.0) if m.error() is None]
    finally:
        consumer.close()
    assert values == [b"r%d" % i for i in range(200)]

    r = tool(cluster, "preferred-replica-election")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405"
    assert lines[1].startswith("Created preferred replica election path with ") and "zkr-0" in lines[1]
    assert lines[2].startswith("Successfully started preferred replica election for partitions Set(")
    # the controller acts on the request and removes the znode
    cluster.wait_for(lambda: cluster.zk().exists("/admin/preferred_replica_election") is None,
                     what="election request consumed")
    r = tool(cluster, "reassign-partitions", "--cancel", "--reassignment-json-file", str(plan))
    assert r.returncode == 2


def test_internal_topic_deletion_refused_on_both_paths(cluster) -> None:
    """Kafka 2.x's ZooKeeper path refused it; kafkapy refuses on the --bootstrap-server path too (README)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "request.timeout.ms": 10000})
    # DescribeGroups finds the coordinator, which creates __consumer_offsets.
    cluster.wait_for(lambda: admin.describe_consumer_groups(["g-internal"])["g-internal"].result(10),
                     what="group coordinator available")
    assert "__consumer_offsets" in topics(cluster, "--list").stdout.splitlines()
    message = ("Error while executing topic command : Topic __consumer_offsets is a kafka internal topic and is not "
               "allowed to be marked for deletion.\n")
    r = topics(cluster, "--delete", "--topic", "__consumer_offsets")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", message)
    r = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "topics", "--bootstrap-server", cluster.bootstrap,
                        "--delete", "--topic", "__consumer_.*"], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", message)
    assert not cluster.zk().exists("/admin/delete_topics/__consumer_offsets")
    assert "__consumer_offsets" in topics(cluster, "--list").stdout.splitlines()


def test_transaction_state_not_created_below_its_replication_factor(cluster) -> None:
    """transaction.state.log.replication.factor=3 with a broker down: Kafka answers COORDINATOR_NOT_AVAILABLE
    and creates nothing, rather than a topic with fewer replicas than configured; once the broker is back the
    topic is created with all three. (__consumer_offsets follows the same rule through the same code.)"""
    from confluent_kafka import KafkaException, Producer

    cluster.brokers[2].stop()
    cluster.wait_for(lambda: 2 not in cluster.registered_brokers(), what="broker 2 deregistered")
    try:
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": "rf-guard"})
        with pytest.raises(KafkaException):
            producer.init_transactions(4)
        assert cluster.zk_json("/brokers/topics/__transaction_state") is None
    finally:
        cluster.brokers[2].start()
    cluster.wait_for(lambda: 2 in cluster.registered_brokers(), what="broker 2 back")
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": "rf-guard-2"})
    cluster.wait_for(lambda: producer.init_transactions(10) is None, timeout_s=60, what="transactions ready")
    stored = cluster.zk_json("/brokers/topics/__transaction_state")
    assert {len(replicas) for replicas in stored["partitions"].values()} == {3}
