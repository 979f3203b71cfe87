"""Long-running tools facing an unreachable broker (issue 17 item 10): console-consumer without --timeout-ms
and mirror-maker keep waiting, as Kafka's clients do, and say why with Kafka's NetworkClient WARN line per
failed connection attempt (at most one per node per second); SIGINT / SIGTERM still stop them cleanly."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

LINE = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] WARN (\[.*?\]) Connection to node -1 \((.*?)\) could "
                  r"not be established\. Node may not be available\. \(org\.apache\.kafka\.clients\.NetworkClient\)")
RUN_S = 3.5


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


def run_until_signal(argv: list[str], sig: int) -> tuple[int, str, float]:
    proc = subprocess.Popen([sys.executable, "-m", "kafkapy.cli.main", *argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(RUN_S)
        assert proc.poll() is None, proc.communicate()[1].decode()  # still waiting, not failed
        proc.send_signal(sig)
        start = time.monotonic()
        _, err = proc.communicate(timeout=20)
        return proc.returncode, err.decode(), time.monotonic() - start
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def warn_lines(err: str) -> list[re.Match[str]]:
    return [m for m in (LINE.fullmatch(line) for line in err.splitlines()) if m]


def test_console_consumer_warns_per_failed_attempt_while_waiting() -> None:
    port = closed_port()
    rc, err, _ = run_until_signal(["console-consumer", "--bootstrap-server", f"127.0.0.1:{port}", "--topic", "t"],
                                  signal.SIGINT)
    lines = warn_lines(err)
    assert 2 <= len(lines) <= RUN_S + 1, err  # one per attempt, rate-limited to one a second
    prefix = lines[0].group(1)
    assert re.fullmatch(r"\[Consumer clientId=console-consumer, groupId=console-consumer-\d+\]", prefix)
    assert {m.group(2) for m in lines} == {f"/127.0.0.1:{port}"}
    assert err.endswith("Processed a total of 0 messages\n") and rc == 130


def test_mirror_maker_waits_for_its_clusters_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = closed_port()
    consumer = tmp_path / "consumer.properties"
    consumer.write_text(f"bootstrap.servers=localhost:{port}\ngroup.id=mm-warn\n"
                        "partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor\n")
    producer = tmp_path / "producer.properties"
    producer.write_text(f"bootstrap.servers=127.0.0.1:{port}\n")
    rc, err, stop_s = run_until_signal(["mirror-maker", "--consumer.config", str(consumer), "--producer.config",
                                        str(producer), "--include", "x.*"], signal.SIGTERM)
    consumer_lines = [m for m in warn_lines(err) if m.group(1) == "[Consumer clientId=mm-warn-0, groupId=mm-warn]"]
    assert len(consumer_lines) >= 2, err
    assert {m.group(2) for m in consumer_lines} == {f"localhost/127.0.0.1:{port}"}
    assert rc == 0 and stop_s < 10, err
