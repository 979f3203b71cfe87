"""A scripted fake Kafka broker on loopback for client tests (test helper, not a test module).

FakeBroker accepts connections, decodes each request with protocol/, and answers with
handler(header, body): a response message, (version, message), CLOSE (drop the connection) or
HANG (never answer). Stopped by close(); its threads poll a stop flag every 100 ms.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any

from kafkapy.client.connection import our_version_range
from kafkapy.protocol.framing import FrameDecoder
from kafkapy.protocol.header import decode_request_header, encode_response
from kafkapy.protocol.messages import REQUEST_CLASSES, ApiVersionsResponse, MetadataResponse

CLOSE = object()  # handler result: close the connection
HANG = object()  # handler result: never answer

Handler = Callable[[Any, Any], Any]  # (header, body) -> response | CLOSE | HANG | (version, response)


def api_versions_response(table: dict[int, tuple[int, int]], error: int = 0) -> ApiVersionsResponse:
    R = ApiVersionsResponse
    return R(error_code=error, api_keys=[
        R.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in sorted(table.items())
    ])


FULL_TABLE = {k: our_version_range(k) for k in (0, 1, 2, 3, 18, 19, 20, 32, 60)}


def metadata_response(port: int) -> MetadataResponse:
    R = MetadataResponse
    return R(brokers=[R.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=port, rack=None)],
             cluster_id="fake", controller_id=1, topics=[])


class FakeBroker:
    """Accepts connections and answers each request with handler(header, body)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[tuple[int, int, Any]] = []  # (api_key, version, body)
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.settimeout(0.1)
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._thread.start()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        decoder = FrameDecoder(1 << 24)
        conn.settimeout(0.1)
        while not self._stop.is_set():
            try:
                data = conn.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            decoder.feed(data)
            while (frame := decoder.next_frame()) is not None:
                header, pos = decode_request_header(frame)
                cls = REQUEST_CLASSES[header.api_key]
                body, _ = cls.decode_from(frame, pos, header.api_version)
                self.requests.append((header.api_key, header.api_version, body))
                result = self.handler(header, body)
                if result is CLOSE:
                    conn.close()
                    return
                if result is HANG:
                    continue
                version = header.api_version
                if isinstance(result, tuple):
                    version, result = result
                chunks = encode_response(header.api_key, version, header.correlation_id, result)
                conn.sendall(b"".join(bytes(c) for c in chunks))

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
        for c in self._conns:
            try:
                c.close()
            except OSError:
                pass
        self._thread.join(2)


def standard_handler(table: dict[int, tuple[int, int]], on_other: Handler | None = None) -> Handler:
    def handle(header: Any, body: Any) -> Any:
        if header.api_key == 18:
            return api_versions_response(table)
        if on_other is not None:
            return on_other(header, body)
        return HANG

    return handle
