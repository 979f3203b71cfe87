"""FrozenPeer: a listener on 127.0.0.1 that accepts connections and never answers a byte (a frozen broker), for
tests of what blocks on another broker. Shared by the shutdown tests; its accept thread and sockets are closed by
`close()` (or leaving the `with` block)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType


class FrozenPeer:
    def __init__(self) -> None:
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(8)
        self._server.settimeout(0.1)
        self.port = int(self._server.getsockname()[1])
        self._accepted: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True, name="frozen-peer")
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                self._accepted.append(self._server.accept()[0])
            except OSError:
                continue

    def wait_for_request_bytes(self, timeout_s: float = 10.0) -> bool:
        """True once a connection was accepted and a request frame started arriving on it (the sender is now
        blocked waiting for the answer)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for s in list(self._accepted):
                try:
                    if s.recv(4, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                        return True
                except BlockingIOError:
                    pass
            time.sleep(0.02)
        return False

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for s in self._accepted:
            s.close()
        self._server.close()

    def __enter__(self) -> FrozenPeer:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
