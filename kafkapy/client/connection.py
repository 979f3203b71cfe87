"""BrokerConnection: one TCP connection to one broker, with ApiVersions negotiation and pipelining.

Bytes on the wire: size-prefixed request frames (request header + body, built by protocol.header),
size-prefixed response frames (response header + body). Responses come back in request order on a
connection, so in-flight requests are a FIFO matched by correlation id.

Lifecycle: DISCONNECTED -> CONNECTING (TCP, then the TLS handshake on SSL / SASL_SSL) ->
CHECKING_API_VERSIONS -> AUTHENTICATING (SASL_*: SaslHandshake v1 then SaslAuthenticate rounds, see
sasl_client.py) -> READY -> DISCONNECTED. TLS runs over memory BIOs (ssl_transport.py): requests are
encrypted before sendall and bytes read are decrypted before framing. A failed TLS handshake or SASL
login raises a non-retriable error (SslAuthenticationFailedError / SaslAuthenticationFailedError).
When the broker gives the SASL session a lifetime (SaslAuthenticate v1+ session_lifetime_ms,
connections.max.reauth.ms), the next send after 85-95% of it re-authenticates first (KIP-368), with
other senders held back until the exchange is done.
On connect the client sends ApiVersions at our highest version (v3+ carries client_software_name /
version); if the broker answers UNSUPPORTED_VERSION (its body is then v0) we retry once at the
broker's highest ApiVersions version. Each later request uses the highest version both sides support.
Bytes that are not a Kafka frame in answer to that first ApiVersions mean the peer is not a Kafka broker:
the connect fails with NotKafkaPeerError (no log line; the caller reports it once). A bad frame later on
an established connection logs one warning per broker address per process and closes that connection.

Thread-safety: any number of threads may `send` (writes are serialised by a lock) and wait for
their own futures; whichever waiting thread holds the read lock reads frames and completes the
futures of everyone (leader/follower reading), so pipelined requests from a Sender thread and a
blocking admin call can share one connection. A request that stays in flight past
request.timeout.ms closes the connection and fails every in-flight future (as Java's NetworkClient
does); closing fails them with DisconnectError.
"""

from __future__ import annotations

import enum
import itertools
import logging
import random
import socket
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import kafkapy
from kafkapy.client.errors import (
    ClientUnsupportedVersionError,
    DisconnectError,
    KafkaTimeoutError,
    NotKafkaPeerError,
    SslAuthenticationFailedError,
    error_from_code,
)
from kafkapy.client.socket_wait import wait_readable
from kafkapy.common.errors import ErrorCode, KafkaError, SaslAuthenticationFailedError
from kafkapy.common.time import SYSTEM, Time
from kafkapy.protocol.api_keys import API_NAMES
from kafkapy.protocol.framing import FrameDecoder
from kafkapy.protocol.header import RequestHeader, decode_response_header, encode_request
from kafkapy.protocol.messages import request_class, response_class
from kafkapy.protocol.messages.api_versions import ApiVersionsRequest

# ssl and the TLS transport load with the first TLS connection, the SASL clients with the first SASL one
# (client_security.py): a PLAINTEXT tool or broker never loads them (start-up time).
if TYPE_CHECKING:
    import ssl

    from kafkapy.client.client_security import ClientSecurity
    from kafkapy.client.ssl_transport import ClientSslTransport

log = logging.getLogger(__name__)

API_VERSIONS_KEY = 18
SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36
CLIENT_SOFTWARE_NAME = "kafkapy"
CLIENT_SOFTWARE_VERSION = kafkapy.__version__
MAX_RESPONSE_BYTES = 512 * 1024 * 1024
_RECV_CHUNK = 256 * 1024
# Broker addresses that sent a bad frame on an established connection (warned about once per process).
_bad_peers: set[tuple[str, int]] = set()
_bad_peers_lock = threading.Lock()


class ConnectionState(enum.Enum):
    DISCONNECTED = "DISCONNECTED"
    CONNECTING = "CONNECTING"
    CHECKING_API_VERSIONS = "CHECKING_API_VERSIONS"
    AUTHENTICATING = "AUTHENTICATING"
    READY = "READY"


@dataclass(slots=True)
class InFlightRequest:
    correlation_id: int
    api_key: int
    api_version: int
    future: Future
    deadline_ns: int


def our_version_range(api_key: int) -> tuple[int, int]:
    """The versions of an API this client speaks: the generated range minus an unstable top version."""
    cls = request_class(api_key)
    if cls is None:
        raise KeyError(api_key)
    lo, hi = cls.VALID_VERSIONS
    if getattr(cls, "LATEST_VERSION_UNSTABLE", False) and hi > lo:
        hi -= 1
    return int(lo), int(hi)


def _api_name(api_key: int) -> str:
    """The Request class name (what the messages below always said), without importing its module."""
    name = API_NAMES.get(api_key)
    return f"api key {api_key}" if name is None else name + "Request"


class BrokerConnection:
    """A blocking-socket connection to one broker (node_id may be negative for bootstrap servers)."""

    def __init__(
        self,
        node_id: int,
        host: str,
        port: int,
        client_id: str = "",
        request_timeout_ms: int = 30000,
        connection_setup_timeout_ms: int = 10000,
        send_buffer_bytes: int = 131072,
        receive_buffer_bytes: int = 65536,
        time: Time = SYSTEM,
        max_versions: dict[int, int] | None = None,
        security: ClientSecurity | None = None,
    ) -> None:
        self.node_id = node_id
        self.host = host
        self.port = port
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.connection_setup_timeout_ms = connection_setup_timeout_ms
        self._send_buffer_bytes = send_buffer_bytes
        self._receive_buffer_bytes = receive_buffer_bytes
        self._time = time
        # Client-side caps per api key (versions whose semantics this client does not implement).
        self._max_versions = dict(max_versions or {})
        self.state = ConnectionState.DISCONNECTED
        self.api_versions: dict[int, tuple[int, int]] = {}
        self.api_versions_response: Any = None
        self._sock: socket.socket | None = None
        self._decoder = FrameDecoder(MAX_RESPONSE_BYTES)
        self._in_flight: deque[InFlightRequest] = deque()
        self._correlation = itertools.count(1)
        self._send_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._state_lock = threading.RLock()
        self._closed_error: KafkaError | None = None
        self._security = security
        self._tls: ClientSslTransport | None = None
        # SASL session lifetime (SaslAuthenticate v1+ session_lifetime_ms): re-authenticate after this.
        self._reauth_at_ns: int | None = None
        self._reauth_gate = threading.RLock()

    def __repr__(self) -> str:
        return f"<BrokerConnection node={self.node_id} {self.host}:{self.port} {self.state.value}>"

    # ------------------------------------------------------------------------------------------
    # connect / close

    def connect(self, timeout_ms: int | None = None) -> None:
        """Open the TCP connection and negotiate API versions; raises a retriable error on failure."""
        with self._state_lock:
            if self.state is ConnectionState.READY:
                return
            self._close_socket()
            self.state = ConnectionState.CONNECTING
            self._decoder = FrameDecoder(MAX_RESPONSE_BYTES)
            self._closed_error = None
        timeout_ms = self.connection_setup_timeout_ms if timeout_ms is None else timeout_ms
        try:
            sock = socket.create_connection((self.host, self.port), timeout=max(timeout_ms, 1) / 1000.0)
        except OSError as e:
            with self._state_lock:
                self.state = ConnectionState.DISCONNECTED
            raise DisconnectError(f"Connection to node {self.node_id} ({self.host}:{self.port}) failed: {e}") from e
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._send_buffer_bytes > 0:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self._send_buffer_bytes)
            if self._receive_buffer_bytes > 0:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self._receive_buffer_bytes)
        except OSError:
            pass
        tls = None
        if self._security is not None and self._security.ssl_context is not None:
            tls = self._tls_handshake(sock, self._security.ssl_context, timeout_ms)
        sock.settimeout(self.request_timeout_ms / 1000.0)
        with self._state_lock:
            self._sock = sock
            self._tls = tls
            self.state = ConnectionState.CHECKING_API_VERSIONS
        try:
            self._negotiate_api_versions(timeout_ms)
            if self._security is not None and self._security.mechanism is not None:
                with self._state_lock:
                    self.state = ConnectionState.AUTHENTICATING
                self._authenticate(self._security, timeout_ms)
        except BaseException:
            self.close()
            raise
        with self._state_lock:
            if self._sock is sock:
                self.state = ConnectionState.READY

    def _tls_handshake(self, sock: socket.socket, context: ssl.SSLContext, timeout_ms: int) -> ClientSslTransport:
        import ssl  # loaded already by the context's ClientSecurity

        from kafkapy.client.ssl_transport import ClientSslTransport

        tls = ClientSslTransport(context, self.host)
        sock.settimeout(max(timeout_ms, 1) / 1000.0)
        try:
            tls.handshake(sock)
        except ssl.SSLError as e:
            sock.close()
            with self._state_lock:
                self.state = ConnectionState.DISCONNECTED
            raise SslAuthenticationFailedError(
                f"SSL handshake with node {self.node_id} ({self.host}:{self.port}) failed: {e.reason or e}"
            ) from None
        except OSError as e:
            sock.close()
            with self._state_lock:
                self.state = ConnectionState.DISCONNECTED
            raise DisconnectError(f"SSL handshake with node {self.node_id} ({self.host}:{self.port}) failed: {e}") from e
        return tls

    def _authenticate(self, security: ClientSecurity, timeout_ms: int) -> None:
        """SaslHandshake v1+ then SaslAuthenticate until the mechanism completes (Kafka 1.0+ brokers)."""
        from kafkapy.protocol.messages.sasl_authenticate import (
            SaslAuthenticateRequest,
            SaslAuthenticateResponse,
        )
        from kafkapy.protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse

        mechanism = security.mechanism
        assert mechanism is not None  # set for every SASL security.protocol, the only ones authenticating
        version = self.pick_version(SASL_HANDSHAKE_KEY, min_version=1)
        handshake: SaslHandshakeResponse = self.wait(self._send_raw(
            SaslHandshakeRequest(mechanism=mechanism), SASL_HANDSHAKE_KEY, version, True, timeout_ms), timeout_ms)
        if handshake.error_code:
            raise error_from_code(handshake.error_code, f"Unsupported SASL mechanism {mechanism} (the broker "
                                                        f"enables: {', '.join(handshake.mechanisms)})")
        client = security.sasl_client()
        token: bytes | None = client.initial()
        auth_version = self.pick_version(SASL_AUTHENTICATE_KEY)
        resp: SaslAuthenticateResponse | None = None
        while token is not None:
            resp = self.wait(self._send_raw(SaslAuthenticateRequest(auth_bytes=token), SASL_AUTHENTICATE_KEY,
                                            auth_version, True, timeout_ms), timeout_ms)
            if resp.error_code:
                raise error_from_code(resp.error_code, resp.error_message or "Authentication failed")
            token = client.evaluate(bytes(resp.auth_bytes))
        if not client.complete:
            raise SaslAuthenticationFailedError(f"SASL {mechanism} did not complete")
        lifetime_ms = 0 if resp is None else resp.session_lifetime_ms
        if lifetime_ms > 0:  # as Java: at a random 85-95% of the session's lifetime
            self._reauth_at_ns = self._time.nanoseconds() + int(lifetime_ms * random.uniform(0.85, 0.95) * 1e6)

    def _negotiate_api_versions(self, timeout_ms: int) -> None:
        lo, hi = our_version_range(API_VERSIONS_KEY)
        version = hi
        for _attempt in range(3):
            req = ApiVersionsRequest(
                client_software_name=CLIENT_SOFTWARE_NAME, client_software_version=CLIENT_SOFTWARE_VERSION
            )
            resp = self.wait(self._send_raw(req, API_VERSIONS_KEY, version, True, timeout_ms), timeout_ms)
            if resp.error_code == ErrorCode.UNSUPPORTED_VERSION:
                theirs = {k.api_key: k.max_version for k in resp.api_keys}.get(API_VERSIONS_KEY)
                retry = min(hi, theirs) if theirs is not None else 0
                if retry >= version:
                    retry = 0  # never loop on the same version
                log.debug("node %s: ApiVersions v%d unsupported, retrying with v%d", self.node_id, version, retry)
                version = max(lo, retry)
                continue
            if resp.error_code:
                raise error_from_code(resp.error_code, f"ApiVersions to node {self.node_id} failed")
            self.api_versions = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
            self.api_versions_response = resp
            return
        raise ClientUnsupportedVersionError(f"node {self.node_id} rejected every ApiVersions version")

    def close(self, error: KafkaError | None = None) -> None:
        """Close the socket and fail every in-flight request (with `error` or DisconnectError)."""
        with self._state_lock:
            err = error or DisconnectError(
                f"Connection to node {self.node_id} ({self.host}:{self.port}) was disconnected"
            )
            self._closed_error = err
            self._close_socket()
            self.state = ConnectionState.DISCONNECTED
            pending = list(self._in_flight)
            self._in_flight.clear()
        for r in pending:
            if not r.future.done():
                r.future.set_exception(err)

    def _close_socket(self) -> None:
        sock, self._sock = self._sock, None
        self._tls = None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def fileno(self) -> int | None:
        sock = self._sock
        return None if sock is None else sock.fileno()

    def is_ready(self) -> bool:
        return self.state is ConnectionState.READY

    def is_connected(self) -> bool:
        return self.state in (ConnectionState.CHECKING_API_VERSIONS, ConnectionState.AUTHENTICATING,
                              ConnectionState.READY)

    @property
    def in_flight_count(self) -> int:
        return len(self._in_flight)

    # ------------------------------------------------------------------------------------------
    # versions

    def pick_version(self, api_key: int, max_version: int | None = None, min_version: int | None = None) -> int:
        """Highest version that this client and the broker both support (within optional bounds)."""
        lo, hi = our_version_range(api_key)
        cap = self._max_versions.get(api_key)
        if cap is not None:
            hi = min(hi, cap)
        if max_version is not None:
            hi = min(hi, max_version)
        if min_version is not None:
            lo = max(lo, min_version)
        theirs = self.api_versions.get(api_key)
        if theirs is None:
            raise ClientUnsupportedVersionError(
                f"The node {self.node_id} does not support {_api_name(api_key)}"
            )
        v = min(hi, theirs[1])
        if v < max(lo, theirs[0]):
            raise ClientUnsupportedVersionError(
                f"The node {self.node_id} does not support {_api_name(api_key)} in versions "
                f"{lo} to {hi} (it supports {theirs[0]} to {theirs[1]})"
            )
        return v

    # ------------------------------------------------------------------------------------------
    # send / receive

    def send(
        self,
        request: Any,
        version: int | None = None,
        expect_response: bool = True,
        timeout_ms: int | None = None,
    ) -> Future:
        """Write one request; returns a Future for the decoded response (None if no response)."""
        if self.state is not ConnectionState.READY:
            raise DisconnectError(f"Connection to node {self.node_id} is not ready ({self.state.value})")
        api_key = request.API_KEY
        if version is None:
            version = self.pick_version(api_key)
        reauth_ns = self._reauth_at_ns
        if reauth_ns is not None and self._time.nanoseconds() >= reauth_ns:
            self._reauthenticate()
        with self._reauth_gate:  # no request may slip between a re-authentication's SASL requests
            return self._send_raw(request, api_key, version, expect_response, timeout_ms)

    def _reauthenticate(self) -> None:
        """KIP-368: log in again on this connection before the broker's session expires (the broker closes
        an expired session's connection on its next request). Other senders wait meanwhile."""
        security = self._security
        assert security is not None
        with self._reauth_gate:
            reauth_ns = self._reauth_at_ns
            if reauth_ns is None or self._time.nanoseconds() < reauth_ns:
                return  # another thread did it
            self._reauth_at_ns = None
            log.debug("node %s: re-authenticating (SASL %s)", self.node_id, security.mechanism)
            try:
                self._authenticate(security, self.request_timeout_ms)
            except KafkaError as e:
                self.close(e)
                raise

    def _send_raw(self, request: Any, api_key: int, version: int, expect_response: bool, timeout_ms: int | None) -> Future:
        future: Future = Future()
        timeout_ms = self.request_timeout_ms if timeout_ms is None else timeout_ms
        with self._send_lock:
            sock = self._sock
            if sock is None:
                raise self._closed_error or DisconnectError(f"Connection to node {self.node_id} is closed")
            corr = next(self._correlation) & 0x7FFFFFFF
            header = RequestHeader(api_key, version, corr, self.client_id)
            data = encode_request(header, request)
            tls = self._tls
            if tls is not None:
                data = tls.encrypt(data)
            if expect_response:
                deadline = self._time.nanoseconds() + int(timeout_ms) * 1_000_000
                self._in_flight.append(InFlightRequest(corr, api_key, version, future, deadline))
            try:
                sock.sendall(data)
            except OSError as e:
                err = DisconnectError(f"Connection to node {self.node_id} failed while sending: {e}")
                self.close(err)
                raise err from e
        if not expect_response:
            future.set_result(None)
        return future

    def wait(self, future: Future, timeout_ms: float | None = None) -> Any:
        """Block until `future` completes (reading responses meanwhile); returns its result or raises."""
        timeout_ms = self.request_timeout_ms if timeout_ms is None else timeout_ms
        deadline = self._time.nanoseconds() + int(timeout_ms * 1_000_000)
        while not future.done():
            remaining_ms = (deadline - self._time.nanoseconds()) / 1_000_000
            if remaining_ms <= 0:
                raise KafkaTimeoutError(f"Timed out after {timeout_ms:.0f} ms waiting for node {self.node_id}")
            if self._read_lock.acquire(timeout=min(remaining_ms, 50) / 1000.0):
                try:
                    if not future.done():
                        self._read_once(min(remaining_ms, 100))
                finally:
                    self._read_lock.release()
        return future.result()

    def request(self, request: Any, version: int | None = None, timeout_ms: int | None = None) -> Any:
        """Send and wait for the response (the blocking call admin and consumer use)."""
        return self.wait(self.send(request, version, True, timeout_ms), timeout_ms)

    def poll(self, timeout_ms: float = 0) -> None:
        """Read whatever responses arrive within timeout_ms (for pipelining callers)."""
        if not self._in_flight:
            return
        if self._read_lock.acquire(timeout=max(timeout_ms, 0) / 1000.0):
            try:
                self._read_once(timeout_ms)
            finally:
                self._read_lock.release()

    def _read_once(self, timeout_ms: float) -> None:
        sock = self._sock
        if sock is None:
            return
        self._expire_requests()
        try:
            readable = wait_readable((sock.fileno(),), max(timeout_ms, 0) / 1000.0)
            if not readable:
                self._expire_requests()
                return
            data: bytes | None = sock.recv(_RECV_CHUNK)
            tls = self._tls
            if tls is not None and data:
                data = tls.decrypt(data)
                if data == b"":
                    return  # part of a TLS record; the rest comes with the next read
        except (OSError, ValueError) as e:
            if self._sock is sock:
                self.close(DisconnectError(f"Connection to node {self.node_id} failed: {e}"))
            return
        if not data:
            if self._sock is sock:
                self.close()
            return
        try:
            self._decoder.feed(data)
            while True:
                frame = self._decoder.next_frame()
                if frame is None:
                    break
                self._complete(frame)
        except KafkaError as e:
            self.close(self._not_kafka(e) if self.state is ConnectionState.CHECKING_API_VERSIONS else e)
        except Exception as e:  # a malformed response is fatal for this connection only
            self.close(self._bad_frame(e))

    def _not_kafka(self, e: object) -> NotKafkaPeerError:
        return NotKafkaPeerError(f"{self.host}:{self.port} is not a Kafka broker (bad response frame: {e})",
                                 detail=str(e))

    def _bad_frame(self, e: BaseException) -> KafkaError:
        """The error for a response that is not a Kafka frame; warns once per address and process."""
        if self.state is ConnectionState.CHECKING_API_VERSIONS:
            return self._not_kafka(e)  # the caller reports it (once), not every reconnect
        with _bad_peers_lock:
            first = (self.host, self.port) not in _bad_peers
            _bad_peers.add((self.host, self.port))
        log.log(logging.WARNING if first else logging.DEBUG, "node %s (%s:%s): bad response frame: %s",
                self.node_id, self.host, self.port, e)  # fmt: skip
        return DisconnectError(f"Invalid response from node {self.node_id}: {e}")

    def _complete(self, frame: memoryview) -> None:
        if not self._in_flight:
            raise DisconnectError(f"Unexpected response from node {self.node_id} with no request in flight")
        req = self._in_flight[0]
        corr, body_offset = decode_response_header(frame, req.api_key, req.api_version)
        if corr != req.correlation_id:
            raise DisconnectError(
                f"Correlation id for response ({corr}) does not match request ({req.correlation_id})"
            )
        self._in_flight.popleft()
        cls = response_class(req.api_key)
        assert cls is not None  # we only send known api keys
        version = req.api_version
        if req.api_key == API_VERSIONS_KEY and len(frame) >= body_offset + 2:
            # An UNSUPPORTED_VERSION ApiVersions answer is always encoded as v0.
            if int.from_bytes(frame[body_offset : body_offset + 2], "big", signed=True) == 35:
                version = 0
        try:
            resp, _ = cls.decode_from(frame, body_offset, version)
        except Exception as e:
            detail = f"Failed to decode {cls.NAME} v{version}: {e}"
            req.future.set_exception(self._not_kafka(detail) if req.api_key == API_VERSIONS_KEY and
                                     self.state is ConnectionState.CHECKING_API_VERSIONS else DisconnectError(detail))  # fmt: skip
            return
        req.future.set_result(resp)

    def _expire_requests(self) -> None:
        if not self._in_flight:
            return
        head = self._in_flight[0]
        if self._time.nanoseconds() >= head.deadline_ns:
            log.info("Disconnecting from node %s due to request timeout.", self.node_id)
            self.close(
                KafkaTimeoutError(
                    f"Disconnected from node {self.node_id} due to timeout while awaiting "
                    f"{_api_name(head.api_key)} v{head.api_version}"
                )
            )
