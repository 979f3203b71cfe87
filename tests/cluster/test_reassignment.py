"""Partition reassignment in a cluster: a fourth broker joins and a loaded topic moves from {0,1,2} to {1,2,3}
under a throttle (`kafkapy reassign-partitions --execute --throttle`, which sets Kafka's throttle configs and
visibly limits the copy, then `--verify`, which clears them), its data readable from the new replicas; and a move
requested the Kafka 2.x way, by writing /admin/reassign_partitions, which the controller deletes when done."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from kafkapy.client.admin_types import ConfigResource, ConfigResourceType, NewTopic

confluent_kafka = pytest.importorskip("confluent_kafka")
TOPIC = "moving"
RECORDS = 2000
VALUE_SIZE = 2000  # 4 MB in all, copied to broker 3 under a 1 MB/s throttle
THROTTLE = 1_000_000


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    # Kafka's replication quota measures its rate over at least (window.num - 1) windows, so with the default 11
    # a move starts with a ~10 s burst allowance; two 1 s windows make the throttle bite within a second.
    return cluster_factory(3, overrides={"replication.quota.window.num": "2"})


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


def throttle_configs(cluster, brokers: list[int]) -> dict[str, dict[str, str]]:
    """The throttle configs that are set (non-default) on each broker and on TOPIC."""
    admin = cluster.admin()
    try:
        resources = [ConfigResource(ConfigResourceType.BROKER, str(b)) for b in brokers]
        resources.append(ConfigResource(ConfigResourceType.TOPIC, TOPIC))
        out: dict[str, dict[str, str]] = {}
        for res in resources:
            entries = admin.describe_configs([res])[res].entries
            out[res.name] = {k: e.value or "" for k, e in entries.items() if "throttled" in k and e.value}
        return out
    finally:
        admin.close()


def test_reassign_loaded_topic_to_a_new_broker_under_a_throttle(cluster, tmp_path) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(TOPIC, 2, replica_assignment={0: [0, 1, 2], 1: [1, 2, 0]})])
    finally:
        admin.close()
    cluster.wait_for(lambda: all(cluster.partition_state(TOPIC, p) for p in range(2)), what="partition states")
    p = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 5,
                                  "compression.type": "none"})
    for i in range(RECORDS):
        p.produce(TOPIC, key=str(i).encode(), value=bytes([i % 251]) * VALUE_SIZE, partition=i % 2)
    assert p.flush(60) == 0
    del p
    cluster.add_broker(3)
    cluster.wait_for(lambda: cluster.registered_brokers() == [0, 1, 2, 3], 30, what="broker 3 registered")
    target = {0: [1, 2, 3], 1: [2, 3, 1]}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": TOPIC, "partition": p, "replicas": r} for p, r in target.items()]}))
    started = time.monotonic()
    out = tool("--bootstrap-server", cluster.bootstrap, "--reassignment-json-file", str(plan), "--execute",
               "--throttle", str(THROTTLE))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Warning: You must run --verify periodically, until the reassignment completes, to ensure the " \
           "throttle is removed." in out.stdout
    assert f"The inter-broker throttle limit was set to {THROTTLE} B/s" in out.stdout
    assert "Successfully started partition reassignments for moving-0,moving-1" in out.stdout
    # Kafka's ReassignPartitionsCommand: the rate on every broker taking part, the existing replicas as leader
    # throttles and the adding ones as follower throttles on the topic.
    configs = throttle_configs(cluster, [0, 1, 2, 3])
    for b in ("0", "1", "2", "3"):
        assert configs[b] == {"leader.replication.throttled.rate": str(THROTTLE),
                              "follower.replication.throttled.rate": str(THROTTLE)}, configs
    topic = configs[TOPIC]
    assert set(topic["leader.replication.throttled.replicas"].split(",")) == {"0:0", "0:1", "0:2", "1:1", "1:2",
                                                                                "1:0"}
    assert set(topic["follower.replication.throttled.replicas"].split(",")) == {"0:3", "1:3"}

    out = tool("--bootstrap-server", cluster.bootstrap, "--reassignment-json-file", str(plan), "--verify")
    assert out.returncode == 0, out.stdout + out.stderr
    if "is still in progress" in out.stdout:  # an ongoing move leaves the throttles in place
        assert "Clearing" not in out.stdout
    cluster.wait_for(lambda: done(cluster, TOPIC, target), 90, what="the reassignment to complete")
    elapsed = time.monotonic() - started
    moved = RECORDS * VALUE_SIZE
    # Broker 3 fetches all of it as a throttled follower: after the first window's allowance, ~size/rate.
    assert elapsed >= 0.4 * moved / THROTTLE, f"{moved} bytes moved in {elapsed:.1f}s under a {THROTTLE} B/s throttle"
    out = tool("--bootstrap-server", cluster.bootstrap, "--reassignment-json-file", str(plan), "--verify")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[:3] == ["Status of partition reassignment:", f"Reassignment of partition {TOPIC}-0 is completed.",
                         f"Reassignment of partition {TOPIC}-1 is completed."], out.stdout
    clearing = [line for line in lines if line.startswith("Clearing")]
    assert len(clearing) == 2, out.stdout
    assert clearing[0].startswith("Clearing broker-level throttles on brokers ")
    assert sorted(clearing[0].rsplit(" ", 1)[1].split(",")) == ["0", "1", "2", "3"]
    assert clearing[1] == f"Clearing topic-level throttles on topic {TOPIC}"
    assert throttle_configs(cluster, [0, 1, 2, 3]) == {"0": {}, "1": {}, "2": {}, "3": {}, TOPIC: {}}
    # Broker 3 holds the data now: read it all back from the new replica set (broker 0 no longer hosts it).
    # A controlled shutdown takes broker 0 away at once (a SIGKILL would leave the group's coordinator on it
    # until its ZooKeeper session expired).
    assert cluster.brokers[0].stop() == 0
    c = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "reassign-readers",
                                  "auto.offset.reset": "earliest"})
    c.subscribe([TOPIC])
    got: dict[int, bytes] = {}
    for _ in range(60):
        for m in c.consume(min(1000, RECORDS - len(got)), 1.0):  # returns once that many arrived
            if m.error() is None:
                got[int(m.key())] = m.value()
        if len(got) >= RECORDS:
            break
    c.close()
    assert got == {i: bytes([i % 251]) * VALUE_SIZE for i in range(RECORDS)}
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
