"""Shared fixtures: in-process kafkapy brokers and subprocess brokers, all on 127.0.0.1 with port 0.

- `kafkapy_broker` (module scope): one started KafkaServer with a tmp log dir; yields a BrokerHandle
  (.bootstrap "127.0.0.1:port", .port, .server, .log_dir). Shut down at module teardown.
- `broker_factory` (function scope): `broker_factory(log_dir=None, **overrides)` starts a fresh
  in-process broker (config keys with dots passed as a dict: `broker_factory(overrides={...})`);
  `.restart()` on a handle stops it cleanly and starts a new one on the same log dir. All stopped at
  teardown.
- `broker_process` (function scope): `broker_process(log_dir=None, overrides=None)` runs
  `python -m kafkapy.cli.main server-start --override ...` as a subprocess (for crash tests), waits
  for its run-dir record (which carries the bound port), and kills every process it started by PID
  at teardown.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

STARTUP_TIMEOUT_S = 60.0


def pytest_configure(config: pytest.Config) -> None:
    """Import kafkapy's own modules without assertion rewriting.

    pytest rewrites the asserts of every module of a distribution that ships a pytest plugin (kafkapy does:
    kafkapy.testing.pytest_plugin), so a broker module imported lazily during a test goes through ast.parse on
    the test's thread. CPython 3.11 keeps the AST converter's recursion depth per interpreter, not per thread:
    when a broker thread formats a traceback at that moment (3.11's caret anchors call ast.parse too), one of
    them fails with "SystemError: AST constructor recursion depth mismatch". kafkapy's modules hold no test
    asserts, so nothing is lost by importing them as they are.
    """
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and "kafkapy" in marked:
        marked.discard("kafkapy")
        getattr(hook, "_marked_for_rewrite_cache", {}).clear()

BASE_OVERRIDES = {
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "log.retention.check.interval.ms": "300000",
    # Kafka's default 3 s delay before a new group's first rebalance would add 3 s to every group join.
    "group.initial.rebalance.delay.ms": "0",
}


@dataclass
class BrokerHandle:
    server: Any
    log_dir: str
    overrides: dict[str, str] = field(default_factory=dict)

    @property
    def port(self) -> int:
        return self.server.bound_port()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.shutdown()

    def restart(self) -> BrokerHandle:
        self.server.shutdown()
        self.server = _start_server(self.log_dir, self.overrides)
        return self


def _start_server(log_dir: str, overrides: dict[str, str] | None = None) -> Any:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    props = dict(BASE_OVERRIDES)
    props["log.dirs"] = log_dir
    props.update(overrides or {})
    server = KafkaServer(KafkaConfig.from_properties(None, props))
    server.startup()
    return server


@pytest.fixture(scope="module")
def kafkapy_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    log_dir = str(tmp_path_factory.mktemp("kafkapy-data"))
    handle = BrokerHandle(_start_server(log_dir), log_dir)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def broker_factory(tmp_path: Path) -> Iterator[Any]:
    started: list[BrokerHandle] = []
    counter = [0]

    def start(log_dir: str | None = None, overrides: dict[str, str] | None = None) -> BrokerHandle:
        if log_dir is None:
            counter[0] += 1
            log_dir = str(tmp_path / f"broker-{counter[0]}")
        handle = BrokerHandle(_start_server(log_dir, overrides), log_dir, dict(overrides or {}))
        started.append(handle)
        return handle

    try:
        yield start
    finally:
        for handle in started:
            handle.stop()


@dataclass
class BrokerProcess:
    proc: subprocess.Popen
    log_dir: str
    run_dir: str
    out_path: str
    port: int

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def kill(self) -> None:
        """SIGKILL: an unclean stop (no flush, no checkpoints, no clean-shutdown marker)."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self, timeout_s: float = 30.0) -> int:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        return self.proc.wait(timeout_s)

    def output(self) -> str:
        try:
            return Path(self.out_path).read_text(errors="replace")
        except OSError:
            return ""


@pytest.fixture
def broker_process(tmp_path: Path) -> Iterator[Any]:
    started: list[BrokerProcess] = []
    counter = [0]

    def start(log_dir: str | None = None, overrides: dict[str, str] | None = None) -> BrokerProcess:
        counter[0] += 1
        if log_dir is None:
            log_dir = str(tmp_path / f"proc-broker-{counter[0]}")
        run_dir = str(tmp_path / f"run-{counter[0]}")
        os.makedirs(run_dir, exist_ok=True)
        props = dict(BASE_OVERRIDES)
        props["log.dirs"] = log_dir
        props.update(overrides or {})
        argv = [sys.executable, "-m", "kafkapy.cli.main", "server-start"]
        for k, v in props.items():
            argv += ["--override", f"{k}={v}"]
        out_path = str(tmp_path / f"proc-broker-{counter[0]}.out")
        env = dict(os.environ, KAFKAPY_RUN_DIR=run_dir)
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env)
        handle = BrokerProcess(proc, log_dir, run_dir, out_path, -1)
        started.append(handle)
        record = os.path.join(run_dir, f"server-{proc.pid}.json")
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"broker exited with {proc.returncode}:\n{handle.output()}")
            try:
                with open(record) as f:
                    handle.port = int(json.load(f)["boundPort"])
                return handle
            except (OSError, ValueError, KeyError, TypeError):
                time.sleep(0.05)
        raise TimeoutError(f"broker did not start within {STARTUP_TIMEOUT_S}s:\n{handle.output()}")

    try:
        yield start
    finally:
        for handle in started:
            if handle.proc.poll() is None:
                os.kill(handle.proc.pid, signal.SIGKILL)
                handle.proc.wait(30)


class WireClient:
    """A raw Kafka connection for tests: sends requests built from the protocol classes (or raw bytes)
    and decodes responses, so tests can check exact bytes and per-partition error codes."""

    def __init__(self, port: int, client_id: str = "wire-test", timeout_s: float = 10.0) -> None:
        import socket

        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        self.client_id = client_id
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv_exact(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError(f"connection closed after {len(out)} of {n} bytes")
            out += chunk
        return bytes(out)

    def recv_frame(self) -> bytes:
        size = int.from_bytes(self.recv_exact(4), "big", signed=True)
        return self.recv_exact(size)

    def is_closed(self, wait_s: float = 5.0) -> bool:
        """True when the peer closed the connection (EOF or reset) within wait_s."""
        self.sock.settimeout(wait_s)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False

    def send(self, body: Any, api_version: int) -> int:
        from kafkapy.protocol.header import RequestHeader, encode_request

        self.correlation_id += 1
        header = RequestHeader(body.API_KEY, api_version, self.correlation_id, self.client_id)
        self.sock.sendall(encode_request(header, body))
        return self.correlation_id

    def request(self, body: Any, api_version: int) -> Any:
        from kafkapy.protocol.header import decode_response

        correlation_id = self.send(body, api_version)
        got, response = decode_response(self.recv_frame(), body.API_KEY, api_version)
        assert got == correlation_id
        return response


@pytest.fixture
def wire_client() -> Iterator[Any]:
    """`wire_client(port)` opens a WireClient; all are closed at teardown."""
    opened: list[WireClient] = []

    def connect(port: int, **kwargs: Any) -> WireClient:
        client = WireClient(port, **kwargs)
        opened.append(client)
        return client

    try:
        yield connect
    finally:
        for client in opened:
            client.close()
