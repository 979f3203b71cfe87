"""Consumer groups with real clients against kafkapy: confluent-kafka (librdkafka) and kafka-python.

Two consumers split a 4-partition topic and together read every message once; a consumer resumes
after the group's committed offsets; a SIGKILLed consumer is expelled after session.timeout.ms and its
partitions move; the admin API lists/describes groups and their offsets; offsets survive a restart.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable

import pytest

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
             "offsets.topic.num.partitions": "5", "offsets.topic.replication.factor": "1"}
DEADLINE_S = 60.0
SESSION_MS = 6000
# The SIGKILLed member's own session: its expulsion is awaited, so it is short (6 heartbeats of 500 ms).
KILLED_SESSION_MS = 3000


@pytest.fixture
def broker(broker_factory):
    return broker_factory(overrides=OVERRIDES)


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int, start: int = 0) -> set[tuple]:
    """(partition, value) of every message produced (values name their partition and sequence)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    sent = set()
    for p in range(partitions):
        for i in range(start, start + per_partition):
            value = f"p{p}-m{i}".encode()
            producer.produce(topic, value=value, partition=p)
            sent.add((p, value))
    assert producer.flush(30) == 0
    return sent


def consumer(bootstrap: str, group: str, **extra: object) -> Consumer:
    conf = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
            "enable.auto.commit": False, "session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": 500,
            "topic.metadata.refresh.interval.ms": 1000}
    conf.update(extra)
    return Consumer(conf)


def poll_until(consumers: list[Consumer], done: Callable[[], bool], sink: list | None = None,
               timeout_s: float = DEADLINE_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "timed out"
        for c in consumers:
            msg = c.poll(0.05)
            if msg is not None:
                assert msg.error() is None, msg.error()
                if sink is not None:
                    sink.append((c, msg.partition(), msg.offset(), msg.value()))


def partitions_of(c: Consumer) -> list[int]:
    return sorted(tp.partition for tp in c.assignment())


def test_two_consumers_split_partitions_and_read_everything_once(broker) -> None:
    topic, group = "groups-split", "split-group"
    create_topic(broker.bootstrap, topic, 4)
    a, b = consumer(broker.bootstrap, group), consumer(broker.bootstrap, group)
    try:
        a.subscribe([topic])
        b.subscribe([topic])
        poll_until([a, b], lambda: len(partitions_of(a)) == 2 and len(partitions_of(b)) == 2)
        assert sorted(partitions_of(a) + partitions_of(b)) == [0, 1, 2, 3]
        sent = produce(broker.bootstrap, topic, 4, 100)
        got: list = []
        poll_until([a, b], lambda: len(got) >= len(sent), got)
        time.sleep(0.5)
        poll_until([a, b], lambda: True, got)  # anything extra would be a duplicate
        assert len(got) == len(sent) == 400
        assert {(p, v) for _, p, _, v in got} == sent
        for c, p, _, _ in got:
            assert p in partitions_of(c)
        assert sorted(o for _, p, o, _ in got if p == 0) == list(range(100))
    finally:
        a.close()
        b.close()


def test_commit_close_and_resume_after_committed_offsets(broker) -> None:
    topic, group = "groups-resume", "resume-group"
    create_topic(broker.bootstrap, topic, 2)
    sent = produce(broker.bootstrap, topic, 2, 50)
    first = consumer(broker.bootstrap, group)
    first.subscribe([topic])
    got: list = []
    poll_until([first], lambda: len(got) >= 30, got)
    first.commit(asynchronous=False)
    committed = {tp.partition: tp.offset for tp in first.committed([TopicPartition(topic, p) for p in range(2)], 10)}
    first.close()
    read_first = {(p, v) for _, p, _, v in got}
    # Partitions without a consumed message have no commit (librdkafka's OFFSET_INVALID, -1001).
    assert committed == {p: 1 + max((o for _, q, o, _ in got if q == p), default=-1002) for p in range(2)}

    second = consumer(broker.bootstrap, group)
    second.subscribe([topic])
    rest: list = []
    try:
        poll_until([second], lambda: len(rest) >= len(sent) - len(read_first), rest)
        time.sleep(0.5)
        poll_until([second], lambda: True, rest)
    finally:
        second.close()
    read_second = {(p, v) for _, p, _, v in rest}
    assert len(rest) == len(read_second) == len(sent) - len(read_first)  # nothing re-read
    assert read_first | read_second == sent and not read_first & read_second  # nothing skipped


KILLED_CONSUMER = textwrap.dedent("""
    import sys
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "session.timeout.ms": int(sys.argv[4]),
                  "heartbeat.interval.ms": 500, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    def on_assign(consumer, partitions):
        print("ASSIGNED", ",".join(str(p.partition) for p in partitions), flush=True)
    c.subscribe([sys.argv[3]], on_assign=on_assign)
    while True:
        c.poll(0.1)
""")


def test_killed_consumer_is_expelled_after_session_timeout(broker, tmp_path) -> None:
    topic, group = "groups-kill", "kill-group"
    create_topic(broker.bootstrap, topic, 4)
    out_path = tmp_path / "victim.out"
    with open(out_path, "wb") as out:
        victim = subprocess.Popen([sys.executable, "-c", KILLED_CONSUMER, broker.bootstrap, group, topic,
                                   str(KILLED_SESSION_MS)], stdout=out, stderr=subprocess.STDOUT)
    survivor = consumer(broker.bootstrap, group)
    try:
        deadline = time.monotonic() + DEADLINE_S
        while "ASSIGNED" not in out_path.read_text():
            assert victim.poll() is None and time.monotonic() < deadline, out_path.read_text()
            time.sleep(0.05)
        survivor.subscribe([topic])
        poll_until([survivor], lambda: len(partitions_of(survivor)) == 2)
        victim_lines = [ln for ln in out_path.read_text().splitlines() if ln.startswith("ASSIGNED")]
        assert sorted(int(p) for p in victim_lines[-1].split()[1].split(",")) == \
            sorted({0, 1, 2, 3} - set(partitions_of(survivor)))
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        killed_at = time.monotonic()
        poll_until([survivor], lambda: partitions_of(survivor) == [0, 1, 2, 3], timeout_s=30)
        waited = time.monotonic() - killed_at
        # Expelled by the session timeout (no LeaveGroup from a killed process), then one rebalance.
        assert KILLED_SESSION_MS / 1000 - 1.0 <= waited <= KILLED_SESSION_MS / 1000 + 10, waited
        sent = produce(broker.bootstrap, topic, 4, 10)
        got: list = []
        poll_until([survivor], lambda: len(got) >= len(sent), got)
        assert {(p, v) for _, p, _, v in got} == sent
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait(10)
        survivor.close()


def test_kafka_python_group_commit_and_resume(broker) -> None:
    kafka = pytest.importorskip("kafka")
    topic, group = "groups-kp", "kp-group"
    create_topic(broker.bootstrap, topic, 3)
    sent = produce(broker.bootstrap, topic, 3, 20)

    def new_consumer():
        return kafka.KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group,
                                   enable_auto_commit=False, auto_offset_reset="earliest",
                                   session_timeout_ms=SESSION_MS, heartbeat_interval_ms=500)

    first = new_consumer()
    got1: list = []
    deadline = time.monotonic() + DEADLINE_S
    while len(got1) < 25 and time.monotonic() < deadline:
        for records in first.poll(timeout_ms=200, max_records=25 - len(got1)).values():
            got1.extend(records)
    assert len(got1) == 25
    first.commit()
    assignment = first.assignment()
    assert {tp.partition for tp in assignment} == {0, 1, 2}
    committed = {tp.partition: first.committed(tp) for tp in assignment}
    first.close()
    offsets_read = {p: [r.offset for r in got1 if r.partition == p] for p in range(3)}
    for p, offsets in offsets_read.items():
        # kafka-python commits its position of every assigned partition: 0 (reset to earliest) when unread.
        assert committed[p] in ((max(offsets) + 1,) if offsets else (None, 0)), (p, committed)

    second = new_consumer()
    got2: list = []
    deadline = time.monotonic() + DEADLINE_S
    while len(got2) < len(sent) - 25 and time.monotonic() < deadline:
        for records in second.poll(timeout_ms=200).values():
            got2.extend(records)
    extra = second.poll(timeout_ms=500)
    second.close()
    assert not extra
    read1 = {(r.partition, r.value) for r in got1}
    read2 = {(r.partition, r.value) for r in got2}
    assert len(got2) == len(read2) == len(sent) - 25 and read1 | read2 == sent and not read1 & read2


def test_admin_lists_and_describes_groups_and_offsets(broker) -> None:
    from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions

    topic = "groups-admin"
    create_topic(broker.bootstrap, topic, 2)
    produce(broker.bootstrap, topic, 2, 5)
    live = consumer(broker.bootstrap, "admin-live", **{"client.id": "live-client"})
    live.subscribe([topic])
    got: list = []
    poll_until([live], lambda: len(got) >= 10, got)
    live.commit(asynchronous=False)
    idle = consumer(broker.bootstrap, "admin-idle")
    idle.assign([TopicPartition(topic, 0, 3)])
    idle.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False)
    idle.close()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    try:
        listed = admin.list_consumer_groups(request_timeout=10).result(30)
        states = {g.group_id: g.state for g in listed.valid}
        assert states == {"admin-live": ConsumerGroupState.STABLE, "admin-idle": ConsumerGroupState.EMPTY}
        assert not listed.errors
        stable = admin.list_consumer_groups(states={ConsumerGroupState.STABLE}).result(30)
        assert [g.group_id for g in stable.valid] == ["admin-live"]

        desc = admin.describe_consumer_groups(["admin-live", "admin-idle"])
        live_desc = desc["admin-live"].result(30)
        assert live_desc.state == ConsumerGroupState.STABLE and live_desc.partition_assignor == "range"
        assert not live_desc.is_simple_consumer_group
        assert live_desc.coordinator.id == 0 and live_desc.coordinator.port == broker.port
        [member] = live_desc.members
        assert member.client_id == "live-client" and member.host == "/127.0.0.1"
        assert sorted((tp.topic, tp.partition) for tp in member.assignment.topic_partitions) == \
            [(topic, 0), (topic, 1)]
        idle_desc = desc["admin-idle"].result(30)
        assert idle_desc.state == ConsumerGroupState.EMPTY and idle_desc.members == []

        offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("admin-live")])
        result = offsets["admin-live"].result(30)
        assert sorted((tp.topic, tp.partition, tp.offset) for tp in result.topic_partitions) == \
            [(topic, 0, 5), (topic, 1, 5)]
        idle_offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("admin-idle")])
        assert [(tp.partition, tp.offset) for tp in idle_offsets["admin-idle"].result(30).topic_partitions] == \
            [(0, 3)]
        deleted = admin.delete_consumer_groups(["admin-idle"])
        deleted["admin-idle"].result(30)
        remaining = admin.list_consumer_groups().result(30)
        assert [g.group_id for g in remaining.valid] == ["admin-live"]
    finally:
        live.close()


def test_offsets_survive_broker_restart(broker) -> None:
    topic, group = "groups-restart", "restart-group"
    create_topic(broker.bootstrap, topic, 2)
    sent = produce(broker.bootstrap, topic, 2, 20)
    first = consumer(broker.bootstrap, group)
    first.subscribe([topic])
    got: list = []
    poll_until([first], lambda: len(got) >= 15, got)
    first.commit(asynchronous=False)
    committed = sorted((tp.partition, tp.offset)
                       for tp in first.committed([TopicPartition(topic, p) for p in range(2)], 10))
    first.close()

    broker.restart()
    second = consumer(broker.bootstrap, group)
    try:
        after = sorted((tp.partition, tp.offset)
                       for tp in second.committed([TopicPartition(topic, p) for p in range(2)], 30))
        assert after == committed
        second.subscribe([topic])
        rest: list = []
        poll_until([second], lambda: len(rest) >= len(sent) - 15, rest)
        read1 = {(p, v) for _, p, _, v in got}
        read2 = {(p, v) for _, p, _, v in rest}
        assert len(rest) == len(sent) - 15 and read1 | read2 == sent and not read1 & read2
    finally:
        second.close()
