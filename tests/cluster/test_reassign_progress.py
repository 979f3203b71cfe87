"""reassign-partitions on a terminal: --execute prints Kafka's text, then the live progress view follows a
throttled move of ~4 MB from broker 0 to brokers 1,2 until it completes; piped --verify stays Kafka's text."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kafkapy.client.admin_types import NewTopic


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3)


def reassign(cluster, *args: str, terminal: bool) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="140")
    env.pop("KAFKAPY_PLAIN", None)
    if terminal:
        env["KAFKAPY_FORCE_TERMINAL"] = "stdout"
    else:
        env.pop("KAFKAPY_FORCE_TERMINAL", None)
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "reassign-partitions", "--bootstrap-server",
                           cluster.bootstrap, *args], capture_output=True, text=True, env=env, timeout=180)


def load_topic_on_broker_0(cluster, topic: str, records: int) -> None:
    """A one-partition topic on broker 0 holding `records` uncompressed 10 kB records."""
    from confluent_kafka import Producer

    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(topic, replica_assignment={0: [0]})])
    finally:
        admin.close()
    cluster.wait_for(lambda: cluster.describe(topic).get(0, (None,))[0] == 0, what=f"{topic} led by broker 0")
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "compression.type": "none"})
    for i in range(records):
        producer.produce(topic, value=bytes([i % 251]) * 10_000)
    assert producer.flush(30) == 0


def test_execute_on_a_terminal_shows_live_progress(cluster, tmp_path) -> None:
    load_topic_on_broker_0(cluster, "mv", 400)

    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"mv","partition":0,"replicas":[1,2]}]}')
    r = reassign(cluster, "--execute", "--reassignment-json-file", str(plan), "--throttle", "2000000", terminal=True)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    head = text.index("Successfully started partition reassignment for mv-0")
    assert text.startswith("Current partition replica assignment") and head > 0
    view = text[head:]
    assert "Partition reassignment" in view and "mv-0" in view and "100%" in view and "ETA" in view
    assert "MiB" in view  # bytes moved are shown in human units
    # the view ended because the move finished: the new replicas hold the data
    assert cluster.zk_json("/brokers/topics/mv")["partitions"] == {"0": [1, 2]}

    r = reassign(cluster, "--verify", "--reassignment-json-file", str(plan), terminal=False)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["Status of partition reassignment:", "Reassignment of partition mv-0 is completed."]
    assert any(line.startswith("Clearing broker-level throttles on brokers") for line in lines)
    assert "\x1b[" not in r.stdout  # piped: no terminal control sequences


def test_cancel_restores_the_old_assignment(cluster, tmp_path) -> None:
    load_topic_on_broker_0(cluster, "cx", 300)
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"cx","partition":0,"replicas":[1,2]}]}')
    # 3 MB at 20 kB/s: still copying when cancelled
    r = reassign(cluster, "--execute", "--reassignment-json-file", str(plan), "--throttle", "20000", terminal=False)
    assert r.returncode == 0, r.stderr
    assert cluster.zk_json("/brokers/topics/cx")["adding_replicas"] == {"0": [1, 2]}
    r = reassign(cluster, "--cancel", "--reassignment-json-file", str(plan), terminal=False)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "Successfully cancelled partition reassignment for: cx-0"
    assert any(line.startswith("Clearing topic-level throttles on topic") and "cx" in line for line in lines)
    cluster.wait_for(lambda: cluster.zk_json("/brokers/topics/cx")["partitions"] == {"0": [0]}
                     and not cluster.zk_json("/brokers/topics/cx").get("adding_replicas"), what="old assignment back")
    cluster.wait_for(lambda: cluster.describe("cx")[0] == (0, [0], [0]), what="metadata shows replicas [0]")
    assert "leader.replication.throttled.replicas" not in (cluster.zk_json("/config/topics/cx") or {}).get("config", {})


def test_describe_filters_while_a_broker_is_down(cluster) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic("ur", 2, 3, configs={"min.insync.replicas": "2"})])
    finally:
        admin.close()
    cluster.wait_for(lambda: len(cluster.describe("ur")) == 2 and all(
        len(isr) == 3 for _l, _r, isr in cluster.describe("ur").values()), what="ur fully replicated")

    def describe(*flags: str, zookeeper: bool = False) -> list[str]:
        where = ["--zookeeper", cluster.zk_connect] if zookeeper else ["--bootstrap-server", cluster.bootstrap]
        r = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "topics", *where, "--describe", "--topic", "ur",
                            *flags], capture_output=True, text=True, timeout=120, env=dict(os.environ,
                                                                                          KAFKAPY_PLAIN="1"))
        assert r.returncode == 0, r.stderr
        return [line.split("\t")[2] for line in r.stdout.splitlines()]  # "Partition: N"

    assert describe("--under-replicated-partitions") == []
    cluster.brokers[2].stop()
    try:
        cluster.wait_for(lambda: all(2 not in isr for _l, _r, isr in cluster.describe("ur").values()),
                         what="broker 2 out of the ISRs")
        for zookeeper in (False, True):
            assert describe("--under-replicated-partitions", zookeeper=zookeeper) == ["Partition: 0", "Partition: 1"]
            assert describe("--at-min-isr-partitions", zookeeper=zookeeper) == ["Partition: 0", "Partition: 1"]
            assert describe("--under-min-isr-partitions", zookeeper=zookeeper) == []
            assert describe("--unavailable-partitions", zookeeper=zookeeper) == []
    finally:
        cluster.brokers[2].start()
    cluster.wait_for(lambda: all(len(isr) == 3 for _l, _r, isr in cluster.describe("ur").values()), timeout_s=60,
                     what="broker 2 back in the ISRs")
