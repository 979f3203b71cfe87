"""Partition reassignment in a cluster: a fourth broker joins and a loaded topic moves from {0,1,2} to {1,2,3}
(`kafkapy reassign-partitions --execute`, then `--verify`), its data readable from the new replicas; and a move
requested the Kafka 2.x way, by writing /admin/reassign_partitions, which the controller deletes when done."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kafkapy.client.admin_types import NewTopic

confluent_kafka = pytest.importorskip("confluent_kafka")
TOPIC = "moving"


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3)


def tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "reassign-partitions", *args],
                          capture_output=True, text=True, timeout=120)


def done(cluster, topic: str, target: dict[int, list[int]]) -> bool:
    node = cluster.zk_json(f"/brokers/topics/{topic}")
    if {int(p): r for p, r in node["partitions"].items()} != target:
        return False
    if node.get("adding_replicas") or node.get("removing_replicas"):
        return False
    return all(sorted(cluster.partition_state(topic, p)["isr"]) == sorted(r) for p, r in target.items())


def test_reassign_loaded_topic_to_a_new_broker(cluster, tmp_path) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(TOPIC, 2, replica_assignment={0: [0, 1, 2], 1: [1, 2, 0]})])
    finally:
        admin.close()
    cluster.wait_for(lambda: all(cluster.partition_state(TOPIC, p) for p in range(2)), what="partition states")
    p = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(2000):
        p.produce(TOPIC, key=str(i).encode(), value=b"x" * 200, partition=i % 2)
    assert p.flush(60) == 0
    del p
    cluster.add_broker(3)
    cluster.wait_for(lambda: cluster.registered_brokers() == [0, 1, 2, 3], 30, what="broker 3 registered")
    target = {0: [1, 2, 3], 1: [2, 3, 1]}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": TOPIC, "partition": p, "replicas": r} for p, r in target.items()]}))
    out = tool("--bootstrap-server", cluster.bootstrap, "--reassignment-json-file", str(plan), "--execute")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Successfully started partition reassignments" in out.stdout
    cluster.wait_for(lambda: done(cluster, TOPIC, target), 90, what="the reassignment to complete")
    out = tool("--bootstrap-server", cluster.bootstrap, "--reassignment-json-file", str(plan), "--verify")
    assert out.returncode == 0, out.stdout + out.stderr
    for partition in target:
        assert f"Reassignment of partition {TOPIC}-{partition} is completed." in out.stdout
    # Broker 3 holds the data now: read it all back from the new replica set (broker 0 no longer hosts it).
    cluster.brokers[0].kill()
    c = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "reassign-readers",
                                  "auto.offset.reset": "earliest"})
    c.subscribe([TOPIC])
    got = 0
    for _ in range(60):
        got += sum(1 for m in c.consume(1000, 1.0) if m.error() is None)
        if got >= 2000:
            break
    c.close()
    assert got == 2000
    cluster.brokers[0].start()
    cluster.wait_for(lambda: 0 in cluster.registered_brokers(), 30, what="broker 0 back")


def test_reassign_through_the_zookeeper_admin_node(cluster) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic("zk-moving", 1, replica_assignment={0: [0, 1]})])
    finally:
        admin.close()
    cluster.wait_for(lambda: cluster.partition_state("zk-moving", 0), what="partition state")
    cluster.zk().create("/admin/reassign_partitions", json.dumps(
        {"version": 1, "partitions": [{"topic": "zk-moving", "partition": 0, "replicas": [2, 3]}]}).encode())
    cluster.wait_for(lambda: done(cluster, "zk-moving", {0: [2, 3]}), 90, what="the reassignment to complete")
    cluster.wait_for(lambda: cluster.zk().exists("/admin/reassign_partitions") is None, 20,
                     what="the admin node deleted")
    assert cluster.partition_state("zk-moving", 0)["leader"] in (2, 3)
