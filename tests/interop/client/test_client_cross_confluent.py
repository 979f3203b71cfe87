"""kafkapy's client and librdkafka (confluent-kafka) read each other's messages exactly."""

from __future__ import annotations

import time

import pytest

from kafkapy.client.admin import AdminClient, NewTopic
from kafkapy.client.consumer import KafkaConsumer
from kafkapy.client.partitioner import partition_for_key
from kafkapy.client.producer import KafkaProducer
from kafkapy.common.topic_partition import TopicPartition

ck = pytest.importorskip("confluent_kafka")

N = 2000
PARTITIONS = 2


def _topic(broker: str, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker})
    try:
        admin.create_topics([NewTopic(name, PARTITIONS, 1)])
    finally:
        admin.close()


def _message(i: int) -> tuple[bytes, bytes, list[tuple[str, bytes]]]:
    return b"k%d" % i, b"payload-%d-" % i + b"z" * (i % 100), [("i", b"%d" % i), ("tag", b"x")]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_kafkapy_producer_confluent_consumer(broker: str, topic_name: str, codec: str) -> None:
    _topic(broker, topic_name)
    producer = KafkaProducer({"bootstrap.servers": broker, "compression.type": codec})
    try:
        futures = []
        for i in range(N):
            k, v, h = _message(i)
            futures.append(producer.send(topic_name, v, key=k, headers=h))
        producer.flush(30)
        acked = [f.result(0) for f in futures]
    finally:
        producer.close(10)

    consumer = ck.Consumer({
        "bootstrap.servers": broker, "group.id": f"g-{topic_name}", "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    })
    got = []
    try:
        consumer.assign([ck.TopicPartition(topic_name, p, 0) for p in range(PARTITIONS)])
        deadline = time.monotonic() + 30
        while len(got) < N and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is None:
                continue
            assert m.error() is None, m.error()
            got.append(m)
    finally:
        consumer.close()
    assert len(got) == N
    seen = {}
    for m in got:
        i = int(m.headers()[0][1])
        k, v, h = _message(i)
        assert (m.key(), m.value(), m.headers()) == (k, v, h)
        assert (m.partition(), m.offset()) == (acked[i].partition, acked[i].offset)
        seen[i] = m
    assert len(seen) == N


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_confluent_producer_kafkapy_consumer(broker: str, topic_name: str, codec: str) -> None:
    _topic(broker, topic_name)
    delivered: dict[int, tuple[int, int]] = {}
    errors: list[str] = []

    def on_delivery(err, msg) -> None:
        if err is not None:
            errors.append(str(err))
            return
        delivered[int(msg.key()[1:])] = (msg.partition(), msg.offset())

    producer = ck.Producer({
        "bootstrap.servers": broker, "compression.type": codec, "linger.ms": 5,
        "partitioner": "murmur2_random",  # the Java client's partitioner
    })
    for i in range(N):
        k, v, h = _message(i)
        producer.produce(topic_name, v, key=k, headers=h, on_delivery=on_delivery)
        if i % 500 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0
    assert errors == []
    assert len(delivered) == N

    consumer = KafkaConsumer({"bootstrap.servers": broker, "auto.offset.reset": "earliest"})
    got = []
    try:
        consumer.assign([TopicPartition(topic_name, p) for p in range(PARTITIONS)])
        deadline = time.monotonic() + 30
        while len(got) < N and time.monotonic() < deadline:
            got.extend(consumer.poll(500))
    finally:
        consumer.close()
    assert len(got) == N
    per_partition: dict[int, list[int]] = {}
    for r in got:
        i = int(r.headers[0][1])
        k, v, h = _message(i)
        assert (r.key, r.value, r.headers) == (k, v, h)
        assert (r.partition, r.offset) == delivered[i]
        # librdkafka's murmur2 partitioner agrees with ours.
        assert r.partition == partition_for_key(k, PARTITIONS)
        per_partition.setdefault(r.partition, []).append(r.offset)
    for offsets in per_partition.values():
        assert offsets == sorted(offsets)
