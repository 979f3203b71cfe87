"""SocketServer: Kafka's Reactor. One Acceptor thread per listener, num.network.threads Processors.

The Acceptor accepts connections (non-blocking, TCP_NODELAY, socket.send/receive.buffer.bytes)
and hands them round-robin to its Processors. Each Processor owns a selector and its connections:
it reads size-prefixed frames (int32 big-endian length, then that many bytes: the request header
`api_key int16, api_version int16, correlation_id int32, ...` and body), puts each as a Request in
the RequestChannel and mutes the connection until that request's response has been fully written,
so responses on a connection keep request order. Responses are lists of chunks written verbatim:
bytes-like chunks with sendmsg (gathering, partial writes resumed on writability) and FileRegions
with os.sendfile (zero copy).

A bad connection (size prefix < 8, < 0 or > socket.request.max.bytes, refused before allocating;
socket errors; any exception while serving it) is closed alone; the Processor keeps serving.

Thread-safety: each Processor's connections are touched only by its own thread; other threads
talk to it through `accept()` / `enqueue_response()` (deques) plus a socketpair wakeup.
"""

from __future__ import annotations

import itertools
import logging
import os
import selectors
import socket
import struct
import threading
from collections import OrderedDict, deque

from kafkapy.common.file_region import FileRegion
from kafkapy.common.time import SYSTEM, Time
from kafkapy.server.kafka_config import ConfigError, EndPoint, KafkaConfig
from kafkapy.server.network.request_channel import CLOSE, NOOP, Chunk, Request, RequestChannel, Response

log = logging.getLogger(__name__)

_HEADER = struct.Struct(">hhi")  # api_key, api_version, correlation_id
_MIN_FRAME = _HEADER.size
_READ_BUF = 64 * 1024
_MAX_READS_PER_EVENT = 16  # fairness between connections of one processor
_MAX_IOV = 64
_POLL_TIMEOUT_S = 0.3


class InvalidReceiveError(Exception):
    """A frame this broker refuses to read; its connection is closed."""


class _Channel:
    """One connection's state, owned by a Processor thread."""

    __slots__ = (
        "sock", "fd", "connection_id", "address", "size_buf", "size_read", "frame", "frame_view",
        "frame_read", "pending", "muted", "send_queue", "send_offset", "events", "last_active_ms",
        "closed",
    )  # fmt: skip

    def __init__(self, sock: socket.socket, connection_id: str, address: tuple[str, int]) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.connection_id = connection_id
        self.address = address
        self.size_buf = bytearray(4)
        self.size_read = 0
        self.frame: bytearray | None = None
        self.frame_view: memoryview | None = None
        self.frame_read = 0
        self.pending = bytearray()  # bytes read past the request in flight (pipelining)
        self.muted = False
        self.send_queue: deque[Chunk] = deque()
        self.send_offset = 0
        self.events = 0
        self.last_active_ms = 0
        self.closed = False


def _chunk_len(chunk: Chunk) -> int:
    if isinstance(chunk, FileRegion):
        return chunk.length
    if isinstance(chunk, memoryview):
        return chunk.nbytes
    return len(chunk)


class Processor:
    """A network thread: reads requests from and writes responses to its connections."""

    def __init__(
        self,
        processor_id: int,
        request_channel: RequestChannel,
        time: Time,
        max_request_size: int,
        connections_max_idle_ms: int,
        endpoint: EndPoint,
        connection_index: itertools.count,
        broker_id: int = 0,
    ) -> None:
        self.id = processor_id
        self._channel = request_channel
        self._time = time
        self._max_request_size = max_request_size
        self._idle_ms = connections_max_idle_ms
        self._listener = endpoint.listener_name
        self._protocol = endpoint.security_protocol
        self._connection_index = connection_index
        self._selector = selectors.DefaultSelector()
        self._wakeup_r, self._wakeup_w = socket.socketpair()
        self._wakeup_r.setblocking(False)
        self._wakeup_w.setblocking(False)
        self._selector.register(self._wakeup_r, selectors.EVENT_READ, None)
        self._woken = False
        self._new_connections: deque[tuple[socket.socket, tuple[str, int]]] = deque()
        self._responses: deque[Response] = deque()
        self._channels: dict[str, _Channel] = {}
        self._lru: OrderedDict[str, _Channel] = OrderedDict()
        self._read_buf = bytearray(_READ_BUF)
        self._read_view = memoryview(self._read_buf)
        self._running = True
        self._thread = threading.Thread(
            target=self.run,
            name=f"data-plane-kafka-network-thread-{broker_id}-{self._listener}-{self._protocol}-{processor_id}",
            daemon=True,
        )

    # -- called from other threads --------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def accept(self, sock: socket.socket, address: tuple[str, int]) -> None:
        self._new_connections.append((sock, address))
        self.wakeup()

    def enqueue_response(self, response: Response) -> None:
        self._responses.append(response)
        self.wakeup()

    def wakeup(self) -> None:
        if not self._woken:
            self._woken = True
            try:
                self._wakeup_w.send(b"\x00")
            except OSError:  # full (already signalled) or closed at shutdown
                pass

    def initiate_shutdown(self) -> None:
        self._running = False
        self.wakeup()

    def join(self, timeout: float | None = None) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout)
        elif not self._thread.ident:  # never started
            self._close_all()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def connection_count(self) -> int:
        return len(self._channels)

    # -- the processor thread -------------------------------------------------------------------

    def run(self) -> None:
        try:
            while self._running:
                try:
                    self._configure_new_connections()
                    self._process_new_responses()
                    self._poll()
                    self._close_idle_connections()
                except Exception:
                    # Per-connection errors are handled below; this is a bug guard so the thread lives on.
                    log.exception("Processor %d got uncaught exception", self.id)
        finally:
            self._close_all()

    def _configure_new_connections(self) -> None:
        while self._new_connections:
            sock, address = self._new_connections.popleft()
            try:
                local = sock.getsockname()
                cid = f"{local[0]}:{local[1]}-{address[0]}:{address[1]}-{next(self._connection_index)}"
                ch = _Channel(sock, cid, (address[0], address[1]))
                ch.last_active_ms = self._time.hi_res_clock_ms()
                self._channels[cid] = ch
                self._lru[cid] = ch
                self._update_interest(ch)
            except Exception as e:
                log.warning("Processor %d could not configure connection from %s: %s", self.id, address, e)
                sock.close()

    def _process_new_responses(self) -> None:
        while self._responses:
            response = self._responses.popleft()
            ch = self._channels.get(response.request.connection_id)
            if ch is None:
                continue  # the connection closed while its request was being handled
            try:
                if response.action == CLOSE:
                    log.debug("Closing connection %s as asked by the request handler", ch.connection_id)
                    self._close(ch)
                elif response.action == NOOP or not response.chunks:
                    self._unmute(ch)
                else:
                    ch.send_queue.extend(response.chunks)
                    self._write(ch)
            except Exception as e:
                self._on_connection_error(ch, e)

    def _poll(self) -> None:
        timeout = 0 if self._responses or self._new_connections else _POLL_TIMEOUT_S
        for key, mask in self._selector.select(timeout):
            ch = key.data
            if ch is None:
                self._drain_wakeup()
                continue
            if ch.closed:
                continue
            try:
                if mask & selectors.EVENT_WRITE:
                    self._write(ch)
                if mask & selectors.EVENT_READ and not ch.closed and not ch.muted:
                    self._read(ch)
            except Exception as e:
                self._on_connection_error(ch, e)

    def _drain_wakeup(self) -> None:
        # Drain first, then clear: a waker that saw the flag still set has already queued its item,
        # and the queues are processed after this; clearing first could leave the flag set with no
        # byte pending, silencing every later wakeup.
        try:
            while self._wakeup_r.recv(4096):
                pass
        except OSError:
            pass
        self._woken = False

    # -- reading --------------------------------------------------------------------------------

    def _read(self, ch: _Channel) -> None:
        for _ in range(_MAX_READS_PER_EVENT):
            if ch.muted or ch.closed:
                return
            frame_view = ch.frame_view
            if frame_view is not None and len(frame_view) - ch.frame_read >= _READ_BUF:
                # Large frame: read straight into its buffer, no intermediate copy.
                try:
                    n = ch.sock.recv_into(frame_view[ch.frame_read :])
                except BlockingIOError:
                    return
                if n == 0:
                    self._close(ch)
                    return
                self._touch(ch)
                ch.frame_read += n
                if ch.frame_read == len(frame_view):
                    self._complete_frame(ch, ch.frame)  # type: ignore[arg-type]
                continue
            try:
                n = ch.sock.recv_into(self._read_buf)
            except BlockingIOError:
                return
            if n == 0:
                self._close(ch)
                return
            self._touch(ch)
            self._feed(ch, self._read_view[:n])
            if n < _READ_BUF:
                return  # the socket is drained for now

    def _feed(self, ch: _Channel, data: memoryview) -> None:
        """Parse bytes read from the connection into frames; keep what follows a request in flight."""
        pos, end = 0, len(data)
        while pos < end:
            if ch.muted:
                ch.pending += data[pos:]
                return
            if ch.frame is None:
                if ch.size_read == 0 and end - pos >= 4:
                    size = int.from_bytes(data[pos : pos + 4], "big", signed=True)
                    pos += 4
                else:
                    take = min(4 - ch.size_read, end - pos)
                    ch.size_buf[ch.size_read : ch.size_read + take] = data[pos : pos + take]
                    ch.size_read += take
                    pos += take
                    if ch.size_read < 4:
                        return
                    ch.size_read = 0
                    size = int.from_bytes(ch.size_buf, "big", signed=True)
                self._check_size(ch, size)
                if end - pos >= size:
                    self._complete_frame(ch, bytes(data[pos : pos + size]))
                    pos += size
                    continue
                ch.frame = bytearray(size)
                ch.frame_view = memoryview(ch.frame)
                ch.frame_read = 0
            take = min(len(ch.frame) - ch.frame_read, end - pos)
            ch.frame_view[ch.frame_read : ch.frame_read + take] = data[pos : pos + take]  # type: ignore[index]
            ch.frame_read += take
            pos += take
            if ch.frame_read == len(ch.frame):
                self._complete_frame(ch, ch.frame)

    def _check_size(self, ch: _Channel, size: int) -> None:
        if size < 0:
            raise InvalidReceiveError(f"Invalid receive (size = {size})")
        if size > self._max_request_size:
            raise InvalidReceiveError(
                f"Invalid receive (size = {size} larger than socket.request.max.bytes {self._max_request_size})"
            )
        if size < _MIN_FRAME:
            raise InvalidReceiveError(f"Invalid receive (size = {size} is smaller than a request header)")

    def _complete_frame(self, ch: _Channel, frame: bytes | bytearray) -> None:
        ch.frame = None
        ch.frame_view = None
        ch.frame_read = 0
        api_key, api_version, correlation_id = _HEADER.unpack_from(frame, 0)
        request = Request(
            self.id, ch.connection_id, api_key, api_version, correlation_id, memoryview(frame), ch.address,
            self._time.nanoseconds(), self._listener, self._protocol,
        )  # fmt: skip
        # Mute until the response is written: one request in flight per connection keeps order.
        ch.muted = True
        self._update_interest(ch)
        while self._running:
            if self._channel.send_request(request, timeout=_POLL_TIMEOUT_S):
                return

    def _unmute(self, ch: _Channel) -> None:
        ch.muted = False
        self._update_interest(ch)
        if ch.pending:
            data, ch.pending = ch.pending, bytearray()
            self._feed(ch, memoryview(data))

    # -- writing --------------------------------------------------------------------------------

    def _write(self, ch: _Channel) -> None:
        queue = ch.send_queue
        while queue:
            head = queue[0]
            if isinstance(head, FileRegion):
                remaining = head.length - ch.send_offset
                if remaining <= 0:
                    queue.popleft()
                    ch.send_offset = 0
                    continue
                try:
                    sent = os.sendfile(ch.fd, head.file.fileno(), head.position + ch.send_offset, remaining)
                except BlockingIOError:
                    break
                if sent == 0:
                    raise OSError(f"sendfile hit end of file with {remaining} bytes of the region unsent")
                ch.send_offset += sent
                if ch.send_offset == head.length:
                    queue.popleft()
                    ch.send_offset = 0
                self._touch(ch)
                continue
            bufs: list[Chunk] = []
            for chunk in itertools.islice(queue, 0, _MAX_IOV):
                if isinstance(chunk, FileRegion):
                    break
                bufs.append(chunk)
            if ch.send_offset:
                bufs[0] = memoryview(bufs[0])[ch.send_offset :]  # type: ignore[arg-type]
            try:
                sent = ch.sock.sendmsg(bufs) if len(bufs) > 1 else ch.sock.send(bufs[0])  # type: ignore[arg-type]
            except BlockingIOError:
                break
            self._touch(ch)
            while sent > 0 or (queue and not isinstance(queue[0], FileRegion) and _chunk_len(queue[0]) == 0):
                left = _chunk_len(queue[0]) - ch.send_offset
                if sent >= left:
                    sent -= left
                    queue.popleft()
                    ch.send_offset = 0
                else:
                    ch.send_offset += sent
                    sent = 0
                    break
        if queue:
            self._update_interest(ch)  # wait for writability
        else:
            self._unmute(ch)

    # -- bookkeeping ----------------------------------------------------------------------------

    def _update_interest(self, ch: _Channel) -> None:
        if ch.closed:
            return
        events = (0 if ch.muted else selectors.EVENT_READ) | (selectors.EVENT_WRITE if ch.send_queue else 0)
        if events == ch.events:
            return
        if ch.events == 0:
            self._selector.register(ch.sock, events, ch)
        elif events == 0:
            self._selector.unregister(ch.sock)
        else:
            self._selector.modify(ch.sock, events, ch)
        ch.events = events

    def _touch(self, ch: _Channel) -> None:
        ch.last_active_ms = self._time.hi_res_clock_ms()
        self._lru.move_to_end(ch.connection_id)

    def _close_idle_connections(self) -> None:
        if self._idle_ms < 0 or not self._lru:
            return
        now = self._time.hi_res_clock_ms()
        for _ in range(len(self._lru)):
            cid, ch = next(iter(self._lru.items()))
            if now - ch.last_active_ms <= self._idle_ms:
                return
            if ch.muted and not ch.send_queue:
                # A request of this connection is still being handled (e.g. parked in a purgatory):
                # it is not idle, its response will come.
                ch.last_active_ms = now
                self._lru.move_to_end(cid)
                continue
            log.debug("Closing connection %s: idle for more than %d ms", cid, self._idle_ms)
            self._close(ch)

    def _on_connection_error(self, ch: _Channel, error: Exception) -> None:
        if isinstance(error, InvalidReceiveError):
            log.warning("Closing connection %s from %s: %s", ch.connection_id, ch.address[0], error)
        elif isinstance(error, OSError):
            log.debug("Closing connection %s after socket error: %s", ch.connection_id, error)
        else:
            log.error("Closing connection %s after unexpected error", ch.connection_id, exc_info=error)
        self._close(ch)

    def _close(self, ch: _Channel) -> None:
        if ch.closed:
            return
        ch.closed = True
        self._channels.pop(ch.connection_id, None)
        self._lru.pop(ch.connection_id, None)
        if ch.events:
            try:
                self._selector.unregister(ch.sock)
            except (KeyError, ValueError, OSError):
                pass
            ch.events = 0
        try:
            ch.sock.close()
        except OSError:
            pass
        ch.send_queue.clear()
        ch.pending = bytearray()

    def _close_all(self) -> None:
        for ch in list(self._channels.values()):
            self._close(ch)
        while self._new_connections:
            sock, _ = self._new_connections.popleft()
            sock.close()
        self._responses.clear()
        try:
            self._selector.close()
        except (OSError, ValueError):
            pass
        self._wakeup_r.close()
        self._wakeup_w.close()


class Acceptor:
    """Accepts connections on one listener and spreads them over its Processors."""

    def __init__(self, endpoint: EndPoint, config: KafkaConfig, processors: list[Processor], broker_id: int = 0) -> None:
        self.endpoint = endpoint
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
            processor = self._processors[self._next % len(self._processors)]
            self._next += 1
            processor.accept(sock, address)

    def _close(self) -> None:
        for s in (self._server, self._wakeup_r, self._wakeup_w):
            try:
                s.close()
            except OSError:
                pass


class SocketServer:
    """Binds every listener; `startup()` then `bound_port()`; `shutdown()` joins all threads."""

    def __init__(self, config: KafkaConfig, request_channel: RequestChannel, time: Time = SYSTEM) -> None:
        self.config = config
        self.request_channel = request_channel
        self._time = time
        self.acceptors: list[Acceptor] = []
        self.processors: list[Processor] = []
        self._connection_index = itertools.count()
        self._started = False

    def startup(self) -> None:
        config = self.config
        broker_id = config.broker_id
        num_threads = config.get_int("num.network.threads")
        try:
            for endpoint in config.listener_endpoints():
                if endpoint.security_protocol != "PLAINTEXT":
                    raise ConfigError(
                        f"Invalid value {config.listeners} for configuration listeners: "
                        f"security protocol {endpoint.security_protocol} is not supported"
                    )
                processors = []
                for _ in range(num_threads):
                    processor = Processor(
                        len(self.processors), self.request_channel, self._time,
                        config.get_int("socket.request.max.bytes"), config.get_int("connections.max.idle.ms"),
                        endpoint, self._connection_index, broker_id,
                    )  # fmt: skip
                    self.processors.append(processor)
                    processors.append(processor)
                self.acceptors.append(Acceptor(endpoint, config, processors, broker_id))
        except BaseException:
            self.shutdown()
            raise
        for processor in self.processors:
            self.request_channel.add_processor(processor.id, processor)
            processor.start()
        for acceptor in self.acceptors:
            acceptor.start()
        self._started = True
        log.info(
            "Started socket server on %s",
            ", ".join(f"{a.endpoint.listener_name}://{a.endpoint.host}:{a.bound_port}" for a in self.acceptors),
        )

    def bound_port(self, listener_name: str | None = None) -> int:
        for acceptor in self.acceptors:
            if listener_name is None or acceptor.endpoint.listener_name == listener_name.upper():
                return acceptor.bound_port
        raise KeyError(f"No listener named {listener_name}")

    def bound_endpoints(self) -> list[EndPoint]:
        """Listeners with their real ports (ephemeral port 0 resolved)."""
        return [
            EndPoint(a.endpoint.listener_name, a.endpoint.host, a.bound_port, a.endpoint.security_protocol)
            for a in self.acceptors
        ]

    def advertised_endpoints(self) -> list[EndPoint]:
        """advertised.listeners (default: listeners) with hosts and ephemeral ports resolved."""
        out = []
        for ep in self.config.advertised_listener_endpoints():
            host, port = self.config.advertised_address(ep.listener_name, self.bound_port(ep.listener_name))
            out.append(EndPoint(ep.listener_name, host, port, ep.security_protocol))
        return out

    def connection_count(self) -> int:
        return sum(p.connection_count() for p in self.processors)

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop accepting, close every connection, join every thread."""
        for acceptor in self.acceptors:
            acceptor.initiate_shutdown()
        for acceptor in self.acceptors:
            acceptor.join(timeout)
        for processor in self.processors:
            processor.initiate_shutdown()
        for processor in self.processors:
            processor.join(timeout)
            self.request_channel.remove_processor(processor.id)
        self.acceptors.clear()
        self.processors.clear()
        self._started = False
