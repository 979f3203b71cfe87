"""The shipped configuration starts brokers (issue 17 item 15): config/server.properties as one embedded node
and config/cluster/server-{0,1,2}.properties as a 3-broker ZooKeeper cluster, driven through the Kafka script
names pip installs (kafka-topics.sh from [project.scripts]). Only the listener port, the log dir and the
ZooKeeper address are overridden (ports in use on a shared host); everything else is read from the files."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _script(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: pip install -e . installs Kafka's script names")
    return path


class Node:
    def __init__(self, tmp: Path, props: Path, overrides: dict[str, str]) -> None:
        self.port = free_port()
        self.run_dir = tmp / f"run-{self.port}"
        self.run_dir.mkdir(parents=True)
        self.out = tmp / f"broker-{self.port}.out"
        argv = [str(BIN / "kafkapy"), "server-start", str(props),
                "--override", f"listeners=PLAINTEXT://127.0.0.1:{self.port}"]
        for k, v in overrides.items():
            argv += ["--override", f"{k}={v}"]
        with open(self.out, "wb") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         env=dict(os.environ, KAFKAPY_RUN_DIR=str(self.run_dir)))

    def wait_started(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        record = self.run_dir / f"server-{self.proc.pid}.json"
        while not record.exists():
            assert self.proc.poll() is None, self.out.read_text(errors="replace")
            assert time.monotonic() < deadline, self.out.read_text(errors="replace")
            time.sleep(0.05)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


def _topics(bootstrap: str, *args: str) -> str:
    r = subprocess.run([_script("kafka-topics.sh"), "--bootstrap-server", bootstrap, *args], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_server_properties_starts_the_embedded_node(tmp_path: Path) -> None:
    node = Node(tmp_path, ROOT / "config" / "server.properties", {"log.dirs": str(tmp_path / "logs")})
    try:
        node.wait_started()
        bootstrap = f"127.0.0.1:{node.port}"
        _topics(bootstrap, "--create", "--topic", "first-contact")
        assert _topics(bootstrap, "--list").split() == ["first-contact"]
        # num.partitions=1 and a single replica, from the file
        assert "PartitionCount: 1\tReplicationFactor: 1" in _topics(bootstrap, "--describe", "--topic", "first-contact")
        assert "started" in node.out.read_text()
    finally:
        node.stop()
    assert node.proc.returncode == 0


def test_cluster_properties_start_three_replicating_brokers(zookeeper, tmp_path: Path) -> None:
    chroot = f"/shipped-{uuid.uuid4().hex[:8]}"  # the files' /kafkapy chroot, made unique per run
    nodes = [Node(tmp_path, ROOT / "config" / "cluster" / f"server-{i}.properties",
                  {"log.dirs": str(tmp_path / f"broker-{i}"), "zookeeper.connect": zookeeper.connect + chroot})
             for i in range(3)]
    try:
        for node in nodes:
            node.wait_started()
        bootstrap = ",".join(f"127.0.0.1:{n.port}" for n in nodes)
        _topics(bootstrap, "--create", "--topic", "replicated")  # default.replication.factor=3 from the files
        deadline = time.monotonic() + 30
        while True:
            text = _topics(bootstrap, "--describe", "--topic", "replicated")
            m = re.search(r"Replicas: ([\d,]+)\tIsr: ([\d,]+)", text)
            if m and len(m.group(2).split(",")) == 3:
                break
            assert time.monotonic() < deadline, text
            time.sleep(0.2)
        assert sorted(m.group(1).split(",")) == ["0", "1", "2"]
    finally:
        # What is checked here is the start-up; the embedded node above checks a graceful stop. Three
        # controlled shutdowns in a row, each waiting on the controller, only cost time.
        for node in nodes:
            node.kill()
