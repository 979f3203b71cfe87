"""Exactly-once consume-transform-produce across a processor crash: a confluent-kafka processor subprocess
(txn_processor.py) is SIGKILLed in the middle of a transaction (its records written, not committed), a new
one with the same transactional.id and group takes over, and the output topic read with read_committed holds
each input record's result exactly once, in input order per partition."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from txn_support import start_txn_broker  # noqa: E402

PROCESSOR = os.path.join(os.path.dirname(__file__), "txn_processor.py")
N = 300


@pytest.fixture(scope="module")
def txn_broker(tmp_path_factory):
    broker = start_txn_broker(str(tmp_path_factory.mktemp("kafkapy-eos")))
    try:
        yield broker
    finally:
        broker.server.shutdown()


def start_processor(bootstrap: str, *extra: str) -> subprocess.Popen:
    args = [sys.executable, PROCESSOR, bootstrap, "eos-in", "eos-out", "eos-group", "eos-processor", "120", *extra]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def wait_for_line(proc: subprocess.Popen, wanted: str, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith(wanted):
            return line
    raise AssertionError(f"processor never printed {wanted!r}")


def read_committed(bootstrap: str, topic: str, partitions: int, expected: int, timeout_s: float) -> list[tuple[int, bytes]]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "eos-checker", "isolation.level": "read_committed",
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + timeout_s
    quiet_until = None
    while time.monotonic() < deadline:
        m = c.poll(0.3)
        if m is None or m.error():
            if len(out) >= expected:
                quiet_until = quiet_until or time.monotonic() + 2  # keep reading a little: no extras may follow
                if time.monotonic() > quiet_until:
                    break
            continue
        out.append((m.partition(), m.value()))
    c.close()
    return out


def test_processor_crash_mid_transaction_yields_each_result_exactly_once(txn_broker) -> None:
    bootstrap = txn_broker.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic("eos-in", 2, 1), NewTopic("eos-out", 2, 1)]).values():
        f.result(30)
    feeder = Producer({"bootstrap.servers": bootstrap})
    for i in range(N):
        feeder.produce("eos-in", b"rec-%03d" % i, key=b"k%d" % (i % 10))
    feeder.flush(30)

    first = start_processor(bootstrap, "100")
    try:
        wait_for_line(first, "stalled", 60)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    second = start_processor(bootstrap)
    try:
        results = read_committed(bootstrap, "eos-out", 2, N, 90)
    finally:
        second.send_signal(signal.SIGKILL)
        second.wait(10)
    values = [v for _, v in results]
    assert len(values) == len(set(values)) == N
    assert sorted(values) == sorted(b"out:rec-%03d" % i for i in range(N))
    for part in range(2):  # per partition the outputs keep the inputs' order (same keys, same partitioner)
        seq = [int(v.split(b"-")[1]) for p, v in results if p == part]
        assert seq == sorted(seq)
