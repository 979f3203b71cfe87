"""Leadership returning to the preferred replicas: a broker killed and restarted rejoins the ISRs (its fetchers
catch up), then `kafkapy leader-election --election-type PREFERRED` (ElectLeaders to the controller) and a
ZooKeeper-written /admin/preferred_replica_election (Kafka 2.x's tool) move leaders back; with
auto.leader.rebalance.enable the controller does it by itself after leader.imbalance.check.interval.seconds."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kafkapy.client.admin_types import NewTopic

TOPIC = "balance"


def create(cluster, topic: str = TOPIC, partitions: int = 6) -> dict[int, list[int]]:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(topic, partitions, 3)])
    finally:
        admin.close()
    cluster.wait_for(lambda: all(cluster.partition_state(topic, p) for p in range(partitions)), what="states")
    stored = cluster.zk_json(f"/brokers/topics/{topic}")
    return {int(p): r for p, r in stored["partitions"].items()}


def leaders(cluster, topic: str = TOPIC, partitions: int = 6) -> dict[int, int]:
    return {p: cluster.partition_state(topic, p)["leader"] for p in range(partitions)}


def bounce_and_rejoin(cluster, victim: int, topic: str = TOPIC, partitions: int = 6, graceful: bool = False) -> None:
    """SIGKILL victim (or, graceful, stop it with a controlled shutdown: leaderships move at once instead of
    after its ZooKeeper session expires), wait until it lost every leadership, start it again and wait until
    it is back in every ISR (its replica fetchers caught up and the leaders expanded their ISRs)."""
    if graceful:
        assert cluster.brokers[victim].stop() == 0
    else:
        cluster.brokers[victim].kill()
    cluster.wait_for(lambda: victim not in leaders(cluster, topic, partitions).values(), 30,
                     what="leadership moved off the stopped broker")
    cluster.brokers[victim].start()
    cluster.wait_for(lambda: all(victim in cluster.partition_state(topic, p)["isr"] for p in range(partitions)), 60,
                     what="the restarted broker back in every ISR")


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3, overrides={"auto.leader.rebalance.enable": "false"})


def test_preferred_election_restores_leaders_after_a_broker_returns(cluster) -> None:
    assignment = create(cluster)
    preferred = {p: r[0] for p, r in assignment.items()}
    assert leaders(cluster) == preferred
    victim = next(b for b in (0, 1, 2) if b != cluster.controller_id())
    bounce_and_rejoin(cluster, victim)
    moved = [p for p, b in preferred.items() if b == victim]
    assert all(leaders(cluster)[p] != victim for p in moved)  # no automatic move back: rebalance is off
    out = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "leader-election", "--bootstrap-server",
                          cluster.bootstrap, "--election-type", "PREFERRED", "--all-topic-partitions"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Successfully completed leader election (PREFERRED) for partitions" in out.stdout
    for p in moved:
        assert f"{TOPIC}-{p}" in out.stdout
    cluster.wait_for(lambda: leaders(cluster) == preferred, 20, what="preferred leaders")
    cluster.wait_for(lambda: all(leader == preferred[p] for p, (leader, _r, _i) in cluster.describe(TOPIC).items()),
                     20, what="metadata showing the preferred leaders")


def test_zookeeper_preferred_replica_election_node(cluster) -> None:
    assignment = {int(p): r for p, r in cluster.zk_json(f"/brokers/topics/{TOPIC}")["partitions"].items()}
    preferred = {p: r[0] for p, r in assignment.items()}
    victim = next(b for b in (0, 1, 2) if b != cluster.controller_id())
    bounce_and_rejoin(cluster, victim, graceful=True)  # the first test covers the return after a SIGKILL
    moved = sorted(p for p, b in preferred.items() if b == victim)
    # Kafka 2.x's kafka-preferred-replica-election.sh --zookeeper writes this node; the controller acts on it
    # and deletes it.
    cluster.zk().create("/admin/preferred_replica_election", json.dumps(
        {"version": 1, "partitions": [{"topic": TOPIC, "partition": p} for p in moved]}).encode())
    cluster.wait_for(lambda: all(leaders(cluster)[p] == victim for p in moved), 20, what="preferred leaders back")
    cluster.wait_for(lambda: cluster.zk().exists("/admin/preferred_replica_election") is None, 20,
                     what="the admin node deleted")


def test_auto_leader_rebalance(cluster_factory) -> None:
    cluster = cluster_factory(3, overrides={"leader.imbalance.check.interval.seconds": "2",
                                            "leader.imbalance.per.broker.percentage": "10"})
    assignment = create(cluster, "auto", 3)
    preferred = {p: r[0] for p, r in assignment.items()}
    victim = next(b for b in (0, 1, 2) if b != cluster.controller_id())
    bounce_and_rejoin(cluster, victim, "auto", 3, graceful=True)
    # The controller's imbalance check finds the victim leading none of its preferred partitions (100% > 10%).
    cluster.wait_for(lambda: leaders(cluster, "auto", 3) == preferred, 30, what="the automatic rebalance")
