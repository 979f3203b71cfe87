"""Three kafkapy brokers on a real ZooKeeper: registration, controller election, RF=3 placement by Kafka's
algorithm, `kafkapy topics --describe`, and refusals at start-up (duplicate broker id, unreachable
ZooKeeper)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kafkapy.controller.replica_assignment import BrokerMetadata, assign_replicas_to_brokers


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3)


def test_brokers_register_kafkas_znodes(cluster) -> None:
    assert cluster.registered_brokers() == [0, 1, 2]
    reg = cluster.zk_json("/brokers/ids/1")
    port = cluster.brokers[1].port
    assert reg["endpoints"] == [f"PLAINTEXT://127.0.0.1:{port}"] and reg["port"] == port
    assert reg["version"] == 5 and reg["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
    assert cluster.controller_id() in (0, 1, 2)
    assert cluster.zk_json("/controller_epoch") >= 1
    assert len(cluster.zk_json("/cluster/id")["id"]) == 22


def test_rf3_topic_placement_and_describe(cluster) -> None:
    admin = cluster.admin()
    try:
        from kafkapy.client.admin_types import NewTopic

        admin.create_topics([NewTopic("rf3", 6, 3)])
    finally:
        admin.close()
    stored = cluster.wait_for(lambda: cluster.zk_json("/brokers/topics/rf3"), what="topic znode")
    assignment = {int(p): r for p, r in stored["partitions"].items()}
    assert len(assignment) == 6 and all(len(set(r)) == 3 for r in assignment.values())
    # Kafka's AdminUtils: with a start index and shift, consecutive partitions' leaders go round the brokers
    # and every broker leads twice; the layout equals the algorithm's for some random start.
    class Draws:  # the two random draws of the algorithm (start index, replica shift), fixed
        def __init__(self, *values: int) -> None:
            self.values = list(values)

        def randrange(self, _n: int) -> int:
            return self.values.pop(0)

    layouts = [assign_replicas_to_brokers([BrokerMetadata(b, None) for b in range(3)], 6, 3,
                                          rng=Draws(start, shift))  # type: ignore[arg-type]
               for start in range(3) for shift in range(3)]
    assert {p: list(r) for p, r in assignment.items()} in [{p: list(r) for p, r in lay.items()} for lay in layouts]
    # Every broker's metadata shows the same leaders (the preferred replica) and full ISRs.
    for broker in cluster.brokers.values():
        cluster.wait_for(lambda b=broker: all(
            leader == assignment[p][0] and sorted(isr) == sorted(assignment[p])
            for p, (leader, _replicas, isr) in cluster.describe("rf3", b.bootstrap).items())
            and len(cluster.describe("rf3", b.bootstrap)) == 6, what=f"metadata on broker {broker.broker_id}")
    out = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "topics", "--bootstrap-server", cluster.bootstrap,
                          "--describe", "--topic", "rf3"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if "\tPartition: " in line or "Partition: " in line]
    assert len(lines) == 6
    for p, replicas in assignment.items():
        line = next(line for line in lines if f"Partition: {p}\t" in line)
        assert f"Leader: {replicas[0]}\t" in line
        assert f"Replicas: {','.join(map(str, replicas))}\t" in line


def test_duplicate_broker_id_refused(cluster) -> None:
    dup = cluster.add_broker(99, start=False)
    dup.broker_id = 1  # same id as a live broker
    dup.start(wait=False)
    assert dup.proc is not None
    code = dup.proc.wait(60)
    assert code != 0
    assert "/brokers/ids/1, node already exists" in dup.output()
    del cluster.brokers[99]
    assert cluster.registered_brokers() == [0, 1, 2]


def test_unreachable_zookeeper_fails_startup(tmp_path) -> None:
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "server-start",
                          "--override", "zookeeper.connect=127.0.0.1:1", "--override",
                          "zookeeper.connection.timeout.ms=1500", "--override", f"log.dirs={tmp_path}",
                          "--override", "listeners=PLAINTEXT://127.0.0.1:0"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0
    assert "Timed out waiting for connection" in out.stderr
    assert "Traceback" not in out.stderr
    assert time.monotonic() - start < 30
