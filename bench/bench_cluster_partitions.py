"""Partition count on three brokers (issue 20 item 7): runs tests/cluster/test_partition_scale.py at Kafka's size.

    python bench/bench_cluster_partitions.py [--partitions 1000] [--timeout 600]

RF-3 partitions on 3 brokers (each broker hosts every one of them: --partitions 1000 is 1,000 per broker) in a
real ZooKeeper cluster: prints the time until every ISR is full, the time from a controller SIGKILL until every
partition is led by a live broker (bound: zookeeper.session.timeout.ms + 2 s = 8 s) and the killed broker's
time back into every ISR, and fails where the test's assertions fail. The module runs at 300 partitions in
`make test`; this is its full-size run. Every process is started and stopped by the test's fixtures; the
whole run is bounded by --timeout.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--partitions", type=int, default=1000)
    p.add_argument("--timeout", type=float, default=600.0, help="bound of the whole run, seconds")
    args = p.parse_args(argv)
    env = dict(os.environ, KAFKAPY_SCALE_PARTITIONS=str(args.partitions))
    argv_ = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
             os.path.join(ROOT, "tests", "cluster", "test_partition_scale.py")]
    proc = subprocess.Popen(argv_, cwd=ROOT, env=env)
    try:
        return proc.wait(args.timeout)
    except subprocess.TimeoutExpired:
        # SIGINT: pytest stops as on Ctrl-C and its fixtures' teardown kills the brokers and ZooKeeper.
        print(f"timed out after {args.timeout:.0f} s", file=sys.stderr)
        os.kill(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
        return 1


if __name__ == "__main__":
    sys.exit(main())
