"""A transaction coordinator follows __transaction_state leadership through the controller's LeaderAndIsr alone
(issue 18: one broker-side path, Kafka's onLeadershipChange; no ownership poll). Two brokers, one
__transaction_state partition on both: a confluent-kafka transactional producer commits, the partition's leader
moves to the other broker (reassignment to the reversed replica order, then a preferred election: no broker
stops), and the producer's next transaction commits on the new coordinator; a read_committed consumer reads
both transactions' records at offsets 0 and 2 (1 is the first commit marker)."""

from __future__ import annotations

import time

import pytest

from kafkapy.client.admin_types import NewTopic
from kafkapy.common.topic_partition import TopicPartition as TP

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402

TOPIC = "lc"
TXN_STATE = "__transaction_state"


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(2, overrides={"transaction.state.log.num.partitions": "1",
                                         "transaction.state.log.replication.factor": "2",
                                         "transaction.state.log.min.isr": "1",
                                         "offsets.topic.num.partitions": "1"})


def txn_state(cluster) -> tuple[int, list[int], list[int]] | None:
    from kafkapy.common.errors import KafkaError

    try:
        return cluster.describe(TXN_STATE).get(0)
    except KafkaError:
        return None


def commit_one(p: Producer, value: bytes) -> None:
    p.begin_transaction()
    p.produce(TOPIC, value, partition=0)
    p.commit_transaction(30)


def test_next_transaction_commits_after_coordinator_leader_moves(cluster) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 2)])
        p = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": "lc-1", "linger.ms": 1,
                      "topic.metadata.refresh.interval.ms": 1000})
        p.init_transactions(60)
        commit_one(p, b"one")
        state = cluster.wait_for(lambda: (s := txn_state(cluster)) is not None and len(s[2]) == 2 and s, 30,
                                 what="__transaction_state-0 with both replicas in its ISR")
        old_leader, replicas, _isr = state
        new_leader = next(b for b in replicas if b != old_leader)
        tp = TP(TXN_STATE, 0)
        assert admin.alter_partition_reassignments({tp: [new_leader, old_leader]}) == {tp: None}
        cluster.wait_for(lambda: not admin.list_partition_reassignments(), 30, what="the reordering completed")
        assert admin.elect_leaders(partitions=[tp]) == {tp: None}
        cluster.wait_for(lambda: (s := txn_state(cluster)) is not None and s[0] == new_leader, 30,
                         what=f"broker {new_leader} leading {TXN_STATE}-0")
        started = time.monotonic()
        commit_one(p, b"two")
        elapsed = time.monotonic() - started
        p.flush(10)
    finally:
        admin.close()
    assert elapsed < 20, f"the transaction after the leader change took {elapsed:.1f} s"
    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "lc-reader", "isolation.level": "read_committed",
                  "enable.partition.eof": True, "enable.auto.commit": False})
    c.assign([TopicPartition(TOPIC, 0, 0)])
    got: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and len(got) < 2:
            m = c.poll(0.3)
            if m is not None and not m.error():
                got.append((m.offset(), m.value()))
    finally:
        c.close()
    assert got == [(0, b"one"), (2, b"two")]
