"""Topic deletion while a replica's broker is down: clients stop seeing the topic at once and the live replicas'
logs go, but (as Kafka's TopicDeletionManager does) the down broker's replica is ReplicaDeletionIneligible, so the
topic stays marked in /admin/delete_topics until that broker returns; then the deletion is retried, the stray log
directory goes and the topic's znodes with it, and the name can be created again."""

from __future__ import annotations

import os

import pytest

from kafkapy.client.admin_types import NewTopic

confluent_kafka = pytest.importorskip("confluent_kafka")
TOPIC = "doomed"


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    # logs renamed `-delete` are removed at once, so the test sees the directories go
    return cluster_factory(3, overrides={"log.segment.delete.delay.ms": "0"})


def log_dirs(cluster, broker_id: int) -> list[str]:
    base = cluster.brokers[broker_id].log_dir
    return sorted(d for d in os.listdir(base) if d.startswith(f"{TOPIC}-")) if os.path.isdir(base) else []


def listed(cluster) -> bool:
    admin = cluster.admin()
    try:
        return TOPIC in admin.list_topics()
    finally:
        admin.close()


def test_deletion_waits_for_a_down_replica_and_completes_when_it_returns(cluster) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(TOPIC, replica_assignment={0: [0, 1, 2], 1: [1, 2, 0]})])
    finally:
        admin.close()
    cluster.wait_for(lambda: all(len((cluster.partition_state(TOPIC, p) or {}).get("isr", [])) == 3 for p in (0, 1)),
                     what="all replicas in sync")
    p = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(50):
        p.produce(TOPIC, value=f"v{i}".encode(), partition=i % 2)
    assert p.flush(30) == 0
    del p
    assert all(log_dirs(cluster, b) == [f"{TOPIC}-0", f"{TOPIC}-1"] for b in (0, 1, 2))

    assert cluster.brokers[2].stop() == 0
    cluster.wait_for(lambda: cluster.registered_brokers() == [0, 1], 30, what="broker 2 deregistered")
    admin = cluster.admin()
    try:
        admin.delete_topics([TOPIC])
    finally:
        admin.close()
    cluster.wait_for(lambda: not listed(cluster), 30, what="the topic gone from metadata")
    cluster.wait_for(lambda: log_dirs(cluster, 0) == [] and log_dirs(cluster, 1) == [], 30,
                     what="the live replicas' logs deleted")
    # broker 2's replica is ineligible for deletion: its log stays and the deletion stays pending
    assert log_dirs(cluster, 2) == [f"{TOPIC}-0", f"{TOPIC}-1"]
    zk = cluster.zk()
    assert zk.exists(f"/admin/delete_topics/{TOPIC}") is not None
    assert zk.exists(f"/brokers/topics/{TOPIC}") is not None

    cluster.brokers[2].start()
    cluster.wait_for(lambda: log_dirs(cluster, 2) == [], 30, what="the stray log directories deleted")
    cluster.wait_for(lambda: zk.exists(f"/admin/delete_topics/{TOPIC}") is None
                     and zk.exists(f"/brokers/topics/{TOPIC}") is None, 30, what="the deletion completed")
    assert not listed(cluster)

    # the name is free again: a new topic starts empty on every broker
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(TOPIC, replica_assignment={0: [2, 0, 1]})])
    finally:
        admin.close()
    cluster.wait_for(lambda: (cluster.partition_state(TOPIC, 0) or {}).get("leader") == 2, what="recreated topic")
    c = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "deletion-readers",
                                  "auto.offset.reset": "earliest"})
    try:
        marks = cluster.wait_for(lambda: c.get_watermark_offsets(confluent_kafka.TopicPartition(TOPIC, 0),
                                                                   timeout=5), 30, what="the new topic's offsets")
    finally:
        c.close()
    assert marks == (0, 0)
