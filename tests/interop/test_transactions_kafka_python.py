"""Transactions with kafka-python's transactional KafkaProducer against an in-process kafkapy broker: commit and
abort seen by read_committed / read_uncommitted consumers in order, fencing by a second producer with the same
transactional.id, and send_offsets_to_transaction."""

from __future__ import annotations

import time

import pytest

kafka = pytest.importorskip("kafka")
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402
from txn_support import start_txn_broker  # noqa: E402


@pytest.fixture(scope="module")
def txn_broker(tmp_path_factory):
    broker = start_txn_broker(str(tmp_path_factory.mktemp("kafkapy-txn-kp")))
    try:
        yield broker
    finally:
        broker.server.shutdown()


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def read(bootstrap: str, topic: str, isolation: str, expected: int, timeout_s: float = 15.0) -> list[bytes]:
    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                      auto_offset_reset="earliest", consumer_timeout_ms=1000)
    c.assign([TopicPartition(topic, 0)])
    c.seek_to_beginning()
    out: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for m in c:
            out.append(m.value)
        if len(out) >= expected:
            break
    c.close()
    return out


def producer(bootstrap: str, txn_id: str) -> KafkaProducer:
    p = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id, linger_ms=5)
    p.init_transactions()
    return p


def test_commit_and_abort(txn_broker) -> None:
    bootstrap = txn_broker.bootstrap
    topic = "kp-txn"
    create_topic(bootstrap, topic)
    p = producer(bootstrap, "kp-txn-1")
    committed, everything = [], []
    for round_ in range(4):
        p.begin_transaction()
        values = [b"kp%d-%d" % (round_, i) for i in range(20)]
        for v in values:
            p.send(topic, v)
        p.flush()
        everything.extend(values)
        if round_ % 2 == 0:
            p.commit_transaction()
            committed.extend(values)
        else:
            p.abort_transaction()
    p.close()
    assert read(bootstrap, topic, "read_committed", len(committed)) == committed
    assert read(bootstrap, topic, "read_uncommitted", len(everything)) == everything


def test_fencing(txn_broker) -> None:
    bootstrap = txn_broker.bootstrap
    topic = "kp-fence"
    create_topic(bootstrap, topic)
    zombie = producer(bootstrap, "kp-fenced")
    zombie.begin_transaction()
    zombie.send(topic, b"zombie")
    zombie.flush()
    fresh = producer(bootstrap, "kp-fenced")
    fresh.begin_transaction()
    fresh.send(topic, b"fresh")
    fresh.commit_transaction()
    with pytest.raises(kafka.errors.KafkaError):
        zombie.send(topic, b"late")
        zombie.commit_transaction()
    fresh.close()
    zombie.close(timeout=1)
    assert read(bootstrap, topic, "read_committed", 1) == [b"fresh"]


def test_send_offsets_to_transaction(txn_broker) -> None:
    bootstrap = txn_broker.bootstrap
    src, dst, group = "kp-src", "kp-dst", "kp-ctp"
    create_topic(bootstrap, src)
    create_topic(bootstrap, dst)
    feed = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(5):
        feed.send(src, b"in-%d" % i)
    feed.close()
    p = producer(bootstrap, "kp-ctp")
    p.begin_transaction()
    for i in range(5):
        p.send(dst, b"out-%d" % i)
    p.send_offsets_to_transaction({TopicPartition(src, 0): kafka.OffsetAndMetadata(5, "", -1)}, group)
    p.commit_transaction()
    p.close()
    # EndTxn returns once PrepareCommit is logged; the COMMIT marker that publishes the offsets follows.
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        deadline = time.monotonic() + 10
        offsets = admin.list_group_offsets(group).get(group, {})
        while TopicPartition(src, 0) not in offsets and time.monotonic() < deadline:
            time.sleep(0.1)
            offsets = admin.list_group_offsets(group).get(group, {})
    finally:
        admin.close()
    assert offsets[TopicPartition(src, 0)].offset == 5
    assert read(bootstrap, dst, "read_committed", 5) == [b"out-%d" % i for i in range(5)]
