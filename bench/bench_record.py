"""Throughput of kafkapy.record hot paths (not a test). Run: .venv/bin/python bench/bench_record.py

Prints MemoryRecordsBuilder append+build throughput (records/s, MB/s of values) for 100 B and 1000 B values,
uncompressed and lz4; MemoryRecords decode throughput; validate_produce_records MB/s on a 1 MB request.
"""

from __future__ import annotations

import os
import time

from kafkapy.record.compression import CompressionType
from kafkapy.record.memory_records import MemoryRecords, validate_produce_records
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

BATCH_BYTES = 16384  # the producer's default batch.size
MIN_SECONDS = 1.0


def _value(size: int) -> bytes:
    # half random, half repetitive: roughly JSON-like compressibility
    return (os.urandom(size // 2) + b"a" * size)[:size]


def bench_builder(value_size: int, codec: CompressionType) -> tuple[float, float, bytes]:
    value = _value(value_size)
    key = b"key-000000"
    per_batch = max(1, BATCH_BYTES // (value_size + len(key) + 10))
    records = 0
    batch = b""
    t0 = time.perf_counter()
    deadline = t0 + MIN_SECONDS
    ts = 1_700_000_000_000
    for _ in range(1_000_000):  # bounded; stops on the deadline long before
        b = MemoryRecordsBuilder(compression=codec)
        append = b.append
        for i in range(per_batch):
            append(ts + i, key, value)
        batch = b.build()
        records += per_batch
        if time.perf_counter() > deadline:
            break
    dt = time.perf_counter() - t0
    return records / dt, records * value_size / dt / 1e6, batch


def bench_decode(batch: bytes) -> float:
    n = 0
    t0 = time.perf_counter()
    for _ in range(100_000):
        for bt in MemoryRecords(batch).batches():
            n += len(bt.records())
        if time.perf_counter() - t0 > MIN_SECONDS:
            break
    return n / (time.perf_counter() - t0)


def bench_validate() -> tuple[float, int]:
    b = MemoryRecordsBuilder()
    value = _value(1000)
    while b.uncompressed_bytes < 1_000_000:
        b.append(1_700_000_000_000, None, value)
    request = b.build()
    iters = 0
    t0 = time.perf_counter()
    for _ in range(100_000):
        validate_produce_records(request, require_single_batch=True, from_client=True)
        iters += 1
        if time.perf_counter() - t0 > MIN_SECONDS:
            break
    return iters * len(request) / (time.perf_counter() - t0) / 1e6, len(request)


def main() -> None:
    print(f"{'builder':<28}{'records/s':>14}{'MB/s (values)':>16}{'decode rec/s':>15}")
    for size in (100, 1000):
        for codec in (CompressionType.NONE, CompressionType.LZ4):
            rps, mbps, batch = bench_builder(size, codec)
            drps = bench_decode(batch)
            label = f"{size} B values, {codec.lower_name}"
            print(f"{label:<28}{rps:>14,.0f}{mbps:>16.1f}{drps:>15,.0f}")
    mbps, size = bench_validate()
    print(f"validate_produce_records on a {size / 1e6:.2f} MB request: {mbps:,.0f} MB/s")


if __name__ == "__main__":
    main()
