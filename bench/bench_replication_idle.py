"""Replication cost of idle partitions: latency of a single acks=all produce beside idle partitions. Figures only.

Three kafkapy brokers on Debian's ZooKeeper (separate processes, loopback). One busy partition (RF 3,
min.insync.replicas=2) takes one record at a time (confluent-kafka, acks=all, linger.ms=0, each produce
flushed before the next), with 0 idle partitions beside it, then with idle RF-3 topics added up to each
--idle count. Prints p50 / p99 / max of the produce latency per count. The followers replicate every
partition, so without incremental fetch sessions each follower fetch carries (and the leader reads and
watches) every idle partition.
Every process started here is stopped by PID; every loop is bounded.

Usage: .venv/bin/python bench/bench_replication_idle.py [--idle 0,150,1000] [--samples 1000]
       [--override key=value ...] (broker overrides, e.g. max.incremental.fetch.session.cache.slots=0)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_replication import (
    Broker,
    cluster_processes,
    create_topic,
    port_open,
    start_zookeeper,
    wait,
    wait_isr,
)


def produce_latencies(bootstrap: str, topic: str, samples: int, budget_s: float) -> list[float]:
    """Milliseconds per single-record acks=all produce, one at a time (bounded by count and time)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, "enable.idempotence": False,
                         "partitioner": "consistent"})
    errors: list[object] = []

    def report(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(err)

    for _ in range(20):  # warm-up: connections, metadata
        producer.produce(topic, value=b"warm", partition=0, on_delivery=report)
        producer.flush(30)
    out: list[float] = []
    deadline = time.monotonic() + budget_s
    for i in range(samples):
        if time.monotonic() > deadline:
            break
        start = time.perf_counter()
        producer.produce(topic, value=b"record-%d" % i, partition=0, on_delivery=report)
        if producer.flush(30) != 0:
            raise RuntimeError("a produce did not complete in 30 s")
        out.append((time.perf_counter() - start) * 1000)
    if errors:
        raise RuntimeError(f"{len(errors)} produces failed: {errors[0]}")
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", default="0,150,1000")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--budget-s", type=float, default=60.0, help="time bound per measurement")
    ap.add_argument("--override", action="append", default=[])
    args = ap.parse_args(argv)
    counts = [int(c) for c in args.idle.split(",")]
    base = Path(tempfile.mkdtemp(prefix="bench-replication-idle-"))
    with cluster_processes(base) as procs:
        zk, zk_connect = start_zookeeper(base)
        procs.append(zk)
        brokers = [Broker(base, i, zk_connect) for i in range(3)]
        for b in brokers:
            for kv in args.override:
                b.proc.argv += ["--override", kv]
            b.proc.argv += ["--override", "log.segment.bytes=1048576"]
            procs.append(b.proc)
            b.proc.start()
        for b in brokers:
            wait(lambda b=b: port_open(b.port), 60, f"broker {b.id}")
        bootstrap = ",".join(b.bootstrap for b in brokers)
        time.sleep(2)  # registrations and the controller election
        create_topic(bootstrap, "busy", 1, 3, {"min.insync.replicas": "2"})
        wait_isr(bootstrap, "busy", 3)
        print(f"single acks=all produce (linger.ms=0, one record at a time), 3 brokers, RF 3; "
              f"overrides: {args.override or 'none'}")
        idle = 0
        for count in counts:
            if count > idle:
                topic = f"idle-{count}"
                start = time.perf_counter()
                create_topic(bootstrap, topic, count - idle, 3, {})
                wait_isr(bootstrap, topic, 3)
                print(f"  ({topic}: {count - idle} partitions created and in sync in "
                      f"{time.perf_counter() - start:.1f} s)")
                idle = count
                time.sleep(2)  # let the followers settle into their sessions
            lat = produce_latencies(bootstrap, "busy", args.samples, args.budget_s)
            print(f"  {count:5d} idle partitions: p50 {statistics.median(lat):6.2f} ms  p99 {percentile(lat, 0.99):7.2f} ms"
                  f"  max {max(lat):7.2f} ms  ({len(lat)} produces)", flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main())
