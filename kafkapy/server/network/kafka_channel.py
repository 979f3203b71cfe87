"""KafkaChannel: one client connection's state, shared by its Processor and the threads that answer it.

Bytes read: size-prefixed request frames (int32 big-endian length, then the request header
`api_key int16, api_version int16, correlation_id int32, ...` and body), parsed by the Processor
into `frame` / `size_buf`; bytes that arrive behind a request in flight wait in `pending`.
Bytes written: response chunks from `send_queue`, verbatim (size prefix included): bytes-like
chunks with send/sendmsg (gathering), FileRegions with os.sendfile (zero copy), partial writes
resumed at `send_offset`.

Thread-safety: the parse state (size_buf, size_read, frame, frame_view, frame_read, frame_size,
awaiting_memory) belongs to the Processor thread. `lock` guards what a responding thread touches too: `muted`, `handed_over`,
`send_queue`, `send_offset`, `pending`, `pool_bytes`, `closed` and the socket's write side (and, on TLS
listeners, the SslTransport's encrypting side: see ssl_transport.py for why reads and writes of one
SSLObject never overlap). `principal` is set by the Processor (TLS handshake) or the SASL handlers
while no request of the connection is being served, and copied onto each Request. The socket is closed only with
`lock` held, so a thread that holds it and sees `closed` False may use the descriptor (it cannot
have been reused by a newer connection).
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
from collections import deque
from typing import TYPE_CHECKING

from kafkapy.common.file_region import FileRegion
from kafkapy.common.kafka_principal import ANONYMOUS, KafkaPrincipal
from kafkapy.server.network.request_channel import Chunk

if TYPE_CHECKING:  # types only: a PLAINTEXT listener never loads ssl
    from kafkapy.server.network.sasl_session import SaslSession
    from kafkapy.server.network.ssl_transport import SslTransport

_MAX_IOV = 64


def chunk_len(chunk: Chunk) -> int:
    if isinstance(chunk, FileRegion):
        return chunk.length
    if isinstance(chunk, memoryview):
        return chunk.nbytes
    return len(chunk)


class KafkaChannel:
    __slots__ = (
        "sock", "fd", "connection_id", "address", "lock", "size_buf", "size_read", "frame", "frame_view",
        "frame_read", "pending", "muted", "handed_over", "send_queue", "send_offset", "last_active_ms", "closed",
        "tls", "principal", "close_after_send", "sasl", "unmute_at_ms", "frame_size", "pool_bytes", "awaiting_memory",
    )  # fmt: skip

    def __init__(
        self, sock: socket.socket, connection_id: str, address: tuple[str, int], tls: SslTransport | None = None,
        sasl: SaslSession | None = None,
    ) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.connection_id = connection_id
        self.address = address
        self.lock = threading.Lock()
        self.size_buf = bytearray(4)
        self.size_read = 0
        self.frame: bytearray | None = None
        self.frame_view: memoryview | None = None
        self.frame_read = 0
        # The frame's announced size: `frame` grows towards it as bytes arrive (never allocated up front).
        self.frame_size = 0
        # Bytes reserved from the broker's MemoryPool (queued.max.request.bytes) for the frame being read
        # or the request in flight; released (under `lock`) when its response is handed back or on close.
        self.pool_bytes = 0
        # An announced frame size the pool could not reserve yet: reading stops (muted for memory) and the
        # bytes already read wait in `pending` until the Processor gets the reservation (-1: none).
        self.awaiting_memory = -1
        self.pending = bytearray()  # bytes read past the request in flight (pipelining)
        # From a request's arrival until its response is fully written (or dropped): one request in
        # flight per connection keeps responses in request order.
        self.muted = False
        # The Processor thread owns the rest of the current response (what the socket did not take
        # at once, or the parsing of `pending`); responders leave the channel alone meanwhile.
        self.handed_over = False
        self.send_queue: deque[Chunk] = deque()
        self.send_offset = 0
        self.last_active_ms = 0
        self.closed = False
        self.tls = tls
        self.principal: KafkaPrincipal = ANONYMOUS
        self.close_after_send = False  # the response in flight is the last one (failed authentication)
        self.sasl = sasl  # SASL listeners: the authentication state; its principal wins over `principal`
        # A quota throttle: once the response is written the connection stays muted until then (hi-res ms).
        self.unmute_at_ms = 0

    def write(self) -> bool:
        """Write queued chunks until the queue is empty (True) or the socket is full (False).
        The caller holds `lock`. Raises OSError when the connection is broken."""
        queue = self.send_queue
        sock = self.sock
        if self.tls is not None:
            done, self.send_offset = self.tls.write(sock, queue, self.send_offset)
            return done
        while queue:
            head = queue[0]
            if isinstance(head, FileRegion):
                remaining = head.length - self.send_offset
                if remaining <= 0:
                    queue.popleft()
                    self.send_offset = 0
                    continue
                try:
                    sent = os.sendfile(self.fd, head.file.fileno(), head.position + self.send_offset, remaining)
                except BlockingIOError:
                    return False
                if sent == 0:
                    raise OSError(f"sendfile hit end of file with {remaining} bytes of the region unsent")
                self.send_offset += sent
                if self.send_offset == head.length:
                    queue.popleft()
                    self.send_offset = 0
                continue
            if len(queue) == 1 and not self.send_offset:
                # The common case (a whole response encoded as one chunk): one plain send.
                try:
                    sent = sock.send(head)  # type: ignore[arg-type]
                except BlockingIOError:
                    return False
                if sent >= chunk_len(head):
                    queue.popleft()
                else:
                    self.send_offset = sent
                continue
            bufs: list[Chunk] = []
            for chunk in itertools.islice(queue, 0, _MAX_IOV):
                if isinstance(chunk, FileRegion):
                    break
                bufs.append(chunk)
            if self.send_offset:
                bufs[0] = memoryview(bufs[0])[self.send_offset :]  # type: ignore[arg-type]
            try:
                sent = sock.sendmsg(bufs) if len(bufs) > 1 else sock.send(bufs[0])  # type: ignore[arg-type]
            except BlockingIOError:
                return False
            while sent > 0 or (queue and not isinstance(queue[0], FileRegion) and chunk_len(queue[0]) == 0):
                left = chunk_len(queue[0]) - self.send_offset
                if sent >= left:
                    sent -= left
                    queue.popleft()
                    self.send_offset = 0
                else:
                    self.send_offset += sent
                    break
        return True

    def discard(self) -> None:
        """Forget queued output and input (the connection is closing). The caller holds `lock`."""
        self.send_queue.clear()
        self.send_offset = 0
        self.handed_over = False
        self.pending = bytearray()
