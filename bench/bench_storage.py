"""Storage benchmark (not a test): Log append throughput with 16 KiB batches, and read/lookup rates.

Cases, each bounded by a batch count and a time limit, in a temporary directory that is removed after:
  leader append   - append_as_leader (validate + offset/epoch rewrite + one write) of a 16 KiB batch
  follower append - append_as_follower of the same batches with offsets kept
  read            - Log.read of a random offset, 1 MiB max: translate via the index + FileRegion
  translate       - LogSegment.translate_offset only
  timestamp       - fetch_offset_by_timestamp of a random timestamp (decodes one batch)
Segments are 64 MiB so rolls and index lookups across segments are part of the figures.

    .venv/bin/python bench/bench_storage.py [--seconds 3] [--batches 20000]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time

from kafkapy.common.time import SYSTEM
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.storage.log import Log
from kafkapy.storage.log_config import LogConfig

BATCH_BYTES = 16 * 1024


def make_batch(ts: int) -> bytes:
    builder = MemoryRecordsBuilder()
    value = b"v" * 1000
    while builder.estimated_size_in_bytes() + 1100 <= BATCH_BYTES:
        builder.append(ts, b"key", value)
    return builder.build()


def report(name: str, count: int, seconds: float, nbytes: int | None = None) -> None:
    line = f"{name:<16} {count:>8} ops in {seconds:6.2f}s  {count / seconds:>10,.0f} ops/s"
    if nbytes is not None:
        line += f"  {nbytes / seconds / 1e6:8.1f} MB/s"
    print(line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--batches", type=int, default=20000)
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="kafkapy-bench-storage-")
    config = LogConfig.from_props({"segment.bytes": 64 * 1024 * 1024, "file.delete.delay.ms": 0})
    try:
        raw = make_batch(SYSTEM.milliseconds())
        print(f"batch: {len(raw)} bytes, {args.seconds}s or {args.batches} batches per case")
        leader = Log.open(f"{root}/leader-0", config, SYSTEM)
        n, start = 0, time.perf_counter()
        deadline = start + args.seconds
        while n < args.batches and time.perf_counter() < deadline:
            leader.append_as_leader(raw, 1)
            n += 1
        elapsed = time.perf_counter() - start
        report("leader append", n, elapsed, n * len(raw))
        print(f"{'':<16} log end offset {leader.log_end_offset}, {leader.num_segments} segments")

        follower = Log.open(f"{root}/follower-0", config, SYSTEM)
        chunks, offset = [], 0
        while offset < leader.log_end_offset and len(chunks) < 2000:
            info = leader.read(offset, 1 << 20)
            data = info.records.read_bytes()
            chunks.append(data)
            offset = int.from_bytes(data[-len(raw):-len(raw) + 8], "big") + (
                int.from_bytes(data[-len(raw) + 23:-len(raw) + 27], "big")) + 1
        m, total, start = 0, 0, time.perf_counter()
        for data in chunks:
            if time.perf_counter() - start > args.seconds:
                break
            follower.append_as_follower(data)
            m += 1
            total += len(data)
        elapsed = time.perf_counter() - start
        report("follower append", m, elapsed, total)
        print(f"{'':<16} ({total // max(m, 1)} bytes per append)")

        end = leader.log_end_offset
        rng = random.Random(7)
        for name, fn in (
            ("read 1MiB", lambda o: leader.read(o, 1 << 20)),
            ("translate", lambda o: leader.segments[-1].translate_offset(max(o, leader.segments[-1].base_offset))),
        ):
            k, start = 0, time.perf_counter()
            while k < 200_000 and time.perf_counter() - start < args.seconds:
                fn(rng.randrange(0, end))
                k += 1
            report(name, k, time.perf_counter() - start)
        first_ts = leader.segments[0].first_batch_timestamp()
        k, start = 0, time.perf_counter()
        while k < 20_000 and time.perf_counter() - start < args.seconds:
            leader.fetch_offset_by_timestamp(first_ts + rng.randrange(0, 5))
            k += 1
        report("timestamp", k, time.perf_counter() - start)
        start = time.perf_counter()
        leader.flush()
        print(f"{'flush':<16} {time.perf_counter() - start:6.2f}s for {leader.size_in_bytes / 1e6:.0f} MB")
        leader.close()
        follower.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
