"""ClientSslTransport: TLS for one BrokerConnection over memory BIOs.

The connection keeps its plain blocking socket; requests are encrypted into bytes (`encrypt`) and
written with sendall, bytes read are decrypted (`decrypt`). So the SSLObject is never held across
blocking socket I/O, and a thread sending while another reads never shares it unguarded (a lock
serialises the in-memory encrypt/decrypt steps). The handshake runs once in `connect`, blocking up
to the connection setup timeout; the broker's certificate is checked against the trust store and,
with ssl.endpoint.identification.algorithm=https (the default), its name against the host.
"""

from __future__ import annotations

import socket
import ssl
import threading

_READ_PIECE = 256 * 1024


class ClientSslTransport:
    def __init__(self, context: ssl.SSLContext, host: str) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._obj = context.wrap_bio(self._incoming, self._outgoing, server_side=False,
                                     server_hostname=host if context.check_hostname else None)
        self._lock = threading.Lock()

    def handshake(self, sock: socket.socket) -> None:
        """Blocking handshake on `sock` (its timeout bounds each read). Raises ssl.SSLError / OSError."""
        obj = self._obj
        while True:
            try:
                obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                if self._outgoing.pending:
                    sock.sendall(self._outgoing.read())
                data = sock.recv(_READ_PIECE)
                if not data:
                    raise ConnectionResetError("the broker closed the connection during the TLS handshake") from None
                self._incoming.write(data)
        if self._outgoing.pending:
            sock.sendall(self._outgoing.read())

    def encrypt(self, data: bytes | bytearray | memoryview) -> bytes:
        with self._lock:
            self._obj.write(data)
            return self._outgoing.read()

    def decrypt(self, raw: bytes) -> bytes | None:
        """Plaintext the records received so far decrypt to (b"" for a partial record); None once
        the broker sent close_notify."""
        with self._lock:
            self._incoming.write(raw)
            pieces = []
            while True:
                try:
                    piece = self._obj.read(_READ_PIECE)
                except ssl.SSLWantReadError:
                    break
                except ssl.SSLZeroReturnError:
                    return None
                if not piece:
                    break
                pieces.append(piece)
            return b"".join(pieces)
