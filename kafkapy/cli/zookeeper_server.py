"""`kafkapy zookeeper-server-start [-daemon] zookeeper.properties` / `kafkapy zookeeper-server-stop`
(Kafka's zookeeper-server-start.sh / zookeeper-server-stop.sh) over Debian's installed ZooKeeper.

start: converts the Kafka-style properties (kafkapy/tools/zookeeper_server.py) into
<run dir>/zookeeper-<clientPort>.cfg, runs java QuorumPeerMain on it and writes
<run dir>/zookeeper-<clientPort>.pid (run dir as server-start's: $KAFKAPY_RUN_DIR, $XDG_RUNTIME_DIR/kafkapy
or /tmp/kafkapy-<uid>). In the foreground it waits for the server and stops it on SIGTERM/Ctrl-C;
with -daemon it starts it detached (output appended to $LOG_DIR/zookeeper.out, $LOG_DIR defaulting to
./logs as Kafka's scripts), waits until the client port answers, and returns.
No ZooKeeper installed: one line naming the Debian package `zookeeper`, exit 1.
stop: SIGTERM to every server found by PID file, waiting up to 30 s; none: "No zookeeper server to
stop", exit 1 (Kafka's wording).
Thread-safety: main thread, one run.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run
from kafkapy.cli.server import run_dir

START_USAGE = "USAGE: zookeeper-server-start [-daemon] zookeeper.properties"
DAEMON_WAIT_S = 60.0
STOP_WAIT_S = 30.0


def build_start_parser() -> ToolParser:
    p = ToolParser("zookeeper-server-start", "Start Debian's installed ZooKeeper with a Kafka-style config.")
    p.add_argument("config", nargs="?", metavar="zookeeper.properties", help="ZooKeeper config (Kafka's keys)")
    p.add_argument("-daemon", "--daemon", dest="daemon", action="store_true",
                   help="run in the background, output appended to $LOG_DIR/zookeeper.out")
    return p


def _port_open(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=0.5):
            return True
    except OSError:
        return False


def _start(args: Any, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import zookeeper_server as zs

    if args.config is None:
        raise UsageError(START_USAGE)
    props = load_properties(args.config)
    inst = zs.find_installation()
    cfg, jvm = zs.convert(props, os.getcwd())
    port = cfg["clientPort"]
    rdir = run_dir()
    os.makedirs(rdir, exist_ok=True)
    pid_path = zs.pid_file(rdir, port)
    existing = {pid for pid, path in zs.running(rdir).items() if path == pid_path}
    if existing:
        raise ToolError(f"a ZooKeeper started by kafkapy (pid {existing.pop()}) already uses client port {port}")
    cfg_path = os.path.join(rdir, f"zookeeper-{port}.cfg")
    with open(cfg_path, "w") as f:
        f.write(zs.render_cfg(cfg))
    heap = os.environ.get("KAFKA_HEAP_OPTS", "-Xmx512M -Xms512M")
    argv = zs.java_argv(inst, cfg_path, jvm, heap)
    if args.daemon:
        log_dir = os.environ.get("LOG_DIR") or os.path.join(os.getcwd(), "logs")
        os.makedirs(log_dir, exist_ok=True)
        with open(os.path.join(log_dir, "zookeeper.out"), "ab") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        _write_pid(pid_path, proc.pid)
        address = cfg.get("clientPortAddress") or "127.0.0.1"
        deadline = time.monotonic() + DAEMON_WAIT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                _remove(pid_path)
                raise ToolError(f"ZooKeeper exited with code {proc.returncode} (see {log.name})")
            if _port_open("127.0.0.1" if address == "0.0.0.0" else address, int(port)):
                if out.json:
                    out.document({"pid": proc.pid, "clientPort": int(port), "log": log.name})
                return 0
            time.sleep(0.1)
        raise ToolError(f"ZooKeeper did not open {address}:{port} within {DAEMON_WAIT_S:.0f} s (see {log.name})")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    _write_pid(pid_path, proc.pid)
    try:
        return proc.wait()
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (run() turns it into Terminated): stop the server too
        proc.terminate()
        proc.wait(STOP_WAIT_S)
        raise
    finally:
        _remove(pid_path)


def _write_pid(path: str, pid: int) -> None:
    with open(path, "w") as f:
        f.write(f"{pid}\n")


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def build_stop_parser() -> ToolParser:
    return ToolParser("zookeeper-server-stop", "Stop the ZooKeeper servers started by kafkapy zookeeper-server-start.")


def _stop(args: Any, out: Any) -> int:
    from kafkapy.tools import zookeeper_server as zs

    servers = zs.running(run_dir())
    if not servers:
        if out.json:
            out.document({"stopped": []})
            return 1
        raise ToolError("No zookeeper server to stop", prefixed=False)
    for pid in servers:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_WAIT_S
    while time.monotonic() < deadline and any(zs.is_zookeeper(pid) for pid in servers):
        time.sleep(0.1)
    for pid, path in servers.items():
        if not zs.is_zookeeper(pid):
            _remove(path)
    if out.json:
        out.document({"stopped": sorted(servers)})
    return 0


def start_main(argv: list[str]) -> int:
    return run(build_start_parser(), argv, _start)


def stop_main(argv: list[str]) -> int:
    return run(build_stop_parser(), argv, _stop)
