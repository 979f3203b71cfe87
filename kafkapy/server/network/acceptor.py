"""Acceptor: one thread per listener that accepts connections and spreads them over its Processors.

Each accepted socket is made non-blocking with TCP_NODELAY, SO_KEEPALIVE and
socket.send/receive.buffer.bytes (-1 = OS default), then handed round-robin to a Processor
(`processor.accept(sock, address)`), unless ConnectionQuotas (max.connections, max.connections.per.ip)
refuses it: then it is closed at once. No bytes are read or written here. An accept that fails for
want of a resource (EMFILE, ENFILE, ENOBUFS, ENOMEM: the connection stays in the listen backlog) logs
one ERROR line per episode and pauses accepting (the listening socket leaves the selector) for a
backoff doubling from 50 ms to 1 s, instead of spinning on a socket that stays readable; the first
successful accept ends the episode. Other accept errors are logged and retried on the next poll; the
thread never dies of them.

Thread-safety: the listening socket belongs to the acceptor thread; `initiate_shutdown()` may be
called from any thread (a socketpair wakes the selector).
"""

from __future__ import annotations

import errno
import logging
import selectors
import socket
import threading
import time
from collections.abc import Sequence
from typing import Protocol

from kafkapy.server.kafka_config import EndPoint, KafkaConfig
from kafkapy.server.network.connection_quotas import ConnectionQuotas

log = logging.getLogger("kafka.network.DataPlaneAcceptor")

_POLL_TIMEOUT_S = 0.3
_RESOURCE_ERRNOS = frozenset((errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM))
_MIN_PAUSE_S = 0.05
_MAX_PAUSE_S = 1.0


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
        self._selector: selectors.BaseSelector | None = None
        # Resource exhaustion backoff: accepting resumes at _paused_until (monotonic s; 0 = accepting).
        self._paused_until = 0.0
        self._pause_s = 0.0
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
        selector = self._selector = selectors.DefaultSelector()
        try:
            selector.register(self._server, selectors.EVENT_READ)
            selector.register(self._wakeup_r, selectors.EVENT_READ)
            while self._running:
                timeout = _POLL_TIMEOUT_S
                if self._paused_until:
                    remaining = self._paused_until - time.monotonic()
                    if remaining <= 0:
                        self._paused_until = 0.0
                        selector.register(self._server, selectors.EVENT_READ)
                    else:
                        timeout = min(timeout, remaining)
                for key, _ in selector.select(timeout):
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
            except OSError as e:
                if e.errno in _RESOURCE_ERRNOS:
                    self._pause_accepting(e)
                else:  # keep the acceptor alive, retry on the next poll
                    log.error("Error while accepting connection on %s: %s", self.endpoint.connection_string(), e)
                return
            self._pause_s = 0.0
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

    def _pause_accepting(self, error: OSError) -> None:
        """Out of descriptors (or memory): the pending connection stays queued in the backlog and the
        listening socket stays readable, so stop watching it for a while rather than spin."""
        if not self._pause_s:
            log.error("Error while accepting connection on %s: %s; pausing accepting until resources free up",
                      self.endpoint.connection_string(), error)
        self._pause_s = min(max(self._pause_s * 2, _MIN_PAUSE_S), _MAX_PAUSE_S)
        self._paused_until = time.monotonic() + self._pause_s
        if self._selector is not None:
            self._selector.unregister(self._server)

    def _close(self) -> None:
        for s in (self._server, self._wakeup_r, self._wakeup_w):
            try:
                s.close()
            except OSError:
                pass
