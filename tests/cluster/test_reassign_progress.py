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


def test_execute_on_a_terminal_shows_live_progress(cluster, tmp_path) -> None:
    from confluent_kafka import Producer

    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic("mv", replica_assignment={0: [0]})])
    finally:
        admin.close()
    cluster.wait_for(lambda: cluster.describe("mv").get(0, (None,))[0] == 0, what="mv led by broker 0")
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "compression.type": "none"})
    for i in range(400):
        producer.produce("mv", value=bytes([i % 251]) * 10_000)
    assert producer.flush(30) == 0

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
