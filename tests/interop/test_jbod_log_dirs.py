"""JBOD on one in-process broker with two log dirs: AlterReplicaLogDirs moves a loaded partition to the other dir
while a confluent-kafka producer writes (throttled by replica.alter.log.dirs.io.max.bytes.per.second so the
future replica is seen in DescribeLogDirs), every record is read back at its offset, and the `-future` dir is gone
after the swap; an unknown dir is LOG_DIR_NOT_FOUND; a log dir replaced by a file (Kafka's LogDirFailureTest
mechanism: the next checkpoint write fails with a real ENOTDIR) goes offline: DescribeLogDirs answers
KAFKA_STORAGE_ERROR for it, its partition answers produce with KAFKA_STORAGE_ERROR and loses its leader, the
partition in the other dir keeps working, and no traceback is logged per request. One broker for the module; the
failure test runs last."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator

import pytest

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer  # noqa: E402
from confluent_kafka import TopicPartition as CkTp  # noqa: E402

from kafkapy.cli.reassign_partitions import main as reassign_main  # noqa: E402
from kafkapy.client.admin import AdminClient  # noqa: E402
from kafkapy.common.errors import KafkaStorageError, LogDirNotFoundError  # noqa: E402
from kafkapy.protocol.messages import ProduceRequest  # noqa: E402
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder  # noqa: E402
from kafkapy.testing import KafkaBroker  # noqa: E402
from kafkapy.tools.reassign_json import TopicPartitionReplica  # noqa: E402

RATE = 1_000_000  # bytes/s while moving: ~2.5 MB preloaded -> a move of about 2-3 s


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    base = tmp_path_factory.mktemp("jbod")
    return str(base / "d1"), str(base / "d2")


@pytest.fixture(scope="module")
def broker(dirs: tuple[str, str]) -> Iterator[KafkaBroker]:
    with KafkaBroker(overrides={"log.dirs": ",".join(dirs), "replica.high.watermark.checkpoint.interval.ms": "200",
                                "offsets.topic.replication.factor": "1"}) as b:
        yield b


@pytest.fixture(scope="module")
def admin(broker: KafkaBroker) -> Iterator[AdminClient]:
    client = AdminClient({"bootstrap.servers": broker.bootstrap})
    try:
        yield client
    finally:
        client.close()


def dir_of(admin: AdminClient, topic: str, partition: int = 0) -> tuple[str | None, str | None]:
    """(current dir, future dir) of the replica on broker 0."""
    current = future = None
    for path, d in admin.describe_log_dirs([0])[0].items():
        info = d.replicas.get((topic, partition))
        if info is not None:
            if info.is_future:
                future = path
            else:
                current = path
    return current, future


def produce(bootstrap: str, topic: str, start: int, count: int, size: int = 1000) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    for i in range(start, start + count):
        producer.produce(topic, key=str(i).encode(), value=f"{i:08d}".encode() * (size // 8), partition=0)
        if i % 500 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0


def read_all(bootstrap: str, topic: str, expected: int) -> list[tuple[int, bytes, bytes]]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.assign([CkTp(topic, 0, 0)])
    got: list[tuple[int, bytes, bytes]] = []
    deadline = time.monotonic() + 30
    while len(got) < expected:
        assert time.monotonic() < deadline, f"read {len(got)} of {expected}"
        for msg in c.consume(500, 0.5):
            assert msg.error() is None, msg.error()
            got.append((msg.offset(), msg.key(), msg.value()))
    c.close()
    return got


def test_move_a_loaded_partition_while_producing(broker, admin, dirs) -> None:
    topic = "moving"
    broker.create_topic(topic, 1)
    produce(broker.bootstrap, topic, 0, 2500)
    source, future = dir_of(admin, topic)
    assert source in dirs and future is None
    target = dirs[1] if source == dirs[0] else dirs[0]

    broker.server.replica_manager._alter_log_dirs_rate = RATE  # the dynamic config path: the tool test
    writer = threading.Thread(target=produce, args=(broker.bootstrap, topic, 2500, 2500))
    writer.start()
    result = admin.alter_replica_log_dirs({TopicPartitionReplica(topic, 0, 0): target})
    assert result == {TopicPartitionReplica(topic, 0, 0): None}
    seen_future = False
    deadline = time.monotonic() + 30
    while True:
        current, future = dir_of(admin, topic)
        seen_future |= future == target
        if current == target and future is None:
            break
        assert time.monotonic() < deadline, (current, future)
        time.sleep(0.1)
    writer.join(60)
    broker.server.replica_manager._alter_log_dirs_rate = None
    assert seen_future, "DescribeLogDirs never showed the future replica (is_future_key)"
    assert os.listdir(target).count(f"{topic}-0") == 1
    assert not [n for d in dirs for n in os.listdir(d) if n.endswith("-future")]
    got = read_all(broker.bootstrap, topic, 5000)
    assert [(o, k, v) for o, k, v in got] == [
        (i, str(i).encode(), f"{i:08d}".encode() * 125) for i in range(5000)]
    # the moved replica keeps taking writes
    produce(broker.bootstrap, topic, 5000, 10)
    assert len(read_all(broker.bootstrap, topic, 5010)) == 5010


def test_unknown_log_dir_and_no_replica(broker, admin, dirs) -> None:
    broker.create_topic("stay", 1)
    r = TopicPartitionReplica("stay", 0, 0)
    assert isinstance(admin.alter_replica_log_dirs({r: "/no/such/dir"})[r], LogDirNotFoundError)
    current, _ = dir_of(admin, "stay")
    assert admin.alter_replica_log_dirs({r: current}) == {r: None}  # already there: nothing to move
    assert dir_of(admin, "stay") == (current, None)


def test_a_move_sent_back_to_the_current_dir_is_cancelled(broker, admin, dirs) -> None:
    topic = "cancelled"
    broker.create_topic(topic, 1)
    produce(broker.bootstrap, topic, 0, 1000)
    source, _ = dir_of(admin, topic)
    target = dirs[1] if source == dirs[0] else dirs[0]
    r = TopicPartitionReplica(topic, 0, 0)
    broker.server.replica_manager._alter_log_dirs_rate = 100_000
    try:
        assert admin.alter_replica_log_dirs({r: target}) == {r: None}
        assert dir_of(admin, topic) == (source, target)
        assert admin.alter_replica_log_dirs({r: source}) == {r: None}  # Kafka's cancel: back to where it is
        assert dir_of(admin, topic) == (source, None)
        assert not [n for n in os.listdir(target) if n.startswith(f"{topic}-0")]
    finally:
        broker.server.replica_manager._alter_log_dirs_rate = None
    assert len(read_all(broker.bootstrap, topic, 1000)) == 1000


def test_reassign_partitions_moves_log_dirs_with_a_throttle(broker, admin, dirs, capsys, tmp_path) -> None:
    topic = "tool-moved"
    broker.create_topic(topic, 1)
    produce(broker.bootstrap, topic, 0, 1500)
    source, _ = dir_of(admin, topic)
    target = dirs[1] if source == dirs[0] else dirs[0]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [0], "log_dirs": [target]}]}))
    base = ["--bootstrap-server", broker.bootstrap, "--reassignment-json-file", str(plan)]
    assert reassign_main([*base, "--execute", "--replica-alter-log-dirs-throttle", "600000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "The replica-alter-dir throttle limit was set to 600000 B/s" in out
    assert out[-1] == f"Successfully started moving log directory to {target} for replica {topic}-0 with broker 0 "
    rm = broker.server.replica_manager
    deadline = time.monotonic() + 10
    while rm._alter_log_dirs_rate != 600000:  # the dynamic broker config reached the mover
        assert time.monotonic() < deadline
        time.sleep(0.05)
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while f"Reassignment of replica {topic}-0-0 completed successfully." not in lines:
        assert time.monotonic() < deadline, lines
        time.sleep(0.3)
        assert reassign_main([*base, "--verify"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert f"Reassignment of replica {topic}-0-0 completed successfully." in lines or \
            f"Reassignment of replica {topic}-0-0 is still in progress." in lines
    assert "Clearing broker-level throttles on broker 0" in lines
    assert rm._alter_log_dirs_rate is None
    assert dir_of(admin, topic) == (target, None)
    got = read_all(broker.bootstrap, topic, 1500)
    assert [(o, k) for o, k, _ in got] == [(i, str(i).encode()) for i in range(1500)]


def test_failed_log_dir_goes_offline(broker, admin, dirs, caplog, wire_client) -> None:
    for name in ("doomed", "survivor"):
        broker.create_topic(name, 1)
    produce(broker.bootstrap, "doomed", 0, 5)
    produce(broker.bootstrap, "survivor", 0, 5)
    # the first dir holds the embedded controller's metadata: fail the second one
    doomed_dir, survivor_dir = dirs[1], dirs[0]
    for name, where in (("doomed", doomed_dir), ("survivor", survivor_dir)):
        if dir_of(admin, name)[0] != where:
            assert admin.alter_replica_log_dirs({TopicPartitionReplica(name, 0, 0): where}) == {
                TopicPartitionReplica(name, 0, 0): None}
        deadline = time.monotonic() + 20
        while dir_of(admin, name) != (where, None):
            assert time.monotonic() < deadline
            time.sleep(0.1)
    # Kafka's LogDirFailureTest: the log dir becomes a file; the next checkpoint write fails (ENOTDIR)
    shutil.move(doomed_dir, doomed_dir + ".gone")
    with open(doomed_dir, "w"):
        pass
    caplog.set_level(logging.INFO)
    deadline = time.monotonic() + 20
    while True:
        d = admin.describe_log_dirs([0])[0][doomed_dir]
        if isinstance(d.error, KafkaStorageError):
            break
        assert time.monotonic() < deadline, "the failed dir never went offline"
        time.sleep(0.1)
    assert d.replicas == {}
    assert admin.describe_log_dirs([0])[0][survivor_dir].error is None

    # produce straight to the broker (no client retries): the partition is offline
    b = MemoryRecordsBuilder()
    b.append(int(time.time() * 1000), b"k", b"v")
    R = ProduceRequest
    client = wire_client(broker.port)
    for _ in range(50):  # a storm of produces: one answer each, no traceback per request
        resp = client.request(R(acks=1, timeout_ms=1000, topic_data=[R.TopicProduceData(name="doomed", partition_data=[
            R.PartitionProduceData(index=0, records=b.build())])]), 7)
        assert resp.responses[0].partition_responses[0].error_code == KafkaStorageError.code
    # the controller moved leadership: a single replica has none left
    deadline = time.monotonic() + 20
    while admin.describe_topics(["doomed"])["doomed"].partitions[0].leader is not None:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    produce(broker.bootstrap, "survivor", 5, 5)
    assert len(read_all(broker.bootstrap, "survivor", 10)) == 10
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) <= 1, [r.getMessage() for r in tracebacks]


def test_a_move_resumes_after_a_restart(tmp_path) -> None:
    dirs2 = (str(tmp_path / "r1"), str(tmp_path / "r2"))
    overrides = {"log.dirs": ",".join(dirs2), "offsets.topic.replication.factor": "1"}
    with KafkaBroker(overrides=overrides) as b:
        b.create_topic("resumed", 1)
        produce(b.bootstrap, "resumed", 0, 2000)
        a = AdminClient({"bootstrap.servers": b.bootstrap})
        try:
            source, _ = dir_of(a, "resumed")
            target = dirs2[1] if source == dirs2[0] else dirs2[0]
            b.server.replica_manager._alter_log_dirs_rate = 200_000  # slow enough to stop it half way
            assert a.alter_replica_log_dirs({TopicPartitionReplica("resumed", 0, 0): target}) == {
                TopicPartitionReplica("resumed", 0, 0): None}
            deadline = time.monotonic() + 10
            while dir_of(a, "resumed") != (source, target):
                assert time.monotonic() < deadline
                time.sleep(0.05)
        finally:
            a.close()
    assert [n for n in os.listdir(target) if n.endswith("-future")]  # left for the next start
    with KafkaBroker(overrides=overrides) as b:
        a = AdminClient({"bootstrap.servers": b.bootstrap})
        try:
            deadline = time.monotonic() + 30
            while dir_of(a, "resumed") != (target, None):
                assert time.monotonic() < deadline, dir_of(a, "resumed")
                time.sleep(0.1)
        finally:
            a.close()
        got = read_all(b.bootstrap, "resumed", 2000)
        assert [(o, k) for o, k, _ in got] == [(i, str(i).encode()) for i in range(2000)]
    assert not [n for d in dirs2 for n in os.listdir(d) if n.endswith("-future")]
