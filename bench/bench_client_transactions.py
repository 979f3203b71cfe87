"""kafkapy's own producer, idempotent vs transactional, through `kafkapy producer-perf-test` (not a test).

A kafkapy broker runs as a subprocess (`kafkapy server-start`, see bench_transactions.py); each round runs
producer-perf-test as a subprocess three times, alternating: without transactions, with
`--transactional-id --transaction-duration-ms 100`, and with `--transactional-id` alone (Kafka's default
3000 ms). Each run's final line is printed; the medians of the records/s come last. Bounded by --records and
--rounds (each perf-test run also by a 300 s timeout).

    .venv/bin/python bench/bench_client_transactions.py [--records 200000] [--size 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile

from bench_support import free_port, stop_process
from bench_transactions import start_broker


def perf_test(bootstrap: str, topic: str, records: int, size: int, extra: list[str]) -> tuple[float, str]:
    argv = [sys.executable, "-m", "kafkapy.cli.main", "producer-perf-test", "--topic", topic, "--num-records",
            str(records), "--record-size", str(size), "--throughput", "-1", "--bootstrap-server", bootstrap, *extra]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=True).stdout
    last = out.strip().splitlines()[-1]
    return float(last.split(" records sent, ")[1].split(" ")[0]), last


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    log_dir = tempfile.mkdtemp(prefix="kafkapy-bench-client-txn-")
    port = free_port()
    broker = start_broker(log_dir, port)
    bootstrap = f"127.0.0.1:{port}"
    modes = {
        "idempotent": [],
        "transactional, 100 ms": ["--transactional-id", "bench-tx-100", "--transaction-duration-ms", "100"],
        "transactional, 3000 ms": ["--transactional-id", "bench-tx-3000"],
    }
    rates: dict[str, list[float]] = {m: [] for m in modes}
    try:
        for r in range(args.rounds):
            for k, (mode, extra) in enumerate(modes.items()):
                rate, line = perf_test(bootstrap, f"bench-client-txn-{r}-{k}", args.records, args.size, extra)
                rates[mode].append(rate)
                print(f"round {r + 1} {mode}: {line}", flush=True)
        for mode, values in rates.items():
            m = statistics.median(values)
            print(f"median {mode}: {m:,.0f} records/s ({m * args.size / 1e6:.1f} MB/s)")
    finally:
        stop_process(broker)
        shutil.rmtree(log_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
