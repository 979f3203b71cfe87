"""Metrics cost in instructions (not a test): the in-process produce path of bench_metrics.py counted by
valgrind's callgrind, metrics on vs off; a figure that load from other processes does not move.

Each mode runs in its own process under `valgrind --tool=callgrind --separate-threads=yes
--dump-before=getppid`: the child starts an in-process broker (no network client), creates the topic, warms
up 6,000 requests with the metrics on (their fold every 2,000 requests), sets the mode, calls os.getppid()
(the dump marker), handles N ProduceRequests on the main thread (folding every 2,000 when on), and calls
os.getppid() again; the main thread's instructions between the markers, over N, are its cost per request.
Modes: `off` (hooks detached), `on` (recording and fold), `on-nofold` (recording only: the hot-path share).
Under valgrind time runs ~50x slower, so the decaying reservoir takes more values per fold than in real time
(up to its 1,028 when a fold spans many seconds, as on a loaded machine): the fold's share is an upper bound,
and the only part of the count that load moves; compare runs made side by side. Instruction counts are deterministic to ~0.01% with PYTHONHASHSEED=0.

    .venv/bin/python bench/bench_metrics_instructions.py [--requests 4000] [--records 16]   (needs valgrind)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MODES = ("off", "on", "on-nofold")


def child(mode: str, requests: int, records: int) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_metrics as b

    from kafkapy.common.topic_partition import TopicPartition
    from kafkapy.server.kafka_apis import KafkaApis
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    with tempfile.TemporaryDirectory() as log_dir:
        server = KafkaServer(KafkaConfig.from_properties(None, {
            "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": log_dir, "num.network.threads": "1",
            "num.io.threads": "1"}))
        server.startup()
        try:
            assert server.services is not None and server.services.controller is not None
            server.services.controller.create_topics([("bench-path", 1, 1, None, {})])
            tp = TopicPartition("bench-path", 0)
            deadline = time.monotonic() + 120
            while server.replica_manager is not None and tp not in server.replica_manager._partitions:
                if time.monotonic() > deadline:
                    raise RuntimeError("bench-path was not created")
                time.sleep(0.05)
            channel = b.StubChannel()
            apis = KafkaApis(channel, server.services)  # type: ignore[arg-type]
            server.metrics.stop_ticker()
            frame = b.produce_frame("bench-path", records)
            b.set_metrics(server, True)
            for _ in range(3):
                b.produce_path_round(apis, channel, frame, 2000, server.metrics.fold)
            b.set_metrics(server, mode != "off")
            fold = server.metrics.fold if mode == "on" else None
            os.getppid()  # callgrind dump marker: the measured part starts
            done = 0
            while done < requests:
                b.produce_path_round(apis, channel, frame, min(2000, requests - done), fold)
                done += 2000
            os.getppid()  # and ends
        finally:
            server.shutdown()


def count(mode: str, requests: int, records: int) -> int:
    with tempfile.TemporaryDirectory() as out:
        cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes", "--dump-before=getppid",
               f"--callgrind-out-file={out}/cg", sys.executable, __file__, "--child", mode,
               "--requests", str(requests), "--records", str(records)]
        subprocess.run(cmd, check=True, capture_output=True, timeout=1800,
                       env={**os.environ, "PYTHONHASHSEED": "0"})
        for line in Path(out, "cg.2-01").read_text().splitlines():  # part 2 of the main thread: between markers
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError("no callgrind summary")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--records", type=int, default=16)
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.requests, args.records)
        return
    with ThreadPoolExecutor(2) as pool:  # two valgrind processes at a time (a 2-core machine)
        totals = dict(zip(MODES, pool.map(lambda m: count(m, args.requests, args.records), MODES), strict=True))
    per = {m: totals[m] / args.requests for m in MODES}
    print(f"produce path ({args.records} x 100 B per request, {args.requests} requests), instructions per request "
          f"on the handler thread: off {per['off']:,.0f}, on {per['on']:,.0f} (recording {per['on-nofold'] - per['off']:,.0f},"
          f" fold {per['on'] - per['on-nofold']:,.0f}); ratio off/on {per['off'] / per['on']:.3f}")


if __name__ == "__main__":
    main()
