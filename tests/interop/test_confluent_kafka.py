"""confluent-kafka (librdkafka) against an in-process kafkapy broker: acks=all produce with every
compression codec, headers, null keys and values and one 900 KB value; every message read back with
manual assignment at exactly the offset its delivery report gave, with the same key, value, headers."""

from __future__ import annotations

import functools
import os
import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402

N = 100_000
PARTITIONS = 3
BIG_INDEX = 50_000
BIG_VALUE = os.urandom(900 * 1024)
DEADLINE_S = 90


def message(i: int, codec: str) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]] | None]:
    key = None if i % 1000 == 7 else b"k%d" % i
    if i == BIG_INDEX:
        value = BIG_VALUE
    elif i % 97 == 0:
        value = None
    else:
        value = b"v%d-" % i + bytes(range(i % 200))
    if i % 3 == 0:
        headers = [("idx", b"%d" % i), ("codec", codec.encode())]
    elif i % 3 == 1:
        headers = [("null", None)]
    else:
        headers = None
    return key, value, headers


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(30)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_produce_acks_all_and_consume_exactly(kafkapy_broker, codec: str) -> None:
    bootstrap = kafkapy_broker.bootstrap
    topic = f"ck-{codec}"
    create_topic(bootstrap, topic, PARTITIONS)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "compression.type": codec,
                         "linger.ms": 20, "batch.size": 1_000_000, "enable.idempotence": False,
                         "queue.buffering.max.messages": 200_000, "message.max.bytes": 1_000_000})
    delivered: dict[int, tuple[int, int]] = {}
    errors: list[str] = []

    def on_delivery(i: int, err, msg) -> None:
        if err is not None:
            errors.append(f"{i}: {err}")
        else:
            delivered[i] = (msg.partition(), msg.offset())

    deadline = time.monotonic() + DEADLINE_S
    for i in range(N):
        key, value, headers = message(i, codec)
        while True:
            try:
                producer.produce(topic, value=value, key=key, headers=headers, partition=i % PARTITIONS,
                                 on_delivery=functools.partial(on_delivery, i))
                break
            except BufferError:
                producer.poll(0.05)
                assert time.monotonic() < deadline, "produce stalled"
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(DEADLINE_S) == 0
    assert not errors, errors[:5]
    assert len(delivered) == N

    by_offset: dict[tuple[int, int], int] = {pos: i for i, pos in delivered.items()}
    for p in range(PARTITIONS):
        offsets = sorted(o for (part, o) in by_offset if part == p)
        assert offsets == list(range(len(offsets)))  # contiguous from 0, nothing else in the partition
        # per-partition order: offsets follow production order
        indexes = [by_offset[(p, o)] for o in offsets]
        assert indexes == sorted(indexes)

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{codec}", "enable.auto.commit": False,
                         "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 2_000_000})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen = 0
    try:
        while seen < N:
            assert time.monotonic() < deadline + DEADLINE_S, f"consumed {seen} of {N}"
            for msg in consumer.consume(10_000, 1.0):
                assert msg.error() is None, msg.error()
                i = by_offset.get((msg.partition(), msg.offset()))
                assert i is not None, (msg.partition(), msg.offset())
                key, value, headers = message(i, codec)
                assert msg.key() == key and msg.value() == value, i
                assert (msg.headers() or None) == headers, i
                seen += 1
        assert consumer.consume(10, 0.2) == []
    finally:
        consumer.close()
    assert seen == N
