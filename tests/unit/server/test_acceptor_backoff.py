"""Acceptor at descriptor exhaustion: one ERROR line per episode and a paused listening socket, not a
spin (accept failing with EMFILE leaves the connection in the backlog, so the socket stays readable)."""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
from typing import Any

from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.network.acceptor import Acceptor


class FailingServerSocket:
    """The real listening socket, whose accept() fails with EMFILE while `failing` is set."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.failing = True
        self.failed_accepts = 0

    def fileno(self) -> int:
        return self.sock.fileno()

    def accept(self) -> tuple[socket.socket, Any]:
        if self.failing:
            self.failed_accepts += 1
            raise OSError(errno.EMFILE, "Too many open files")
        return self.sock.accept()

    def close(self) -> None:
        self.sock.close()


class Sink:
    def __init__(self) -> None:
        self.accepted: list[socket.socket] = []
        self.event = threading.Event()

    def accept(self, sock: socket.socket, address: tuple[str, int]) -> None:
        self.accepted.append(sock)
        self.event.set()


def test_emfile_pauses_accepting_with_one_log_line(caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="kafka.network.DataPlaneAcceptor")
    config = KafkaConfig.from_properties(None, {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": "/nonexistent"})
    sink = Sink()
    acceptor = Acceptor(config.listener_endpoints()[0], config, [sink])
    server = FailingServerSocket(acceptor._server)
    acceptor._server = server  # type: ignore[assignment]
    acceptor.start()
    client = socket.create_connection(("127.0.0.1", acceptor.bound_port))
    try:
        time.sleep(1.0)  # exhausted for a second: a spinning acceptor would try thousands of times
        assert 3 <= server.failed_accepts <= 10, server.failed_accepts
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and "Too many open files" in errors[0].getMessage()
        server.failing = False  # descriptors free again: the queued connection is accepted
        assert sink.event.wait(3)
        assert len(sink.accepted) == 1
    finally:
        client.close()
        for s in sink.accepted:
            s.close()
        acceptor.initiate_shutdown()
        acceptor.join(5)
