"""aiokafka (asyncio client) against an in-process kafkapy broker.

One broker per module (group.initial.rebalance.delay.ms=0 so group joins take milliseconds); each test
uses its own topics and groups. Produce with acks=all under each codec aiokafka supports, read back
exactly with manual assignment (payloads, keys, headers, offsets, order, and the codec of the stored
batches), consumer-group commit/resume, and the admin client's topic, config, group and records calls.
"""

from __future__ import annotations

import asyncio
import glob
import logging
import os
import struct
import uuid
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

import pytest

aiokafka = pytest.importorskip("aiokafka")
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # noqa: E402
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic, RecordsToDelete  # noqa: E402
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType  # noqa: E402
from aiokafka.structs import OffsetAndMetadata  # noqa: E402

DEADLINE_S = 30
T = TypeVar("T")
CODEC_IDS = {None: 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

BROKER_OVERRIDES = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "3",
    "offsets.topic.replication.factor": "1",
    "num.partitions": "1",
}


class Broker:
    def __init__(self, server: Any, log_dir: str) -> None:
        self.server = server
        self.log_dir = log_dir
        self.bootstrap = f"127.0.0.1:{server.bound_port()}"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    log_dir = str(tmp_path_factory.mktemp("aiokafka"))
    props = {"listeners": "PLAINTEXT://127.0.0.1:0", "num.network.threads": "2", "num.io.threads": "4",
             "log.dirs": log_dir, **BROKER_OVERRIDES}
    server = KafkaServer(KafkaConfig.from_properties(None, props))
    server.startup()
    try:
        yield Broker(server, log_dir)
    finally:
        server.shutdown()


@pytest.fixture(autouse=True)
def no_broker_warnings(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Nothing aiokafka sends makes the broker warn (a rejected version, an undecodable body, a handler error)."""
    caplog.set_level(logging.WARNING)
    yield
    warned = [f"{r.name}: {r.getMessage()}" for r in caplog.records
              if r.name.startswith("kafka.") and r.levelno >= logging.WARNING]
    assert warned == []


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, DEADLINE_S))


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def stored_codecs(log_dir: str, topic: str, partition: int) -> list[int]:
    """The compression codec of every record batch in the partition's log files, read from disk
    (v2 batch header: baseOffset int64, length int32, leaderEpoch int32, magic int8, crc int32, attributes int16)."""
    codecs = []
    for path in sorted(glob.glob(os.path.join(log_dir, f"{topic}-{partition}", "*.log"))):
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos + 23 <= len(data):
            (length,) = struct.unpack_from(">i", data, pos + 8)
            assert data[pos + 16] == 2
            (attributes,) = struct.unpack_from(">h", data, pos + 21)
            codecs.append(attributes & 0x7)
            pos += 12 + length
    return codecs


def record_for(i: int) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]:
    key = None if i % 50 == 7 else b"key-%d" % i
    value = None if i % 40 == 3 else (b"value-%d|" % i) * (1 + i % 9)
    headers = [] if i % 3 == 0 else [("seq", b"%d" % i), ("empty", b""), ("seq", b"dup")][: 1 + i % 3]
    return key, value, headers


async def read_exactly(consumer: AIOKafkaConsumer, n: int) -> list[Any]:
    got: list[Any] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE_S
    while len(got) < n and loop.time() < deadline:
        for records in (await consumer.getmany(timeout_ms=500, max_records=1000)).values():
            got.extend(records)
    return got


@pytest.mark.parametrize("codec", [None, "gzip", "snappy", "lz4", "zstd"])
def test_produce_acks_all_each_codec_and_assigned_read_back(broker: Broker, codec: str | None) -> None:
    topic = unique(f"aio-{codec or 'none'}")
    n = 400

    async def scenario() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic, 2, 1)])
        finally:
            await admin.close()
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type=codec,
                                    linger_ms=5, max_batch_size=8192)
        await producer.start()
        try:
            futures = []
            for i in range(n):
                key, value, headers = record_for(i)
                fut = await producer.send(topic, value=value, key=key, headers=headers, partition=i % 2,
                                          timestamp_ms=1_700_000_000_000 + i)
                futures.append((i, fut))
            acked: dict[tuple[int, int], int] = {}
            for i, fut in futures:
                md = await fut
                # Not md.timestamp: aiokafka 0.14 gives every record of a CreateTime batch the first one's.
                assert (md.topic, md.partition, md.timestamp_type) == (topic, i % 2, 0)
                acked[(md.partition, md.offset)] = i
        finally:
            await producer.stop()
        # Per partition, offsets follow send order with no gaps.
        for p in (0, 1):
            sent = [i for i in range(n) if i % 2 == p]
            assert [acked[(p, off)] for off in range(len(sent))] == sent

        consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, enable_auto_commit=False,
                                    group_id=None, fetch_max_wait_ms=100)
        await consumer.start()
        try:
            tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            got = await read_exactly(consumer, n)
            assert await consumer.end_offsets(tps) == {tps[0]: n // 2, tps[1]: n // 2}
            assert await consumer.beginning_offsets(tps) == {tps[0]: 0, tps[1]: 0}
            found = await consumer.offsets_for_times({tps[1]: 1_700_000_000_000 + 101})
            assert found[tps[1]].offset == 50 and found[tps[1]].timestamp == 1_700_000_000_000 + 101
        finally:
            await consumer.stop()
        assert len(got) == n
        for p in (0, 1):
            mine = [r for r in got if r.partition == p]
            assert [r.offset for r in mine] == list(range(n // 2))
        for r in got:
            i = acked[(r.partition, r.offset)]
            key, value, headers = record_for(i)
            assert (r.key, r.value, list(r.headers), r.timestamp) == (key, value, headers,
                                                                     1_700_000_000_000 + i), r.offset

    run(scenario())
    for p in (0, 1):
        codecs = stored_codecs(broker.log_dir, topic, p)
        assert len(codecs) > 1 and set(codecs) == {CODEC_IDS[codec]}


def test_idempotent_producer(broker: Broker) -> None:
    topic = unique("aio-idem")

    async def scenario() -> list[Any]:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, enable_idempotence=True, linger_ms=2)
        await producer.start()
        try:
            await producer.client._wait_on_metadata(topic)  # auto-created with num.partitions=1
            futures = [await producer.send(topic, value=b"idem-%d" % i) for i in range(200)]
            offsets = [(await f).offset for f in futures]
        finally:
            await producer.stop()
        assert offsets == list(range(200))
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                    group_id=None, fetch_max_wait_ms=100)
        await consumer.start()
        try:
            return await read_exactly(consumer, 200)
        finally:
            await consumer.stop()

    got = run(scenario())
    assert [(r.offset, r.value) for r in got] == [(i, b"idem-%d" % i) for i in range(200)]


def test_consumer_group_commit_and_resume(broker: Broker) -> None:
    topic, group = unique("aio-grp"), unique("aio-group")

    async def produce(start: int, stop: int) -> dict[tuple[int, int], bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", linger_ms=2)
        await producer.start()
        try:
            futures = [(i, await producer.send(topic, value=b"g-%d" % i, key=b"k-%d" % i))
                       for i in range(start, stop)]
            return {((md := await f).partition, md.offset): b"g-%d" % i for i, f in futures}
        finally:
            await producer.stop()

    def consumer() -> AIOKafkaConsumer:
        return AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group,
                                enable_auto_commit=False, auto_offset_reset="earliest", fetch_max_wait_ms=100,
                                session_timeout_ms=6000, heartbeat_interval_ms=200)

    async def scenario() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic, 3, 1)])
            first = await produce(0, 90)
            tps = {TopicPartition(topic, p) for p in range(3)}
            c1 = consumer()
            await c1.start()
            try:
                got = await read_exactly(c1, 90)
                assert c1.assignment() == tps
                assert {(r.partition, r.offset): r.value for r in got} == first
                # Commit 2 short of the end of every partition, with metadata.
                ends = {TopicPartition(topic, p): max(o for q, o in first if q == p) + 1 for p in range(3)}
                await c1.commit({tp: OffsetAndMetadata(end - 2, f"meta-{tp.partition}")
                                 for tp, end in ends.items()})
                for tp, end in ends.items():
                    assert await c1.committed(tp) == end - 2
            finally:
                await c1.stop()

            listed = await admin.list_consumer_group_offsets(group)
            assert {tp: (om.offset, om.metadata) for tp, om in listed.items()} == {
                tp: (end - 2, f"meta-{tp.partition}") for tp, end in ends.items()}

            second = await produce(90, 120)
            c2 = consumer()
            await c2.start()
            try:
                got = await read_exactly(c2, 6 + 30)
                await c2.commit()
                expected = {k: v for k, v in first.items() if k[1] >= ends[TopicPartition(topic, k[0])] - 2}
                expected.update(second)
                assert {(r.partition, r.offset): r.value for r in got} == expected
                assert len(got) == len(expected) == 36
                for p in range(3):
                    assert await c2.committed(TopicPartition(topic, p)) == max(o for q, o in expected if q == p) + 1
                groups = await admin.list_consumer_groups()
                assert (group, "consumer") in [(g[0], g[1]) for g in groups]
                described = await admin.describe_consumer_groups([group])
                grp = described[0].groups[0]
                assert (grp[0], grp[1], grp[2], grp[3], grp[4]) == (0, group, "Stable", "consumer", "roundrobin")
                assert len(grp[5]) == 1
            finally:
                await c2.stop()
        finally:
            await admin.close()

    run(scenario())


def test_admin_topics_configs_partitions_records(broker: Broker) -> None:
    topic = unique("aio-admin")

    async def scenario() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
        await admin.start()
        try:
            resp = await admin.create_topics([NewTopic(topic, 2, 1, topic_configs={"retention.ms": "123456"})])
            assert [(t[0], t[1]) for t in resp.topic_errors] == [(topic, 0)]
            again = await admin.create_topics([NewTopic(topic, 2, 1)])
            assert [(t[0], t[1]) for t in again.topic_errors] == [(topic, 36)]  # TOPIC_ALREADY_EXISTS
            assert topic in await admin.list_topics()

            described = await admin.describe_topics([topic])
            assert described[0]["topic"] == topic and described[0]["error_code"] == 0
            assert sorted((p["partition"], p["leader"], p["replicas"], p["isr"])
                          for p in described[0]["partitions"]) == [(0, 0, [0], [0]), (1, 0, [0], [0])]
            cluster = await admin.describe_cluster()
            assert cluster["controller_id"] == 0 and [b["node_id"] for b in cluster["brokers"]] == [0]

            configs = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
            entries = {e[0]: e[1] for e in configs[0].resources[0][4]}
            assert entries["retention.ms"] == "123456" and entries["cleanup.policy"] == "delete"
            await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                      {"retention.ms": "654321"})])
            configs = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
            assert {e[0]: e[1] for e in configs[0].resources[0][4]}["retention.ms"] == "654321"

            await admin.create_partitions({topic: NewPartitions(total_count=4)})
            described = await admin.describe_topics([topic])
            assert sorted(p["partition"] for p in described[0]["partitions"]) == [0, 1, 2, 3]

            producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
            await producer.start()
            try:
                for i in range(10):
                    await producer.send_and_wait(topic, b"r-%d" % i, partition=3)
            finally:
                await producer.stop()
            tp = TopicPartition(topic, 3)
            assert await admin.delete_records({tp: RecordsToDelete(6)}) == {tp: 6}
            consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, fetch_max_wait_ms=100,
                                        auto_offset_reset="earliest")
            await consumer.start()
            try:
                consumer.assign([tp])
                assert await consumer.beginning_offsets([tp]) == {tp: 6}
                got = await read_exactly(consumer, 4)
                assert [(r.offset, r.value) for r in got] == [(i, b"r-%d" % i) for i in range(6, 10)]
            finally:
                await consumer.stop()

            resp = await admin.delete_topics([topic])
            assert [(t[0], t[1]) for t in resp.topic_error_codes] == [(topic, 0)]
            assert topic not in await admin.list_topics()
        finally:
            await admin.close()

    run(scenario())
