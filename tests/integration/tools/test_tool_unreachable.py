"""What an ops user meets first: a bootstrap server that refuses, does not resolve, or is not Kafka makes
topics, configs and get-offsets fail within seconds with one line naming the address and the cause;
a reachable but silent server keeps Kafka's timeout."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

TOOLS = {
    "topics": ["topics", "--list"],
    "configs": ["configs", "--describe", "--entity-type", "topics"],
    "get-offsets": ["get-offsets"],
}
FAIL_FAST_S = 5.0
# The window every bootstrap address may fail hard before a tool gives up is 1.5 s (BOOTSTRAP_FAIL_FAST_MS; its
# arithmetic is unit-tested with MockTime in tests/unit/client/test_client_bootstrap_unreachable.py). The
# parametrized cases here check the tools' one-line outcome per cause and run with a 0.4 s window (still several
# reconnects at reconnect.backoff.ms 50, doubling); test_every_bootstrap_address_is_named keeps the shipped value.
SHORT_WINDOW_MS = 400


@pytest.fixture
def short_window(monkeypatch: pytest.MonkeyPatch) -> None:
    import kafkapy.client.network_client as network_client

    monkeypatch.setattr(network_client, "BOOTSTRAP_FAIL_FAST_MS", SHORT_WINDOW_MS)


class PeerServer:
    """A loopback TCP server that answers every connection with `reply` (None: reads and never answers)."""

    def __init__(self, reply: bytes | None) -> None:
        self.reply = reply
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            if self.reply is not None:
                conn.sendall(self.reply)
                conn.close()
        except OSError:
            pass

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone does not
        except OSError:
            pass
        self.sock.close()
        for c in self.conns:
            c.close()
        self.thread.join(5)


@pytest.fixture
def peer() -> Iterator:
    servers: list[PeerServer] = []

    def start(reply: bytes | None) -> PeerServer:
        servers.append(PeerServer(reply))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def refused_address() -> str:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
    return f"127.0.0.1:{port}"  # closed: connecting is refused


def run_timed(cli, argv: list[str]):
    started = time.monotonic()
    result = cli(*argv)
    return result, time.monotonic() - started


@pytest.mark.parametrize("tool", TOOLS)
def test_refused_port_fails_fast(cli, short_window, tool: str) -> None:
    address = refused_address()
    r, elapsed = run_timed(cli, [*TOOLS[tool], "--bootstrap-server", address])
    assert r.rc == 1 and elapsed < FAIL_FAST_S, (elapsed, r.err)
    assert r.err.count("\n") == 1 and r.out == b""
    assert r.err.rstrip().endswith(f"Could not connect to any bootstrap server: {address} (connection refused)")


@pytest.mark.parametrize("tool", TOOLS)
def test_unresolvable_host_fails_fast(cli, short_window, tool: str) -> None:
    r, elapsed = run_timed(cli, [*TOOLS[tool], "--bootstrap-server", "nonexistent.invalid:9092"])
    assert r.rc == 1 and elapsed < FAIL_FAST_S, (elapsed, r.err)
    assert r.err.count("\n") == 1 and r.out == b""
    assert "Could not connect to any bootstrap server: nonexistent.invalid:9092 (" in r.err


def test_every_bootstrap_address_is_named(cli) -> None:
    refused = refused_address()
    r, elapsed = run_timed(cli, ["topics", "--list", "--bootstrap-server", f"{refused},nonexistent.invalid:9092"])
    assert r.rc == 1 and elapsed < FAIL_FAST_S
    assert r.err.startswith("Error while executing topic command : Could not connect to any bootstrap server: "
                            f"{refused} (connection refused), nonexistent.invalid:9092 (")


@pytest.mark.parametrize(("tool", "reply"), [
    *[(tool, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n") for tool in TOOLS],
    ("topics", b"SSH-2.0-OpenSSH_9.2\r\n"),
    ("topics", b"\x00\x00\x00\x08\x00\x00\x00\x63garbage!"),  # a small frame with the wrong correlation id
], ids=["topics-http", "configs-http", "get-offsets-http", "topics-ssh", "topics-wrong-correlation"])
def test_non_kafka_peer_is_reported_once(cli, peer, short_window, tool: str, reply: bytes) -> None:
    server = peer(reply)
    r, elapsed = run_timed(cli, [*TOOLS[tool], "--bootstrap-server", f"127.0.0.1:{server.port}"])
    assert r.rc == 1 and elapsed < FAIL_FAST_S, (elapsed, r.err)
    assert r.err.count("\n") == 1, r.err  # no "bad response frame" line per reconnect
    assert f"Could not connect to any bootstrap server: 127.0.0.1:{server.port} (not a Kafka broker: " in r.err


def test_reachable_but_silent_broker_keeps_the_timeout(cli, peer, tmp_path) -> None:
    server = peer(None)
    config = tmp_path / "admin.properties"
    config.write_text("default.api.timeout.ms=1500\nrequest.timeout.ms=500\n")
    r, elapsed = run_timed(cli, ["topics", "--list", "--bootstrap-server", f"127.0.0.1:{server.port}",
                                 "--command-config", str(config)])
    assert r.rc == 1 and "Could not connect to any bootstrap server" not in r.err, r.err
    assert elapsed >= 1.25, (elapsed, r.err)  # retried until default.api.timeout.ms, not given up early


def test_a_broker_once_reached_is_retried_until_the_timeout(broker_factory) -> None:
    """Kafka's retry rules after the first connection: a broker going away is not 'unreachable bootstrap'."""
    from kafkapy.client.admin import AdminClient
    from kafkapy.client.errors import BootstrapUnreachableError
    from kafkapy.common.errors import KafkaError

    broker = broker_factory()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "default.api.timeout.ms": 1500,
                         "request.timeout.ms": 500})
    try:
        assert admin.list_topics() == {}
        broker.stop()
        started = time.monotonic()
        with pytest.raises(KafkaError) as e:
            admin.list_topics()
        assert not isinstance(e.value, BootstrapUnreachableError)
        assert time.monotonic() - started >= 1.25
    finally:
        admin.close()
