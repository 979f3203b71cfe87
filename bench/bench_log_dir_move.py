"""Log dir move benchmark (AlterReplicaLogDirs, JBOD): how fast the ReplicaAlterLogDirsThread copies a loaded
partition to the broker's other log dir, unthrottled and with replica.alter.log.dirs.io.max.bytes.per.second.

An in-process broker with two log dirs (a temporary directory, removed at the end); a confluent-kafka producer
loads --mb MB of 1000-byte records into one partition; the kafkapy AdminClient starts the move and polls
DescribeLogDirs every 20 ms until the replica is in the other dir with no future replica left. Prints the bytes
moved, the time and the rate per run. Page-cache speeds: both dirs are on one disk here.

    .venv/bin/python bench/bench_log_dir_move.py [--mb 100] [--throttle 0,5000000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from confluent_kafka import Producer

from kafkapy.client.admin import AdminClient
from kafkapy.testing import KafkaBroker
from kafkapy.tools.reassign_json import TopicPartitionReplica

POLL_S = 0.02
MAX_WAIT_S = 600


def load(bootstrap: str, topic: str, mb: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1_000_000, "log_level": 0})
    value = os.urandom(1000)
    for i in range(mb * 1000):
        p.produce(topic, value=value, partition=0)
        if i % 10_000 == 0:
            p.poll(0)
    assert p.flush(120) == 0


def move_once(mb: int, throttle: int) -> str:
    base = tempfile.mkdtemp(prefix="kafkapy-move-")
    d1, d2 = os.path.join(base, "d1"), os.path.join(base, "d2")
    try:
        with KafkaBroker(overrides={"log.dirs": f"{d1},{d2}"}) as broker:
            broker.create_topic("moved", 1)
            load(broker.bootstrap, "moved", mb)
            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            try:
                source = next(path for path, d in admin.describe_log_dirs([0])[0].items() if d.replicas)
                target = d2 if source == d1 else d1
                part = os.path.join(source, "moved-0")
                size = sum(os.path.getsize(os.path.join(part, f)) for f in os.listdir(part) if f.endswith(".log"))
                broker.server.replica_manager._alter_log_dirs_rate = throttle or None
                start = time.monotonic()
                admin.alter_replica_log_dirs({TopicPartitionReplica("moved", 0, 0): target})
                while time.monotonic() - start < MAX_WAIT_S:
                    dirs = admin.describe_log_dirs([0])[0]
                    done = any(not i.is_future for i in dirs[target].replicas.values())
                    if done and not any(i.is_future for d in dirs.values() for i in d.replicas.values()):
                        break
                    time.sleep(POLL_S)
                took = time.monotonic() - start
            finally:
                admin.close()
        return (f"moved {size / 1e6:.1f} MB in {took:.2f} s = {size / 1e6 / took:.1f} MB/s "
                f"(throttle {throttle or 'none'} B/s)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--throttle", default="0,5000000", help="comma-separated B/s values, 0 = unthrottled")
    args = ap.parse_args()
    for throttle in (int(t) for t in args.throttle.split(",")):
        mb = args.mb if throttle == 0 else max(1, min(args.mb, throttle * 4 // 1_000_000))
        print(move_once(mb, throttle), flush=True)


if __name__ == "__main__":
    main()
