"""Consumer-group rebalance benchmark: time from subscribe (JoinGroup) to the first record, for 1, 2 and 8
confluent-kafka (librdkafka) members of one group on an 8-partition topic.

The broker runs as a subprocess (`kafkapy server-start`, group.initial.rebalance.delay.ms=0 unless
--initial-delay-ms says otherwise) so it does not share a GIL with the clients. Every member polls
on its own thread; a run ends when every member has read a record (each owns at least one
partition, so the group has settled). Reported per member count: the time until the first member
read its first record and until all members did (median and max over --runs). librdkafka's
heartbeat.interval.ms bounds how fast an already-joined member learns of a rebalance, so the runs
are repeated with the client default (3000 ms) and with 500 ms. A warm-up group creates
__consumer_offsets first (its creation is not counted).

    .venv/bin/python bench/bench_rebalance.py [--runs 3] [--members 1,2,8] [--initial-delay-ms 0]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from bench_support import stop_process
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 8
TOPIC = "bench-rebalance"
RUN_TIMEOUT_S = 60.0


def start_broker(log_dir: str, run_dir: str, initial_delay_ms: int) -> tuple[subprocess.Popen, int]:
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": log_dir,
                 "group.initial.rebalance.delay.ms": str(initial_delay_ms), "offsets.topic.num.partitions": "10",
                 "offsets.topic.replication.factor": "1", "num.io.threads": "4", "num.network.threads": "2"}
    argv = [sys.executable, "-m", "kafkapy.cli.main", "server-start"]
    for k, v in overrides.items():
        argv += ["--override", f"{k}={v}"]
    out = open(os.path.join(run_dir, "broker.out"), "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                            env=dict(os.environ, KAFKAPY_RUN_DIR=run_dir))
    record = os.path.join(run_dir, f"server-{proc.pid}.json")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"broker exited with {proc.returncode}")
        try:
            with open(record) as f:
                return proc, int(json.load(f)["boundPort"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("broker did not start")


def prepare(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)]).values():
        f.result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for p in range(PARTITIONS):
        for i in range(100):
            producer.produce(TOPIC, value=b"record-%d" % i, partition=p)
    if producer.flush(30):
        raise SystemExit("produce failed")


def one_run(bootstrap: str, group: str, members: int, heartbeat_ms: int) -> tuple[float, float]:
    """(seconds to the first member's first record, seconds until every member read a record)."""
    consumers = [Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                           "enable.auto.commit": False, "heartbeat.interval.ms": heartbeat_ms,
                           "session.timeout.ms": 10_000}) for _ in range(members)]
    firsts: list[float | None] = [None] * members
    stop = threading.Event()
    start = threading.Barrier(members + 1)

    def member(i: int) -> None:
        c = consumers[i]
        start.wait()
        c.subscribe([TOPIC])
        while not stop.is_set():
            msg = c.poll(0.02)
            if msg is not None and msg.error() is None and firsts[i] is None:
                firsts[i] = time.perf_counter()

    threads = [threading.Thread(target=member, args=(i,), daemon=True) for i in range(members)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while any(f is None for f in firsts) and time.monotonic() < deadline:
        time.sleep(0.005)
    stop.set()
    for t in threads:
        t.join(10)
    for c in consumers:
        c.close()
    if any(f is None for f in firsts):
        raise SystemExit(f"{members} members: not every member read a record within {RUN_TIMEOUT_S}s")
    return min(firsts) - t0, max(firsts) - t0  # type: ignore[type-var, operator]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--members", default="1,2,8")
    parser.add_argument("--initial-delay-ms", type=int, default=0)
    args = parser.parse_args()
    counts = [int(x) for x in args.members.split(",")]
    workdir = tempfile.mkdtemp(prefix="bench-rebalance-")
    proc, port = start_broker(os.path.join(workdir, "data"), workdir, args.initial_delay_ms)
    bootstrap = f"127.0.0.1:{port}"
    try:
        prepare(bootstrap)
        one_run(bootstrap, "warm-up", 1, 500)  # creates and loads __consumer_offsets
        print(f"kafkapy broker 127.0.0.1:{port}, group.initial.rebalance.delay.ms={args.initial_delay_ms}, "
              f"{PARTITIONS}-partition topic, confluent-kafka {sys.modules['confluent_kafka'].version()} "
              f"(librdkafka {sys.modules['confluent_kafka'].libversion()[0]}), {args.runs} runs each")
        print(f"{'heartbeat.interval.ms':>22} {'members':>8} {'first record s (median/max)':>28} "
              f"{'all members s (median/max)':>28}")
        for heartbeat_ms in (3000, 500):
            for n in counts:
                results = [one_run(bootstrap, f"bench-{heartbeat_ms}-{n}-{r}", n, heartbeat_ms)
                           for r in range(args.runs)]
                first = [r[0] for r in results]
                every = [r[1] for r in results]
                print(f"{heartbeat_ms:>22} {n:>8} {statistics.median(first):>19.3f} / {max(first):.3f} "
                      f"{statistics.median(every):>19.3f} / {max(every):.3f}")
    finally:
        stop_process(proc)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
