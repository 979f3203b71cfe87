"""SocketServer: Kafka's Reactor. One Acceptor thread per listener, num.network.threads Processors.

The Acceptor (acceptor.py) accepts connections (non-blocking, TCP_NODELAY,
socket.send/receive.buffer.bytes) and hands them round-robin to its Processors. Each Processor owns an epoll set and its
connections (KafkaChannel): it reads size-prefixed frames (int32 big-endian length, then that many
bytes: the request header `api_key int16, api_version int16, correlation_id int32, ...` and body),
puts each as a Request in the RequestChannel and mutes the connection until that request's
response has been fully written, so responses on a connection keep request order. Responses are
lists of chunks written verbatim: bytes-like chunks with send/sendmsg, FileRegions with
os.sendfile (zero copy).

Latency: the thread that answers a request (a request handler, or whichever thread completes a
delayed operation) writes the response itself when the connection has nothing else queued
(non-blocking), then unmutes it and re-arms its read interest; only what the socket would not take
at once, and bytes already read behind the request, go back to the Processor. Connections are
registered EPOLLONESHOT: the read event that delivers a request disarms the descriptor, so muting
costs no system call and unmuting costs one epoll_ctl (safe from any thread at the kernel level;
the epoll set is never touched through a Python-side registry). Linux only (select.epoll).

A bad connection (size prefix < 8, < 0 or > socket.request.max.bytes, refused before allocating;
socket errors; any exception while serving it) is closed alone; the Processor keeps serving.

Memory (queued.max.request.bytes > 0): the SocketServer's MemoryPool (memory_pool.py) counts the bytes of
requests in flight. A frame's announced size is reserved when its size prefix is read, before any of its
bytes are buffered, and released when its response is handed back (enqueue_response) or the connection
closes; when the pool refuses, that connection is not read again (it stays muted for memory, the bytes
already read kept in `pending`) until a release wakes the Processor, which serves waiting connections in
arrival order. Without a pool too, a frame's buffer grows in 1 MiB steps as its bytes arrive: an
announced size alone costs nothing.

TLS listeners (SSL, SASL_SSL): each connection gets an SslTransport (ssl_transport.py); the
Processor runs its handshake step by step as bytes arrive (a failed handshake, e.g. a plaintext
client or an untrusted client certificate, closes that connection with one INFO line), then
decrypts what it reads and feeds the plaintext to the same frame parser; responses are encrypted by
whichever thread writes them. The principal (client certificate subject, mapped by
ssl.principal.mapping.rules) is copied onto each Request.

SASL listeners (SASL_PLAINTEXT, SASL_SSL): each connection gets a SaslSession (sasl_session.py).
Until it authenticates, only ApiVersions / SaslHandshake / SaslAuthenticate frames pass (anything
else closes the connection with one INFO line), frames are capped at sasl.server.max.receive.size,
and after a SaslHandshake v0 each frame is a bare SASL token, framed here as a SaslAuthenticate v0
request (`Request.raw_sasl_token`). A failed login is answered by `send_final_response` after
connection.failed.authentication.delay.ms: the Processor holds the response (no thread waits),
writes it, then closes the connection.

Thread-safety: a Processor's connection table and parse state are touched only by its own thread;
other threads reach it through `accept()` / `enqueue_response()`. A responding thread touches a
channel only with the channel's lock held (see kafka_channel.py); queued work is handed over
through deques plus a socketpair wakeup, written only while the Processor may be blocked in poll.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import select
import socket
import struct
import threading
from collections import deque
from typing import TYPE_CHECKING

from kafkapy.common.kafka_principal import ANONYMOUS, KafkaPrincipal
from kafkapy.common.time import SYSTEM, Time
from kafkapy.metrics.meter import Meter
from kafkapy.server.kafka_config import EndPoint, KafkaConfig
from kafkapy.server.network.acceptor import Acceptor
from kafkapy.server.network.connection_quotas import ConnectionQuotas
from kafkapy.server.network.kafka_channel import KafkaChannel
from kafkapy.server.network.listener_security import ListenerSecurity
from kafkapy.server.network.memory_pool import MemoryPool
from kafkapy.server.network.request_channel import (
    CLOSE,
    SEND,
    SEND_AND_CLOSE,
    Request,
    RequestChannel,
    Response,
)
from kafkapy.server.network.sasl_session import (
    SASL_AUTHENTICATE,
    SaslSession,
    SaslState,
    log_authentication_failure,
)

if TYPE_CHECKING:  # ssl and the TLS transport load with the first TLS listener (start-up time)
    from kafkapy.server.network.ssl_transport import SslTransport

log = logging.getLogger("kafka.network.Processor")

_HEADER = struct.Struct(">hhi")  # api_key, api_version, correlation_id
_RAW_TOKEN_HEADER = struct.Struct(">hhihi")  # + client_id length -1, auth_bytes length
_MIN_FRAME = _HEADER.size
_READ_BUF = 64 * 1024
_TLS_READ_BUF = 256 * 1024
_MAX_READS_PER_EVENT = 16  # fairness between connections of one processor
_POLL_TIMEOUT_S = 0.3
_ARM_READ = select.EPOLLIN | select.EPOLLONESHOT
_ARM_WRITE = select.EPOLLOUT | select.EPOLLONESHOT
_MAX_IDLE_CHECK_MS = 1000
# A frame's buffer grows by this much as its bytes arrive, so memory follows what was received, not
# what a size prefix announced.
_FRAME_STEP = 1024 * 1024
# While connections wait for pool memory, poll at least this often (a release also wakes the Processor).
_STARVED_POLL_S = 0.05
# Processor-side follow-up of a response a responding thread could not finish: write what is left
# in the channel's send queue (socket full), then unmute and parse the bytes waiting in `pending`.
_RESUME = 16


class InvalidReceiveError(Exception):
    """A frame this broker refuses to read; its connection is closed."""


class AuthenticationFailure(InvalidReceiveError):
    """A TLS handshake or SASL exchange that failed; its connection is closed with one INFO line."""


class Processor:
    """A network thread: reads requests from and writes responses to its connections."""

    idle_meter: Meter | None = None  # NetworkProcessorAvgIdlePercent: marked with the ns spent in poll (broker_metrics.py)

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
        security: ListenerSecurity | None = None,
        connection_quotas: ConnectionQuotas | None = None,
        memory_pool: MemoryPool | None = None,
    ) -> None:
        self.id = processor_id
        self._pool = memory_pool
        # Connections muted for memory (awaiting_memory >= 0), served in arrival order (this thread only).
        self._starved: deque[KafkaChannel] = deque()
        if memory_pool is not None:
            memory_pool.add_release_listener(self._on_memory_released)
        self._connection_quotas = connection_quotas
        self._channel = request_channel
        self._time = time
        self._max_request_size = max_request_size
        self._idle_ms = connections_max_idle_ms
        # Idle connections are swept on a timer, not on every loop: a muted connection's clock is
        # refreshed by each sweep, so one may outlive connections.max.idle.ms by one interval.
        self._idle_check_ms = min(max(connections_max_idle_ms // 10, 1), _MAX_IDLE_CHECK_MS)
        self._listener = endpoint.listener_name
        self._protocol = endpoint.security_protocol
        self._security = security
        self._ssl_context = security.ssl_context if security is not None else None
        self._connection_index = connection_index
        self._epoll = select.epoll()
        self._wakeup_r, self._wakeup_w = socket.socketpair()
        self._wakeup_r.setblocking(False)
        self._wakeup_w.setblocking(False)
        self._wakeup_fd = self._wakeup_r.fileno()
        self._epoll.register(self._wakeup_fd, select.EPOLLIN)
        self._woken = False
        self._polling = False
        self._new_connections: deque[tuple[socket.socket, tuple[str, int]]] = deque()
        self._responses: deque[Response] = deque()
        # (due hi-res ms, response) held back by send_final_response's delay; appended from any thread,
        # released by the Processor thread. One delay per listener, so due times are in append order.
        self._delayed: deque[tuple[int, Response]] = deque()
        # (unmute hi-res ms, seq, connection id) of connections muted by a quota throttle (this thread only).
        self._throttled: list[tuple[int, int, str]] = []
        self._throttle_seq = itertools.count()
        self._sasl_max_receive = security.sasl_max_receive_size if security is not None else max_request_size
        self._channels: dict[str, KafkaChannel] = {}
        self._by_fd: dict[int, KafkaChannel] = {}
        self._read_buf = bytearray(_READ_BUF)
        self._read_view = memoryview(self._read_buf)
        # TLS listeners read raw bytes in bigger steps (each step also costs a decrypt loop), and decrypted
        # bytes land in _plain_view before parsing (one raw read + one partial 16 KiB record always fit).
        tls = self._ssl_context is not None
        self._tls_read_view = memoryview(bytearray(_TLS_READ_BUF)) if tls else self._read_view
        self._plain_view = memoryview(bytearray(_TLS_READ_BUF + 64 * 1024)) if tls else self._read_view
        self._now_ms = time.hi_res_clock_ms()
        self._next_idle_check_ms = self._now_ms + self._idle_check_ms
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
        """Answer a request (called by the responding thread): write it at once when possible,
        else hand it to the Processor thread."""
        if self._pool is not None:
            # The request is done with its bytes (Kafka's KafkaRequestHandler releases the buffer
            # after handling): give its reservation back before the connection may read again.
            held = self._channels.get(response.request.connection_id)
            if held is not None:
                self._release_memory(held)
        if response.delay_ms > 0:
            self._delayed.append((self._time.hi_res_clock_ms() + response.delay_ms,
                                  Response(response.request, response.chunks, response.action)))
            self.wakeup()
            return
        if response.action != CLOSE:
            ch = self._channels.get(response.request.connection_id)
            if ch is None:
                return  # the connection closed while its request was being handled
            if response.throttle_ms > 0:
                ch.unmute_at_ms = self._time.hi_res_clock_ms() + response.throttle_ms
            action = self._respond_directly(ch, response)
            if action is None:
                return
            if action != response.action:
                response = Response(response.request, None, action)
        self._responses.append(response)
        self.wakeup()

    def _respond_directly(self, ch: KafkaChannel, response: Response) -> int | None:
        """Write the response on the calling thread and unmute; None when done, else the action
        the Processor thread must finish (_RESUME or CLOSE)."""
        with ch.lock:
            if ch.closed:
                return None
            chunks = response.chunks if response.action in (SEND, SEND_AND_CLOSE) else None
            if response.action == SEND_AND_CLOSE:
                ch.close_after_send = True
            if ch.handed_over:  # cannot happen with one request in flight; keep order regardless
                if chunks:
                    ch.send_queue.extend(chunks)
                return _RESUME
            if chunks:
                ch.send_queue.extend(chunks)
                try:
                    done = ch.write()
                except Exception as e:  # never into the responding thread: close this connection only
                    if isinstance(e, OSError):
                        log.debug("Closing connection %s after socket error: %s", ch.connection_id, e)
                    else:
                        log.error("Closing connection %s after unexpected error", ch.connection_id, exc_info=e)
                    ch.discard()
                    return CLOSE
                if not done:  # socket full: the Processor waits for writability
                    ch.handed_over = True
                    return _RESUME
            if ch.close_after_send:
                ch.discard()
                return CLOSE
            if ch.unmute_at_ms:  # throttled: the Processor unmutes it when the throttle time is over
                ch.handed_over = True
                return _RESUME
            if ch.pending:
                # The next request's bytes are already read (a pipelining client): queue it from
                # here when it is whole and the request queue has room (the connection stays
                # muted for it); else the Processor parses them.
                try:
                    if self._dispatch_pending(ch):
                        return None
                except InvalidReceiveError as e:
                    self._log_refusal(ch, e)
                    ch.discard()
                    return CLOSE
                ch.handed_over = True
                return _RESUME
            ch.muted = False
            try:
                self._epoll.modify(ch.fd, _ARM_READ)
            except (OSError, ValueError) as e:
                log.debug("Closing connection %s: cannot re-arm it: %s", ch.connection_id, e)
                return CLOSE
            return None

    def _dispatch_pending(self, ch: KafkaChannel) -> bool:
        """Queue the whole request at the head of `pending` without blocking; the caller holds
        the channel's lock and the connection is muted with no partial frame parsed."""
        pending = ch.pending
        if len(pending) < 4:
            return False
        size = int.from_bytes(pending[:4], "big", signed=True)
        self._check_size(size, ch)
        if len(pending) < 4 + size:
            return False
        if not self._reserve(ch, size):
            return False  # the Processor parses `pending` and waits for memory
        request = self._new_request(ch, bytes(pending[4 : 4 + size]))
        # A request handler answering here goes back to the queue next and takes it itself.
        wake = not self._channel.in_receiver_thread()
        if not self._channel.send_request(request, timeout=0, wake_receiver=wake):
            self._unreserve(ch)
            return False
        del pending[: 4 + size]
        return True

    # -- queued.max.request.bytes ---------------------------------------------------------------

    def _reserve(self, ch: KafkaChannel, size: int) -> bool:
        """Reserve a frame's bytes from the pool before buffering them (always True without a pool).
        Called while no request of `ch` is in flight, so no responder touches `pool_bytes`."""
        pool = self._pool
        if pool is None:
            return True
        if not pool.try_allocate(size):
            return False
        ch.pool_bytes += size
        return True

    def _unreserve(self, ch: KafkaChannel) -> None:
        pool = self._pool
        if pool is not None and ch.pool_bytes:
            size, ch.pool_bytes = ch.pool_bytes, 0
            pool.release(size)

    def _release_memory(self, ch: KafkaChannel) -> None:
        with ch.lock:
            size, ch.pool_bytes = ch.pool_bytes, 0
        if size and self._pool is not None:
            self._pool.release(size)

    def _on_memory_released(self) -> None:
        if self._starved:
            self.wakeup()

    def _starve(self, ch: KafkaChannel, size: int, rest: memoryview) -> None:
        """The pool refused `size` bytes: stop reading `ch` (its read interest is not re-armed) and keep
        what was read behind the size prefix until the reservation succeeds."""
        if not self._starved:
            log.debug("Processor %d: memory pool exhausted, muting %s until memory is released", self.id,
                      ch.connection_id)
        ch.awaiting_memory = size
        ch.pending += rest
        self._starved.append(ch)

    def _retry_starved(self) -> None:
        """Give waiting connections their reservation in arrival order while the pool has memory."""
        starved = self._starved
        while starved:
            ch = starved[0]
            if ch.closed or ch.awaiting_memory < 0:
                starved.popleft()
                continue
            if not self._reserve(ch, ch.awaiting_memory):
                return
            starved.popleft()
            size, ch.awaiting_memory = ch.awaiting_memory, -1
            self._begin_frame(ch, size)
            data, ch.pending = ch.pending, bytearray()
            try:
                if data:
                    self._feed(ch, memoryview(data))
                if not ch.muted and not ch.closed and ch.awaiting_memory < 0:
                    self._epoll.modify(ch.fd, _ARM_READ)
            except Exception as e:
                self._on_connection_error(ch, e)

    def wakeup(self) -> None:
        # Only a Processor that may be blocked in poll needs the byte: otherwise it looks at its
        # queues before polling again (_polling is set before that look, see _poll).
        if self._polling and not self._woken:
            self._signal()

    def _signal(self) -> None:
        self._woken = True
        try:
            self._wakeup_w.send(b"\x00")
        except OSError:  # full (already signalled) or closed at shutdown
            pass

    def initiate_shutdown(self) -> None:
        self._running = False
        self._signal()

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
                    if self._new_connections:
                        self._configure_new_connections()
                    if self._delayed:
                        self._release_delayed()
                    if self._throttled:
                        self._release_throttled()
                    if self._responses:
                        self._process_new_responses()
                    if self._starved:
                        self._retry_starved()
                    self._poll()
                    if self._idle_ms >= 0 and self._now_ms >= self._next_idle_check_ms:
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
                tls = None
                if self._ssl_context is not None:
                    from kafkapy.server.network.ssl_transport import SslTransport

                    tls = SslTransport(self._ssl_context)
                sasl = SaslSession(self._security) if self._security is not None and self._security.uses_sasl else None
                ch = KafkaChannel(sock, cid, (address[0], address[1]), tls, sasl)
                ch.last_active_ms = self._time.hi_res_clock_ms()
                self._epoll.register(ch.fd, _ARM_READ)
                self._channels[cid] = ch
                self._by_fd[ch.fd] = ch
            except Exception as e:
                log.warning("Processor %d could not configure connection from %s: %s", self.id, address, e)
                sock.close()
                self._release_connection(address[0])

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
                    continue
                if response.action != _RESUME:  # SEND/NOOP queued by a caller that bypassed enqueue_response
                    with ch.lock:
                        if response.action in (SEND, SEND_AND_CLOSE) and response.chunks:
                            ch.send_queue.extend(response.chunks)
                        if response.action == SEND_AND_CLOSE:
                            ch.close_after_send = True
                        ch.handed_over = True
                self._finish_response(ch)
            except Exception as e:
                self._on_connection_error(ch, e)

    def _release_delayed(self) -> None:
        now = self._time.hi_res_clock_ms()
        delayed = self._delayed
        while delayed and delayed[0][0] <= now:
            self.enqueue_response(delayed.popleft()[1])

    def _release_throttled(self) -> None:
        now = self._time.hi_res_clock_ms()
        throttled = self._throttled
        while throttled and throttled[0][0] <= now:
            ch = self._channels.get(heapq.heappop(throttled)[2])
            if ch is None or ch.closed:
                continue
            ch.unmute_at_ms = 0
            try:
                self._finish_response(ch)
            except Exception as e:
                self._on_connection_error(ch, e)

    def _poll(self) -> None:
        self._polling = True
        timeout = 0 if self._responses or self._new_connections or not self._running else _POLL_TIMEOUT_S
        if self._delayed and timeout:
            timeout = min(timeout, max(0.0, (self._delayed[0][0] - self._time.hi_res_clock_ms()) / 1000.0))
        if self._throttled and timeout:
            timeout = min(timeout, max(0.0, (self._throttled[0][0] - self._time.hi_res_clock_ms()) / 1000.0))
        if self._starved and timeout:
            timeout = min(timeout, _STARVED_POLL_S)
        idle_start = self._time.nanoseconds()
        try:
            events = self._epoll.poll(timeout)
        finally:
            self._polling = False
        if self.idle_meter is not None:
            self.idle_meter.mark(self._time.nanoseconds() - idle_start)
        self._now_ms = self._time.hi_res_clock_ms()
        for fd, _mask in events:
            if fd == self._wakeup_fd:
                self._drain_wakeup()
                continue
            ch = self._by_fd.get(fd)
            if ch is None or ch.closed:
                continue
            try:
                if ch.handed_over:
                    self._finish_response(ch)  # armed for writability (or an error to surface)
                elif not ch.muted:
                    self._read(ch)
                # else: a stale event of a connection whose request is in flight; its responder re-arms
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

    def _read(self, ch: KafkaChannel) -> None:
        if ch.tls is not None:
            self._read_tls(ch, ch.tls)
            return
        for _ in range(_MAX_READS_PER_EVENT):
            if ch.muted or ch.closed or ch.awaiting_memory >= 0:
                return  # whoever unmutes re-arms
            if ch.frame is not None and ch.frame_size - ch.frame_read >= _READ_BUF:
                # Large frame: read straight into its buffer, no intermediate copy.
                n = self._recv(ch, self._frame_room(ch))
                if not n:
                    break
                ch.frame_read += n
                if ch.frame_read == ch.frame_size:
                    self._complete_frame(ch, ch.frame)
                continue
            n = self._recv(ch, self._read_buf)
            if not n:
                break
            self._feed(ch, self._read_view[:n])
            if n < _READ_BUF:
                break  # the socket is drained for now
        if not ch.muted and not ch.closed and ch.awaiting_memory < 0:
            self._epoll.modify(ch.fd, _ARM_READ)

    def _recv(self, ch: KafkaChannel, buf: bytearray | memoryview) -> int:
        """recv_into; 0 when nothing is readable now or the peer closed (then the channel is closed)."""
        try:
            n = ch.sock.recv_into(buf)
        except BlockingIOError:
            return 0
        if n == 0:
            self._close(ch)
        else:
            ch.last_active_ms = self._now_ms
        return n

    def _read_tls(self, ch: KafkaChannel, tls: SslTransport) -> None:
        """Read raw bytes, step the handshake or decrypt, parse the plaintext. Called only while
        the connection is unmuted (no responder is encrypting on it meanwhile)."""
        import ssl  # loaded already by this listener's SslTransport
        if not tls.flush(ch.sock):  # handshake records the socket did not take yet
            self._epoll.modify(ch.fd, _ARM_WRITE)
            return
        for _ in range(_MAX_READS_PER_EVENT):
            if ch.muted or ch.closed or ch.awaiting_memory >= 0:
                return
            n = self._recv(ch, self._tls_read_view)
            if not n:
                break
            tls.incoming.write(self._tls_read_view[:n])
            if not tls.handshake_done:
                try:
                    done = tls.handshake()
                except ssl.SSLError as e:
                    try:
                        tls.flush(ch.sock)  # the alert, so the client sees why
                    except OSError:
                        pass
                    raise AuthenticationFailure(f"SSL handshake failed: {e.reason or e}") from None
                if done:
                    ch.principal = self._ssl_principal(tls)
                if not tls.flush(ch.sock):
                    self._epoll.modify(ch.fd, _ARM_WRITE)
                    return
                if not done:
                    continue
            # Decrypt everything first, then parse: parsing may dispatch a request, after which a responder
            # may encrypt on this SSLObject, so this thread must not touch it again until unmuted.
            plain = self._plain_view
            k = tls.read_into(plain)
            if k == len(plain):  # cannot happen (one raw read + one partial record fit); be safe
                more = [bytes(plain)]
                while k == len(plain):
                    k = tls.read_into(plain)
                    more.append(bytes(plain[:k]))
                self._feed(ch, memoryview(b"".join(more)))
            elif k:
                self._feed(ch, plain[:k])  # _feed copies what it keeps: the buffer is reused
            if n < _TLS_READ_BUF:
                break
        if not ch.muted and not ch.closed and ch.awaiting_memory < 0:
            self._epoll.modify(ch.fd, _ARM_READ)

    def _ssl_principal(self, tls: SslTransport) -> KafkaPrincipal:
        """SSL listeners: User:<mapped certificate subject>, ANONYMOUS without a client certificate.
        SASL_SSL listeners take the principal from the SASL exchange instead."""
        if self._protocol != "SSL" or self._security is None or self._security.principal_mapper is None:
            return ANONYMOUS
        cert = tls.obj.getpeercert()
        if not cert or not cert.get("subject"):
            return ANONYMOUS
        from kafkapy.server.network.ssl_principal_mapper import distinguished_name

        return KafkaPrincipal.user(self._security.principal_mapper.get_name(distinguished_name(cert["subject"])))

    def _feed(self, ch: KafkaChannel, data: memoryview) -> None:
        """Parse bytes read from the connection into frames; keep what follows a request in flight."""
        pos, end = 0, len(data)
        while pos < end:
            if ch.awaiting_memory >= 0:  # muted for memory: keep the bytes until the reservation succeeds
                ch.pending += data[pos:]
                return
            if ch.muted:
                with ch.lock:
                    # Under the lock: a responder that unmutes checks `pending` under it too, so
                    # these bytes are either parsed here (already unmuted) or seen by it.
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
                self._check_size(size, ch)
                if not self._reserve(ch, size):
                    self._starve(ch, size, data[pos:])
                    return
                if end - pos >= size:
                    self._complete_frame(ch, bytes(data[pos : pos + size]))
                    pos += size
                    continue
                self._begin_frame(ch, size)
            room = self._frame_room(ch)
            take = min(len(room), end - pos)
            room[:take] = data[pos : pos + take]
            del room
            ch.frame_read += take
            pos += take
            if ch.frame_read == ch.frame_size:
                self._complete_frame(ch, ch.frame)

    @staticmethod
    def _begin_frame(ch: KafkaChannel, size: int) -> None:
        # Not bytearray(size): an announced size costs nothing until its bytes arrive.
        ch.frame = bytearray(min(size, _FRAME_STEP))
        ch.frame_view = memoryview(ch.frame)
        ch.frame_read = 0
        ch.frame_size = size

    @staticmethod
    def _frame_room(ch: KafkaChannel) -> memoryview:
        """The unfilled part of the frame's buffer, grown by a step when it is full."""
        frame, view = ch.frame, ch.frame_view
        assert frame is not None and view is not None
        if ch.frame_read == len(frame):
            view.release()  # a bytearray with an exported view cannot grow
            frame += bytes(min(_FRAME_STEP, ch.frame_size - len(frame)))  # calloc'd: untouched zero pages
            view = ch.frame_view = memoryview(frame)
        return view[ch.frame_read :]

    def _check_size(self, size: int, ch: KafkaChannel) -> None:
        if size < 0:
            raise InvalidReceiveError(f"Invalid receive (size = {size})")
        sasl = ch.sasl
        if sasl is not None and not sasl.authenticated:
            # Kafka's SaslServerAuthenticator: a frame before authentication is capped much lower.
            if size > self._sasl_max_receive:
                # Kafka's SaslServerAuthenticator message, then the sizes.
                raise AuthenticationFailure(f"Failing SASL authentication due to invalid receive size (size = {size} "
                                            f"larger than sasl.server.max.receive.size {self._sasl_max_receive})")
            if sasl.raw_tokens and sasl.state is SaslState.AUTHENTICATE:
                return  # a bare token may be shorter than a request header
        if size > self._max_request_size:
            raise InvalidReceiveError(
                f"Invalid receive (size = {size} larger than socket.request.max.bytes {self._max_request_size})"
            )
        if size < _MIN_FRAME:
            raise InvalidReceiveError(f"Invalid receive (size = {size} is smaller than a request header)")

    def _complete_frame(self, ch: KafkaChannel, frame: bytes | bytearray | None) -> None:
        assert frame is not None
        ch.frame = None
        ch.frame_view = None
        ch.frame_read = 0
        ch.frame_size = 0
        request = self._new_request(ch, frame)
        # Mute until the response is written: one request in flight per connection keeps order.
        # No responder exists yet for this connection, so no lock is needed to set it.
        ch.muted = True
        while self._running:
            if self._channel.send_request(request, timeout=_POLL_TIMEOUT_S):
                return

    def _new_request(self, ch: KafkaChannel, frame: bytes | bytearray) -> Request:
        sasl = ch.sasl
        if sasl is None:
            api_key, api_version, correlation_id = _HEADER.unpack_from(frame, 0)
            return Request(
                self.id, ch.connection_id, api_key, api_version, correlation_id, memoryview(frame), ch.address,
                self._time.nanoseconds(), self._listener, self._protocol, 0, ch.principal,
            )  # fmt: skip
        raw = sasl.raw_tokens and sasl.state is SaslState.AUTHENTICATE
        if raw:  # a bare token: frame it as SaslAuthenticate v0 (header v1 with a null client id)
            frame = _RAW_TOKEN_HEADER.pack(SASL_AUTHENTICATE, 0, 0, -1, len(frame)) + frame
        api_key, api_version, correlation_id = _HEADER.unpack_from(frame, 0)
        refusal = sasl.refusal(api_key, self._time.hi_res_clock_ms())
        if refusal is not None:
            raise AuthenticationFailure(refusal)
        return Request(
            self.id, ch.connection_id, api_key, api_version, correlation_id, memoryview(frame), ch.address,
            self._time.nanoseconds(), self._listener, self._protocol, 0, sasl.principal, sasl, raw,
        )  # fmt: skip

    # -- writing --------------------------------------------------------------------------------

    def _finish_response(self, ch: KafkaChannel) -> None:
        """Write what is left of a handed-over response, waiting for writability as needed; then
        unmute and parse the bytes that arrived behind the request."""
        with ch.lock:
            if ch.closed or not ch.handed_over:
                return  # done already (a duplicate nudge)
            done = ch.write()
            if done and ch.close_after_send:
                ch.discard()
            elif done and ch.unmute_at_ms > self._time.hi_res_clock_ms():
                # Throttled (quota): stays muted and handed over until the Processor releases it.
                heapq.heappush(self._throttled, (ch.unmute_at_ms, next(self._throttle_seq), ch.connection_id))
                ch.last_active_ms = self._now_ms
                return
            elif done:
                ch.unmute_at_ms = 0
                ch.handed_over = False
                ch.muted = False
                data, ch.pending = ch.pending, bytearray()
        ch.last_active_ms = self._now_ms
        if done and ch.close_after_send:
            self._close(ch)
            return
        if not done:
            self._epoll.modify(ch.fd, _ARM_WRITE)
            return
        if data:
            self._feed(ch, memoryview(data))
        if not ch.muted and not ch.closed:
            self._epoll.modify(ch.fd, _ARM_READ)

    # -- bookkeeping ----------------------------------------------------------------------------

    def _close_idle_connections(self) -> None:
        now = self._now_ms
        self._next_idle_check_ms = now + self._idle_check_ms
        for ch in list(self._channels.values()):
            if ch.muted and not ch.handed_over:
                # A request of this connection is still being handled (e.g. parked in a purgatory):
                # it is not idle, its response will come.
                ch.last_active_ms = now
            elif now - ch.last_active_ms > self._idle_ms:
                log.debug("Closing connection %s: idle for more than %d ms", ch.connection_id, self._idle_ms)
                self._close(ch)

    @staticmethod
    def _log_refusal(ch: KafkaChannel, error: InvalidReceiveError) -> None:
        if isinstance(error, AuthenticationFailure):
            log_authentication_failure(ch.address[0], ch.connection_id, error)
        else:
            log.warning("Closing connection %s from %s: %s", ch.connection_id, ch.address[0], error)

    def _on_connection_error(self, ch: KafkaChannel, error: Exception) -> None:
        if isinstance(error, InvalidReceiveError):
            self._log_refusal(ch, error)
        elif isinstance(error, OSError):
            log.debug("Closing connection %s after socket error: %s", ch.connection_id, error)
        else:
            log.error("Closing connection %s after unexpected error", ch.connection_id, exc_info=error)
        self._close(ch)

    def _close(self, ch: KafkaChannel) -> None:
        with ch.lock:
            if ch.closed:
                return
            ch.closed = True
            try:
                self._epoll.unregister(ch.fd)
            except (OSError, ValueError):
                pass
            if ch.tls is not None and ch.tls.handshake_done:
                ch.tls.close_notify(ch.sock)
            try:
                ch.sock.close()
            except OSError:
                pass
            ch.discard()
            held, ch.pool_bytes = ch.pool_bytes, 0
            ch.awaiting_memory = -1
            ch.frame = ch.frame_view = None
        if held and self._pool is not None:
            self._pool.release(held)
        self._channels.pop(ch.connection_id, None)
        if self._by_fd.get(ch.fd) is ch:
            del self._by_fd[ch.fd]
        self._release_connection(ch.address[0])

    def _release_connection(self, ip: str) -> None:
        if self._connection_quotas is not None:
            self._connection_quotas.dec(ip)

    def _close_all(self) -> None:
        for ch in list(self._channels.values()):
            self._close(ch)
        while self._new_connections:
            sock, address = self._new_connections.popleft()
            sock.close()
            self._release_connection(address[0])
        self._responses.clear()
        try:
            self._epoll.close()
        except (OSError, ValueError):
            pass
        self._wakeup_r.close()
        self._wakeup_w.close()


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
        self.connection_quotas = ConnectionQuotas.from_config(config)
        # queued.max.request.bytes: one pool for every listener's Processors (none at Kafka's default -1).
        self.memory_pool = MemoryPool.from_config(
            config.get_long("queued.max.request.bytes"), config.get_int("socket.request.max.bytes"))

    def startup(self) -> None:
        config = self.config
        broker_id = config.broker_id
        num_threads = config.get_int("num.network.threads")
        try:
            for endpoint in config.listener_endpoints():
                security = ListenerSecurity(config, endpoint)
                processors = []
                for _ in range(num_threads):
                    processor = Processor(
                        len(self.processors), self.request_channel, self._time,
                        config.get_int("socket.request.max.bytes"), config.get_int("connections.max.idle.ms"),
                        endpoint, self._connection_index, broker_id, security, self.connection_quotas,
                        self.memory_pool,
                    )  # fmt: skip
                    self.processors.append(processor)
                    processors.append(processor)
                self.acceptors.append(Acceptor(endpoint, config, processors, broker_id, self.connection_quotas))
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
