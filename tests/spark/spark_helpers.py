"""Helpers for tests/spark: topics, producing and consuming with confluent-kafka (a real client)."""

from __future__ import annotations

from typing import Any


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(30)


def produce(bootstrap: str, topic: str, messages: list[dict], **config: Any) -> list[tuple[int, int]]:
    """Produce messages ({value, key?, partition?, headers?, timestamp?}) with confluent-kafka, acks=all;
    returns each message's (partition, offset) in order."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, **config})
    out: list[Any] = [None] * len(messages)
    errors: list[str] = []

    def report(i: int):
        def cb(err, msg):
            if err is not None:
                errors.append(str(err))
            else:
                out[i] = (msg.partition(), msg.offset())
        return cb

    for i, m in enumerate(messages):
        kwargs = {k: v for k, v in m.items() if v is not None}
        producer.produce(topic, on_delivery=report(i), **kwargs)
        if i % 10000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    assert not errors, errors
    return out


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int, timeout_s: float = 60) -> list[Any]:
    """Every record of `topic` read with confluent-kafka (manual assignment from offset 0)."""
    import time

    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "spark-tests", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: list[Any] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(got) < expected and time.monotonic() < deadline:
            # consume(n, t) returns once n records arrived: asking for what is missing ends the loop at the last
            # record instead of after another 0.5 s of waiting for a full 1000.
            for msg in consumer.consume(min(1000, expected - len(got)), 0.5):
                assert msg.error() is None, msg.error()
                got.append(msg)
    finally:
        consumer.close()
    return got


def end_offset(bootstrap: str, topic: str, partition: int) -> int:
    """The partition's high watermark (how many records a read-back of a 1-partition topic must wait for)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "spark-tests"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)[1]
    finally:
        consumer.close()
