"""Regressions found by an operator-style QA pass over the tools (against kafkapy's in-process broker).

- A closed stdout pipe (`tool | head -1`) ends every tool quietly with exit 0: consumer-groups --describe,
  and the verifiable producer/consumer, whose events are written from client callbacks.
- console-consumer on an illegal topic name fails at once with one line instead of waiting forever (with
  and without --group).

stdout is replaced by `_ClosingPipe`, which takes `keep` lines and then raises BrokenPipeError on every
write/flush, as a pipe whose reader has exited does.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kafkapy.cli.main import main


class _ClosingPipe:
    """A stdout whose reader goes away after `keep` writes (no fileno: nothing to dup2 over)."""

    def __init__(self, keep: int = 0) -> None:
        self.keep = keep
        self.written: list[str] = []
        self.broken = False

    def write(self, text: str) -> int:
        if self.broken or len(self.written) >= self.keep:
            self.broken = True
            raise BrokenPipeError(32, "Broken pipe")
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        if self.broken:
            raise BrokenPipeError(32, "Broken pipe")

    def isatty(self) -> bool:
        return False


def _run_into_closed_pipe(monkeypatch: pytest.MonkeyPatch, argv: list[str], keep: int = 0) -> tuple[int, float]:
    pipe = _ClosingPipe(keep)
    monkeypatch.setattr(sys, "stdout", pipe)
    start = time.monotonic()
    rc = main(argv)
    monkeypatch.undo()
    return rc, time.monotonic() - start


@pytest.fixture(scope="module")
def bs(tmp_path_factory: pytest.TempPathFactory):
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    props = {"listeners": "PLAINTEXT://127.0.0.1:0", "num.network.threads": "2", "num.io.threads": "4",
             "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "2",
             "log.dirs": str(tmp_path_factory.mktemp("qa-regressions"))}
    server = KafkaServer(KafkaConfig.from_properties(None, props))
    server.startup()
    try:
        yield f"127.0.0.1:{server.bound_port()}"
    finally:
        server.shutdown()


def _topic_with_records(bs: str, topic: str, count: int) -> None:
    from kafkapy.client.admin import AdminClient, NewTopic
    from kafkapy.client.producer import KafkaProducer

    admin = AdminClient({"bootstrap.servers": bs})
    try:
        admin.create_topics([NewTopic(topic, 1, 1)])
    finally:
        admin.close()
    producer = KafkaProducer({"bootstrap.servers": bs})
    try:
        for i in range(count):
            producer.send(topic, str(i).encode())
        producer.flush(10)
    finally:
        producer.close()


def test_consumer_groups_describe_into_closed_pipe_exits_quietly(bs, monkeypatch, capfd):
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.topic_partition import TopicPartition

    _topic_with_records(bs, "qa-cg-pipe", 3)
    admin = AdminClient({"bootstrap.servers": bs})
    try:
        admin.alter_consumer_group_offsets("qa-cg-pipe-group", {TopicPartition("qa-cg-pipe", 0): 2})
    finally:
        admin.close()
    capfd.readouterr()
    rc, _ = _run_into_closed_pipe(monkeypatch, ["consumer-groups", "--bootstrap-server", bs, "--describe",
                                                "--group", "qa-cg-pipe-group"])
    err = capfd.readouterr().err
    assert rc == 0
    assert "Error" not in err and "Broken pipe" not in err


def _subprocess_into_head(argv: list[str]) -> tuple[int, str, float]:
    """`kafkapy <argv> | head -1`: read one line, close the pipe, wait (bounded) for the exit."""
    proc = subprocess.Popen([sys.executable, "-m", "kafkapy.cli.main", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        assert first.startswith(b"{")
        proc.stdout.close()  # the reader goes away, as `head -1` does
        start = time.monotonic()
        proc.wait(timeout=15)
        return proc.returncode, proc.stderr.read().decode("utf-8", "replace"), time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_verifiable_producer_into_closed_pipe_stops_sending(bs):
    rc, err, elapsed = _subprocess_into_head([
        "verifiable-producer", "--bootstrap-server", bs, "--topic", "qa-vp-pipe", "--max-messages", "200000"])
    assert (rc, err) == (0, "")
    assert elapsed < 10  # stopped at the first failed write, not after 200000 sends


def test_verifiable_consumer_into_closed_pipe_exits_quietly(bs):
    _topic_with_records(bs, "qa-vc-pipe", 5)
    rc, err, _ = _subprocess_into_head([
        "verifiable-consumer", "--bootstrap-server", bs, "--topic", "qa-vc-pipe", "--group-id", "qa-vc-pipe-g",
        "--reset-policy", "earliest", "--session-timeout", "10000"])
    assert (rc, err) == (0, "")


def test_console_consumer_illegal_topic_fails_fast(bs, cli):
    start = time.monotonic()
    r = cli("console-consumer", "--bootstrap-server", bs, "--topic", "bad/name", "--timeout-ms", "15000")
    assert time.monotonic() - start < 5
    assert r.rc == 1
    assert r.out == b""
    assert r.err.splitlines() == ["Processed a total of 0 messages",
                                  "Error: INVALID_TOPIC_EXCEPTION: Invalid topics: [bad/name]"]


def test_console_consumer_group_illegal_topic_fails_fast(bs, cli):
    # The --group path subscribes: the illegal name comes back from poll() (Metadata's invalid topics).
    start = time.monotonic()
    r = cli("console-consumer", "--bootstrap-server", bs, "--topic", "bad/name", "--group", "qa-bad-topic-g",
            "--timeout-ms", "15000")
    assert time.monotonic() - start < 5
    assert r.rc == 1
    assert r.out == b""
    assert r.err.splitlines() == ["Processed a total of 0 messages",
                                  "Error: INVALID_TOPIC_EXCEPTION: Invalid topics: [bad/name]"]
