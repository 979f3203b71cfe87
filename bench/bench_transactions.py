"""Transactional produce throughput as a ratio to idempotent produce, in the same run (not a test).

A kafkapy broker runs as a subprocess (`kafkapy server-start`, its own interpreter); a confluent-kafka
(librdkafka) producer sends the same records twice per round: idempotent (enable.idempotence=true, one
flush at the end) and transactional (begin / 1,000 records / commit, repeated). Rounds alternate and the
median of each is reported, with the ratio transactional / idempotent.

    .venv/bin/python bench/bench_transactions.py [--records 200000] [--size 100] [--per-txn 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from bench_support import free_port, stop_process
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic


def start_broker(log_dir: str, port: int) -> subprocess.Popen:
    overrides = {"listeners": f"PLAINTEXT://127.0.0.1:{port}", "log.dirs": log_dir,
                 "transaction.state.log.num.partitions": "4", "offsets.topic.num.partitions": "4"}
    argv = [sys.executable, "-m", "kafkapy.cli.main", "server-start"]
    for k, v in overrides.items():
        argv += ["--override", f"{k}={v}"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, KAFKAPY_RUN_DIR=log_dir))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("broker did not start")


def idempotent_run(bootstrap: str, topic: str, records: int, value: bytes) -> float:
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5,
                  "queue.buffering.max.messages": 1_000_000})
    start = time.perf_counter()
    for i in range(records):
        while True:
            try:
                p.produce(topic, value, key=b"%d" % (i % 1000))
                break
            except BufferError:
                p.poll(0.01)
    p.flush(120)
    return records / (time.perf_counter() - start)


def transactional_run(bootstrap: str, topic: str, records: int, value: bytes, per_txn: int, txn_id: str) -> float:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5,
                  "queue.buffering.max.messages": 1_000_000})
    p.init_transactions(60)
    start = time.perf_counter()
    sent = 0
    while sent < records:
        p.begin_transaction()
        for i in range(min(per_txn, records - sent)):
            p.produce(topic, value, key=b"%d" % (i % 1000))
        sent += min(per_txn, records - sent)
        p.commit_transaction(60)
    elapsed = time.perf_counter() - start
    return records / elapsed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--per-txn", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    log_dir = tempfile.mkdtemp(prefix="kafkapy-bench-txn-")
    port = free_port()
    broker = start_broker(log_dir, port)
    bootstrap = f"127.0.0.1:{port}"
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_topics([NewTopic("bench-idem", 1, 1), NewTopic("bench-txn", 1, 1)]).values():
            f.result(60)
        value = os.urandom(args.size)
        idem, txn = [], []
        for r in range(args.rounds):
            idem.append(idempotent_run(bootstrap, "bench-idem", args.records, value))
            txn.append(transactional_run(bootstrap, "bench-txn", args.records, value, args.per_txn, f"bench-{r}"))
            print(f"round {r + 1}: idempotent {idem[-1]:,.0f} records/s, transactional {txn[-1]:,.0f} records/s "
                  f"({args.per_txn} per transaction)", flush=True)
        i, t = statistics.median(idem), statistics.median(txn)
        print(f"median idempotent produce:    {i:,.0f} records/s ({i * args.size / 1e6:.1f} MB/s)")
        print(f"median transactional produce: {t:,.0f} records/s ({t * args.size / 1e6:.1f} MB/s), "
              f"{args.per_txn} records per transaction")
        print(f"transactional / idempotent:   {t / i:.2f}")
    finally:
        stop_process(broker)
        shutil.rmtree(log_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
