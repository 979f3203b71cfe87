"""mirror-maker (MirrorMaker 1) between two in-process kafkapy brokers, run as `kafkapy mirror-maker` in a
subprocess and stopped with SIGTERM: 10,000 keyed records with headers and CreateTime timestamps are
copied exactly (partition, offset order, key, value, headers, timestamp), topics outside --include are
not, and the group's offsets are committed at the source's end offsets on the clean stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

RECORDS = 10_000
PARTITIONS = 3
BASE_TS = 1_700_000_000_000


def produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        headers = [("seq", str(i).encode()), ("kind", b"even" if i % 2 == 0 else b"odd")]
        if i % 7 == 0:
            headers.append(("null-header", None))
        p.produce(topic, key=f"key-{i % 97}".encode(), value=f"value-{i}".encode() * (1 + i % 3),
                  partition=i % partitions, timestamp=BASE_TS + i * 13, headers=headers)
        if i % 1000 == 999:
            p.poll(0)
    assert p.flush(30) == 0


def read_all(bootstrap: str, topic: str, partitions: int, expected: int, timeout_s: float = 60.0) -> dict:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "mm-test-reader", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: dict[int, list] = {p: [] for p in range(partitions)}
    n = 0
    deadline = time.monotonic() + timeout_s
    try:
        while n < expected and time.monotonic() < deadline:
            # consume(n, t) returns once n records arrived: ask for what is missing, not for 1000 and a 1 s wait.
            for m in c.consume(min(1000, expected - n), 1.0):
                assert m.error() is None, m.error()
                got[m.partition()].append((m.offset(), m.key(), m.value(), m.headers(), m.timestamp()))
                n += 1
    finally:
        c.close()
    return got


def count_records(bootstrap: str, topic: str, partitions: int) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "mm-test-counter"})
    try:
        return sum(c.get_watermark_offsets(TopicPartition(topic, p), 5)[1] for p in range(partitions))
    finally:
        c.close()


@pytest.fixture
def two_brokers(broker_factory):
    # No initial rebalance delay (Kafka's default 3 s): mirror-maker's group forms at its first JoinGroup.
    return (broker_factory(overrides={"group.initial.rebalance.delay.ms": "0"}),
            broker_factory(overrides={"auto.create.topics.enable": "true"}))


def test_mirror_maker_copies_records_exactly_and_commits_on_sigterm(two_brokers, tmp_path) -> None:
    source, target = two_brokers

    from kafkapy.client.admin import AdminClient
    from kafkapy.client.admin_types import NewTopic

    for broker, topics in ((source, [("mirrored", PARTITIONS), ("not-mirrored", 1)]), (target, [("mirrored", PARTITIONS)])):
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        try:
            admin.create_topics([NewTopic(name, n, 1) for name, n in topics])
        finally:
            admin.close()
    produce(source.bootstrap, "mirrored", RECORDS, PARTITIONS)
    produce(source.bootstrap, "not-mirrored", 10, 1)

    consumer_config = tmp_path / "consumer.properties"
    consumer_config.write_text(f"bootstrap.servers={source.bootstrap}\ngroup.id=mm-group\nauto.offset.reset=earliest\n"
                               "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor\n")
    producer_config = tmp_path / "producer.properties"
    producer_config.write_text(f"bootstrap.servers={target.bootstrap}\nlinger.ms=5\n")
    err_path = tmp_path / "mm.err"
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kafkapy.cli.main", "mirror-maker", "--consumer.config", str(consumer_config),
             "--producer.config", str(producer_config), "--include", "mirr.*", "--num.streams", "2",
             "--offset.commit.interval.ms", "600000"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 90
        while count_records(target.bootstrap, "mirrored", PARTITIONS) < RECORDS and time.monotonic() < deadline:
            assert proc.poll() is None, err_path.read_text()
            time.sleep(0.3)
        os.kill(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, err_path.read_text()
    assert out == b"" and err_path.read_text() == ""

    expected = read_all(source.bootstrap, "mirrored", PARTITIONS, RECORDS)
    copied = read_all(target.bootstrap, "mirrored", PARTITIONS, RECORDS)
    assert sum(len(v) for v in expected.values()) == RECORDS
    assert copied == expected  # same partition, offsets, keys, values, headers (incl. null), CreateTime timestamps
    assert all(ts == (1, BASE_TS + int(headers[0][1]) * 13) for p in copied.values()
               for _, _, _, headers, ts in p)  # TIMESTAMP_CREATE_TIME
    assert count_records(target.bootstrap, "mirrored", PARTITIONS) == RECORDS  # nothing twice

    admin = AdminClient({"bootstrap.servers": source.bootstrap})
    try:
        committed = admin.list_consumer_group_offsets("mm-group")
        listed = admin.list_topics()
    finally:
        admin.close()
    assert {(tp.topic, tp.partition): o.offset for tp, o in committed.items()} == {
        ("mirrored", p): len(expected[p]) for p in range(PARTITIONS)}
    target_admin = AdminClient({"bootstrap.servers": target.bootstrap})
    try:
        assert "not-mirrored" not in target_admin.list_topics()
    finally:
        target_admin.close()
    assert "not-mirrored" in listed


def test_mirror_maker_flags(cli, tmp_path) -> None:
    r = cli("mirror-maker", "--help")
    assert r.rc == 0
    for flag in ("--consumer.config", "--producer.config", "--include", "--whitelist", "--num.streams",
                 "--offset.commit.interval.ms", "--abort.on.send.failure"):
        assert flag in r.text
    r = cli("mirror-maker", "--producer.config", "p.properties", "--include", "x")
    assert r.rc == 2 and r.err == 'kafkapy mirror-maker: error: Missing required argument "[consumer.config]"\n'
    consumer = tmp_path / "c.properties"
    consumer.write_text("bootstrap.servers=127.0.0.1:1\ngroup.id=g\n")
    r = cli("mirror-maker", "--consumer.config", str(consumer), "--producer.config", str(consumer))
    assert r.rc == 1 and r.err == "include list must be specified\n"
    r = cli("mirror-maker", "--consumer.config", str(consumer), "--producer.config", str(consumer),
            "--whitelist", "a", "--message.handler", "com.example.Handler")
    assert r.rc == 2 and "--message.handler names a Java class" in r.err
    binary = tmp_path / "bin.properties"
    binary.write_bytes(b"\x7fELF\x02\x01\x01")
    r = cli("mirror-maker", "--consumer.config", str(binary), "--producer.config", str(consumer), "--include", "a")
    assert r.rc == 1 and r.err.startswith(f"Error: {binary} is not a properties file: line 1: ")


@pytest.mark.parametrize("abort", ["true", "false"])
def test_send_failure_aborts_or_is_skipped(two_brokers, tmp_path, abort: str) -> None:
    """A record the target refuses (MESSAGE_TOO_LARGE): --abort.on.send.failure true stops with exit 1 and
    commits nothing; false logs it, drops it, mirrors the rest and commits past it."""
    from kafkapy.client.admin import AdminClient
    from kafkapy.client.admin_types import NewTopic

    source, target = two_brokers
    for broker, configs in ((source, {}), (target, {"max.message.bytes": "1024"})):
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        try:
            admin.create_topics([NewTopic("sized", 1, 1, None, configs)])
        finally:
            admin.close()
    p = Producer({"bootstrap.servers": source.bootstrap})
    p.produce("sized", value=b"small-1", partition=0)
    p.produce("sized", value=b"x" * 4096, partition=0)
    p.produce("sized", value=b"small-2", partition=0)
    assert p.flush(10) == 0

    consumer_config = tmp_path / "consumer.properties"
    consumer_config.write_text(f"bootstrap.servers={source.bootstrap}\ngroup.id=mm-abort\nauto.offset.reset=earliest\n"
                               "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor\n")
    producer_config = tmp_path / "producer.properties"
    producer_config.write_text(f"bootstrap.servers={target.bootstrap}\nbatch.size=1\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafkapy.cli.main", "mirror-maker", "--consumer.config", str(consumer_config),
         "--producer.config", str(producer_config), "--include", "sized", "--abort.on.send.failure", abort],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if abort == "true":
            _, err = proc.communicate(timeout=60)
        else:
            deadline = time.monotonic() + 60
            while count_records(target.bootstrap, "sized", 1) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            os.kill(proc.pid, signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    lines = err.decode().splitlines()
    assert any("Error when sending message to topic sized with key: null, value: 4096 bytes with error:" in line
               for line in lines), lines
    admin = AdminClient({"bootstrap.servers": source.bootstrap})
    try:
        committed = {tp.partition: o.offset for tp, o in admin.list_consumer_group_offsets("mm-abort").items()}
    finally:
        admin.close()
    # Everything the target's log holds (up to its high watermark), rather than 5 s of waiting for a second record
    # that an aborted run never copies.
    copied = [v for _, _, v, _, _ in read_all(target.bootstrap, "sized", 1, count_records(target.bootstrap, "sized", 1),
                                              timeout_s=5)[0]]
    if abort == "true":
        assert proc.returncode == 1 and lines[-1].startswith(
            "Mirror maker thread exited abnormally, stopping the whole mirror maker: "), lines
        assert committed == {} and copied[:1] == [b"small-1"] and b"x" * 4096 not in copied
    else:
        assert proc.returncode == 0, lines
        assert copied == [b"small-1", b"small-2"] and committed == {0: 3}
