"""kafka-python (pure-Python client) against an in-process kafkapy broker: lz4 produce with acks=1,
then a manually assigned consumer reads exactly what was acknowledged, at the acknowledged offsets."""

from __future__ import annotations

import time

import pytest

kafka = pytest.importorskip("kafka")
from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402

N = 5_000
DEADLINE_S = 60


def test_kafka_python_lz4_produce_and_assign_consume(kafkapy_broker) -> None:
    topic = "kp-lz4"
    producer = KafkaProducer(bootstrap_servers=kafkapy_broker.bootstrap, acks=1, compression_type="lz4",
                             linger_ms=10, request_timeout_ms=30_000)
    futures = []
    for i in range(N):
        key = None if i % 100 == 5 else b"key-%d" % i
        value = None if i % 250 == 9 else (b"value-%d|" % i) * (1 + i % 7)
        headers = [("n", b"%d" % i)] if i % 2 else []
        futures.append((i, key, value, headers, producer.send(topic, value=value, key=key, headers=headers)))
    producer.flush(DEADLINE_S)
    acked: dict[int, tuple] = {}
    for _i, key, value, headers, fut in futures:
        md = fut.get(timeout=DEADLINE_S)
        assert md.topic == topic and md.partition == 0
        acked[md.offset] = (key, value, headers)
    producer.close()
    assert sorted(acked) == list(range(N))

    consumer = KafkaConsumer(bootstrap_servers=kafkapy_broker.bootstrap, enable_auto_commit=False,
                             group_id=None, consumer_timeout_ms=2000)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = []
    deadline = time.monotonic() + DEADLINE_S
    while len(got) < N and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=1000, max_records=2000).values():
            got.extend(records)
    assert consumer.end_offsets([tp]) == {tp: N}
    assert consumer.beginning_offsets([tp]) == {tp: 0}
    consumer.close()
    assert [r.offset for r in got] == list(range(N))
    for r in got:
        key, value, headers = acked[r.offset]
        assert (r.key, r.value, list(r.headers)) == (key, value, headers), r.offset
