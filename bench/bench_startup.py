"""Start-up figures (issue 17 item 16): what every tool and every test that starts a broker pays.

- exec -> accepting: `python -m kafkapy.cli.main server-start` (embedded node, port chosen here) from exec until a
  TCP connect to its listener succeeds; the process is then stopped with SIGTERM (by its pid).
- in-process fixture: `kafkapy.testing.KafkaBroker()` enter (startup on port 0 in a temporary log dir), as the
  `kafka_broker` pytest fixture does; exit not counted.
- `kafkapy topics --list`: exec to exit against the broker started above.
- import: `import kafkapy.server.kafka_server` in a fresh interpreter (what the broker loads before start-up).

Each figure is the median (and min) of --runs runs. Targets: exec -> accepting <= 250 ms, fixture <= 100 ms,
topics --list <= 200 ms. The machine's load average is printed too: on a shared, loaded host every figure
grows with it.

Usage: python bench/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PYTHON = sys.executable
DEADLINE_S = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def exec_to_accepting() -> float:
    port = free_port()
    with tempfile.TemporaryDirectory() as log_dir:
        start = time.perf_counter()
        proc = subprocess.Popen([PYTHON, "-m", "kafkapy.cli.main", "server-start", "--override",
                                 f"listeners=PLAINTEXT://127.0.0.1:{port}", "--override", f"log.dirs={log_dir}"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "KAFKAPY_RUN_DIR": log_dir})
        try:
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        elapsed = time.perf_counter() - start
                        break
                except OSError:
                    if proc.poll() is not None or time.perf_counter() - start > DEADLINE_S:
                        raise RuntimeError(f"broker did not start (exit {proc.poll()})") from None
                    time.sleep(0.002)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return elapsed


def in_process_fixture() -> float:
    code = ("import time,sys\n"
            "from kafkapy.testing import KafkaBroker\n"
            "b = KafkaBroker()\n"
            "t = time.perf_counter(); b.__enter__(); e = time.perf_counter() - t\n"
            "b.__exit__(None, None, None); print(e)\n")
    # a fresh interpreter per run, imports done before the clock starts (a test module imports them once)
    pre = "import kafkapy.testing.kafka_broker, kafkapy.server.kafka_server\n"
    out = subprocess.run([PYTHON, "-c", pre + code], capture_output=True, text=True, timeout=60, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def topics_list(bootstrap: str) -> float:
    start = time.perf_counter()
    subprocess.run([PYTHON, "-m", "kafkapy.cli.main", "topics", "--bootstrap-server", bootstrap, "--list"],
                   capture_output=True, timeout=60, check=True)
    return time.perf_counter() - start


def import_server() -> float:
    out = subprocess.run([PYTHON, "-c", "import time; t = time.perf_counter(); import kafkapy.server.kafka_server; "
                          "print(time.perf_counter() - t)"], capture_output=True, text=True, timeout=60, check=True)
    return float(out.stdout.strip())


def report(name: str, samples: list[float], target_ms: float | None) -> None:
    med, low = statistics.median(samples) * 1000, min(samples) * 1000
    goal = f"  (target <= {target_ms:.0f} ms)" if target_ms else ""
    print(f"{name:<34} median {med:7.1f} ms   min {low:7.1f} ms{goal}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    runs = max(1, min(args.runs, 50))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}   cpus: {os.cpu_count()}")
    report("import kafkapy.server.kafka_server", [import_server() for _ in range(runs)], None)
    report("server-start exec -> accepting", [exec_to_accepting() for _ in range(runs)], 250)
    report("in-process KafkaBroker start", [in_process_fixture() for _ in range(runs)], 100)
    from kafkapy.testing import KafkaBroker

    with KafkaBroker() as broker:
        report("kafkapy topics --list", [topics_list(broker.bootstrap) for _ in range(runs)], 200)
    return 0


if __name__ == "__main__":
    sys.exit(main())
