"""Log-segment analytics input: a Kafka log directory written offline with kafkapy.storage (no broker).

    python examples/log_segments/generate_log_dir.py --log-dir /tmp/kafkapy-logs

Writes topics `orders` (zstd, 2 partitions), `clicks` (lz4, 3 partitions) and `audit` (uncompressed,
1 partition) in Kafka's on-disk format (`<topic>-<partition>/<offset>.log` + indexes), with 1 MiB
segments so partitions span several segment files. Any broker's log.dirs works as input as well.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

TOPICS = {"orders": ("zstd", 2, 30_000), "clicks": ("lz4", 3, 40_000), "audit": ("none", 1, 10_000)}


def generate_log_dir(log_dir: str, seed: int = 11, batch_records: int = 200, segment_bytes: int = 1024 * 1024) -> None:
    from kafkapy.record.compression import CompressionType
    from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
    from kafkapy.storage.log import Log
    from kafkapy.storage.log_config import LogConfig

    rng = random.Random(seed)
    config = LogConfig.from_props({"segment.bytes": segment_bytes})
    now = (int(time.time()) - 7200) * 1000
    for topic, (codec, partitions, records) in TOPICS.items():
        for p in range(partitions):
            log = Log.open(os.path.join(log_dir, f"{topic}-{p}"), config)
            try:
                ts = now
                for _ in range(records // partitions // batch_records):
                    b = MemoryRecordsBuilder(compression=CompressionType.from_name(codec))
                    for _i in range(batch_records):
                        ts += rng.randrange(1, 50)
                        key = None if topic == "audit" else b"k%d" % rng.randrange(500 if topic == "orders" else 2000)
                        b.append(ts, key, rng.randbytes(rng.randrange(20, 200)))
                    log.append_as_leader(b.build(), leader_epoch=0)
                log.flush()
            finally:
                log.close()


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description="Write a Kafka log directory offline")
    p.add_argument("--log-dir", required=True)
    p.add_argument("--seed", type=int, default=11)
    a = p.parse_args(argv)
    generate_log_dir(a.log_dir, a.seed)
    print(f"wrote {', '.join(TOPICS)} to {a.log_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
