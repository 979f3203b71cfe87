"""`kafkapy server-start` / `kafkapy server-stop`: kafka-server-start.sh and kafka-server-stop.sh.

server-start [-daemon|--daemon] [server.properties] [--override k=v]...
  Builds KafkaConfig.from_properties(path_or_none, overrides) (no file: the embedded single-broker
  defaults), runs KafkaServer(config).startup(), and waits. SIGTERM/SIGINT/SIGHUP call shutdown()
  (flush + checkpoints: a clean shutdown); a second signal during shutdown exits at once.
  Logs go to stdout in Kafka's log4j layout "[2026-11-21 20:15:00,123] INFO <msg> (<logger>)";
  this module logs "[KafkaServer id=N] starting/started; listening on PLAINTEXT://127.0.0.1:9092/shutting
  down/shut down completed" itself. A server.properties that is not a properties file (a binary, a
  script) is refused before anything starts: one line naming the file and its first bad line, exit 1.
  -daemon: re-runs itself detached (new session, stdin /dev/null) with its output in
  $LOG_DIR/kafkaServer.out (truncated at each start, as kafka-run-class.sh redirects it; $LOG_DIR defaults
  to logs/ in the working directory, kafka-run-class.sh's rule), waits until the child reports started
  (or dies: exit 1), then returns. The child logs as Kafka's config/log4j.properties: server.log,
  controller.log, state-change.log, kafka-request.log, log-cleaner.log, kafka-authorizer.log in $LOG_DIR,
  rolled hourly (cli/logging_config.py).
  --logging-config FILE (else $KAFKAPY_LOG_CONFIG, else -Dlog4j.configuration=file:FILE in
  $KAFKA_LOG4J_OPTS) configures logging from a YAML/JSON dictConfig, INI fileConfig or log4j .properties
  file instead, in the foreground as with -daemon.
  Once started it writes <first log dir>/kafkapy.pid and a JSON record
  <run dir>/server-<pid>.json (run dir: $KAFKAPY_RUN_DIR, else $XDG_RUNTIME_DIR/kafkapy, else
  /tmp/kafkapy-<uid>) with pid, node id, process roles, config path; both removed on exit.

server-stop [--process-role broker|controller] [--node-id N] [--wait] [--timeout-ms MS]
  Kafka's script greps `ps` for kafka.Kafka; we take the union of the run-dir records (checked
  against the live command line, so a recycled pid is never signalled) and a /proc scan for
  `kafkapy server-start` / `python -m kafkapy.cli.main server-start` / `kafkapy run-class kafka.Kafka`
  command lines (node id and roles then come from that command line's config file and overrides),
  and sends SIGTERM. None found: "No kafka server to stop", exit 1. --wait (ours) waits for them
  to exit.

Only this cli module imports kafkapy.server, and only inside start() (layer rule; start-up time).
Thread-safety: runs in the main thread (signal handlers); one waiter thread watches await_shutdown().
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.cli.command import ToolError, ToolParser, run
from kafkapy.cli.logging_config import (
    KafkaLogFormatter,
    apply_config_file,
    apply_default_config,
    config_file_from_environment,
    logs_dir,
)
from kafkapy.cli.properties import parse_key_values
from kafkapy.common.private_file import write_private_file

if TYPE_CHECKING:
    from kafkapy.server.kafka_config import KafkaConfig

SERVER_LOGGER = "kafka.server.KafkaServer"
PID_FILE_NAME = "kafkapy.pid"
DAEMON_OUT_NAME = "kafkaServer.out"
DAEMON_WAIT_S = 60.0

def configure_logging(stream=None, level: str | None = None) -> logging.Handler:
    """Route all logging to stdout in Kafka's layout (level from $KAFKAPY_LOG_LEVEL, default INFO)."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stdout)
    handler.setFormatter(KafkaLogFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel((level or os.environ.get("KAFKAPY_LOG_LEVEL") or "INFO").upper())
    return handler


# --- run dir records and process discovery ---------------------------------------------------------


def run_dir() -> str:
    explicit = os.environ.get("KAFKAPY_RUN_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return os.path.join(xdg, "kafkapy")
    return os.path.join("/tmp", f"kafkapy-{os.getuid()}")


def _record_path(pid: int) -> str:
    return os.path.join(run_dir(), f"server-{pid}.json")


def _proc_cmdline(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    if not raw:
        return None  # zombie or kernel thread
    return [a.decode("utf-8", "replace") for a in raw.rstrip(b"\0").split(b"\0")]


def server_start_args(argv: list[str]) -> list[str] | None:
    """The arguments after `server-start` if `argv` is a kafkapy server-start command line, else None."""
    n = len(argv)
    for i, a in enumerate(argv):
        base = os.path.basename(a)
        if base in ("kafkapy", "kafkapy.exe"):
            rest = argv[i + 1 :]
        elif a == "-m" and i + 1 < n and argv[i + 1] in ("kafkapy", "kafkapy.cli.main"):
            rest = argv[i + 2 :]
        else:
            continue
        if rest[:1] == ["server-start"]:
            return rest[1:]
        if rest[:1] == ["run-class"]:
            tail = [t for t in rest[1:] if t not in ("-daemon", "-loggc")]
            if "kafka.Kafka" in tail:
                return tail[tail.index("kafka.Kafka") + 1 :]
    return None


@dataclass
class ServerProcess:
    pid: int
    node_id: int | None = None
    process_roles: list[str] = field(default_factory=list)
    config: str | None = None
    source: str = "scan"  # "record" (run dir) or "scan" (/proc)


def _node_info(args: list[str], cwd: str | None) -> tuple[int | None, list[str], str | None]:
    """node id, process roles and config path from server-start arguments (file + overrides)."""
    config: str | None = None
    overrides: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--override" and i + 1 < len(args):
            k, _, v = args[i + 1].partition("=")
            overrides[k.strip()] = v.strip()
            i += 2
            continue
        if a == "--logging-config":
            i += 2  # its value is not the properties file
            continue
        if a.startswith("--override="):
            k, _, v = a[len("--override=") :].partition("=")
            overrides[k.strip()] = v.strip()
        elif not a.startswith("-") and config is None:
            config = a
        i += 1
    props: dict[str, str] = {}
    if config is not None:
        path = config if os.path.isabs(config) or cwd is None else os.path.join(cwd, config)
        config = path
        try:
            from kafkapy.common.properties import load_properties

            props = load_properties(path)
        except (OSError, ValueError):
            return None, [], config
    else:
        props = {"node.id": "0"}  # embedded defaults
    props.update(overrides)
    node_id: int | None = None
    for key in ("broker.id", "node.id"):
        try:
            value = int(props.get(key, "-1").strip())
        except ValueError:
            continue
        if value >= 0:
            node_id = value
            break
    if node_id is None and "broker.id" not in props and "node.id" not in props:
        node_id = 0
    roles = [r.strip() for r in props.get("process.roles", "").split(",") if r.strip()]
    return node_id, roles, config


def find_servers() -> list[ServerProcess]:
    """Running kafkapy servers of this user: run-dir records plus a /proc scan, by pid."""
    found: dict[int, ServerProcess] = {}
    me = os.getpid()
    rdir = run_dir()
    try:
        names = os.listdir(rdir)
    except OSError:
        names = []
    for name in names:
        if not (name.startswith("server-") and name.endswith(".json")):
            continue
        path = os.path.join(rdir, name)
        try:
            with open(path) as f:
                rec = json.load(f)
            pid = int(rec["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        cmd = _proc_cmdline(pid)
        if cmd is None or server_start_args(cmd) is None:
            _remove_quietly(path)  # stale: process gone or pid reused by something else
            continue
        found[pid] = ServerProcess(pid, rec.get("nodeId"), list(rec.get("processRoles") or []),
                                   rec.get("config"), "record")  # fmt: skip
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid == me or pid in found:
            continue
        if not _same_user(pid):
            continue
        cmd = _proc_cmdline(pid)
        args = server_start_args(cmd) if cmd else None
        if args is None:
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            cwd = None
        node_id, roles, config = _node_info(args, cwd)
        found[pid] = ServerProcess(pid, node_id, roles, config, "scan")
    return sorted(found.values(), key=lambda s: s.pid)


def _same_user(pid: int) -> bool:
    """Only this user's servers (root may stop anyone's), so other users' processes are never signalled."""
    uid = os.getuid()
    if uid == 0:
        return True
    try:
        return os.stat(f"/proc/{pid}").st_uid == uid
    except OSError:
        return False


def _matches(server: ServerProcess, process_role: str | None, node_id: int | None) -> bool:
    if node_id is not None and server.node_id != node_id:
        return False
    if process_role is not None:
        roles = server.process_roles or ["broker"]  # a ZooKeeper/embedded-mode server is a broker
        if process_role not in roles:
            return False
    return True


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


# --- server-start ----------------------------------------------------------------------------------


def build_start_parser() -> ToolParser:
    p = ToolParser(
        "server-start",
        "Start a Kafka broker. With no properties file: a single broker on PLAINTEXT://127.0.0.1:9092 "
        "with data in ./kafkapy-data.",
    )
    p.add_argument("config", nargs="?", metavar="server.properties", help="broker config file (Java .properties)")
    p.add_argument("--override", action="append", default=[], metavar="property=value",
                   help="Optional property that should override values set in server.properties file")  # fmt: skip
    p.add_argument("-daemon", "--daemon", dest="daemon", action="store_true",
                   help="run in the background, output to $LOG_DIR/kafkaServer.out")  # fmt: skip
    p.add_argument("--logging-config", metavar="FILE",
                   help="logging configuration (YAML/JSON dictConfig, INI fileConfig or log4j .properties), as "
                        "KAFKA_LOG4J_OPTS' log4j.configuration; default $KAFKAPY_LOG_CONFIG, else "
                        "-Dlog4j.configuration=file:FILE in $KAFKA_LOG4J_OPTS")  # fmt: skip
    # Set by -daemon on the process it starts: Kafka's default log4j.properties (files in $LOG_DIR).
    p.add_argument("--daemon-child", action="store_true", help=argparse.SUPPRESS)
    return p


def _load_config(path: str | None, overrides: dict[str, str]) -> KafkaConfig:
    from kafkapy.server.kafka_config import KafkaConfig

    return KafkaConfig.from_properties(path, overrides)


def _make_server(config):
    try:
        from kafkapy.server.kafka_server import KafkaServer
    except ModuleNotFoundError as e:
        if e.name != "kafkapy.server.kafka_server":
            raise
        raise ToolError("kafkapy: server-start is not implemented yet (no kafkapy.server.kafka_server)",
                        prefixed=False) from e  # fmt: skip

    return KafkaServer(config)


def load_config(args) -> KafkaConfig:
    overrides = parse_key_values(args.override, "--override")
    try:
        return _load_config(args.config, overrides)
    except (ValueError, KeyError, TypeError) as e:
        # ConfigError is a ValueError: a one-line message naming the key.
        raise ToolError(str(e) or type(e).__name__) from e


def _write_records(config: KafkaConfig, server: Any, config_path: str | None, log_dirs: list[str]) -> list[str]:
    written: list[str] = []
    pid = os.getpid()
    if log_dirs:
        path = os.path.join(log_dirs[0], PID_FILE_NAME)
        try:
            with open(path, "w") as f:
                f.write(f"{pid}\n")
            written.append(path)
        except OSError as e:
            logging.getLogger(SERVER_LOGGER).warning("Could not write pid file %s: %s", path, e)
    rdir = run_dir()
    try:
        os.makedirs(rdir, mode=0o700, exist_ok=True)
        port = None
        try:
            port = server.bound_port()
        except Exception:  # noqa: BLE001 - informational only
            port = None
        record = {
            "pid": pid,
            "nodeId": config.broker_id,
            "processRoles": list(config.get("process.roles") or []),
            "config": os.path.abspath(config_path) if config_path else None,
            "logDirs": log_dirs,
            "boundPort": port,
            "argv": sys.argv,
            "startedMs": int(time.time() * 1000),
        }
        path = _record_path(pid)
        # argv may carry --override sasl.jaas.config=... with a password: owner-only, like the metadata file.
        write_private_file(path, json.dumps(record).encode(), fsync=False)
        written.append(path)
    except OSError as e:
        logging.getLogger(SERVER_LOGGER).warning("Could not write %s: %s", _record_path(pid), e)
    return written


def _remove_records(paths: list[str]) -> None:
    pid = str(os.getpid())
    for path in paths:
        try:
            if path.endswith(PID_FILE_NAME):
                with open(path) as f:
                    if f.read().strip() != pid:
                        continue  # another server took this log dir over; leave its file alone
            os.remove(path)
        except OSError:
            pass


DUPLICATE_SIGNAL_WINDOW_S = 2.0


def listening_on(config, server) -> str:
    """`PLAINTEXT://127.0.0.1:9092, SSL://0.0.0.0:9093`: each listener with its bound port; an empty host
    binds every interface, which the line says as 0.0.0.0 (or [::])."""
    parts = []
    for ep in config.listener_endpoints():
        port = server.bound_port(ep.listener_name)
        host = ep.host or "0.0.0.0"
        parts.append(f"{ep.listener_name}://{f'[{host}]' if ':' in host else host}:{port}")
    return ", ".join(parts)


def serve(config: KafkaConfig, args, stop_event: threading.Event | None = None, install_signals: bool = True) -> int:
    """Run a server in the foreground until a signal (or the server itself) stops it."""
    log = logging.getLogger(SERVER_LOGGER)
    node_id = config.broker_id
    ident = f"[KafkaServer id={node_id}]"
    stop = stop_event or threading.Event()
    previous: dict[signal.Signals, Any] = {}

    first_signal_at: list[float] = []

    def on_signal(signum, frame) -> None:
        if stop.is_set():
            # Wrappers (make, sh, a process-group kill) deliver the same stop twice within moments: that is
            # still the one graceful shutdown. Only a later, deliberate second signal forces the exit.
            if first_signal_at and time.monotonic() - first_signal_at[0] < DUPLICATE_SIGNAL_WINDOW_S:
                return
            log.warning("%s Received signal %s again during shutdown; exiting now", ident, signum)
            os._exit(1)
        first_signal_at.append(time.monotonic())
        log.info("%s Received signal %s, shutting down", ident, signal.Signals(signum).name)
        stop.set()

    if install_signals:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            if sig == signal.SIGHUP and signal.getsignal(sig) == signal.SIG_IGN:
                continue  # nohup'd daemon: keep ignoring hang-ups
            previous[sig] = signal.signal(sig, on_signal)

    server = None
    records: list[str] = []
    try:
        server = _make_server(config)
        log.info("%s starting", ident)
        try:
            server.startup()
        except Exception as e:
            log.error("%s Fatal error during KafkaServer startup. Prepare to shutdown: %s", ident, e,
                      exc_info=args.verbose)  # fmt: skip
            raise ToolError(f"Fatal error during KafkaServer startup: {e}") from e
        log_dirs = config.log_dirs
        records = _write_records(config, server, args.config, log_dirs)
        log.info("%s started; listening on %s", ident, listening_on(config, server))

        def watch() -> None:
            try:
                server.await_shutdown()
            finally:
                stop.set()

        threading.Thread(target=watch, name="kafkapy-await-shutdown", daemon=True).start()
        while not stop.wait(1.0):
            pass
        return 0
    finally:
        try:
            if server is not None:
                log.info("%s shutting down", ident)
                server.shutdown()
                log.info("%s shut down completed", ident)
        finally:
            _remove_records(records)
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _daemonize(args, config, renderer=None) -> int:
    # kafka-run-class.sh: LOG_DIR defaults to logs/ under the base dir (ours: the working directory).
    out_dir = logs_dir()
    os.makedirs(out_dir, exist_ok=True)
    out_path = os.path.join(out_dir, DAEMON_OUT_NAME)
    child_argv = ([args.config] if args.config else []) + [f"--override={o}" for o in args.override]
    child_argv.append("--daemon-child")
    if args.logging_config:
        child_argv.append(f"--logging-config={os.path.abspath(args.logging_config)}")
    if args.verbose:
        child_argv.append("--verbose")
    import subprocess

    with open(out_path, "wb") as out:  # kafka-run-class.sh's `> "$CONSOLE_OUTPUT_FILE"`: a fresh file per start
        child = subprocess.Popen(
            [sys.executable, "-m", "kafkapy.cli.main", "server-start", *child_argv],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env={**os.environ, "LOG_DIR": out_dir},
        )
    record = _record_path(child.pid)
    deadline = time.monotonic() + float(os.environ.get("KAFKAPY_DAEMON_WAIT_S", DAEMON_WAIT_S))
    while time.monotonic() < deadline:
        rc = child.poll()
        if rc is not None:
            raise ToolError(f"kafkapy server exited with code {rc} during startup; see {out_path}")
        if os.path.exists(record):
            if renderer is not None and renderer.json:
                renderer.document({"pid": child.pid, "started": True, "log": out_path})
            return 0
        time.sleep(0.1)
    sys.stderr.write(f"kafkapy server (pid {child.pid}) is still starting; see {out_path}\n")
    if renderer is not None and renderer.json:
        renderer.document({"pid": child.pid, "started": False, "log": out_path})
    return 0


def _take_system_properties(argv: list[str]) -> list[str]:
    """`-Dkey=value` arguments (a JVM's system properties, e.g. -Djava.security.auth.login.config=...) join
    $KAFKA_OPTS, where the broker and the processes it starts read them; the rest is returned."""
    props = [a for a in argv if a.startswith("-D") and "=" in a]
    if props:
        quoted = [shlex.quote(p) for p in props]
        os.environ["KAFKA_OPTS"] = " ".join([os.environ.get("KAFKA_OPTS", ""), *quoted]).strip()
    return [a for a in argv if a not in props]


def start_main(argv: list[str]) -> int:
    argv = _take_system_properties(argv)

    def execute(args, out) -> int:
        config = load_config(args)
        if args.daemon:
            return _daemonize(args, config, out)
        config_file = args.logging_config or config_file_from_environment()
        if config_file is None and not args.daemon_child:
            handler = configure_logging()
            try:
                return _serve_logged(config, args)
            finally:
                logging.getLogger().removeHandler(handler)
        try:
            if config_file is not None:
                apply_config_file(config_file)
            else:
                apply_default_config()
        except (ValueError, OSError) as e:
            raise ToolError(str(e)) from e
        return _serve_logged(config, args)

    return run(build_start_parser(), argv, execute)


def _serve_logged(config: KafkaConfig, args) -> int:
    if args.config is None:
        logging.getLogger(SERVER_LOGGER).info(
            "No server.properties given: using embedded defaults (listeners=%s, log.dirs=%s)",
            config.get("listeners"),
            ",".join(config.log_dirs),
        )
    return serve(config, args)


# --- server-stop -----------------------------------------------------------------------------------


def build_stop_parser() -> ToolParser:
    p = ToolParser("server-stop", "Stop kafkapy servers started with server-start (SIGTERM: clean shutdown).")
    p.add_argument("--process-role", choices=("broker", "controller"), help="only servers with this role")
    p.add_argument("--node-id", type=int, help="only the server with this node.id/broker.id")
    p.add_argument("--wait", action="store_true", help="wait until the servers have exited")
    p.add_argument("--timeout-ms", type=int, default=60_000, help="with --wait: how long (default 60000)")
    return p


def stop_main(argv: list[str]) -> int:
    def execute(args, out) -> int:
        servers = [s for s in find_servers() if _matches(s, args.process_role, args.node_id)]
        if not servers:
            if out.json:
                out.document({"stopped": []})
            else:
                out.line("No kafka server to stop")
            return 1
        signalled = []
        for s in servers:
            try:
                os.kill(s.pid, signal.SIGTERM)
                signalled.append(s)
            except ProcessLookupError:
                continue
            except PermissionError as e:
                raise ToolError(f"Cannot stop kafkapy server pid {s.pid}: {e.strerror}") from e
            if args.verbose and not out.json:
                out.line(f"Sent SIGTERM to kafkapy server pid {s.pid} (node.id {s.node_id})")
        if args.wait:
            deadline = time.monotonic() + args.timeout_ms / 1000.0
            pending = {s.pid for s in signalled}
            while pending and time.monotonic() < deadline:
                pending = {p for p in pending if _alive(p)}
                if pending:
                    time.sleep(0.05)
            if pending:
                raise ToolError(
                    f"kafkapy server(s) {','.join(map(str, sorted(pending)))} still running after {args.timeout_ms} ms"
                )
        if out.json:
            out.document({"stopped": signalled})
        return 0

    return run(build_stop_parser(), argv, execute)


def _alive(pid: int) -> bool:
    cmd = _proc_cmdline(pid)
    if cmd is None:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return False
