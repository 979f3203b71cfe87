"""KafkaServer lifecycle: startup on port 0, idempotent shutdown, the files a clean shutdown leaves (clean
shutdown marker, checkpoints, meta.properties), a restart on the same log dir keeping topics, topic ids,
data and offsets, Kafka-style log lines, and a refused configuration that leaves nothing locked."""

from __future__ import annotations

import logging
import os
import threading
import time

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.zk_client import ZooKeeperClientTimeoutError
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.kafka_server import KafkaScheduler, KafkaServer
from kafkapy.storage.checkpoint_file import OffsetCheckpointFile
from kafkapy.storage.meta_properties import read_meta_properties

TP = TopicPartition("life", 0)


def batch(*values: bytes) -> bytes:
    builder = MemoryRecordsBuilder()
    for v in values:
        builder.append(1_700_000_000_000, None, v)
    return builder.build()


def append(server: KafkaServer, tp: TopicPartition, records: bytes) -> int:
    out: list = []
    server.replica_manager.append_records(1000, -1, {tp: records}, out.append)
    assert out[0][tp].error == 0
    return out[0][tp].base_offset


def read_all(server: KafkaServer, tp: TopicPartition) -> list[bytes]:
    info = server.replica_manager.get_partition(tp).read_records(0, 1 << 20)
    data = info.fetched_data.records.read_bytes() if info.fetched_data.records is not None else b""
    return [r.value for b in MemoryRecords(data).batches() for r in b.records()]


def test_lifecycle_restart_and_files(broker_factory, caplog) -> None:
    caplog.set_level(logging.INFO)
    broker = broker_factory(overrides={"num.partitions": "2"})
    server = broker.server
    assert server.is_started and broker.port > 0
    assert f"with addresses: PLAINTEXT://127.0.0.1:{broker.port}, czxid (broker epoch)" in caplog.text
    result = server.controller.create_topics([("life", -1, -1, None, {"retention.ms": "3600000"})]).result(10)
    topic_id = result["life"].topic_id
    assert result["life"].num_partitions == 2
    assert append(server, TP, batch(b"a", b"b")) == 0
    assert append(server, TP, batch(b"c")) == 2
    cluster_id = server.metadata_cache.get_cluster_id()

    server.shutdown()
    server.shutdown()  # idempotent
    assert server.await_shutdown(0) and not server.is_started
    log_dir = broker.log_dir
    assert os.path.exists(os.path.join(log_dir, ".kafka_cleanshutdown"))
    assert OffsetCheckpointFile(os.path.join(log_dir, "recovery-point-offset-checkpoint")).read()[TP] == 3
    assert OffsetCheckpointFile(os.path.join(log_dir, "replication-offset-checkpoint")).read()[TP] == 3
    meta = read_meta_properties(log_dir)
    assert meta is not None and meta.cluster_id == cluster_id and meta.node_id == 0

    broker.server = KafkaServer(KafkaConfig.from_properties(None, {
        "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": log_dir}))
    broker.server.startup()
    again = broker.server
    assert not os.path.exists(os.path.join(log_dir, ".kafka_cleanshutdown"))  # removed while running
    assert again.metadata_cache.get_cluster_id() == cluster_id
    assert again.metadata_cache.get_topic_id("life") == topic_id
    assert again.metadata_cache.num_partitions("life") == 2
    assert read_all(again, TP) == [b"a", b"b", b"c"]
    assert again.replica_manager.get_partition(TP).high_watermark == 3
    assert append(again, TP, batch(b"d")) == 3
    assert again.replica_manager.get_partition(TP).log.config.retention_ms == 3_600_000


def test_await_shutdown_wakes_waiters(broker_factory) -> None:
    broker = broker_factory()
    woke = threading.Event()
    t = threading.Thread(target=lambda: broker.server.await_shutdown(30) and woke.set())
    t.start()
    assert not woke.wait(0.1)
    broker.server.shutdown()
    t.join(10)
    assert woke.is_set()


def test_refused_config_leaves_the_log_dir_usable(tmp_path) -> None:
    props = {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(tmp_path)}
    # An unreachable ZooKeeper fails the start after zookeeper.connection.timeout.ms, before any log is opened.
    bad = KafkaServer(KafkaConfig.from_properties(None, dict(props, **{"zookeeper.connect": "127.0.0.1:1",
                                                                       "zookeeper.connection.timeout.ms": "300"})))
    with pytest.raises(ZooKeeperClientTimeoutError, match="Timed out waiting for connection"):
        bad.startup()
    good = KafkaServer(KafkaConfig.from_properties(None, props))
    good.startup()
    try:
        assert good.bound_port() > 0
    finally:
        good.shutdown()


def test_scheduler_runs_periodic_tasks_and_survives_errors() -> None:
    scheduler = KafkaScheduler()
    ran: list[str] = []
    done = threading.Event()

    def ok() -> None:
        ran.append("ok")
        if ran.count("ok") >= 3:
            done.set()

    def boom() -> None:
        ran.append("boom")
        raise RuntimeError("task failure is logged, not fatal")

    scheduler.schedule("boom", boom, 0, 5)
    scheduler.schedule("ok", ok, 0, 5)
    scheduler.startup()
    try:
        assert done.wait(10)
    finally:
        scheduler.shutdown()
    assert ran.count("boom") >= 2


def test_server_start_says_where_it_listens(broker_process) -> None:
    """`kafkapy server-start` prints one line with the address it bound (port 0 resolved)."""
    handle = broker_process()
    expected = f"[KafkaServer id=0] started; listening on PLAINTEXT://127.0.0.1:{handle.port} (kafka.server.KafkaServer)"
    deadline = time.monotonic() + 10
    while expected not in handle.output() and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = [line for line in handle.output().splitlines() if "started; listening on" in line]
    assert len(lines) == 1 and lines[0].endswith(expected), handle.output()
    assert handle.stop() == 0
