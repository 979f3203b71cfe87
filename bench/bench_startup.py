"""Start-up figures (issue 17 item 16): what every tool and every test that starts a broker pays.

- exec -> accepting: `python -m kafkapy.cli.main server-start` (embedded node, port chosen here) from exec until a
  TCP connect to its listener succeeds; the process is then stopped with SIGTERM (by its pid).
- in-process fixture: `kafkapy.testing.KafkaBroker()` enter (startup on port 0 in a temporary log dir), as the
  `kafka_broker` pytest fixture does; exit not counted.
- `kafkapy topics --list`: exec to exit against the broker started above.
- import: `import kafkapy.server.kafka_server` in a fresh interpreter (what the broker loads before start-up).

Each figure is the median (and min) of --runs runs, wall clock and the process's CPU time (user + system: for
exec -> accepting read from /proc/<pid>/stat the moment the connect succeeds, 10 ms ticks; for the fixture
time.process_time() around the start). CPU time moves much less than wall time with the machine's load.
Targets: exec -> accepting <= 250 ms, fixture <= 100 ms, topics --list <= 200 ms. The load average is printed
too: on a shared, loaded host every wall figure grows with it.

--baseline DIR: also measure a second checkout (e.g. `git worktree add /tmp/before <commit>`), its kafkapy put
first on PYTHONPATH, alternating run by run with this one so both see the same load.
Bytecode caching matters (every module compiled at each start otherwise): with PYTHONDONTWRITEBYTECODE set the
bench says so; PYTHONPYCACHEPREFIX=/some/dir keeps the .pyc files out of the tree.

Usage: python bench/bench_startup.py [--runs 7] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from bench_support import free_port, stop_process

PYTHON = sys.executable
DEADLINE_S = 30.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def child_env(tree: str | None, **extra: str) -> dict[str, str]:
    """The environment of a measured process: `tree` (a checkout) first on PYTHONPATH, else this one's."""
    env = {**os.environ, **extra}
    if tree:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tree, os.environ.get("PYTHONPATH")) if p)
    return env


def cpu_seconds(pid: int) -> float:
    """utime + stime of a running process, from /proc/<pid>/stat (fields 14 and 15, clock ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def exec_to_accepting(tree: str | None = None) -> tuple[float, float]:
    port = free_port()
    with tempfile.TemporaryDirectory() as log_dir:
        start = time.perf_counter()
        proc = subprocess.Popen([PYTHON, "-m", "kafkapy.cli.main", "server-start", "--override",
                                 f"listeners=PLAINTEXT://127.0.0.1:{port}", "--override", f"log.dirs={log_dir}"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=child_env(tree, KAFKAPY_RUN_DIR=log_dir), cwd=tree or None)
        try:
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        elapsed = time.perf_counter() - start
                        cpu = cpu_seconds(proc.pid)
                        break
                except OSError:
                    if proc.poll() is not None or time.perf_counter() - start > DEADLINE_S:
                        raise RuntimeError(f"broker did not start (exit {proc.poll()})") from None
                    time.sleep(0.002)
        finally:
            stop_process(proc)
    return elapsed, cpu


def in_process_fixture(tree: str | None = None) -> tuple[float, float]:
    code = ("import time,sys\n"
            "from kafkapy.testing import KafkaBroker\n"
            "b = KafkaBroker()\n"
            "t = time.perf_counter(); c = time.process_time(); b.__enter__()\n"
            "e = time.perf_counter() - t; c = time.process_time() - c\n"
            "b.__exit__(None, None, None); print(e, c)\n")
    # a fresh interpreter per run, imports done before the clock starts (a test module imports them once)
    pre = "import kafkapy.testing.kafka_broker, kafkapy.server.kafka_server\n"
    out = subprocess.run([PYTHON, "-c", pre + code], capture_output=True, text=True, timeout=60, check=True,
                         env=child_env(tree), cwd=tree or None)
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def topics_list(bootstrap: str, tree: str | None = None) -> tuple[float, float]:
    before = os.times()
    start = time.perf_counter()
    subprocess.run([PYTHON, "-m", "kafkapy.cli.main", "topics", "--bootstrap-server", bootstrap, "--list"],
                   capture_output=True, timeout=60, check=True, env=child_env(tree), cwd=tree or None)
    elapsed = time.perf_counter() - start
    after = os.times()  # children's user + system time: the tool's whole run
    return elapsed, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def import_server(tree: str | None = None) -> tuple[float, float]:
    out = subprocess.run([PYTHON, "-c", "import time; t = time.perf_counter(); c = time.process_time(); "
                          "import kafkapy.server.kafka_server; "
                          "print(time.perf_counter() - t, time.process_time() - c)"],
                         capture_output=True, text=True, timeout=60, check=True, env=child_env(tree), cwd=tree or None)
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def report(name: str, samples: list[tuple[float, float]], target_ms: float | None) -> None:
    walls = [w for w, _ in samples]
    cpus = [c for _, c in samples]
    med, low = statistics.median(walls) * 1000, min(walls) * 1000
    goal = f"  (target <= {target_ms:.0f} ms)" if target_ms else ""
    print(f"{name:<44} median {med:7.1f} ms   min {low:7.1f} ms   cpu median {statistics.median(cpus) * 1000:6.1f} ms"
          f"{goal}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--baseline", metavar="DIR", help="a second checkout, measured alternately with this one")
    args = ap.parse_args()
    runs = max(1, min(args.runs, 50))
    trees: list[tuple[str, str | None]] = [("", None)]
    if args.baseline:
        trees = [("", os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                 (" [baseline]", os.path.abspath(args.baseline))]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}   cpus: {os.cpu_count()}")
    if sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set: no .pyc is kept, every module is compiled at each start")

    def alternate(fn, *fn_args) -> dict[str, list[tuple[float, float]]]:
        samples: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in trees}
        for _ in range(runs):
            for label, tree in trees:
                samples[label].append(fn(*fn_args, tree))
        return samples

    for name, target, fn in (("import kafkapy.server.kafka_server", None, import_server),
                             ("server-start exec -> accepting", 250, exec_to_accepting),
                             ("in-process KafkaBroker start", 100, in_process_fixture)):
        for label, samples in alternate(fn).items():
            report(name + label, samples, target)
    from kafkapy.testing import KafkaBroker

    with KafkaBroker() as broker:
        for label, samples in alternate(topics_list, broker.bootstrap).items():
            report("kafkapy topics --list" + label, samples, 200)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
