"""What produce-time record validation (LogValidator's walk over every record) costs, on vs off in ONE run.

Two measurements, each reported as ratios validation-on / validation-off:

1. end to end: two subprocess brokers (`server-start`), one with storage.log_validator.VALIDATE_RECORDS
   switched off by a launcher (the switch exists for this bench only), are driven alternately by a
   confluent-kafka producer (acks=1, linger.ms=5, batch.size 1 MB): messages/s and the broker's CPU
   (utime+stime from /proc/<pid>/stat) per message.
2. in process: Log.append_as_leader of the same client batches (no network), CPU per message, with
   the compiled walk (kafkapy/record/_record_walk.c) and with the pure-Python reference walk.

Cases: 100 B and 1000 B values, uncompressed, lz4 and zstd.

    .venv/bin/python bench/bench_produce_validation.py [--messages 200000] [--rounds 2] [--append-batches 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kafkapy.common.time import SYSTEM  # noqa: E402
from kafkapy.record import record_walker  # noqa: E402
from kafkapy.record.compression import CompressionType  # noqa: E402
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder  # noqa: E402
from kafkapy.storage import log_validator  # noqa: E402
from kafkapy.storage.log import Log  # noqa: E402
from kafkapy.storage.log_config import LogConfig  # noqa: E402

CASES = [(100, "none"), (100, "lz4"), (100, "zstd"), (1000, "none"), (1000, "lz4"), (1000, "zstd")]
LAUNCHER = (
    "import sys\n"
    "from kafkapy.storage import log_validator\n"
    "log_validator.VALIDATE_RECORDS = sys.argv[1] == 'on'\n"
    "from kafkapy.cli.main import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


class Broker:
    def __init__(self, mode: str, root: str) -> None:
        self.dir = os.path.join(root, mode)
        run_dir = os.path.join(self.dir, "run")
        os.makedirs(run_dir)
        props = {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": os.path.join(self.dir, "logs"),
                 "num.partitions": "1", "log.segment.bytes": str(1 << 30)}
        argv = [sys.executable, "-c", LAUNCHER, mode, "server-start"]
        for k, v in props.items():
            argv += ["--override", f"{k}={v}"]
        self.out = open(os.path.join(self.dir, "out.log"), "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(argv, stdout=self.out, stderr=subprocess.STDOUT,
                                     env=dict(os.environ, KAFKAPY_RUN_DIR=run_dir))
        record = os.path.join(run_dir, f"server-{self.proc.pid}.json")
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"broker {mode} did not start; see {self.out.name}")
            try:
                with open(record) as f:
                    self.port = int(json.load(f)["boundPort"])
                return
            except (OSError, ValueError, KeyError):
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(30)
        self.out.close()


def drive(broker: Broker, topic: str, value_size: int, codec: str, messages: int) -> tuple[float, float]:
    """(messages/s, broker CPU us per message) for `messages` produced and acknowledged."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": f"127.0.0.1:{broker.port}", "acks": "1", "linger.ms": 5,
                  "batch.size": 1_000_000, "compression.type": codec, "queue.buffering.max.messages": 1_000_000})
    value = (os.urandom(value_size // 2).hex().encode() * 2)[:value_size]
    p.produce(topic, value=value)  # creates the topic
    p.flush(30)
    failed = [0]

    def on_delivery(err, _msg) -> None:  # type: ignore[no-untyped-def]
        if err is not None:
            failed[0] += 1

    cpu0, t0 = cpu_s(broker.proc.pid), time.perf_counter()
    for i in range(messages):
        while True:
            try:
                p.produce(topic, value=value, key=b"%08d" % i, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.01)
    p.flush(120)
    elapsed, cpu = time.perf_counter() - t0, cpu_s(broker.proc.pid) - cpu0
    if failed[0]:
        raise RuntimeError(f"{failed[0]} deliveries failed")
    return messages / elapsed, cpu * 1e6 / messages


def append_cpu_us(value_size: int, codec: str, batches: int, on: bool, compiled: bool = True,
                  records: int | None = None) -> float:
    """CPU us per message of Log.append_as_leader over client batches of ~1 MB, or of `records` records."""
    root = tempfile.mkdtemp(prefix="bench-validate-")
    per_batch = records or max(1, 1_000_000 // (value_size + 20))
    b = MemoryRecordsBuilder(compression=CompressionType.from_name(codec))
    value = (os.urandom(value_size // 2).hex().encode() * 2)[:value_size]
    now = SYSTEM.milliseconds()
    for i in range(per_batch):
        b.append(now, b"%08d" % i, value)
    raw = b.build()
    lg = Log.open(os.path.join(root, "b-0"), LogConfig.from_props({"segment.bytes": 1 << 30}), SYSTEM)
    log_validator.VALIDATE_RECORDS = on
    record_walker.use_compiled = compiled
    try:
        t0 = time.process_time()
        for _ in range(batches):
            lg.append_as_leader(raw, 0)
        return (time.process_time() - t0) * 1e6 / (batches * per_batch)
    finally:
        log_validator.VALIDATE_RECORDS = True
        record_walker.use_compiled = True
        lg.close()
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--append-batches", type=int, default=200)
    args = ap.parse_args(argv)

    compiled = record_walker._compiled_walk is not None
    print("in process: Log.append_as_leader, ~1 MB client batches, CPU us/message "
          f"(compiled walk {'built' if compiled else 'NOT built: both columns are the Python walk'})")
    print(f"{'case':<14}{'off':>9}{'on':>9}{'on-off':>9}{'on, Python walk':>17}{'on-off':>9}")
    for value_size, codec in CASES:
        n = args.append_batches
        off = min(append_cpu_us(value_size, codec, n, False) for _ in range(args.rounds))
        on = min(append_cpu_us(value_size, codec, n, True) for _ in range(args.rounds))
        py = min(append_cpu_us(value_size, codec, max(1, n // 5), True, False) for _ in range(args.rounds))
        print(f"{f'{value_size} B {codec}':<14}{off:>9.3f}{on:>9.3f}{on - off:>9.3f}{py:>17.3f}{py - off:>9.3f}")

    print("\nin process: batches of 16 records (the per-batch cost of validation), CPU us/message")
    print(f"{'case':<14}{'off':>9}{'on':>9}{'on-off':>9}")
    for value_size, codec in CASES[:3]:
        n = args.append_batches * 200
        off = min(append_cpu_us(value_size, codec, n, False, records=16) for _ in range(args.rounds))
        on = min(append_cpu_us(value_size, codec, n, True, records=16) for _ in range(args.rounds))
        print(f"{f'{value_size} B {codec}':<14}{off:>9.3f}{on:>9.3f}{on - off:>9.3f}")

    root = tempfile.mkdtemp(prefix="bench-validate-e2e-")
    brokers = {mode: Broker(mode, root) for mode in ("off", "on")}
    try:
        print(f"\nend to end: confluent-kafka, {args.messages} messages per case and mode, best of {args.rounds} "
              "alternating rounds")
        print(f"{'case':<14}{'msg/s off':>11}{'msg/s on':>11}{'ratio':>7}{'cpu us/msg off':>16}{'on':>8}{'ratio':>7}")
        for value_size, codec in CASES:
            best: dict[str, tuple[float, float]] = {}
            for r in range(args.rounds):
                for mode in ("off", "on") if r % 2 == 0 else ("on", "off"):
                    rate, cpu = drive(brokers[mode], f"t-{value_size}-{codec}-{r}", value_size, codec, args.messages)
                    prev = best.get(mode)
                    best[mode] = (max(rate, prev[0]), min(cpu, prev[1])) if prev else (rate, cpu)
            (r_off, c_off), (r_on, c_on) = best["off"], best["on"]
            cpu_ratio = f"{c_on / c_off:>7.2f}" if c_off else f"{'n/a':>7}"
            print(f"{f'{value_size} B {codec}':<14}{r_off:>11.0f}{r_on:>11.0f}{r_on / r_off:>7.2f}"
                  f"{c_off:>16.2f}{c_on:>8.2f}{cpu_ratio}")
    finally:
        for b in brokers.values():
            b.stop()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
