"""KafkaProducer -> broker -> KafkaConsumer, exactly: payloads, keys, headers, order and offsets."""

from __future__ import annotations

import time

import pytest

from kafkapy.client.admin import AdminClient, NewTopic
from kafkapy.client.consumer import KafkaConsumer
from kafkapy.client.partitioner import partition_for_key
from kafkapy.client.producer import KafkaProducer
from kafkapy.common.topic_partition import TopicPartition

N = 10_000
PARTITIONS = 3
# Tansu answers ListOffsets(latest) with the last batch's base offset + 1, not the log end offset.
TANSU_LATEST_BUG = "Tansu's ListOffsets(latest) is the last batch's base offset + 1"


def make_topic(broker: str, name: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": broker})
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def record(i: int) -> tuple[bytes, bytes, list[tuple[str, bytes | None]]]:
    key = b"key-%d" % (i % 997)
    value = b"value-%06d-" % i + bytes([i % 251]) * (i % 50)
    headers: list[tuple[str, bytes | None]] = [("seq", b"%d" % i)]
    if i % 3 == 0:
        headers.append(("empty", None))
    return key, value, headers


def consume_exactly(broker: str, tps: list[TopicPartition], expected: int, timeout_s: float = 30.0,
                    **config: object) -> list:
    consumer = KafkaConsumer({"bootstrap.servers": broker, "auto.offset.reset": "earliest", **config})
    try:
        consumer.assign(tps)
        out: list = []
        deadline = time.monotonic() + timeout_s
        while len(out) < expected and time.monotonic() < deadline:
            out.extend(consumer.poll(500))
        # Nothing more arrives after the expected records.
        out.extend(consumer.poll(300))
        return out
    finally:
        consumer.close()


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_produce_consume_10k_keyed(broker: str, topic_name: str, codec: str) -> None:
    make_topic(broker, topic_name)
    acked: list = []
    producer = KafkaProducer(
        {"bootstrap.servers": broker, "acks": "all", "compression.type": codec, "linger.ms": 5},
    )
    try:
        futures = []
        for i in range(N):
            key, value, headers = record(i)
            futures.append(producer.send(topic_name, value, key=key, headers=headers, timestamp=1_700_000_000_000 + i))
        producer.flush(30)
        acked = [f.result(0) for f in futures]
    finally:
        producer.close(10)

    # Keyed records land on Kafka's murmur2 partition; offsets are dense per partition in send order.
    expected_offsets: dict[int, int] = {}
    for i, md in enumerate(acked):
        key, _, _ = record(i)
        assert md.topic == topic_name
        assert md.partition == partition_for_key(key, PARTITIONS)
        assert md.offset == expected_offsets.get(md.partition, 0)
        expected_offsets[md.partition] = md.offset + 1
        assert md.timestamp == 1_700_000_000_000 + i

    got = consume_exactly(broker, [TopicPartition(topic_name, p) for p in range(PARTITIONS)], N)
    assert len(got) == N
    by_partition: dict[int, list] = {}
    for r in got:
        by_partition.setdefault(r.partition, []).append(r)
    sent_by_partition: dict[int, list[int]] = {}
    for i, md in enumerate(acked):
        sent_by_partition.setdefault(md.partition, []).append(i)
    assert set(by_partition) == set(sent_by_partition)
    for p, recs in by_partition.items():
        assert [r.offset for r in recs] == list(range(len(recs)))
        for r, i in zip(recs, sent_by_partition[p], strict=True):
            key, value, headers = record(i)
            assert (r.key, r.value, r.headers) == (key, value, headers)
            assert r.timestamp == 1_700_000_000_000 + i
            assert r.timestamp_type == 0
            assert r.topic == topic_name


def test_null_keys_sticky_and_callbacks(broker: str, topic_name: str) -> None:
    make_topic(broker, topic_name)
    seen: list = []
    producer = KafkaProducer({"bootstrap.servers": broker, "batch.size": 1024, "linger.ms": 0})
    try:
        for i in range(300):
            producer.send(topic_name, b"v%d" % i, callback=lambda md, err, i=i: seen.append((i, md, err)))
        producer.flush(30)
    finally:
        producer.close(10)
    assert len(seen) == 300 and all(err is None for _, _, err in seen)
    # Sticky partitioning switches after batch.size bytes, so several partitions are used.
    assert len({md.partition for _, md, _ in seen}) > 1
    got = consume_exactly(broker, [TopicPartition(topic_name, p) for p in range(PARTITIONS)], 300)
    assert sorted(r.value for r in got) == sorted(b"v%d" % i for i in range(300))
    assert all(r.key is None for r in got)


def test_explicit_partition_acks_1_and_seek(broker: str, broker_kind: str, topic_name: str) -> None:
    make_topic(broker, topic_name)
    producer = KafkaProducer({"bootstrap.servers": broker, "acks": "1"})
    try:
        futures = [producer.send(topic_name, b"m%d" % i, partition=2) for i in range(50)]
        producer.flush(30)
        assert [f.result(0).offset for f in futures] == list(range(50))
    finally:
        producer.close(10)
    tp = TopicPartition(topic_name, 2)
    consumer = KafkaConsumer({"bootstrap.servers": broker, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([tp])
        assert consumer.beginning_offsets([tp]) == {tp: 0}
        if broker_kind != "tansu":  # TANSU_LATEST_BUG
            assert consumer.end_offsets([tp]) == {tp: 50}
        consumer.seek(tp, 40)
        got = []
        deadline = time.monotonic() + 15
        while len(got) < 10 and time.monotonic() < deadline:
            got.extend(consumer.poll(500))
        assert [r.value for r in got] == [b"m%d" % i for i in range(40, 50)]
        assert consumer.position(tp) == 50
        consumer.seek_to_beginning([tp])
        assert consumer.position(tp) == 0
        if broker_kind != "tansu":  # TANSU_LATEST_BUG
            consumer.seek_to_end([tp])
            assert consumer.position(tp) == 50
        consumer.pause([tp])
        assert consumer.poll(200) == []
        consumer.resume([tp])
        consumer.seek(tp, 49)
        deadline = time.monotonic() + 15
        last: list = []
        while not last and time.monotonic() < deadline:
            last = consumer.poll(500)
        assert [r.offset for r in last] == [49]
    finally:
        consumer.close()


def test_auto_offset_reset_latest_and_out_of_range(broker: str, broker_kind: str, topic_name: str) -> None:
    if broker_kind == "tansu":
        pytest.skip(TANSU_LATEST_BUG)
    make_topic(broker, topic_name, partitions=1)
    tp = TopicPartition(topic_name, 0)
    producer = KafkaProducer({"bootstrap.servers": broker})
    try:
        for i in range(5):
            producer.send(topic_name, b"a%d" % i, partition=0)
        producer.flush(30)
        consumer = KafkaConsumer({"bootstrap.servers": broker, "auto.offset.reset": "latest"})
        try:
            consumer.assign([tp])
            assert consumer.position(tp) == 5
            producer.send(topic_name, b"after", partition=0).result(30)
            got: list = []
            deadline = time.monotonic() + 15
            while not got and time.monotonic() < deadline:
                got = consumer.poll(500)
            assert [(r.offset, r.value) for r in got] == [(5, b"after")]
            # An offset past the end is OFFSET_OUT_OF_RANGE: reset by auto.offset.reset (latest).
            consumer.seek(tp, 1000)
            assert consumer.poll(1500) == []
            assert consumer.position(tp) == 6
        finally:
            consumer.close()
    finally:
        producer.close(10)
