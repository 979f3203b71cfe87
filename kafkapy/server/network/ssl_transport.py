"""SslTransport: TLS for one broker connection over memory BIOs, driven by the Reactor's threads.

The socket stays a plain non-blocking socket in the Processor's epoll set; TLS runs in an
ssl.SSLObject between two MemoryBIOs: raw bytes read from the socket go into `incoming`, records
the SSLObject produces come out of `outgoing` into `out_buf` and are written with send. So the
handshake is a sequence of non-blocking steps on the Processor thread (no thread per connection,
no blocking), and SSL_write never returns WANT_WRITE (partial socket writes are ours to resume).
Plaintext for responses is encrypted at most `PLAIN_PIECE` bytes ahead of what the socket took;
file regions are read with os.pread and encrypted (sendfile cannot be used under TLS).

Thread-safety: the Processor thread reads (handshake, decrypt) only while the connection is not
muted, and decrypts all a read brought before parsing any of it (parsing may dispatch a request,
muting the connection); responders encrypt and write only while it is muted (a request in flight),
under the channel's lock, as does `close_notify` (called by the closing thread with that lock held);
so one SSLObject is never used by two threads at once.
"""

from __future__ import annotations

import os
import socket
import ssl
from collections import deque
from typing import cast

from kafkapy.common.file_region import FileRegion

PLAIN_PIECE = 256 * 1024  # plaintext encrypted per step (SSL_write makes 16 KiB records of it)


class SslTransport:
    __slots__ = ("obj", "incoming", "outgoing", "out_buf", "handshake_done")

    def __init__(self, context: ssl.SSLContext) -> None:
        self.incoming = ssl.MemoryBIO()
        self.outgoing = ssl.MemoryBIO()
        self.obj = context.wrap_bio(self.incoming, self.outgoing, server_side=True)
        self.out_buf = bytearray()  # encrypted bytes the socket has not taken yet
        self.handshake_done = False

    def flush(self, sock: socket.socket) -> bool:
        """Write encrypted bytes; True when none are left. Raises OSError on a broken socket."""
        buf = self.out_buf
        if self.outgoing.pending:
            data: bytes | memoryview = self.outgoing.read()
            if not buf:  # the usual case: send the new records straight, keep only what the socket refused
                try:
                    n = sock.send(data)
                except BlockingIOError:
                    n = 0
                if n == len(data):
                    return True
                data = memoryview(data)[n:]
            buf += data
        while buf:
            try:
                n = sock.send(buf)
            except BlockingIOError:
                return False
            del buf[:n]
        return True

    def handshake(self) -> bool:
        """One non-blocking handshake step; True once complete. Raises ssl.SSLError on failure."""
        try:
            self.obj.do_handshake()
        except ssl.SSLWantReadError:
            return False
        self.handshake_done = True
        return True

    def read_into(self, view: memoryview) -> int:
        """Decrypt what the records received so far hold into `view` (a reused buffer: no allocation
        per record); the byte count, == len(view) when more may be waiting. Raises
        ConnectionResetError on the peer's close_notify."""
        obj = self.obj
        filled = 0
        size = len(view)
        while filled < size:
            try:
                k = cast(int, obj.read(size - filled, view[filled:]))  # with a buffer: the count read
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                k = 0
            if not k:  # no exception and no bytes: the peer's close_notify; we close (sending ours)
                raise ConnectionResetError("TLS connection closed by the peer")
            filled += k
        return filled

    def close_notify(self, sock: socket.socket) -> None:
        """Best effort, never blocking: send our close_notify before the socket closes (clients such as
        asyncio's wait for it, up to 30 s, when they shut a connection down)."""
        try:
            self.obj.unwrap()
        except (ssl.SSLError, ValueError, OSError):
            pass  # handshake not done, or the peer's close_notify not seen yet: ours is in `outgoing` anyway
        try:
            self.flush(sock)
        except OSError:
            pass

    def write(self, sock: socket.socket, queue: deque, offset: int) -> tuple[bool, int]:
        """Encrypt and send queued response chunks; returns (done, new offset into the head chunk).
        The caller holds the channel's lock."""
        while True:
            if not self.flush(sock):
                return False, offset
            if not queue:
                return True, offset
            head = queue[0]
            data: bytes | memoryview
            if isinstance(head, FileRegion):
                want = min(head.length - offset, PLAIN_PIECE)
                data = os.pread(head.file.fileno(), want, head.position + offset) if want > 0 else b""
                if want > 0 and not data:
                    raise OSError(f"file region ended with {head.length - offset} bytes unsent")
                offset += len(data)
                if offset >= head.length:
                    queue.popleft()
                    offset = 0
            else:
                pieces = []
                size = 0
                while queue and size < PLAIN_PIECE and not isinstance(queue[0], FileRegion):
                    view = memoryview(queue[0]).cast("B")
                    take = view[offset : offset + PLAIN_PIECE - size]
                    pieces.append(take)
                    size += len(take)
                    offset += len(take)
                    if offset >= len(view):
                        queue.popleft()
                        offset = 0
                data = b"".join(pieces) if len(pieces) != 1 else pieces[0]
            if data:
                self.obj.write(data)
