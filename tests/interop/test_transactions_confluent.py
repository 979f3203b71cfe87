"""Transactions with confluent-kafka (librdkafka) against an in-process kafkapy broker: commit and abort,
read_committed vs read_uncommitted consumers, zombie fencing by a second producer with the same
transactional.id, and send_offsets_to_transaction (offsets visible on commit only)."""

from __future__ import annotations

import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition  # noqa: E402
from txn_support import consume_all, create_topic, group_offset, start_txn_broker  # noqa: E402


@pytest.fixture(scope="module")
def txn_broker(tmp_path_factory):
    broker = start_txn_broker(str(tmp_path_factory.mktemp("kafkapy-txn")))
    try:
        yield broker
    finally:
        broker.server.shutdown()


def txn_producer(bootstrap: str, txn_id: str, **extra) -> Producer:
    conf = {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5}
    conf.update(extra)
    p = Producer(conf)
    p.init_transactions(30)
    return p


def test_commit_and_abort_read_committed_sees_only_committed(txn_broker) -> None:
    bootstrap = txn_broker.bootstrap
    topic = "txn-ck"
    create_topic(bootstrap, topic, 2)
    p = txn_producer(bootstrap, "ck-txn-1")
    committed, aborted = [], []
    for round_ in range(4):
        p.begin_transaction()
        values = [b"r%d-%d" % (round_, i) for i in range(50)]
        for i, v in enumerate(values):
            p.produce(topic, v, key=b"k%d" % i, partition=i % 2)
        if round_ % 2 == 0:
            p.commit_transaction(30)
            committed.extend(values)
        else:
            p.flush(10)  # abort_transaction purges what is still queued: make the broker see them first
            p.abort_transaction(30)
            aborted.extend(values)
    p.flush(10)
    rc = consume_all(bootstrap, topic, 2, "read_committed", expected=len(committed))
    assert sorted(v for _, _, v in rc) == sorted(committed)
    for part in range(2):  # in order per partition
        vals = [v for p_, _, v in rc if p_ == part]
        assert vals == [v for v in committed if int(v.split(b"-")[1]) % 2 == part]
    ru = consume_all(bootstrap, topic, 2, "read_uncommitted", expected=len(committed) + len(aborted))
    assert sorted(v for _, _, v in ru) == sorted(committed + aborted)


def test_open_transaction_holds_back_read_committed(txn_broker) -> None:
    bootstrap = txn_broker.bootstrap
    topic = "txn-open"
    create_topic(bootstrap, topic)
    p = txn_producer(bootstrap, "ck-txn-open")
    p.begin_transaction()
    p.produce(topic, b"pending")
    p.flush(10)
    assert consume_all(bootstrap, topic, 1, "read_committed", timeout_s=3) == []
    assert [v for *_, v in consume_all(bootstrap, topic, 1, "read_uncommitted", expected=1)] == [b"pending"]
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "lso", "isolation.level": "read_committed"})
    low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)
    c.close()
    assert (low, high) == (0, 0)  # latest = LSO for read_committed
    p.commit_transaction(30)
    assert [v for *_, v in consume_all(bootstrap, topic, 1, "read_committed", expected=1)] == [b"pending"]


def test_second_producer_fences_the_first(txn_broker) -> None:
    bootstrap = txn_broker.bootstrap
    topic = "txn-fence"
    create_topic(bootstrap, topic)
    zombie = txn_producer(bootstrap, "ck-fenced")
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie")
    zombie.flush(10)
    fresh = txn_producer(bootstrap, "ck-fenced")  # aborts the zombie's transaction, bumps the epoch
    fresh.begin_transaction()
    fresh.produce(topic, b"fresh")
    fresh.commit_transaction(30)
    with pytest.raises(KafkaException) as info:
        zombie.produce(topic, b"late")
        zombie.commit_transaction(10)
    err = info.value.args[0]
    assert err.fatal() or err.txn_requires_abort(), err
    assert [v for *_, v in consume_all(bootstrap, topic, 1, "read_committed", expected=1)] == [b"fresh"]


def test_send_offsets_to_transaction_visible_on_commit_only(txn_broker) -> None:
    bootstrap = txn_broker.bootstrap
    src, dst, group = "txn-src", "txn-dst", "ctp-group"
    create_topic(bootstrap, src)
    create_topic(bootstrap, dst)
    feeder = Producer({"bootstrap.servers": bootstrap})
    for i in range(10):
        feeder.produce(src, b"in-%d" % i)
    feeder.flush(10)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe([src])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < 10 and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is not None and not m.error():
            got.append(m)
    assert len(got) == 10
    p = txn_producer(bootstrap, "ck-ctp")
    p.begin_transaction()
    for m in got:
        p.produce(dst, m.value().replace(b"in", b"out"))
    p.send_offsets_to_transaction([TopicPartition(src, 0, 10)], consumer.consumer_group_metadata(), 30)
    p.flush(10)
    # Not visible before the commit (a require_stable OffsetFetch would wait: UNSTABLE_OFFSET_COMMIT).
    assert group_offset(bootstrap, group, src) < 0
    p.abort_transaction(30)
    assert consumer.committed([TopicPartition(src, 0)], timeout=10)[0].offset < 0
    p.begin_transaction()
    for m in got:
        p.produce(dst, m.value().replace(b"in", b"out"))
    p.send_offsets_to_transaction([TopicPartition(src, 0, 10)], consumer.consumer_group_metadata(), 30)
    p.commit_transaction(30)
    assert consumer.committed([TopicPartition(src, 0)], timeout=10)[0].offset == 10
    consumer.close()
    out = consume_all(bootstrap, dst, 1, "read_committed", expected=10)
    assert [v for *_, v in out] == [b"out-%d" % i for i in range(10)]


def test_kafkapy_consumer_read_committed_skips_aborted_and_markers(txn_broker) -> None:
    from kafkapy.client.consumer import KafkaConsumer
    from kafkapy.common.topic_partition import TopicPartition as KTP

    bootstrap = txn_broker.bootstrap
    topic = "txn-kafkapy-consumer"
    create_topic(bootstrap, topic)
    p = txn_producer(bootstrap, "ck-kafkapy-consumer")
    committed = []
    for r in range(6):
        p.begin_transaction()
        values = [b"r%d-%d" % (r, i) for i in range(5)]
        for v in values:
            p.produce(topic, v)
        p.flush(10)
        if r % 2:
            p.abort_transaction(30)
        else:
            p.commit_transaction(30)
            committed += values
    for isolation, expected in (("read_committed", committed), ("read_uncommitted", None)):
        c = KafkaConsumer({"bootstrap.servers": bootstrap, "isolation.level": isolation,
                           "auto.offset.reset": "earliest"})
        try:
            c.assign([KTP(topic, 0)])
            c.seek_to_beginning()
            got: list[bytes] = []
            deadline = time.monotonic() + 15
            while len(got) < (len(expected) if expected is not None else 30) and time.monotonic() < deadline:
                got += [rec.value for rec in c.poll(500)]
        finally:
            c.close()
        if expected is not None:
            assert got == expected
        else:
            assert len(got) == 30 and set(committed) <= set(got)
