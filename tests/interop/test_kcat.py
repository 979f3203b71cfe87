"""kcat (Debian's /usr/bin/kcat, librdkafka 2.0.x) against an in-process kafkapy broker.

Debian's kcat rejects brokers that write default-valued tagged fields, so these runs also prove the
protocol layer writes only non-default tags.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

KCAT = shutil.which("kcat")
pytestmark = pytest.mark.skipif(KCAT is None, reason="kcat is not installed")
TIMEOUT_S = 60


def kcat(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([KCAT, *args], input=stdin, capture_output=True, timeout=TIMEOUT_S)  # type: ignore[list-item]


def test_kcat_metadata_lists_broker_and_topics(kafkapy_broker) -> None:
    rs = kcat("-b", kafkapy_broker.bootstrap, "-P", "-t", "kcat-listed", stdin=b"one\n")
    assert rs.returncode == 0, rs.stderr
    rs = kcat("-b", kafkapy_broker.bootstrap, "-L", "-t", "kcat-listed")
    out = rs.stdout.decode()
    assert rs.returncode == 0, rs.stderr
    assert f"broker 0 at 127.0.0.1:{kafkapy_broker.port} (controller)" in out
    assert 'topic "kcat-listed" with 1 partitions:' in out
    assert "partition 0, leader 0, replicas: 0, isrs: 0" in out
    rs = kcat("-b", kafkapy_broker.bootstrap, "-L", "-J")
    assert rs.returncode == 0 and b'"kcat-listed"' in rs.stdout


def test_kcat_produce_1000_keyed_and_consume_in_order(kafkapy_broker) -> None:
    lines = [f"key-{i}:value {i} {'x' * (i % 50)}" for i in range(1000)]
    payload = ("\n".join(lines) + "\n").encode()
    rs = kcat("-b", kafkapy_broker.bootstrap, "-P", "-K:", "-t", "kcat-keyed", stdin=payload)
    assert rs.returncode == 0, rs.stderr
    rs = kcat("-b", kafkapy_broker.bootstrap, "-C", "-e", "-o", "beginning", "-f", "%k:%s\\n", "-t", "kcat-keyed")
    assert rs.returncode == 0, rs.stderr
    assert rs.stdout.decode().splitlines() == lines
    rs = kcat("-b", kafkapy_broker.bootstrap, "-C", "-e", "-o", "-3", "-f", "%o %k\\n", "-t", "kcat-keyed")
    assert rs.stdout.decode().splitlines() == ["997 key-997", "998 key-998", "999 key-999"]
