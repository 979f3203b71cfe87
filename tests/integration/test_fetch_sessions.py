"""Incremental fetch sessions (KIP-227) against an in-process broker: Fetch v12 on the wire (session id and
epochs, answers carrying only changed partitions, forgotten topics, session errors, a long poll woken by an
append to one partition of the session), and kafka-python's consumer, which fetches in a session."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kafkapy.common.errors import ErrorCode
from kafkapy.protocol.messages import FetchRequest
from kafkapy.record.memory_records import MemoryRecords

TOPIC = "sessions"
VERSION = 12


@pytest.fixture(scope="module")
def topic(kafkapy_broker) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": kafkapy_broker.bootstrap})
    admin.create_topics([NewTopic(TOPIC, 3, 1), NewTopic("kp-sessions", 4, 1)])[TOPIC].result(30)
    return TOPIC


def produce(bootstrap: str, topic: str, partition: int, values: list[bytes]) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for v in values:
        p.produce(topic, value=v, partition=partition)
    assert p.flush(30) == 0


def fetch(session_id: int, epoch: int, offsets: dict[int, int], forget: list[int] | None = None,
          max_wait_ms: int = 0) -> FetchRequest:
    return FetchRequest(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                        session_id=session_id, session_epoch=epoch, topics=[FetchRequest.FetchTopic(
                            topic=TOPIC, partitions=[FetchRequest.FetchPartition(
                                partition=p, fetch_offset=o, partition_max_bytes=1 << 20) for p, o in offsets.items()])]
                        if offsets else [],
                        forgotten_topics_data=[FetchRequest.ForgottenTopic(topic=TOPIC, partitions=forget)]
                        if forget else [])


def answered(response: Any) -> dict[int, tuple[int, int, list[bytes]]]:
    """{partition: (error, HW, values)} of a FetchResponse."""
    out = {}
    for t in response.responses:
        assert t.topic == TOPIC
        for p in t.partitions:
            values = [r.value for b in MemoryRecords(bytes(p.records or b"")).batches() for r in b.records()]
            out[p.partition_index] = (p.error_code, p.high_watermark, values)
    return out


def test_incremental_session_on_the_wire(kafkapy_broker, topic, wire_client) -> None:
    bootstrap = kafkapy_broker.bootstrap
    produce(bootstrap, topic, 0, [b"a0", b"a1"])
    produce(bootstrap, topic, 1, [b"b0"])
    cache = kafkapy_broker.server.replica_manager.fetch_session_cache
    client = wire_client(kafkapy_broker.port)

    full = client.request(fetch(0, 0, {0: 0, 1: 0, 2: 0}), VERSION)
    assert full.error_code == 0 and full.session_id != 0
    sid = full.session_id
    assert answered(full) == {0: (0, 2, [b"a0", b"a1"]), 1: (0, 1, [b"b0"]), 2: (0, 0, [])}
    session = cache.get(sid)
    assert session is not None and not session.privileged and session.size == 3

    # Epoch 1: offsets moved for 0 and 1, nothing new anywhere: an empty answer in the same session.
    nothing = client.request(fetch(sid, 1, {0: 2, 1: 1}), VERSION)
    assert (nothing.error_code, nothing.session_id, answered(nothing)) == (0, sid, {})

    # An append to partition 2 only: the next incremental fetch (naming nothing) carries partition 2 alone.
    produce(bootstrap, topic, 2, [b"c0", b"c1", b"c2"])
    news = client.request(fetch(sid, 2, {}), VERSION)
    assert answered(news) == {2: (0, 3, [b"c0", b"c1", b"c2"])}

    # A long poll naming nothing is woken by an append to one partition of the session.
    client.send(fetch(sid, 3, {2: 3}, max_wait_ms=10_000), VERSION)
    time.sleep(0.2)
    start = time.monotonic()
    produce(bootstrap, topic, 1, [b"b1"])
    from kafkapy.protocol.header import decode_response

    _cid, woken = decode_response(client.recv_frame(), FetchRequest.API_KEY, VERSION)
    assert time.monotonic() - start < 5
    assert answered(woken) == {1: (0, 2, [b"b1"])}

    # Forgetting partition 0: it leaves the session.
    forgot = client.request(fetch(sid, 4, {1: 2}, forget=[0]), VERSION)
    assert forgot.error_code == 0 and sorted(session.partitions) == [(TOPIC, 1), (TOPIC, 2)]

    # Session errors: a wrong epoch, an unknown id.
    wrong_epoch = client.request(fetch(sid, 9, {}), VERSION)
    assert (wrong_epoch.error_code, wrong_epoch.responses) == (ErrorCode.INVALID_FETCH_SESSION_EPOCH, [])
    unknown = client.request(fetch(sid + 1 if sid < 2**31 - 1 else 1, 1, {}), VERSION)
    assert unknown.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND

    # Epoch -1 closes the session and is answered sessionless, in full.
    final = client.request(fetch(sid, -1, {0: 0}), VERSION)
    assert final.session_id == 0 and answered(final) == {0: (0, 2, [b"a0", b"a1"])}
    assert cache.get(sid) is None


def test_kafka_python_consumer_fetches_in_a_session(kafkapy_broker, topic) -> None:
    kafka = pytest.importorskip("kafka")
    bootstrap = kafkapy_broker.bootstrap
    produce(bootstrap, "kp-sessions", 3, [b"x%d" % i for i in range(50)])
    cache = kafkapy_broker.server.replica_manager.fetch_session_cache
    consumer = kafka.KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None,
                                   fetch_max_wait_ms=100)
    tps = [kafka.TopicPartition("kp-sessions", p) for p in range(4)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    try:
        got: list[tuple[int, int, bytes]] = []
        deadline = time.monotonic() + 30
        while len(got) < 50 and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                got.extend((r.partition, r.offset, r.value) for r in records)
        assert got == [(3, i, b"x%d" % i) for i in range(50)]
        sessions = [cache.get(sid) for sid in list(cache._sessions)]
        mine = [s for s in sessions if s is not None and {tp.topic for tp in s.partitions} == {"kp-sessions"}]
        assert len(mine) == 1 and mine[0].size == 4
        # More records to an idle partition reach the consumer through its incremental session.
        produce(bootstrap, "kp-sessions", 1, [b"late"])
        late: list[tuple[int, int, bytes]] = []
        deadline = time.monotonic() + 30
        while not late and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                late.extend((r.partition, r.offset, r.value) for r in records)
        assert late == [(1, 0, b"late")]
        assert cache.get(mine[0].id) is mine[0] and mine[0].epoch >= 2  # an incremental fetch in the same session
    finally:
        consumer.close()
