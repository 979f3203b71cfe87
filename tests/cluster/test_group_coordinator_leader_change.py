"""A group coordinator follows __consumer_offsets leadership through the controller's LeaderAndIsr alone (issue 18
item 1: Kafka's onLeadershipChange; the one-second ownership poll and the per-request ownership checks are gone).
Two brokers, one __consumer_offsets partition on both: a confluent-kafka consumer commits offset 3, the partition's
leader moves to the other broker (reassignment to the reversed replica order, then a preferred election: no broker
stops), and at once the consumer reads offset 3 back from the new coordinator (it loaded the partition when it
became leader) and commits offset 7 there (a NOT_COORDINATOR from the resigned one is asked again, within 5 s in
all); a second consumer of the group reads 7."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from kafkapy.client.admin_types import NewTopic
from kafkapy.common.topic_partition import TopicPartition as TP

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition  # noqa: E402

TOPIC = "gc"
GROUP = "gc-group"
OFFSETS = "__consumer_offsets"


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(2, overrides={"offsets.topic.num.partitions": "1",
                                         "offsets.topic.replication.factor": "2"})


def offsets_state(cluster) -> tuple[int, list[int], list[int]] | None:
    from kafkapy.common.errors import KafkaError

    try:
        return cluster.describe(OFFSETS).get(0)
    except KafkaError:
        return None


def consumer(cluster) -> Consumer:
    return Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": GROUP, "enable.auto.commit": False,
                     "topic.metadata.refresh.interval.ms": 1000})


def committed(c: Consumer) -> int:
    return int(c.committed([TopicPartition(TOPIC, 0)], timeout=20)[0].offset)


def retried_on_coordinator_move(fn: Callable[[], Any], timeout_s: float = 5.0) -> Any:
    """librdkafka hands a NOT_COORDINATOR answer (from the resigned coordinator) to the caller instead of
    retrying; the caller asks again, and librdkafka looks the coordinator up anew. Bounded in time."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return fn()
        except KafkaException as e:
            if e.args[0].code() != KafkaError.NOT_COORDINATOR or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_offsets_commit_at_once_after_the_coordinator_leader_moves(cluster) -> None:
    admin = cluster.admin()
    c = consumer(cluster)
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 2)])
        c.commit(offsets=[TopicPartition(TOPIC, 0, 3)], asynchronous=False)
        assert committed(c) == 3
        state = cluster.wait_for(lambda: (s := offsets_state(cluster)) is not None and len(s[2]) == 2 and s, 30,
                                 what=f"{OFFSETS}-0 with both replicas in its ISR")
        old_leader, replicas, _isr = state
        new_leader = next(b for b in replicas if b != old_leader)
        tp = TP(OFFSETS, 0)
        assert admin.alter_partition_reassignments({tp: [new_leader, old_leader]}) == {tp: None}
        cluster.wait_for(lambda: not admin.list_partition_reassignments(), 30, what="the reordering completed")
        assert admin.elect_leaders(partitions=[tp]) == {tp: None}
        cluster.wait_for(lambda: (s := offsets_state(cluster)) is not None and s[0] == new_leader, 30,
                         what=f"broker {new_leader} leading {OFFSETS}-0")
        started = time.monotonic()
        # From the new coordinator, which loaded the partition on its election (no poll would ever make it).
        assert retried_on_coordinator_move(lambda: committed(c)) == 3
        retried_on_coordinator_move(lambda: c.commit(offsets=[TopicPartition(TOPIC, 0, 7)], asynchronous=False))
        elapsed = time.monotonic() - started
    finally:
        c.close()
        admin.close()
    assert elapsed < 5, f"the commit after the leader change took {elapsed:.1f} s"
    other = consumer(cluster)
    try:
        assert committed(other) == 7
    finally:
        other.close()
