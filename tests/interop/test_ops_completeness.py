"""Operator-facing behaviours with confluent-kafka against one in-process kafkapy broker (issue 17):
a deleted topic's committed offsets leave its groups (GroupCoordinator.handleDeletedPartitions), so a
re-created topic of the same name is read from the reset policy; segment.bytes takes Kafka 3.9's small values.
"""

from __future__ import annotations

import os
import time

import pytest

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

DEADLINE_S = 30.0


def _create(admin: AdminClient, name: str, config: dict[str, str] | None = None) -> None:
    for f in admin.create_topics([NewTopic(name, 1, 1, config=config or {})]).values():
        f.result(30)


def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for v in values:
        producer.produce(topic, v)
        producer.flush(10)  # one batch per record, so small segments roll between them
    assert producer.flush(10) == 0


def _committed(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        return consumer.committed([TopicPartition(topic, 0)], timeout=10)[0].offset
    finally:
        consumer.close()


def test_deleting_a_topic_removes_its_committed_offsets(kafkapy_broker) -> None:
    bootstrap = kafkapy_broker.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic, group = "ops-deleted-offsets", "ops-g1"
    _create(admin, topic)
    _produce(bootstrap, topic, [b"a", b"b", b"c"])
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False)
    consumer.close()
    assert _committed(bootstrap, group, topic) == 3

    for f in admin.delete_topics([topic]).values():
        f.result(30)
    deadline = time.monotonic() + DEADLINE_S
    while _committed(bootstrap, group, topic) != ck.OFFSET_INVALID:
        assert time.monotonic() < deadline, "offsets of the deleted topic still committed"
        time.sleep(0.1)

    # Re-created with the same name: the group starts from auto.offset.reset, not the stale offset 3.
    while True:
        try:
            _create(admin, topic)
            break
        except ck.KafkaException:  # the deletion may still be completing
            assert time.monotonic() < deadline
            time.sleep(0.2)
    _produce(bootstrap, topic, [b"x", b"y"])
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, ck.OFFSET_STORED)])
    got = []
    while len(got) < 2 and time.monotonic() < deadline + DEADLINE_S:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            got.append((m.offset(), m.value()))
    consumer.close()
    assert got == [(0, b"x"), (1, b"y")]


def test_small_segment_bytes_roll(kafkapy_broker) -> None:
    """segment.bytes=100 (refused below 1 MiB by Kafka 4.0, accepted down to 14 by 3.9): each batch rolls."""
    bootstrap = kafkapy_broker.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = "ops-small-segments"
    _create(admin, topic, {"segment.bytes": "100"})
    _produce(bootstrap, topic, [b"v%02d" % i * 10 for i in range(5)])
    logs = sorted(f for f in os.listdir(os.path.join(kafkapy_broker.log_dir, f"{topic}-0")) if f.endswith(".log"))
    assert logs == [f"{i:020d}.log" for i in range(5)]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "ops-g2", "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[bytes] = []
    deadline = time.monotonic() + DEADLINE_S
    while len(got) < 5 and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
    consumer.close()
    assert got == [b"v%02d" % i * 10 for i in range(5)]
