"""Log cleaner throughput: MB/s of log cleaned, on a log where 10% of the records are live (each key
written 10 times), like Kafka's LogCleaner "Log cleaner thread 0 cleaned log ... MB/sec" line.

    python bench/bench_cleaner.py [--size-mb 1024] [--value-bytes 1000] [--batch-records 100]
                                  [--compression none] [--dedupe-mb 128] [--dir /tmp/x]

Writes the log with Log.append_as_leader (batches of --batch-records records, keys interleaved so
every segment holds all keys), rolls, then times one LogCleaner.clean_once() on the calling thread (no
throttle). Prints bytes read/written, records kept, the offset-map time and the total MB/s. Not a test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kafkapy.common.time import SYSTEM  # noqa: E402
from kafkapy.record.compression import CompressionType  # noqa: E402
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder  # noqa: E402
from kafkapy.storage.log import Log  # noqa: E402
from kafkapy.storage.log_cleaner import CleanerConfig, LogCleaner  # noqa: E402
from kafkapy.storage.log_config import LogConfig  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size-mb", type=int, default=1024)
    p.add_argument("--value-bytes", type=int, default=1000)
    p.add_argument("--batch-records", type=int, default=100)
    p.add_argument("--compression", default="none")
    p.add_argument("--dedupe-mb", type=int, default=128)
    p.add_argument("--dir", default=None)
    args = p.parse_args(argv)

    record_bytes = args.value_bytes + 20  # value + key + record overhead
    total_records = args.size_mb * 1024 * 1024 // record_bytes
    keys = max(1, total_records // 10)  # 10% live
    codec = CompressionType.from_name(args.compression)
    base = args.dir or tempfile.mkdtemp(prefix="bench-cleaner-")
    log_dir = os.path.join(base, "bench-0")
    config = LogConfig.from_props({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.0,
                                   "file.delete.delay.ms": 0, "segment.bytes": 1 << 30})
    lg = Log.open(log_dir, config, SYSTEM)
    try:
        value = os.urandom(args.value_bytes // 2).hex().encode()[:args.value_bytes]
        t0 = time.perf_counter()
        written = 0
        now = SYSTEM.milliseconds()
        while written < total_records:
            b = MemoryRecordsBuilder(compression=codec)
            for i in range(written, min(written + args.batch_records, total_records)):
                b.append(now, b"key-%012d" % (i % keys), value)
            lg.append_as_leader(b.build(), 0)
            written += args.batch_records
        lg.roll()
        lg.flush()
        size = lg.size_in_bytes
        print(f"wrote {size / 1e6:.1f} MB, {total_records} records, {keys} keys in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)

        cfg = CleanerConfig(num_threads=1, dedupe_buffer_size=args.dedupe_mb << 20, io_buffer_size=1 << 20)
        cleaner = LogCleaner(cfg, [base], lambda: [lg], SYSTEM)
        start = time.perf_counter()
        cleaned = cleaner.clean_once()
        elapsed = time.perf_counter() - start
        stats = cleaner.last_stats
        assert cleaned and stats is not None
        print(f"cleaned: read {stats.bytes_read / 1e6:.1f} MB (offset map {stats.map_bytes_read / 1e6:.1f} MB), "
              f"wrote {stats.bytes_written / 1e6:.1f} MB, kept {stats.messages_written}/{stats.messages_read} "
              f"records, {elapsed:.1f} s")
        print(f"cleaner throughput: {size / 1e6 / elapsed:.1f} MB/s of log ({args.compression}, "
              f"{args.value_bytes}-byte values, {args.batch_records} records per batch)")
    finally:
        lg.close()
        if args.dir is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
