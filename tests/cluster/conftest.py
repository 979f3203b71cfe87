"""Cluster fixtures: a real ZooKeeper (Debian's package, run with java on a free loopback port) and kafkapy
brokers as separate processes, each stopped by PID.

- `zookeeper` (session scope): one ZooKeeper server for every cluster test module; `.connect` is
  "127.0.0.1:port"; `.stop()` / `.start()` restart it on the same port and data dir (sessions persist).
  Each module's cluster uses its own chroot, so modules never see each other's znodes.
- `cluster_factory` (module scope): `cluster_factory(n=3, overrides=None)` -> a Cluster with brokers
  0..n-1 started (`zookeeper.connect=127.0.0.1:port/<chroot>`, fixed ports so a restarted broker comes
  back at the same address, small controlled-shutdown backoff, 6 s ZooKeeper session).
  Cluster: `.bootstrap`, `.brokers[id]` (a BrokerProc: `.port`, `.kill()` SIGKILL, `.stop()` SIGTERM
  and wait, `.start()`, `.alive`), `.add_broker(id)`, `.controller_id()` (from ZooKeeper via kazoo),
  `.zk()` (a kazoo client on the chroot), `.wait_for(predicate, timeout_s)`, `.describe(topic)` (from
  Metadata through the kafkapy AdminClient: {partition: (leader, replicas, isr)}).
Every process started here is killed at teardown, whatever the test did.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ZK_JAR = "/usr/share/java/zookeeper.jar"
ZK_CONF_DIR = "/etc/zookeeper/conf"
STARTUP_TIMEOUT_S = 60.0
LOG_ARCHIVE = "/tmp/kafkapy-cluster-logs"
SESSION_TIMEOUT_MS = 6000

BROKER_OVERRIDES = {
    "num.network.threads": "2",
    "num.io.threads": "4",
    "log.retention.check.interval.ms": "300000",
    "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS),
    "zookeeper.connection.timeout.ms": "10000",
    "controlled.shutdown.retry.backoff.ms": "500",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "replica.lag.time.max.ms": "10000",
    "leader.imbalance.check.interval.seconds": "3600",
    "group.initial.rebalance.delay.ms": "0",  # a group's first join does not wait Kafka's default 3 s
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Callable[[], Any], timeout_s: float = 30.0, interval_s: float = 0.1,
             what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as e:  # noqa: BLE001 - keep polling through transient errors
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s}s waiting for {what} (last: {last!r})")


class ZooKeeperServer:
    def __init__(self, base: Path, extra_cfg: str = "", jvm_flags: tuple[str, ...] = ()) -> None:
        """extra_cfg: more zoo.cfg lines; jvm_flags: more JVM flags (a SASL ZooKeeper's JAAS file)."""
        self.base = base
        self.jvm_flags = jvm_flags
        self.port = free_port()
        self.data_dir = base / "data"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.cfg = base / "zoo.cfg"
        self.cfg.write_text(
            "tickTime=500\ninitLimit=10\nsyncLimit=5\n"
            f"dataDir={self.data_dir}\nclientPort={self.port}\nclientPortAddress=127.0.0.1\n"
            "maxClientCnxns=0\nadmin.enableServer=false\nminSessionTimeout=1000\nmaxSessionTimeout=60000\n"
            "4lw.commands.whitelist=ruok,srvr\n" + extra_cfg)
        self.proc: subprocess.Popen[bytes] | None = None
        self.out_path = base / "zookeeper.out"

    @property
    def connect(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        java = shutil.which("java")
        assert java is not None
        argv = [java, "-Xmx256m", "-Dzookeeper.admin.enableServer=false", *self.jvm_flags,
                "-cp", f"{ZK_CONF_DIR}:{ZK_JAR}", "org.apache.zookeeper.server.ZooKeeperServerMain", str(self.cfg)]
        with open(self.out_path, "ab") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.proc.returncode}:\n{self.out_path.read_text()}")
            if self._ruok():
                return
            time.sleep(0.1)
        raise TimeoutError(f"ZooKeeper did not start:\n{self.out_path.read_text()}")

    def _ruok(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"ruok")
                return s.recv(4) == b"imok"
        except OSError:
            return False

    def stop(self, sig: int = signal.SIGTERM) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, sig)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(15)
        self.proc = None


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    if not (os.path.exists(ZK_JAR) and shutil.which("java")):
        pytest.skip("Debian's zookeeper package (and java) is not installed")
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    try:
        yield server
    finally:
        server.stop(signal.SIGKILL)


class BrokerProc:
    def __init__(self, cluster: Cluster, broker_id: int, port: int, log_dir: str,
                 overrides: dict[str, str]) -> None:
        self.cluster = cluster
        self.broker_id = broker_id
        self.port = port
        self.log_dir = log_dir
        self.overrides = overrides
        self.proc: subprocess.Popen[bytes] | None = None
        self.out_path = os.path.join(cluster.base, f"broker-{broker_id}.out")
        self.run_dir = os.path.join(cluster.base, f"run-{broker_id}")

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        props = dict(BROKER_OVERRIDES)
        props.update({"broker.id": str(self.broker_id), "node.id": str(self.broker_id), "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                      "log.dirs": self.log_dir, "zookeeper.connect": self.cluster.zk_connect})
        props.update(self.cluster.overrides)
        props.update(self.overrides)
        argv = [sys.executable, "-m", "kafkapy.cli.main", "server-start"]
        for k, v in props.items():
            argv += ["--override", f"{k}={v}"]
        return argv

    def start(self, wait: bool = True) -> BrokerProc:
        assert not self.alive
        if self.proc is not None and self.broker_id in self.cluster.registered_brokers():
            # A SIGKILLed broker's registration lives until its session times out; Kafka refuses to start a
            # broker whose id is still registered, so a restart waits for it to go.
            wait_for(lambda: self.broker_id not in self.cluster.registered_brokers(),
                     SESSION_TIMEOUT_MS / 1000 + 20, what=f"broker {self.broker_id}'s old registration to expire")
        os.makedirs(self.run_dir, exist_ok=True)
        env = dict(os.environ, KAFKAPY_RUN_DIR=self.run_dir, **self.cluster.env)
        with open(self.out_path, "ab") as out:
            self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, env=env)
        if wait:
            self.wait_started()
        return self

    def wait_started(self) -> None:
        assert self.proc is not None
        record = os.path.join(self.run_dir, f"server-{self.proc.pid}.json")
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker {self.broker_id} exited with {self.proc.returncode}:\n{self.output()}")
            if os.path.exists(record):
                return
            time.sleep(0.05)
        raise TimeoutError(f"broker {self.broker_id} did not start:\n{self.output()}")

    def kill(self) -> None:
        """SIGKILL: no controlled shutdown, no flush; its ZooKeeper session lives on until it times out."""
        if self.alive:
            assert self.proc is not None
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def stop(self, timeout_s: float = 60.0) -> int:
        """SIGTERM: a graceful (controlled) shutdown."""
        assert self.proc is not None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        return self.proc.wait(timeout_s)

    def output(self) -> str:
        try:
            return Path(self.out_path).read_text(errors="replace")
        except OSError:
            return ""


class Cluster:
    def __init__(self, zookeeper: ZooKeeperServer, base: str, overrides: dict[str, str] | None = None) -> None:
        self.zookeeper = zookeeper
        self.base = base
        self.chroot = f"/kafkapy-{uuid.uuid4().hex[:8]}"
        self.overrides = dict(overrides or {})
        self.env: dict[str, str] = {}  # more environment for the broker processes (KAFKA_OPTS=-D...)
        self.brokers: dict[int, BrokerProc] = {}
        self._zk: Any = None

    @property
    def zk_connect(self) -> str:
        return self.zookeeper.connect + self.chroot

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values() if b.alive)

    def add_broker(self, broker_id: int, overrides: dict[str, str] | None = None, start: bool = True) -> BrokerProc:
        log_dir = os.path.join(self.base, f"broker-{broker_id}-data")
        broker = BrokerProc(self, broker_id, free_port(), log_dir, dict(overrides or {}))
        self.brokers[broker_id] = broker
        if start:
            broker.start()
        return broker

    def start_all(self) -> None:
        """Start every added broker at once (they boot in parallel), then wait until each is registered in
        ZooKeeper and a controller is elected."""
        for broker in self.brokers.values():
            broker.start(wait=False)
        for broker in self.brokers.values():
            broker.wait_started()
        ids = sorted(self.brokers)
        wait_for(lambda: self.registered_brokers() == ids and self.controller_id() is not None, 30,
                 what="every broker registered and a controller elected")

    def zk(self) -> Any:
        if self._zk is None:
            from kazoo.client import KazooClient

            self._zk = KazooClient(hosts=self.zk_connect, timeout=10)
            self._zk.start(30)
        return self._zk

    def zk_json(self, path: str) -> Any:
        from kazoo.exceptions import NoNodeError

        try:
            data, _ = self.zk().get(path)
        except NoNodeError:
            return None
        return json.loads(data) if data else None

    def controller_id(self) -> int | None:
        data = self.zk_json("/controller")
        return int(data["brokerid"]) if data else None

    def registered_brokers(self) -> list[int]:
        from kazoo.exceptions import NoNodeError

        try:
            return sorted(int(c) for c in self.zk().get_children("/brokers/ids"))
        except NoNodeError:
            return []

    def partition_state(self, topic: str, partition: int) -> dict[str, Any] | None:
        return self.zk_json(f"/brokers/topics/{topic}/partitions/{partition}/state")

    def wait_for(self, predicate: Callable[[], Any], timeout_s: float = 30.0, what: str = "condition") -> Any:
        return wait_for(predicate, timeout_s, what=what)

    def admin(self, bootstrap: str | None = None) -> Any:
        from kafkapy.client.admin import AdminClient

        return AdminClient({"bootstrap.servers": bootstrap or self.bootstrap, "request.timeout.ms": 10000})

    def describe(self, topic: str, bootstrap: str | None = None) -> dict[int, tuple[int, list[int], list[int]]]:
        """{partition: (leader, replicas, isr)} as a broker's Metadata answer shows it."""
        admin = self.admin(bootstrap)
        try:
            desc = admin.describe_topics([topic])[topic]
            return {p.partition: (p.leader.node_id if p.leader is not None else -1, [r.node_id for r in p.replicas],
                                  [r.node_id for r in p.isr]) for p in desc.partitions}
        finally:
            admin.close()

    def metadata_controller(self, bootstrap: str) -> int | None:
        """The controller id a broker's own metadata reports."""
        admin = self.admin(bootstrap)
        try:
            node = admin.describe_cluster(timeout_ms=5000).controller
            return node.node_id if node is not None else None
        finally:
            admin.close()

    def save_logs(self) -> None:
        """Copy the broker logs to /tmp/kafkapy-cluster-logs/<chroot> (pytest's tmp dirs rotate fast on a
        shared machine); kept for the last few clusters only."""
        dest = os.path.join(LOG_ARCHIVE, self.chroot.strip("/"))
        os.makedirs(dest, exist_ok=True)
        for broker in self.brokers.values():
            if os.path.exists(broker.out_path):
                shutil.copy(broker.out_path, dest)
        kept = sorted((os.path.join(LOG_ARCHIVE, d) for d in os.listdir(LOG_ARCHIVE)), key=os.path.getmtime)
        for old in kept[:-6]:
            shutil.rmtree(old, ignore_errors=True)

    def stop_all(self) -> None:
        for broker in self.brokers.values():
            if broker.alive:
                broker.kill()
        if self._zk is not None:
            try:
                self._zk.stop()
                self._zk.close()
            except Exception:  # noqa: BLE001 - teardown
                pass
            self._zk = None


@pytest.fixture(scope="module")
def cluster_factory(zookeeper: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    clusters: list[Cluster] = []

    def make(n: int = 3, overrides: dict[str, str] | None = None) -> Cluster:
        cluster = Cluster(zookeeper, str(tmp_path_factory.mktemp("cluster")), overrides)
        clusters.append(cluster)
        for broker_id in range(n):
            cluster.add_broker(broker_id, start=False)
        cluster.start_all()
        return cluster

    try:
        yield make
    finally:
        for cluster in clusters:
            cluster.stop_all()
            try:
                cluster.save_logs()
            except OSError:
                pass
