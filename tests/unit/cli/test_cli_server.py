"""server-start / server-stop: flags, config errors, signal-driven clean shutdown, pid records, stop scan.

KafkaServer itself is replaced by a fake here; the end-to-end run against the real broker belongs to the
integration tests of kafkapy/server/kafka_server.py.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from kafkapy.cli import server as srv


@pytest.fixture(autouse=True)
def run_dir(tmp_path, monkeypatch):
    d = tmp_path / "run"
    monkeypatch.setenv("KAFKAPY_RUN_DIR", str(d))
    return d


class FakeServer:
    instances: list[FakeServer] = []

    def __init__(self, config, fail: Exception | None = None) -> None:
        self.config = config
        self.calls: list[str] = []
        self.fail = fail
        self.stopped = threading.Event()
        FakeServer.instances.append(self)

    def startup(self) -> None:
        self.calls.append("startup")
        if self.fail:
            raise self.fail

    def shutdown(self) -> None:
        self.calls.append("shutdown")
        self.stopped.set()

    def await_shutdown(self) -> None:
        self.stopped.wait(30)

    def bound_port(self, listener_name: str | None = None) -> int:
        return 19092


def test_start_flags():
    args = srv.build_start_parser().parse_args(["-daemon", "config/server.properties", "--override", "a=1",
                                                "--override=b=x=y"])  # fmt: skip
    assert args.daemon and args.config == "config/server.properties" and args.override == ["a=1", "b=x=y"]
    args = srv.build_start_parser().parse_args([])
    assert not args.daemon and args.config is None and args.override == []


def kafkapy(*argv: str):
    """`kafkapy <argv>` in-process through the Typer app (typer.testing.CliRunner)."""
    from typer.testing import CliRunner

    from kafkapy.cli.main import app

    return CliRunner().invoke(app, list(argv), catch_exceptions=False, prog_name="kafkapy")


def test_bad_override_is_a_usage_error():
    r = kafkapy("server-start", "--override", "novalue")
    assert (r.exit_code, r.stderr) == (
        2, "kafkapy server-start: error: Invalid --override value 'novalue': expected key=value\n"
    )


def test_config_errors_are_one_line_exit_1(tmp_path):
    r = kafkapy("server-start", str(tmp_path / "missing.properties"))
    assert (r.exit_code, r.stderr) == (
        1, f"Error: Cannot read config file {tmp_path / 'missing.properties'}: No such file or directory\n")
    r = kafkapy("kafka-server-start.sh", "--override", "num.io.threads=x")
    assert (r.exit_code, r.stderr) == (
        1, "Error: Invalid value x for configuration num.io.threads: Not a number of type INT\n")


def _signal_when_started(fake_list: list, record_dir, sig=signal.SIGTERM) -> threading.Thread:
    def go() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if fake_list and os.path.exists(record_dir / f"server-{os.getpid()}.json"):
                break
            time.sleep(0.01)
        os.kill(os.getpid(), sig)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def test_start_runs_until_sigterm_then_shuts_down_cleanly(tmp_path, monkeypatch, capsys, run_dir):
    FakeServer.instances = []
    monkeypatch.setattr(srv, "_make_server", lambda config: FakeServer(config))
    props = tmp_path / "server.properties"
    data = tmp_path / "data"
    props.write_text(f"node.id=7\nlog.dirs={data}\nlisteners=PLAINTEXT://127.0.0.1:0\n")
    os.makedirs(data)
    before = signal.getsignal(signal.SIGTERM)
    seen_records = {}

    def snapshot() -> None:
        rec = run_dir / f"server-{os.getpid()}.json"
        deadline = time.monotonic() + 10
        while not rec.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        seen_records["json"] = json.loads(rec.read_text())
        seen_records["pid"] = (data / "kafkapy.pid").read_text()
        os.kill(os.getpid(), signal.SIGTERM)

    t = threading.Thread(target=snapshot, daemon=True)
    t.start()
    rc = srv.start_main([str(props), "--override", "num.io.threads=3"])
    t.join(5)
    assert rc == 0
    fake = FakeServer.instances[0]
    assert fake.calls == ["startup", "shutdown"]
    assert fake.config.broker_id == 7 and fake.config.get("num.io.threads") == 3
    rec = seen_records["json"]
    assert rec["pid"] == os.getpid() and rec["nodeId"] == 7 and rec["boundPort"] == 19092
    assert rec["config"] == str(props) and rec["logDirs"] == [str(data)]
    assert seen_records["pid"] == f"{os.getpid()}\n"
    # records are removed on exit, handlers restored
    assert not (data / "kafkapy.pid").exists() and os.listdir(run_dir) == []
    assert signal.getsignal(signal.SIGTERM) == before
    lines = capsys.readouterr().out.splitlines()
    pattern = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] INFO (.*) \(kafka\.server\.KafkaServer\)$")
    msgs = [pattern.match(line).group(1) for line in lines if pattern.match(line)]
    assert msgs == [
        "[KafkaServer id=7] starting",
        "[KafkaServer id=7] started; listening on PLAINTEXT://127.0.0.1:19092",
        "[KafkaServer id=7] Received signal SIGTERM, shutting down",
        "[KafkaServer id=7] shutting down",
        "[KafkaServer id=7] shut down completed",
    ]
    assert not any(isinstance(h.formatter, srv.KafkaLogFormatter) for h in logging.getLogger().handlers)


def test_sigint_also_stops(tmp_path, monkeypatch, run_dir):
    FakeServer.instances = []
    monkeypatch.setattr(srv, "_make_server", lambda config: FakeServer(config))
    _signal_when_started(FakeServer.instances, run_dir, signal.SIGINT)
    assert srv.start_main(["--override", f"log.dirs={tmp_path}"]) == 0
    assert FakeServer.instances[0].calls == ["startup", "shutdown"]


def test_duplicate_signal_from_a_wrapper_is_the_same_graceful_stop(tmp_path, monkeypatch, run_dir):
    """`make run` + Ctrl-C (or a process-group kill) delivers the stop twice: make forwards it as well.
    That must still be one graceful shutdown, not the forced exit a deliberate second signal means."""
    FakeServer.instances = []
    monkeypatch.setattr(srv, "_make_server", lambda config: FakeServer(config))

    def twice() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if FakeServer.instances and os.path.exists(run_dir / f"server-{os.getpid()}.json"):
                break
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=twice, daemon=True).start()
    assert srv.start_main(["--override", f"log.dirs={tmp_path}"]) == 0
    assert FakeServer.instances[0].calls == ["startup", "shutdown"]


def test_server_stopping_by_itself_ends_the_process(tmp_path, monkeypatch):
    FakeServer.instances = []

    def make(config):
        fake = FakeServer(config)
        threading.Timer(0.2, fake.stopped.set).start()  # e.g. a controlled shutdown
        return fake

    monkeypatch.setattr(srv, "_make_server", make)
    assert srv.start_main(["--override", f"log.dirs={tmp_path}"]) == 0
    assert FakeServer.instances[0].calls == ["startup", "shutdown"]


def test_startup_failure_is_fatal_exit_1(tmp_path, monkeypatch, capsys):
    FakeServer.instances = []
    monkeypatch.setattr(srv, "_make_server", lambda c: FakeServer(c, fail=OSError(98, "Address already in use")))
    assert srv.start_main(["--override", f"log.dirs={tmp_path}"]) == 1
    captured = capsys.readouterr()
    assert captured.err == "Error: Fatal error during KafkaServer startup: [Errno 98] Address already in use\n"
    assert "ERROR [KafkaServer id=0] Fatal error during KafkaServer startup. Prepare to shutdown" in captured.out
    assert FakeServer.instances[0].calls == ["startup", "shutdown"]


def test_log_formatter_is_log4j_like():
    record = logging.LogRecord("kafka.log.LogManager", logging.WARNING, __file__, 1, "Disk %s slow", ("d0",), None)
    record.created = 1795292100.123
    record.msecs = 123.0
    line = srv.KafkaLogFormatter().format(record)
    assert re.fullmatch(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,123\] WARN Disk d0 slow \(kafka\.log\.LogManager\)", line)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/x/.venv/bin/python3", "/x/.venv/bin/kafkapy", "server-start", "c.properties"], ["c.properties"]),
        (["python", "-m", "kafkapy.cli.main", "server-start", "--override=a=b"], ["--override=a=b"]),
        (["kafkapy", "run-class", "-daemon", "kafka.Kafka", "s.props"], ["s.props"]),
        (["kafkapy", "topics", "--list"], None),
        (["python", "-m", "pytest", "server-start"], None),
        (["java", "kafka.Kafka", "server.properties"], None),
    ],
)
def test_server_start_command_lines(argv, expected):
    assert srv.server_start_args(argv) == expected


def test_node_info_from_command_line(tmp_path):
    cfg = tmp_path / "s.properties"
    cfg.write_text("broker.id=3\nprocess.roles=broker,controller\n")
    assert srv._node_info(["s.properties"], str(tmp_path)) == (3, ["broker", "controller"], str(cfg))
    assert srv._node_info([str(cfg), "--override", "broker.id=5"], None)[0] == 5
    assert srv._node_info(["--override=node.id=9"], None)[0] == 9
    assert srv._node_info([], None)[:2] == (0, [])


def _fake_server_process(tmp_path, node_id: int) -> subprocess.Popen:
    cfg = tmp_path / f"server-{node_id}.properties"
    cfg.write_text(f"node.id={node_id}\n")
    ready = tmp_path / f"ready-{node_id}"
    code = (
        "import signal, sys, time, pathlib\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\n"
        f"pathlib.Path({str(ready)!r}).write_text('ok')\n"
        "time.sleep(30)\n"
    )
    # argv looks like `... kafkapy server-start <cfg>` to the /proc scan
    proc = subprocess.Popen([sys.executable, "-c", code, "kafkapy", "server-start", str(cfg)])
    deadline = time.monotonic() + 10
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return proc


def test_server_stop_finds_servers_by_command_line_and_filters(tmp_path, capsys):
    node_id = random.randint(10**6, 10**7)
    proc = _fake_server_process(tmp_path, node_id)
    try:
        assert srv.stop_main(["--node-id", str(node_id + 1)]) == 1
        assert capsys.readouterr().out == "No kafka server to stop\n"
        assert srv.stop_main(["--node-id", str(node_id), "--process-role", "controller"]) == 1
        capsys.readouterr()
        found = [s for s in srv.find_servers() if s.pid == proc.pid]
        assert found and found[0].node_id == node_id and found[0].source == "scan"
        assert srv.stop_main(["--node-id", str(node_id), "--process-role", "broker", "--wait", "--timeout-ms", "10000"]) == 0
        assert proc.wait(10) == 0  # exited through its SIGTERM handler
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_server_stop_uses_run_dir_records_and_drops_stale_ones(tmp_path, run_dir, capsys):
    node_id = random.randint(10**7, 10**8)
    proc = _fake_server_process(tmp_path, 1)  # its config says node 1; the record says node_id
    try:
        run_dir.mkdir()
        (run_dir / f"server-{proc.pid}.json").write_text(json.dumps({"pid": proc.pid, "nodeId": node_id,
                                                                     "processRoles": ["broker"]}))  # fmt: skip
        (run_dir / "server-999999999.json").write_text(json.dumps({"pid": 999999999, "nodeId": node_id}))
        assert srv.stop_main(["--node-id", str(node_id), "--wait", "--output", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert [s["pid"] for s in out["stopped"]] == [proc.pid] and out["stopped"][0]["source"] == "record"
        assert proc.wait(10) == 0
        assert not (run_dir / "server-999999999.json").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_daemon_reports_a_child_that_dies_during_startup(tmp_path, monkeypatch, capsys):
    # log.dirs names a regular file, so no broker can start there (and before kafka_server.py exists the
    # child fails as "not implemented"): either way the parent must say so and exit 1.
    bad = tmp_path / "not-a-dir"
    bad.write_text("x")
    node_id = random.randint(10**8, 10**9)
    monkeypatch.setenv("LOG_DIR", str(tmp_path / "logs"))
    rc = srv.start_main(["-daemon", "--override", f"log.dirs={bad}", "--override", f"node.id={node_id}",
                         "--override", "listeners=PLAINTEXT://127.0.0.1:0"])  # fmt: skip
    try:
        err = capsys.readouterr().err
        assert rc == 1
        assert err == (f"Error: kafkapy server exited with code 1 during startup; see "
                       f"{tmp_path / 'logs' / 'kafkaServer.out'}\n")  # fmt: skip
        assert (tmp_path / "logs" / "kafkaServer.out").read_text().strip()
    finally:
        for s in srv.find_servers():
            if s.node_id == node_id:
                os.kill(s.pid, signal.SIGTERM)


@pytest.mark.parametrize("content", [
    b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00>\x00",
    b'{"broker.id": 0, "log.dirs": "/tmp/x"}\n',
    b"broker.id=0\nlisteners=PLAINTEXT://:9092\nthis line is prose, not a config\n",
])
def test_start_refuses_a_file_that_is_not_a_properties_file(tmp_path, monkeypatch, capsys, run_dir, content):
    FakeServer.instances = []
    monkeypatch.setattr(srv, "_make_server", lambda config: FakeServer(config))
    props = tmp_path / "server.properties"
    props.write_bytes(content)
    assert srv.start_main([str(props)]) == 1
    captured = capsys.readouterr()
    assert FakeServer.instances == [] and captured.out == ""
    err = captured.err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"Error: {props} is not a properties file: line ")
    bad_line = 3 if content.startswith(b"broker.id") else 1
    assert f"properties file: line {bad_line}: " in err[0]


def test_listening_on_names_every_listener_with_its_bound_port(tmp_path):
    from kafkapy.server.kafka_config import KafkaConfig

    config = KafkaConfig.from_properties(None, {
        "log.dirs": str(tmp_path), "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://:9093,V6://[::1]:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,V6:PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL"})

    class Bound:
        def bound_port(self, listener_name=None):
            return {"PLAINTEXT": 40001, "INTERNAL": 9093, "V6": 40002}[listener_name]

    assert srv.listening_on(config, Bound()) == (
        "PLAINTEXT://127.0.0.1:40001, INTERNAL://0.0.0.0:9093, V6://[::1]:40002")
