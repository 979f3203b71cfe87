"""Replication on a real cluster (ZooKeeper + three kafkapy broker processes), driven by confluent-kafka:
SIGKILL of a partition leader in the middle of an acks=all, min.insync.replicas=2 produce of 20,000 keyed
records loses nothing acknowledged and duplicates nothing (every acked record is read back once, in order
per partition, from the new leaders), a consumer group carries on through the failure, and the killed
broker, restarted, truncates to the leaders' epoch boundaries, rejoins the ISR and holds byte-identical
segments up to the HW."""

from __future__ import annotations

import os
import struct
import threading
import time
from collections import defaultdict

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

TOPIC = "failover"
PARTITIONS = 3
RECORDS = 20_000
KILL_AFTER = 5_000


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3)


def _batches_below(path_prefix: str, end_offset: int) -> bytes:
    """The segment bytes of a partition dir holding the batches whose last offset is below end_offset."""
    out = bytearray()
    for name in sorted(f for f in os.listdir(path_prefix) if f.endswith(".log")):
        with open(os.path.join(path_prefix, name), "rb") as f:
            data = f.read()
        pos = 0
        while pos + 27 <= len(data):
            base, size = struct.unpack_from(">qi", data, pos)
            if size <= 0 or pos + 12 + size > len(data):
                break
            if base + struct.unpack_from(">i", data, pos + 23)[0] >= end_offset:
                return bytes(out)
            out += data[pos:pos + 12 + size]
            pos += 12 + size
    return bytes(out)


def _epochs(path_prefix: str) -> list[str]:
    with open(os.path.join(path_prefix, "leader-epoch-checkpoint")) as f:
        return f.read().splitlines()[2:]


def _zk_states(cluster) -> dict[int, dict]:
    """The partition states in ZooKeeper (the controller's truth; brokers' metadata may lag a moment)."""
    return {p: cluster.partition_state(TOPIC, p) for p in range(PARTITIONS)}


def _high_watermarks(bootstrap: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "hw-probe", "enable.auto.commit": False})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=10)[1] for p in range(PARTITIONS)}
    finally:
        consumer.close()


def test_leader_sigkill_during_acks_all_produce_loses_nothing(cluster) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3, config={"min.insync.replicas": "2"})])
    futures[TOPIC].result(30)
    cluster.wait_for(lambda: all(s and len(s["isr"]) == 3 and s["leader"] >= 0 for s in _zk_states(cluster).values())
                     and all(len(d) == PARTITIONS for d in [cluster.describe(TOPIC)]),
                     what="the topic's leaders and full ISRs")
    leaders = {p: s["leader"] for p, s in _zk_states(cluster).items()}
    controller = cluster.controller_id()
    victim = next((b for b in leaders.values() if b != controller), leaders[0])

    # A consumer group reads along the whole time.
    group_seen: dict[int, list[bytes]] = defaultdict(list)
    stop_group = threading.Event()
    group_errors: list[str] = []

    def consume_group() -> None:
        consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "failover-group",
                             "auto.offset.reset": "earliest", "enable.auto.commit": True,
                             "auto.commit.interval.ms": 500, "session.timeout.ms": 10000})
        consumer.subscribe([TOPIC])
        try:
            while not stop_group.is_set():
                msg = consumer.poll(0.2)
                if msg is None:
                    continue
                if msg.error():
                    group_errors.append(str(msg.error()))
                    continue
                group_seen[msg.partition()].append(msg.value())
        finally:
            consumer.close()

    group_thread = threading.Thread(target=consume_group, daemon=True)
    group_thread.start()

    acked: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
    failed: list[str] = []
    killed_at: list[float] = []

    def on_delivery(err, msg) -> None:
        if err is not None:
            failed.append(str(err))
        else:
            acked[msg.partition()].append((msg.offset(), msg.value()))

    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True,
                         "linger.ms": 5, "message.timeout.ms": 120000})
    for i in range(RECORDS):
        while True:
            try:
                producer.produce(TOPIC, key=b"key-%d" % (i % 997), value=b"value-%06d" % i, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
        if i == KILL_AFTER + 2_000:
            # Some records acknowledged, more in flight: the leader dies under the producer.
            while sum(len(v) for v in acked.values()) < KILL_AFTER:
                producer.poll(0.01)
            cluster.brokers[victim].kill()
            killed_at.append(time.monotonic())
    assert producer.flush(180) == 0
    assert killed_at, "the leader was never killed"
    moved = _zk_states(cluster)
    assert all(moved[p]["leader"] not in (victim, -1) for p, b in leaders.items() if b == victim)
    assert failed == []
    acked_total = sum(len(v) for v in acked.values())
    assert acked_total == RECORDS

    # Every acknowledged record is in the new leaders' logs exactly once, in offset order per partition.
    survivors = ",".join(b.bootstrap for b in cluster.brokers.values() if b.alive)
    reader = Consumer({"bootstrap.servers": survivors, "group.id": "failover-reader", "enable.auto.commit": False,
                       "auto.offset.reset": "earliest"})
    hws = _high_watermarks(survivors)
    reader.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    read: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
    deadline = time.monotonic() + 60
    while sum(len(v) for v in read.values()) < sum(hws.values()) and time.monotonic() < deadline:
        msg = reader.poll(0.5)
        if msg is not None and not msg.error():
            read[msg.partition()].append((msg.offset(), msg.value()))
    reader.close()
    for p in range(PARTITIONS):
        assert [v for _o, v in read[p]] == [v for _o, v in sorted(acked[p])], f"partition {p}"
        assert [o for o, _v in read[p]] == [o for o, _v in sorted(acked[p])]

    # The consumer group carried on through the failure and saw every record.
    cluster.wait_for(lambda: sum(len(set(v)) for v in group_seen.values()) >= RECORDS, timeout_s=60,
                     what="the consumer group to read everything")
    stop_group.set()
    group_thread.join(30)
    for p in range(PARTITIONS):
        assert set(group_seen[p]) == {v for _o, v in acked[p]}

    # The killed broker restarts as a follower: it truncates to the leaders' epoch boundaries, catches up,
    # rejoins every ISR, and its segments match the leaders' byte for byte up to the HW.
    cluster.brokers[victim].start()
    cluster.wait_for(lambda: all(len(s["isr"]) == 3 for s in _zk_states(cluster).values()), timeout_s=60,
                     what="the restarted broker back in every ISR")
    hws = _high_watermarks(cluster.bootstrap)
    new_leaders = {p: s["leader"] for p, s in _zk_states(cluster).items()}
    for p in range(PARTITIONS):
        leader_dir = os.path.join(cluster.brokers[new_leaders[p]].log_dir, f"{TOPIC}-{p}")
        expected = _batches_below(leader_dir, hws[p])
        assert len(expected) > 0
        for b in cluster.brokers.values():
            replica_dir = os.path.join(b.log_dir, f"{TOPIC}-{p}")
            # The follower appends a batch before it checkpoints the batch's new leader epoch: wait for both.
            cluster.wait_for(lambda d=replica_dir, hw=hws[p], e=expected, ld=leader_dir:
                             _batches_below(d, hw) == e and _epochs(d) == _epochs(ld), timeout_s=30,
                             what=f"broker {b.broker_id}'s copy of partition {p} and its leader epochs")


def test_nothing_acked_is_lost_while_one_isr_replica_survives(cluster) -> None:
    topic = "last-replica"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 3, config={"min.insync.replicas": "2"})])[topic].result(30)

    def state() -> dict:
        return cluster.partition_state(topic, 0) or {}

    cluster.wait_for(lambda: len(state().get("isr", [])) == 3, what="a full ISR")
    acked: list[tuple[int, bytes]] = []

    def produce(start: int, n: int) -> None:
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True,
                             "message.timeout.ms": 60000})
        for i in range(start, start + n):
            producer.produce(topic, value=b"r%05d" % i, partition=0,
                             on_delivery=lambda err, msg: err is None and acked.append((msg.offset(), msg.value())))
        assert producer.flush(90) == 0

    produce(0, 1000)
    # Two leaders die one after the other; each time the controller elects the next from the ISR.
    killed = []
    for _ in range(2):
        leader = state()["leader"]
        cluster.brokers[leader].kill()
        killed.append(leader)
        cluster.wait_for(lambda: state().get("leader") not in (*killed, -1, None), timeout_s=30,
                         what="a new leader from the ISR")
        if len(killed) == 1:
            produce(1000, 1000)
    survivor = state()["leader"]
    assert state()["isr"] == [survivor]
    assert len(acked) == 2000
    reader = Consumer({"bootstrap.servers": cluster.brokers[survivor].bootstrap, "group.id": "last-reader",
                       "enable.auto.commit": False})
    reader.assign([TopicPartition(topic, 0, 0)])
    read: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + 60
    while len(read) < 2000 and time.monotonic() < deadline:
        msg = reader.poll(0.5)
        if msg is not None and not msg.error():
            read.append((msg.offset(), msg.value()))
    reader.close()
    assert read == sorted(acked)
    for broker_id in killed:
        cluster.brokers[broker_id].start()
    cluster.wait_for(lambda: len(state().get("isr", [])) == 3, timeout_s=60, what="the ISR after the restarts")
