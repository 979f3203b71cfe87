"""Replication benchmark: what RF=3 costs, and how fast a follower catches up. Figures only, not a test.

In one run, with confluent-kafka (librdkafka) as the client:
  1. one kafkapy broker (embedded mode): acks=all produce throughput to an RF=1 topic;
  2. three kafkapy brokers on Debian's ZooKeeper (separate processes, loopback): acks=all produce throughput
     to an RF=3 topic with min.insync.replicas=2; printed as a ratio to (1) (target >= 0.33);
  3. follower catch-up: one broker of the three is stopped (SIGTERM), --catchup-mb of records go to an RF=2
     topic it follows, it is restarted, and the rate at which its copy of the partition reaches the leader's
     size is measured from its restart (MB/s, the fetcher's pace including start-up).
Every process started here is stopped by PID; every loop is bounded.

Usage: .venv/bin/python bench/bench_replication.py [--messages 100000] [--size 1000] [--catchup-mb 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ZK_JAR = "/usr/share/java/zookeeper.jar"
ZK_CONF_DIR = "/etc/zookeeper/conf"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait(cond, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Proc:
    def __init__(self, argv: list[str], out: Path, env: dict[str, str] | None = None) -> None:
        self.argv, self.out, self.env = argv, out, env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Proc:
        with open(self.out, "ab") as f:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                                         env=self.env)
        return self

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 60) -> None:
        p = self.proc
        if p is not None and p.poll() is None:
            os.kill(p.pid, sig)
            try:
                p.wait(timeout_s)
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait(10)
        self.proc = None


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Broker:
    def __init__(self, base: Path, broker_id: int, zk_connect: str | None) -> None:
        self.id = broker_id
        self.port = free_port()
        self.log_dir = base / f"broker-{broker_id}"
        props = {"broker.id": str(broker_id), "node.id": str(broker_id), "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                 "log.dirs": str(self.log_dir), "num.network.threads": "2", "num.io.threads": "4",
                 "offsets.topic.replication.factor": "1", "log.retention.check.interval.ms": "300000"}
        if zk_connect:
            props.update({"zookeeper.connect": zk_connect, "zookeeper.session.timeout.ms": "6000",
                          "replica.lag.time.max.ms": "10000"})
        argv = [sys.executable, "-m", "kafkapy.cli.main", "server-start"]
        for k, v in props.items():
            argv += ["--override", f"{k}={v}"]
        self.proc = Proc(argv, base / f"broker-{broker_id}.out")

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> Broker:
        self.proc.start()
        wait(lambda: port_open(self.port), 60, f"broker {self.id}")
        return self

    def partition_bytes(self, topic: str, partition: int = 0) -> int:
        d = self.log_dir / f"{topic}-{partition}"
        return sum(f.stat().st_size for f in d.glob("*.log")) if d.exists() else 0


def start_zookeeper(base: Path) -> tuple[Proc, str]:
    if not (os.path.exists(ZK_JAR) and shutil.which("java")):
        raise SystemExit("Debian's zookeeper package (and java) is needed: apt-get install zookeeper")
    port = free_port()
    cfg = base / "zoo.cfg"
    cfg.write_text(f"tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir={base / 'zk'}\nclientPort={port}\n"
                   "clientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n")
    zk = Proc([shutil.which("java") or "java", "-Xmx256m", "-cp", f"{ZK_CONF_DIR}:{ZK_JAR}",
               "org.apache.zookeeper.server.ZooKeeperServerMain", str(cfg)], base / "zookeeper.out").start()
    wait(lambda: port_open(port), 60, "ZooKeeper")
    return zk, f"127.0.0.1:{port}/bench"


def create_topic(bootstrap: str, topic: str, partitions: int, rf: int, configs: dict[str, str]) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, rf, config=configs)])[topic].result(60)


def wait_isr(bootstrap: str, topic: str, rf: int) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})

    def full() -> bool:
        md = admin.list_topics(topic, timeout=10).topics.get(topic)
        return md is not None and not md.error and len(md.partitions) > 0 and all(
            len(p.isrs) == rf and p.leader >= 0 for p in md.partitions.values())
    wait(full, 60, f"{topic}'s ISR")


def produce(bootstrap: str, topic: str, n: int, size: int, acks: str = "all") -> float:
    """Records/s of an acks=all produce of n records of `size` bytes (timed to the last acknowledgement)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 5, "batch.size": 262144,
                         "queue.buffering.max.messages": 500000, "enable.idempotence": False})
    value = b"v" * size
    errors = [0]

    def report(err, _msg) -> None:
        if err is not None:
            errors[0] += 1

    start = time.perf_counter()
    for i in range(n):
        while True:
            try:
                producer.produce(topic, value=value, key=b"%d" % (i % 1000), on_delivery=report)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(600) != 0:
        raise RuntimeError("produce did not finish")
    elapsed = time.perf_counter() - start
    if errors[0]:
        raise RuntimeError(f"{errors[0]} records failed")
    return n / elapsed


@contextmanager
def cluster_processes(base: Path) -> Iterator[list[Proc]]:
    """The processes a run appends; on failure each one's last output lines go to stderr; at the end every
    one is stopped and `base` removed."""
    procs: list[Proc] = []
    try:
        yield procs
    except Exception:
        for out in sorted(base.rglob("*.out")):
            print(f"--- {out}:\n" + "\n".join(out.read_text(errors="replace").splitlines()[-15:]), file=sys.stderr)
        raise
    finally:
        for p in reversed(procs):
            p.stop()
        shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--catchup-mb", type=int, default=200)
    args = ap.parse_args(argv)
    n, size = args.messages, args.size
    base = Path(tempfile.mkdtemp(prefix="bench-replication-"))
    with cluster_processes(base) as procs:
        single = Broker(base / "single", 0, None)
        (base / "single").mkdir()
        procs.append(single.proc)
        single.start()
        create_topic(single.bootstrap, "rf1", args.partitions, 1, {})
        produce(single.bootstrap, "rf1", min(n, 10_000), size)  # warm-up
        rf1 = produce(single.bootstrap, "rf1", n, size)
        single.proc.stop()

        (base / "cluster").mkdir()
        zk, zk_connect = start_zookeeper(base / "cluster")
        procs.append(zk)
        brokers = [Broker(base / "cluster", i, zk_connect) for i in range(3)]
        procs.extend(b.proc for b in brokers)
        for b in brokers:
            b.proc.start()
        for b in brokers:
            wait(lambda b=b: port_open(b.port), 60, f"broker {b.id}")
        bootstrap = ",".join(b.bootstrap for b in brokers)
        time.sleep(2)  # registrations and the controller election
        create_topic(bootstrap, "rf3", args.partitions, 3, {"min.insync.replicas": "2"})
        wait_isr(bootstrap, "rf3", 3)
        produce(bootstrap, "rf3", min(n, 10_000), size)  # warm-up
        rf3 = produce(bootstrap, "rf3", n, size)

        print(f"acks=all produce, {n} records of {size} B, {args.partitions} partitions (confluent-kafka)")
        print(f"  1 broker,  RF=1: {rf1:10.0f} records/s  {rf1 * size / 1e6:7.1f} MB/s")
        print(f"  3 brokers, RF=3: {rf3:10.0f} records/s  {rf3 * size / 1e6:7.1f} MB/s  "
              f"(min.insync.replicas=2)")
        print(f"  ratio RF=3 / RF=1: {rf3 / rf1:.2f} (target >= 0.33)")

        # Follower catch-up: broker 2 misses catchup-mb of records, then fetches them back.
        create_topic(bootstrap, "catchup", 1, 2, {})
        wait_isr(bootstrap, "catchup", 2)
        from confluent_kafka.admin import AdminClient

        md = AdminClient({"bootstrap.servers": bootstrap}).list_topics("catchup", timeout=10).topics["catchup"]
        leader_id = md.partitions[0].leader
        follower = next(brokers[r] for r in md.partitions[0].replicas if r != leader_id)
        leader = brokers[leader_id]
        follower.proc.stop()
        count = args.catchup_mb * 1_000_000 // size
        produce(leader.bootstrap, "catchup", count, size, acks="1")
        target = leader.partition_bytes("catchup")
        before = follower.partition_bytes("catchup")
        start = time.perf_counter()
        follower.start()
        first: list[tuple[float, int]] = []  # (time, bytes) when the fetcher's first bytes were seen

        def caught_up() -> bool:
            size = follower.partition_bytes("catchup")
            if not first and size > before:
                first.append((time.perf_counter(), size))
            return size >= target
        wait(caught_up, 600, "the follower's catch-up")
        end = time.perf_counter()
        elapsed = end - start
        moved = (target - before) / 1e6
        print(f"follower catch-up: {moved:.1f} MB in {elapsed:.2f} s from restart = {moved / elapsed:.1f} MB/s "
              "(replica.fetch.max.bytes=1 MiB, one fetcher)")
        if first and end > first[0][0]:
            fetched = (target - first[0][1]) / 1e6
            print(f"  from its first fetched bytes: {fetched:.1f} MB in {end - first[0][0]:.2f} s = "
                  f"{fetched / (end - first[0][0]):.1f} MB/s")
        return 0


if __name__ == "__main__":
    sys.exit(main())
