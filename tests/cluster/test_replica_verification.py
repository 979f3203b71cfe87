"""replica-verification against a replicated RF=3 topic on the 3-broker cluster: every replica is fetched
(followers answer the debugging replica id), the replicas agree, and the report is Kafka's line with the
verified offset equal to what was produced."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from kafkapy.client.admin_types import NewTopic

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: max lag is (\d+) for partition (\S+) at offset (\d+) "
                  r"among (\d+) partitions$")


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3)


def test_replicas_verified_with_zero_lag(cluster) -> None:
    from confluent_kafka import Producer

    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic("rv", 2, 3)])
    finally:
        admin.close()
    cluster.wait_for(lambda: len(cluster.describe("rv")) == 2 and all(
        len(isr) == 3 for _l, _r, isr in cluster.describe("rv").values()), what="rv fully replicated")
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(3000):
        producer.produce("rv", key=str(i).encode(), value=b"v%d" % i, partition=i % 2)
    assert producer.flush(30) == 0

    proc = subprocess.Popen([sys.executable, "-m", "kafkapy.cli.main", "replica-verification", "--broker-list",
                             cluster.bootstrap, "--topics-include", "rv", "--time", "-2",
                             "--report-interval-ms", "300", "--max-wait-ms", "100"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().rstrip("\n")
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}: verification process is started\.", first)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline().rstrip("\n")
            if not line:
                proc.wait(30)
                assert proc.stderr is not None
                pytest.fail(f"replica-verification ended ({proc.returncode}): {proc.stderr.read()}")
            lines.append(line)
            m = LINE.match(line)
            assert m, line
            if m.group(1) == "0":
                break
    finally:
        proc.terminate()
        proc.wait(30)
    m = LINE.match(lines[-1])
    assert m is not None and m.group(1) == "0", lines
    # 1,500 records per partition: the verified offset is the partition's end on every replica
    assert m.group(2) in ("rv-0", "rv-1") and m.group(3) == "1500" and m.group(4) == "2"
