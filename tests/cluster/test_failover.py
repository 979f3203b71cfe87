"""Failures in a three-broker cluster, in one flow on one cluster (each step starts from the previous one's
state): a controlled shutdown (SIGTERM) moves leaders away before the broker stops; SIGKILL of a broker
moves its leadership and shrinks ISRs in ZooKeeper; SIGKILL of the controller elects a new controller that
still changes leaders afterwards; ZooKeeper restarted mid-run: brokers reconnect, the cluster still
creates topics and elects leaders."""

from __future__ import annotations

import time

import pytest

from kafkapy.client.admin_types import NewTopic
from kafkapy.common.topic_partition import TopicPartition

TOPIC = "failover"


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    cluster = cluster_factory(3)
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(TOPIC, 6, 3)])
    finally:
        admin.close()
    cluster.wait_for(lambda: all(cluster.partition_state(TOPIC, p) for p in range(6)), what="partition states")
    return cluster


def leaders(cluster) -> dict[int, int]:
    return {p: cluster.partition_state(TOPIC, p)["leader"] for p in range(6)}


def states(cluster) -> dict[int, dict]:
    return {p: cluster.partition_state(TOPIC, p) for p in range(6)}


def metadata_leaders(cluster, broker) -> dict[int, int]:
    return {p: leader for p, (leader, _r, _isr) in cluster.describe(TOPIC, broker.bootstrap).items()}


def test_controlled_shutdown_moves_leaders_first(cluster) -> None:
    # A broker that leads something and whose partitions have another ISR member to take over.
    cur = states(cluster)
    candidates = [b for b in (0, 1, 2) if b != cluster.controller_id()
                  and any(s["leader"] == b and len(s["isr"]) > 1 for s in cur.values())]
    if not candidates:
        pytest.skip("no broker leads a partition with a spare ISR member (needs ISR expansion)")
    victim = candidates[0]
    start = time.monotonic()
    code = cluster.brokers[victim].stop()
    stop_s = time.monotonic() - start
    assert code == 0
    after = states(cluster)
    # The controller moved every leadership with another ISR member before the broker stopped: no
    # session-timeout wait (that would take 6 s), and the leader epochs moved on.
    moved = [p for p, s in cur.items() if s["leader"] == victim and len(s["isr"]) > 1]
    assert all(after[p]["leader"] != victim and after[p]["leader_epoch"] > cur[p]["leader_epoch"] for p in moved)
    assert "Controlled shutdown request returned successfully" in cluster.brokers[victim].output() or stop_s < 6
    cluster.brokers[victim].start()
    cluster.wait_for(lambda: victim in cluster.registered_brokers(), 30, what="the broker to come back")


def test_broker_failure_moves_leadership(cluster) -> None:
    controller = cluster.controller_id()
    current = leaders(cluster)
    victim = next(b for b in (0, 1, 2) if b != controller and b in current.values())
    led = [p for p, leader in current.items() if leader == victim]
    before = states(cluster)
    start = time.monotonic()
    cluster.brokers[victim].kill()
    # The broker's session times out (zookeeper.session.timeout.ms = 6 s), its /brokers/ids node goes, and the
    # controller elects new leaders from the ISR and shrinks every ISR it was in.
    cluster.wait_for(lambda: victim not in cluster.registered_brokers(), 20, what="the session to expire")
    cluster.wait_for(lambda: all(s["leader"] != victim and victim not in s["isr"] for s in states(cluster).values()),
                     20, what="leaders moved and ISRs shrunk")
    elapsed = time.monotonic() - start
    after = states(cluster)
    for p in led:
        # A new leader from the ISR (which followers may have rejoined meanwhile), one leader epoch later.
        assert after[p]["leader"] in (0, 1, 2) and after[p]["leader"] in after[p]["isr"]
        assert after[p]["leader_epoch"] > before[p]["leader_epoch"]
        assert after[p]["controller_epoch"] == cluster.zk_json("/controller_epoch")
    survivor = cluster.brokers[controller]
    cluster.wait_for(lambda: all(metadata_leaders(cluster, survivor)[p] == after[p]["leader"] for p in range(6)),
                     20, what="UpdateMetadata reached the brokers")
    assert elapsed < 6 + 10
    cluster.brokers[victim].start()
    cluster.wait_for(lambda: victim in cluster.registered_brokers(), 30, what="the broker to come back")


def test_controller_sigkill_elects_new_controller_that_still_moves_leaders(cluster) -> None:
    old = cluster.controller_id()
    old_epoch = cluster.zk_json("/controller_epoch")
    cluster.brokers[old].kill()
    new = cluster.wait_for(lambda: [c for c in [cluster.controller_id()] if c is not None and c != old], 20,
                           what="a new controller")[0]
    assert cluster.zk_json("/controller_epoch") == old_epoch + 1
    # The new controller handles the old one's failure: no partition is left led by the dead broker.
    cluster.wait_for(lambda: all(s["leader"] != old for s in states(cluster).values()), 20,
                     what="leaders moved off the dead controller")
    # ... and a later leader change still happens: the new controller moves leaders on a preferred election
    # (ElectLeaders sent to it) or, when the preferred replica is not eligible, reports why.
    bootstrap = cluster.brokers[new].bootstrap
    cluster.wait_for(lambda: cluster.metadata_controller(bootstrap) == new, 20, what="metadata naming the controller")
    admin = cluster.admin(bootstrap)
    try:
        result = admin.elect_leaders(partitions=[TopicPartition(TOPIC, p) for p in range(6)])
    finally:
        admin.close()
    assert set(result) == {TopicPartition(TOPIC, p) for p in range(6)}
    cluster.brokers[old].start()
    cluster.wait_for(lambda: old in cluster.registered_brokers(), 30, what="the old controller to come back")
    assert cluster.controller_id() == new  # it does not take the controller back


def test_zookeeper_restart_cluster_recovers(cluster, zookeeper) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all",
                                         "enable.idempotence": True, "linger.ms": 5, "message.timeout.ms": 60000})
    acked: list[bytes] = []

    def produce(start: int, n: int) -> None:
        for i in range(start, start + n):
            producer.produce(TOPIC, value=f"zk-{i:05d}".encode(), partition=i % 6,
                             on_delivery=lambda err, msg: acked.append(msg.value()) if err is None else None)
        assert producer.flush(60) == 0

    produce(0, 300)
    zookeeper.stop()
    produce(300, 300)  # the data path does not need ZooKeeper
    time.sleep(1)
    zookeeper.start()
    # Sessions survive a restart shorter than their timeout: the same brokers and controller carry on.
    cluster.wait_for(lambda: cluster.registered_brokers() == [0, 1, 2], 30, what="registrations after the restart")
    assert cluster.controller_id() is not None
    produce(600, 300)
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic("after-zk-restart", 3, 3)])
    finally:
        admin.close()
    cluster.wait_for(lambda: all(cluster.partition_state("after-zk-restart", p) for p in range(3)), 30,
                     what="the new topic's partition states")
    cluster.wait_for(lambda: all(leader >= 0 for leader, _r, _i in cluster.describe("after-zk-restart").values())
                     and len(cluster.describe("after-zk-restart")) == 3, 30, what="the new topic in metadata")
    # Nothing acknowledged is lost.
    assert len(acked) == 900
    consumer = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "zk-restart",
                                         "auto.offset.reset": "earliest"})
    consumer.subscribe([TOPIC])
    seen: set[bytes] = set()
    deadline = time.monotonic() + 60
    while (missing := len(set(acked) - seen)) and time.monotonic() < deadline:
        # consume(n, t) returns once n records arrived: ask for what is missing, not for 500 and a 1 s wait.
        seen.update(m.value() for m in consumer.consume(min(500, missing), 1.0) if m.error() is None)
    consumer.close()
    assert set(acked) <= seen
