"""Transactions across brokers (ZooKeeper cluster of 3 broker processes, confluent-kafka): the transaction
coordinator writes markers to partition leaders on other brokers through WriteTxnMarkers requests;
read_committed readers see exactly the committed records; after the leader of a partition is SIGKILLed, the
new leader (whose producer state and .txnindex were built by replication) serves the same committed view, and
a new producer with the same transactional.id commits again."""

from __future__ import annotations

import time

import pytest

from kafkapy.client.admin_types import NewTopic

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402

TOPIC = "xtx"
PARTITIONS = 3


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3, overrides={"transaction.state.log.num.partitions": "6",
                                         "offsets.topic.num.partitions": "6"})


def describe(cluster, topic: str = TOPIC) -> dict:
    """The topic's {partition: (leader, replicas, isr)}, or {} while the broker asked has no metadata yet."""
    from kafkapy.common.errors import KafkaError

    try:
        return cluster.describe(topic)
    except KafkaError:
        return {}


def read(cluster, isolation: str, expected: int, timeout_s: float = 60, topic: str = TOPIC) -> list[bytes]:
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"x-{isolation}-{time.monotonic_ns()}",
                  "isolation.level": isolation, "enable.partition.eof": True,
                  "topic.metadata.refresh.interval.ms": 1000})
    c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    out: list[bytes] = []
    eof: set[int] = set()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        m = c.poll(0.3)
        if m is None:
            continue
        if m.error():
            if m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF:
                eof.add(m.partition())
                if len(eof) == PARTITIONS and len(out) >= expected:
                    break
            continue
        eof.discard(m.partition())
        out.append(m.value())
    c.close()
    return out


def test_markers_across_brokers_and_leader_failover(cluster) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3, configs={"min.insync.replicas": "2"})])
    finally:
        admin.close()
    cluster.wait_for(lambda: len(describe(cluster)) == PARTITIONS
                     and all(len(isr) == 3 for _l, _r, isr in describe(cluster).values()), 60,
                     what="metadata with full ISRs")
    leaders = {p: leader for p, (leader, _r, _i) in cluster.wait_for(lambda: describe(cluster), 30).items()}
    assert len(set(leaders.values())) > 1  # the markers must reach more than one broker

    p = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": "xtx-1", "linger.ms": 5,
                  "topic.metadata.refresh.interval.ms": 1000})
    p.init_transactions(60)
    committed = [b"c%02d" % i for i in range(30)]
    aborted = [b"a%02d" % i for i in range(30)]
    p.begin_transaction()
    for i, v in enumerate(committed):
        p.produce(TOPIC, v, partition=i % PARTITIONS)
    p.commit_transaction(60)
    p.begin_transaction()
    for i, v in enumerate(aborted):
        p.produce(TOPIC, v, partition=i % PARTITIONS)
    p.flush(30)
    p.abort_transaction(60)
    assert sorted(read(cluster, "read_committed", 30)) == committed
    assert sorted(read(cluster, "read_uncommitted", 60)) == sorted(committed + aborted)

    victim = leaders[0]
    cluster.brokers[victim].kill()
    cluster.wait_for(lambda: describe(cluster).get(0, (victim,))[0] not in (victim, -1), 60, what="a new leader")
    assert sorted(read(cluster, "read_committed", 30)) == committed  # followers built the same txn state

    again = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": "xtx-1", "linger.ms": 5,
                      "topic.metadata.refresh.interval.ms": 1000})
    again.init_transactions(60)
    again.begin_transaction()
    for part in range(PARTITIONS):
        again.produce(TOPIC, b"after-%d" % part, partition=part)
    again.commit_transaction(60)
    after = read(cluster, "read_committed", 33)
    assert sorted(after) == sorted(committed + [b"after-%d" % part for part in range(PARTITIONS)])
    cluster.brokers[victim].start()


def test_kafkapy_transactional_producer_across_brokers(cluster) -> None:
    """kafkapy's own producer: its transaction coordinator and the partitions' leaders are different brokers."""
    from kafkapy.client.producer import KafkaProducer

    topic = "xtx-own"
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(topic, PARTITIONS, 3)])
    finally:
        admin.close()
    cluster.wait_for(lambda: len(describe(cluster, topic)) == PARTITIONS
                     and all(len(isr) == 3 for _l, _r, isr in describe(cluster, topic).values()), 60,
                     what="metadata with full ISRs")
    assert len({leader for leader, _r, _i in describe(cluster, topic).values()}) > 1
    p = KafkaProducer({"bootstrap.servers": cluster.bootstrap, "transactional.id": "xtx-own-1", "linger.ms": 5})
    try:
        p.init_transactions(60)
        committed = [b"own-c%02d" % i for i in range(30)]
        p.begin_transaction()
        for i, v in enumerate(committed):
            p.send(topic, v, partition=i % PARTITIONS)
        p.commit_transaction(60)
        p.begin_transaction()
        for i in range(30):
            p.send(topic, b"own-a%02d" % i, partition=i % PARTITIONS)
        p.flush(30)
        p.abort_transaction(60)
    finally:
        p.close(30)
    assert sorted(read(cluster, "read_committed", 30, topic=topic)) == committed
    assert len(read(cluster, "read_uncommitted", 60, topic=topic)) == 60


def test_describe_producers_and_find_hanging_on_a_follower(cluster) -> None:
    """`transactions describe-producers --broker-id F` / `find-hanging --broker-id F` ask a follower: it answers
    from its own replica's producer state, as Kafka's Partition.activeProducerState (was NOT_LEADER_OR_FOLLOWER)."""
    import json
    import subprocess
    import sys

    topic = "xtx-follower"
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(topic, 1, 3)])
    finally:
        admin.close()
    cluster.wait_for(lambda: len(describe(cluster, topic)) == 1 and len(describe(cluster, topic)[0][2]) == 3, 60,
                     what="the topic with a full ISR")
    p = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": "xtx-follower-1", "linger.ms": 0})
    p.init_transactions(60)
    p.begin_transaction()
    p.produce(topic, b"open", partition=0)
    p.flush(30)
    leader, replicas, _isr = describe(cluster, topic)[0]
    follower = next(r for r in replicas if r != leader)

    def tool(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "transactions", "--bootstrap-server",
                               cluster.bootstrap, *args], capture_output=True, text=True, timeout=120)

    def described() -> list[dict]:
        r = tool("--output", "json", "describe-producers", "--topic", topic, "--partition", "0",
                 "--broker-id", str(follower))
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    rows = cluster.wait_for(described, 30, what="the follower's producer state")
    assert len(rows) == 1 and rows[0]["CurrentTransactionStartOffset"] == 0 and rows[0]["LastSequence"] == 0
    r = tool("find-hanging", "--broker-id", str(follower), "--max-transaction-timeout", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1:] == []  # open, not hanging: the coordinator still lists the partition
    p.abort_transaction(60)
