"""zookeeper-server-start -daemon / zookeeper-server-stop round trip with Debian's ZooKeeper and the shipped
Kafka-style config (port and dataDir changed), the foreground mode stopped by SIGTERM, and the one-line
error when no ZooKeeper is installed."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkapy.tools.zookeeper_server import DEBIAN_JAR as ZK_JAR

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def poll(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)

pytestmark = pytest.mark.skipif(not (os.path.exists(ZK_JAR) and shutil.which("java")),
                                reason="Debian's zookeeper package (and java) is not installed")


def tool(env: dict[str, str], cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[dict[str, str], Path, int]:
    port = free_port()
    shipped = (REPO / "config" / "zookeeper.properties").read_text()
    assert "clientPort=2181" in shipped and "admin.enableServer=false" in shipped
    (tmp_path / "zookeeper.properties").write_text(
        shipped.replace("clientPort=2181", f"clientPort={port}").replace("dataDir=/tmp/zookeeper", "dataDir=zk"))
    env = dict(os.environ, KAFKAPY_RUN_DIR=str(tmp_path / "run"), LOG_DIR=str(tmp_path / "logs"),
               KAFKA_HEAP_OPTS="-Xmx128m")
    yield env, tmp_path, port
    # whatever the test did, nothing it started stays up
    for pid_file in (tmp_path / "run").glob("zookeeper-*.pid"):
        try:
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def test_daemon_start_stop_round_trip(setup) -> None:
    env, cwd, port = setup
    r = tool(env, cwd, "zookeeper-server-start", "-daemon", "zookeeper.properties")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    pid = int((cwd / "run" / f"zookeeper-{port}.pid").read_text())
    cfg = (cwd / "run" / f"zookeeper-{port}.cfg").read_text().splitlines()
    assert f"dataDir={cwd / 'zk'}" in cfg and "admin.enableServer=false" not in cfg
    r = tool(env, cwd, "zookeeper-shell", f"127.0.0.1:{port}", "create", "/kafkapy", "up")
    assert r.stdout.splitlines()[-1] == "Created /kafkapy"
    assert (cwd / "zk" / "version-2").is_dir() and (cwd / "logs" / "zookeeper.out").exists()
    r = tool(env, cwd, "zookeeper-server-start", "-daemon", "zookeeper.properties")
    assert r.returncode == 1 and f"already uses client port {port}" in r.stderr

    assert tool(env, cwd, "zookeeper-server-stop").returncode == 0
    assert not os.path.exists(f"/proc/{pid}") or b"QuorumPeerMain" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert not (cwd / "run" / f"zookeeper-{port}.pid").exists()
    r = tool(env, cwd, "zookeeper-server-stop")
    assert (r.returncode, r.stderr) == (1, "No zookeeper server to stop\n")

    # the data survives a restart
    assert tool(env, cwd, "zookeeper-server-start", "-daemon", "zookeeper.properties").returncode == 0
    r = tool(env, cwd, "zookeeper-shell", f"127.0.0.1:{port}", "get", "/kafkapy")
    assert r.stdout.splitlines()[-1] == "up"
    assert tool(env, cwd, "zookeeper-server-stop").returncode == 0


def test_foreground_start_stops_with_sigterm(setup) -> None:
    env, cwd, port = setup
    proc = subprocess.Popen([sys.executable, "-m", "kafkapy.cli.main", "zookeeper-server-start",
                             "zookeeper.properties"], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        poll(lambda: tool(env, cwd, "zookeeper-shell", f"127.0.0.1:{port}", "ls", "/").returncode == 0,
                 60, "foreground ZooKeeper")
        java_pid = int((cwd / "run" / f"zookeeper-{port}.pid").read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 143
        poll(lambda: not os.path.exists(f"/proc/{java_pid}") or
                 Path(f"/proc/{java_pid}/stat").read_text().split()[2] == "Z", 30, "java gone")
        assert not (cwd / "run" / f"zookeeper-{port}.pid").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_missing_installation_is_one_line(setup) -> None:
    env, cwd, _port = setup
    env = dict(env, KAFKAPY_ZOOKEEPER_JAR=str(cwd / "none.jar"))
    start = time.monotonic()
    r = tool(env, cwd, "zookeeper-server-start", "zookeeper.properties")
    assert r.returncode == 1 and time.monotonic() - start < 30
    assert r.stderr == (f"Error: ZooKeeper is not installed (no {cwd / 'none.jar'}): install Debian's package "
                        "`zookeeper` (apt-get install zookeeper)\n")
    r = tool(env, cwd, "zookeeper-server-start")
    assert r.returncode == 2 and "USAGE: zookeeper-server-start [-daemon] zookeeper.properties" in r.stderr
