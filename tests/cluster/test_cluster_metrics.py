"""Broker metrics in a 3-broker ZooKeeper cluster (issue 16): after one broker is SIGKILLed, the leaders report
UnderReplicatedPartitions > 0, the active controller alone reports OfflinePartitionsCount as Kafka's
controller counts it (partitions in OfflinePartition state: here the one whose only replica died) and
ActiveControllerCount sums to 1 over the live brokers; `kafkapy top --once` shows the under-replicated count
and the down broker; after the restart every count is 0 again."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request
from typing import Any

import pytest

from kafkapy.client.admin_types import NewTopic

confluent_kafka = pytest.importorskip("confluent_kafka")
REPLICATED, SOLO = "metrics-replicated", "metrics-solo"


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3, {"prometheus.listener": "http://127.0.0.1:0"})


def metrics_url(broker: Any, starts: int = 1) -> str:
    """The broker's endpoint, from its `starts`-th 'Serving Prometheus metrics on ...' log line (port 0)."""
    def found() -> str | None:
        urls = re.findall(r"Serving Prometheus metrics on (http://[\d.]+:\d+)/metrics", broker.output())
        return urls[-1] if len(urls) >= starts else None

    return wait(found, 30, "the metrics endpoint's log line")


def wait(predicate: Any, timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def scrape(url: str) -> dict[str, float]:
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    return {line.rpartition(" ")[0]: float(line.rpartition(" ")[2])
            for line in text.splitlines() if line and not line.startswith("#")}


URP = "kafka_server_replicamanager_underreplicatedpartitions"
OFFLINE = "kafka_controller_kafkacontroller_offlinepartitionscount"
ACTIVE = "kafka_controller_kafkacontroller_activecontrollercount"


def totals(urls: list[str]) -> dict[str, float]:
    out = {URP: 0.0, OFFLINE: 0.0, ACTIVE: 0.0}
    for url in urls:
        samples = scrape(url)
        for key in out:
            out[key] += samples[key]
    return out


def test_sigkill_shows_under_replicated_and_offline_partitions(cluster) -> None:
    controller = cluster.controller_id()
    victim = next(b for b in (2, 1, 0) if b != controller)
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(REPLICATED, 3, 3), NewTopic(SOLO, replica_assignment={0: [victim]})])
    finally:
        admin.close()
    cluster.wait_for(lambda: all(len((cluster.partition_state(REPLICATED, p) or {}).get("isr", [])) == 3
                                 for p in range(3)) and cluster.partition_state(SOLO, 0), what="topics in sync")
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for i in range(30):
        producer.produce(REPLICATED, value=b"v%d" % i, partition=i % 3)
        producer.produce(SOLO, value=b"s%d" % i)
    assert producer.flush(30) == 0
    urls = {b: metrics_url(cluster.brokers[b]) for b in cluster.brokers}
    before = totals(list(urls.values()))
    assert before == {URP: 0.0, OFFLINE: 0.0, ACTIVE: 1.0}

    cluster.brokers[victim].kill()
    live = [urls[b] for b in urls if b != victim]
    down = wait(lambda: (lambda t: t if t[URP] > 0 and t[OFFLINE] > 0 else None)(totals(live)), 45,
                "under-replicated and offline partitions")
    assert down[ACTIVE] == 1.0
    # Kafka's controller counts the partitions in OfflinePartition state: the RF-1 topic's, whose only replica died;
    # the replicated topic's partitions got new leaders.
    assert down[OFFLINE] == 1.0
    on_controller = scrape(urls[cluster.controller_id()])
    assert on_controller[OFFLINE] == 1.0
    # ControllerStats: the failover's elections were timed; every broker timed its ZooKeeper requests.
    assert on_controller["kafka_controller_controllerstats_leaderelectionrateandtimems_count"] >= 1
    assert all(scrape(u)["kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms_count"] > 0 for u in live)
    # Every partition the victim held a replica of is under-replicated on its new leader (3 of REPLICATED).
    assert down[URP] == 3.0

    out = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "top", "--bootstrap-server",
                          ",".join(cluster.brokers[b].bootstrap for b in cluster.brokers if b != victim),
                          "--metrics-url", ",".join(live), "--once", "--interval", "0.5"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].endswith("2 brokers up, 3 under-replicated, 1 offline partitions"), lines[0]
    assert any(re.fullmatch(rf"{victim}\t-\t-\t-\tno\tdown", line) for line in lines), out.stdout
    assert any(line.startswith(f"{REPLICATED}\t3\t3\t") for line in lines), out.stdout
    assert any(line.startswith(f"{SOLO}\t1\t") and line.split("\t")[4] == "1" for line in lines), out.stdout

    cluster.brokers[victim].start()
    urls[victim] = metrics_url(cluster.brokers[victim], starts=2)
    after = wait(lambda: (lambda t: t if t[URP] == 0 and t[OFFLINE] == 0 else None)(totals(list(urls.values()))),
                 60, "every partition back in sync")
    assert after == {URP: 0.0, OFFLINE: 0.0, ACTIVE: 1.0}
