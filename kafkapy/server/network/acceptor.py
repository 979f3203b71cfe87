"""Acceptor: one thread per listener that accepts connections and spreads them over its Processors.

Each accepted socket is made non-blocking with TCP_NODELAY, SO_KEEPALIVE and
socket.send/receive.buffer.bytes (-1 = OS default), then handed round-robin to a Processor
(`processor.accept(sock, address)`), unless ConnectionQuotas (max.connections, max.connections.per.ip)
refuses it: then it is closed at once. No bytes are read or written here. A failed accept (e.g.
EMFILE) is logged and retried on the next poll; the thread never dies of it.

Thread-safety: the listening socket belongs to the acceptor thread; `initiate_shutdown()` may be
called from any thread (a socketpair wakes the selector).
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
from collections.abc import Sequence
from typing import Protocol

from kafkapy.server.kafka_config import EndPoint, KafkaConfig
from kafkapy.server.network.connection_quotas import ConnectionQuotas

log = logging.getLogger(__name__)

_POLL_TIMEOUT_S = 0.3


class ConnectionSink(Protocol):
    """What an Acceptor needs of a Processor."""

    def accept(self, sock: socket.socket, address: tuple[str, int]) -> None: ...


class Acceptor:
    """Accepts connections on one listener and spreads them over its Processors."""

    def __init__(self, endpoint: EndPoint, config: KafkaConfig, processors: Sequence[ConnectionSink], broker_id: int = 0,
                 connection_quotas: ConnectionQuotas | None = None) -> None:
        self.endpoint = endpoint
        self._connection_quotas = connection_quotas
        self._processors = processors
        self._send_buffer = config.get_int("socket.send.buffer.bytes")
        self._recv_buffer = config.get_int("socket.receive.buffer.bytes")
        self._next = 0
        host = endpoint.host
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._server = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if self._recv_buffer != -1:
                self._server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self._recv_buffer)
            self._server.bind((host, endpoint.port))
            self._server.listen(config.get_int("socket.listen.backlog.size"))
        except OSError as e:
            self._server.close()
            raise OSError(e.errno, f"Socket server failed to bind to {host}:{endpoint.port}: {e.strerror}") from e
        self._server.setblocking(False)
        self.bound_port: int = self._server.getsockname()[1]
        self._wakeup_r, self._wakeup_w = socket.socketpair()
        self._running = True
        self._thread = threading.Thread(
            target=self.run,
            name=f"data-plane-kafka-socket-acceptor-{endpoint.listener_name}-{endpoint.security_protocol}-{self.bound_port}",
            daemon=True,
        )

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def start(self) -> None:
        self._thread.start()

    def initiate_shutdown(self) -> None:
        self._running = False
        try:
            self._wakeup_w.send(b"\x00")
        except OSError:
            pass

    def join(self, timeout: float | None = None) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout)
        elif not self._thread.ident:
            self._close()

    def run(self) -> None:
        selector = selectors.DefaultSelector()
        try:
            selector.register(self._server, selectors.EVENT_READ)
            selector.register(self._wakeup_r, selectors.EVENT_READ)
            while self._running:
                for key, _ in selector.select(_POLL_TIMEOUT_S):
                    if key.fileobj is self._server and self._running:
                        self._accept_all()
        except Exception:
            log.exception("Acceptor for %s failed", self.endpoint.connection_string())
        finally:
            selector.close()
            self._close()

    def _accept_all(self) -> None:
        for _ in range(256):
            try:
                sock, address = self._server.accept()
            except BlockingIOError:
                return
            except OSError as e:  # e.g. EMFILE: keep the acceptor alive, retry on the next poll
                log.error("Error accepting connection on %s: %s", self.endpoint.connection_string(), e)
                return
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
                if self._send_buffer != -1:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self._send_buffer)
                if self._recv_buffer != -1:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self._recv_buffer)
            except OSError as e:
                log.debug("Dropping connection from %s: %s", address, e)
                sock.close()
                continue
            quotas = self._connection_quotas
            if quotas is not None and not quotas.inc(self.endpoint.listener_name, address[0]):
                sock.close()
                continue
            processor = self._processors[self._next % len(self._processors)]
            self._next += 1
            processor.accept(sock, address)

    def _close(self) -> None:
        for s in (self._server, self._wakeup_r, self._wakeup_w):
            try:
                s.close()
            except OSError:
                pass
