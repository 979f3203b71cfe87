"""Long-running tools facing an unreachable broker (issue 17 item 10): console-consumer without --timeout-ms
and mirror-maker keep waiting, as Kafka's clients do, and say why with Kafka's NetworkClient WARN line per
failed connection attempt (at most one per node per second); SIGINT / SIGTERM still stop them cleanly.
Both tools wait side by side in one RUN_S window (`waited`, module scope); each test checks its own tool."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

LINE = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] WARN (\[.*?\]) Connection to node -1 \((.*?)\) could "
                  r"not be established\. Node may not be available\. \(org\.apache\.kafka\.clients\.NetworkClient\)")
RUN_S = 3.5


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


def run_until_signal(runs: dict[str, tuple[list[str], int]]) -> dict[str, tuple[bool, int, str, float]]:
    """Start every tool at once, let them wait RUN_S, send each its signal: {name: (still waiting when signalled,
    exit code, stderr, seconds from the signal to the exit)}."""
    procs = {name: subprocess.Popen([sys.executable, "-m", "kafkapy.cli.main", *argv], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for name, (argv, _sig) in runs.items()}
    try:
        time.sleep(RUN_S)
        waiting, signalled = {}, {}
        for name, proc in procs.items():
            waiting[name] = proc.poll() is None
            if waiting[name]:
                proc.send_signal(runs[name][1])
            signalled[name] = time.monotonic()
        out = {}
        for name, proc in procs.items():
            _, err = proc.communicate(timeout=20)
            out[name] = (waiting[name], proc.returncode, err.decode(), time.monotonic() - signalled[name])
        return out
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture(scope="module")
def waited(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, tuple[bool, int, str, float]]]:
    """console-consumer (then SIGINT) and mirror-maker (then SIGTERM), each against its own closed port:
    {tool: (port, result)}."""
    ports = {"console-consumer": closed_port(), "mirror-maker": closed_port()}
    tmp = tmp_path_factory.mktemp("unreachable")
    consumer = tmp / "consumer.properties"
    consumer.write_text(f"bootstrap.servers=localhost:{ports['mirror-maker']}\ngroup.id=mm-warn\n"
                        "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor\n")
    producer = tmp / "producer.properties"
    producer.write_text(f"bootstrap.servers=127.0.0.1:{ports['mirror-maker']}\n")
    results = run_until_signal({
        "console-consumer": (["console-consumer", "--bootstrap-server", f"127.0.0.1:{ports['console-consumer']}",
                              "--topic", "t"], signal.SIGINT),
        "mirror-maker": (["mirror-maker", "--consumer.config", str(consumer), "--producer.config", str(producer),
                          "--include", "x.*"], signal.SIGTERM),
    })
    return {name: (ports[name], results[name]) for name in results}


def warn_lines(err: str) -> list[re.Match[str]]:
    return [m for m in (LINE.fullmatch(line) for line in err.splitlines()) if m]


def test_console_consumer_warns_per_failed_attempt_while_waiting(waited) -> None:
    port, (still_waiting, rc, err, _) = waited["console-consumer"]
    assert still_waiting, err  # still waiting, not failed
    lines = warn_lines(err)
    assert 2 <= len(lines) <= RUN_S + 1, err  # one per attempt, rate-limited to one a second
    prefix = lines[0].group(1)
    assert re.fullmatch(r"\[Consumer clientId=console-consumer, groupId=console-consumer-\d+\]", prefix)
    assert {m.group(2) for m in lines} == {f"/127.0.0.1:{port}"}
    assert err.endswith("Processed a total of 0 messages\n") and rc == 130


def test_mirror_maker_waits_for_its_clusters_and_stops_on_sigterm(waited) -> None:
    port, (still_waiting, rc, err, stop_s) = waited["mirror-maker"]
    assert still_waiting, err  # still waiting, not failed
    consumer_lines = [m for m in warn_lines(err) if m.group(1) == "[Consumer clientId=mm-warn-0, groupId=mm-warn]"]
    assert len(consumer_lines) >= 2, err
    assert {m.group(2) for m in consumer_lines} == {f"localhost/127.0.0.1:{port}"}
    assert rc == 0 and stop_s < 10, err
