"""Partition count on one broker: creation time, Metadata latency and restart time (issue 20 item 7).

    python bench/bench_partitions.py [--counts 1000,5000,10000] [--per-topic 100] [--dir /tmp/x]
                                     [--override num.recovery.threads.per.data.dir=4 ...]

For each count N: starts a broker subprocess (`kafkapy server-start`, embedded metadata, its own log
dir), creates N partitions as N/--per-topic topics in one CreateTopics request and times it until
every partition has a leader in Metadata; times a Metadata request for all topics (v12, the median of
10, from send to the last byte of the response); stops the broker cleanly (SIGTERM) and times a
restart from process start until Metadata again shows every partition led; then kills the broker with
SIGKILL (no clean-shutdown marker: every log is recovered past its recovery point) and times the recovery
the same way. Kafka's targets: <= 10 s,
<= 50 ms and <= 5 s at 10,000 partitions. On a shared machine wall times follow its load, so the broker's
own CPU seconds (utime + stime from /proc/<pid>/stat) are printed beside creation, restart and recovery, and the
Metadata latency's minimum beside its median. Every wait is bounded (--timeout per step); the broker is
stopped by PID. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kafkapy.protocol.header import RequestHeader, decode_response, encode_request  # noqa: E402
from kafkapy.protocol.messages.create_topics import CreateTopicsRequest  # noqa: E402
from kafkapy.protocol.messages.metadata import MetadataRequest  # noqa: E402


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Broker:
    def __init__(self, log_dir: str, run_dir: str, timeout_s: float, overrides: dict[str, str] | None = None) -> None:
        self.log_dir, self.run_dir, self.timeout_s = log_dir, run_dir, timeout_s
        self.overrides = dict(overrides or {})
        self.proc: subprocess.Popen | None = None
        self.port = -1

    def start(self) -> float:
        """Start; the seconds until the run-dir record names the bound port."""
        os.makedirs(self.run_dir, exist_ok=True)
        for name in os.listdir(self.run_dir):
            os.unlink(os.path.join(self.run_dir, name))
        argv = [sys.executable, "-m", "kafkapy.cli.main", "server-start"]
        for k, v in {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": self.log_dir,
                     "num.network.threads": "2", "num.io.threads": "4", **self.overrides}.items():
            argv += ["--override", f"{k}={v}"]
        start = time.perf_counter()
        out = open(os.path.join(self.run_dir, "..", "broker.out"), "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                     env=dict(os.environ, KAFKAPY_RUN_DIR=self.run_dir))
        out.close()
        record = os.path.join(self.run_dir, f"server-{self.proc.pid}.json")
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker exited with {self.proc.returncode}")
            try:
                with open(record) as f:
                    self.port = int(json.load(f)["boundPort"])
                return time.perf_counter() - start
            except (OSError, ValueError, KeyError, TypeError):
                time.sleep(0.01)
        raise TimeoutError("broker did not start")

    def kill(self) -> None:
        """SIGKILL, as a crash: the log dirs keep no clean-shutdown marker."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(self.timeout_s)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(30)


class Wire:
    def __init__(self, port: int, timeout_s: float) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def _recv_exact(self, n: int) -> bytes:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            k = self.sock.recv_into(view[got:])
            if not k:
                raise ConnectionError("closed")
            got += k
        return bytes(buf)

    def timed_request(self, body: Any, version: int) -> tuple[float, Any]:
        """(seconds from send to the response's last byte, decoded response)."""
        self.correlation_id += 1
        data = encode_request(RequestHeader(body.API_KEY, version, self.correlation_id, "bench"), body)
        start = time.perf_counter()
        self.sock.sendall(data)
        frame = self._recv_exact(int.from_bytes(self._recv_exact(4), "big"))
        elapsed = time.perf_counter() - start
        return elapsed, decode_response(frame, body.API_KEY, version)[1]


def all_led(wire: Wire, expected: int) -> bool:
    _, md = wire.timed_request(MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)
    led = sum(1 for t in md.topics if t.error_code == 0 for p in t.partitions if p.error_code == 0 and p.leader_id >= 0)
    return led == expected


def wait_all_led(port: int, expected: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            wire = Wire(port, timeout_s)
        except OSError:
            time.sleep(0.01)
            continue
        try:
            while time.monotonic() < deadline:
                if all_led(wire, expected):
                    return
                time.sleep(0.02)
        finally:
            wire.close()
    raise TimeoutError(f"not every one of {expected} partitions has a leader after {timeout_s}s")


def run_count(n: int, per_topic: int, base: str, timeout_s: float,
              overrides: dict[str, str] | None = None) -> dict[str, float]:
    work = tempfile.mkdtemp(prefix=f"bench-partitions-{n}-", dir=base)
    broker = Broker(os.path.join(work, "logs"), os.path.join(work, "run"), timeout_s, overrides)
    try:
        broker.start()
        topics = [CreateTopicsRequest.CreatableTopic(name=f"bench-{i:04d}", num_partitions=min(per_topic, n - i * per_topic),
                                                      replication_factor=1, assignments=[], configs=[])
                  for i in range((n + per_topic - 1) // per_topic)]
        wire = Wire(broker.port, timeout_s)
        assert broker.proc is not None
        try:
            cpu_before = cpu_seconds(broker.proc.pid)
            start = time.perf_counter()
            _, resp = wire.timed_request(CreateTopicsRequest(topics=topics, timeout_ms=int(timeout_s * 1000)), 5)
            errors = {t.name: t.error_code for t in resp.topics if t.error_code}
            if errors:
                raise RuntimeError(f"CreateTopics errors: {dict(list(errors.items())[:5])}")
            wait_all_led(broker.port, n, timeout_s)
            create_s = time.perf_counter() - start
            create_cpu = cpu_seconds(broker.proc.pid) - cpu_before
            samples = [wire.timed_request(MetadataRequest(topics=None, allow_auto_topic_creation=False), 12)[0]
                       for _ in range(10)]
        finally:
            wire.close()
        broker.stop()
        start = time.perf_counter()
        broker.start()
        wait_all_led(broker.port, n, timeout_s)
        restart_s = time.perf_counter() - start
        restart_cpu = cpu_seconds(broker.proc.pid)
        broker.kill()
        start = time.perf_counter()
        broker.start()
        wait_all_led(broker.port, n, timeout_s)
        recovery_s = time.perf_counter() - start
        recovery_cpu = cpu_seconds(broker.proc.pid)
        return {"create_s": create_s, "create_cpu": create_cpu, "metadata_ms": statistics.median(samples) * 1000,
                "metadata_min_ms": min(samples) * 1000, "restart_s": restart_s, "restart_cpu": restart_cpu,
                "recovery_s": recovery_s, "recovery_cpu": recovery_cpu}
    except (RuntimeError, TimeoutError, OSError) as e:
        try:
            with open(os.path.join(work, "broker.out"), errors="replace") as f:
                tail = [line for line in f.read().splitlines() if " ERROR " in line or "Error" in line][-5:]
        except OSError:
            tail = []
        raise RuntimeError(f"{e}; broker log: {tail}") from None
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--counts", default="1000,5000,10000")
    p.add_argument("--per-topic", type=int, default=100)
    p.add_argument("--dir", default=None)
    p.add_argument("--timeout", type=float, default=180.0, help="bound of each step, seconds")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker config (e.g. num.recovery.threads.per.data.dir=4); repeatable")
    args = p.parse_args(argv)
    overrides = dict(o.split("=", 1) for o in args.override)
    base = args.dir or tempfile.gettempdir()
    print(f"{'partitions':>10} {'create s':>9} {'(cpu s)':>8} {'metadata ms':>12} {'(min)':>6} {'restart s':>10} "
          f"{'(cpu s)':>8} {'kill -9 recovery s':>18} {'(cpu s)':>8}")
    for n in (int(x) for x in args.counts.split(",")):
        try:
            r = run_count(n, args.per_topic, base, args.timeout, overrides)
        except (RuntimeError, TimeoutError, OSError) as e:
            print(f"{n:>10} failed: {e}")
            continue
        print(f"{n:>10} {r['create_s']:>9.2f} {r['create_cpu']:>8.2f} {r['metadata_ms']:>12.1f} "
              f"{r['metadata_min_ms']:>6.1f} {r['restart_s']:>10.2f} {r['restart_cpu']:>8.2f} "
              f"{r['recovery_s']:>18.2f} {r['recovery_cpu']:>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
