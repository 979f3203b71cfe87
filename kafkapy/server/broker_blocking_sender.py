"""BrokerBlockingSender: the broker's one way to send a request to another broker and block for its answer
(Kafka's BlockingSend / BrokerBlockingSender, NetworkClientUtils.awaitReady + sendAndReceive, with the
reconnect and connection-setup backoff of the client's ClusterConnectionStates).

One instance owns at most one connection to one destination. The destination is asked for before every
exchange (`destination() -> Node | None`: a fixed leader, a broker's endpoint on the inter-broker listener
from the MetadataCache, or the active controller looked up in ZooKeeper); when it names another node or
address than the open connection's, that connection is closed and the new one opened. A connection is made
with the listener's TLS / SASL client settings, TCP_NODELAY and the configured socket buffer sizes (-1 keeps
the OS default, Kafka's USE_DEFAULT_BUFFER_SIZE), and negotiates ApiVersions before its first request.

`send_and_receive(request)` picks the highest version both sides support (within optional bounds) and
returns the decoded response. Any failure of the exchange (refused or timed-out connect, TLS or SASL
failure, broken connection, no answer within `request_timeout_ms`) closes the connection and raises a
typed error: DisconnectError (or NotKafkaPeerError) for the connection, KafkaTimeoutError for a request
timeout, the authentication error for TLS / SASL; ClientUnsupportedVersionError leaves the connection open
(nothing was sent). The next call connects again, after the reconnect backoff: Kafka's
ExponentialBackoff, `reconnect_backoff_ms * 2 ** failures` capped at `reconnect_backoff_max_ms`, with +-20%
jitter that never passes the cap; a successful connect resets it. The connection-setup timeout grows the
same way from `socket.connection.setup.timeout.ms` to `socket.connection.setup.timeout.max.ms`.
`close()` (any thread) ends the sender for good: a call blocked in the backoff wait, the connect handshake
or the wait for an answer fails at once with DisconnectError, and so does every later call.
`disconnect()` only closes the current connection (the next call reconnects without backoff).

No byte format of its own: Kafka's request and response frames (client.connection.BrokerConnection does
the framing). Thread-safety: calls are serialised by a lock (one exchange at a time per destination);
`close`, `disconnect` and `connection_delay_ms` may be called from any thread.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.client.errors import DisconnectError
from kafkapy.cluster.broker import Node
from kafkapy.common.time import SYSTEM, Time

if TYPE_CHECKING:  # the client stack loads with the first connection to another broker (start-up time)
    from kafkapy.client.client_security import ClientSecurity
    from kafkapy.client.connection import BrokerConnection

USE_DEFAULT_BUFFER_SIZE = -1  # Kafka's Selectable.USE_DEFAULT_BUFFER_SIZE: leave the OS default
RECONNECT_BACKOFF_EXP_BASE = 2  # Kafka's ClusterConnectionStates
RECONNECT_BACKOFF_JITTER = 0.2
CONNECTION_SETUP_TIMEOUT_JITTER = 0.2


class ExponentialBackoff:
    """Kafka's ExponentialBackoff: random(1 - jitter, 1 + jitter) * initial * multiplier ** attempts, never
    above max_ms; a constant max_ms when max_ms <= initial_ms. Stateless and thread-safe."""

    def __init__(self, initial_ms: int, multiplier: int, max_ms: int, jitter: float,
                 rng: random.Random | None = None) -> None:
        self.initial_ms = min(max_ms, initial_ms)
        self.multiplier = multiplier
        self.max_ms = max_ms
        self.jitter = jitter
        self._rng = rng or random.Random()
        self._exp_max = (math.log(max_ms / max(initial_ms, 1)) / math.log(multiplier)
                         if max_ms > initial_ms else 0.0)

    def backoff(self, attempts: int) -> int:
        if self._exp_max == 0:
            return self.initial_ms
        term = self.initial_ms * self.multiplier ** min(attempts, self._exp_max)
        factor = self._rng.uniform(1 - self.jitter, 1 + self.jitter) if self.jitter > 0 else 1.0
        return min(int(factor * term), self.max_ms)


@dataclass(frozen=True, slots=True)
class SenderConfig:
    """One user's client settings (Kafka passes them to each inter-broker NetworkClient)."""

    client_id: str
    request_timeout_ms: int = 30_000
    connection_setup_timeout_ms: int = 10_000  # socket.connection.setup.timeout.ms
    connection_setup_timeout_max_ms: int = 30_000  # socket.connection.setup.timeout.max.ms
    reconnect_backoff_ms: int = 50  # the client's reconnect.backoff.ms default
    reconnect_backoff_max_ms: int = 1_000  # reconnect.backoff.max.ms
    send_buffer_bytes: int = USE_DEFAULT_BUFFER_SIZE
    receive_buffer_bytes: int = USE_DEFAULT_BUFFER_SIZE


def sender_config(config: Any, client_id: str, request_timeout_ms: int, reconnect_backoff_ms: int,
                  reconnect_backoff_max_ms: int,
                  receive_buffer_bytes: int = USE_DEFAULT_BUFFER_SIZE) -> SenderConfig:
    """A SenderConfig from a KafkaConfig's socket.connection.setup.timeout.(max.)ms and the user's values."""
    return SenderConfig(client_id, request_timeout_ms, config.get_int("socket.connection.setup.timeout.ms"),
                        config.get_int("socket.connection.setup.timeout.max.ms"), reconnect_backoff_ms,
                        reconnect_backoff_max_ms, receive_buffer_bytes=receive_buffer_bytes)


class BrokerBlockingSender:
    def __init__(self, destination: Callable[[], Node | None], config: SenderConfig,
                 security: ClientSecurity | None = None, time: Time = SYSTEM,
                 rng: random.Random | None = None) -> None:
        self._destination = destination
        self.config = config
        self._security = security
        self._time = time
        self._reconnect_backoff = ExponentialBackoff(config.reconnect_backoff_ms, RECONNECT_BACKOFF_EXP_BASE,
                                                     config.reconnect_backoff_max_ms, RECONNECT_BACKOFF_JITTER, rng)
        self._setup_timeout = ExponentialBackoff(config.connection_setup_timeout_ms, RECONNECT_BACKOFF_EXP_BASE,
                                                 config.connection_setup_timeout_max_ms,
                                                 CONNECTION_SETUP_TIMEOUT_JITTER, rng)
        self._call_lock = threading.Lock()  # one exchange at a time
        self._state_lock = threading.Lock()  # the fields below
        self._conn: BrokerConnection | None = None
        self._failed_attempts = 0
        self._reconnect_at_ms = 0  # hi-res clock: no connect before this
        self._closed = threading.Event()

    # -- state (any thread) -------------------------------------------------------------------------------

    @property
    def node(self) -> Node | None:
        """The node of the open connection, if any."""
        conn = self._conn
        return None if conn is None else Node(conn.node_id, conn.host, conn.port)

    @property
    def failed_attempts(self) -> int:
        return self._failed_attempts

    def connection_delay_ms(self) -> int:
        """How long the next connect waits (Kafka's connectionDelay): the rest of the reconnect backoff."""
        with self._state_lock:
            return max(0, self._reconnect_at_ms - self._time.hi_res_clock_ms())

    def is_closed(self) -> bool:
        return self._closed.is_set()

    def disconnect(self) -> None:
        """Close the current connection; the next call opens a new one."""
        with self._state_lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """End the sender: a blocked call fails at once with DisconnectError, and so does every later one."""
        self._closed.set()
        self.disconnect()

    # -- the exchange -------------------------------------------------------------------------------------

    def send_and_receive(self, request: Any, *, max_version: int | None = None, min_version: int | None = None,
                         timeout_ms: int | None = None) -> Any:
        """Send `request` at the highest common version within the bounds and block for its response."""
        timeout_ms = self.config.request_timeout_ms if timeout_ms is None else timeout_ms
        with self._call_lock:
            conn = self._ready_connection()
            version = conn.pick_version(request.API_KEY, max_version, min_version)  # raises before sending
            try:
                response = conn.request(request, version, timeout_ms)
            except BaseException:
                self._failed(conn)
                raise
            if self._closed.is_set():
                raise self._closed_error()
            return response

    def _closed_error(self) -> DisconnectError:
        return DisconnectError(f"The sender to {self.node or 'its destination'} ({self.config.client_id}) is closed")

    def _ready_connection(self) -> BrokerConnection:
        if self._closed.is_set():
            raise self._closed_error()
        node = self._destination()
        if node is None:
            raise DisconnectError(f"No endpoint for the destination of {self.config.client_id}")
        conn = self._conn
        if conn is not None and conn.is_ready() and (conn.node_id, conn.host, conn.port) == (
                node.id, node.host, node.port):
            return conn
        self.disconnect()
        delay_ms = self.connection_delay_ms()
        if delay_ms > 0 and self._closed.wait(delay_ms / 1000.0):  # real time: this paces an I/O thread
            raise self._closed_error()
        from kafkapy.client.connection import BrokerConnection

        cfg = self.config
        conn = BrokerConnection(node.id, node.host, node.port, client_id=cfg.client_id,
                                request_timeout_ms=cfg.request_timeout_ms,
                                send_buffer_bytes=cfg.send_buffer_bytes,
                                receive_buffer_bytes=cfg.receive_buffer_bytes, time=self._time,
                                security=self._security)
        with self._state_lock:
            self._conn = conn  # visible to close() while the handshake runs
            attempts = self._failed_attempts
        try:
            conn.connect(self._setup_timeout.backoff(attempts))
        except BaseException:
            self._failed(conn)
            if self._closed.is_set():
                raise self._closed_error() from None
            raise
        with self._state_lock:
            if self._closed.is_set() or self._conn is not conn:  # closed or disconnected meanwhile
                conn.close()
                raise self._closed_error() if self._closed.is_set() else DisconnectError(
                    f"The connection to node {node.id} was closed while connecting")
            self._failed_attempts = 0
            self._reconnect_at_ms = 0
        return conn

    def _failed(self, conn: BrokerConnection) -> None:
        """Close a failed connection and start the reconnect backoff (Kafka's updateReconnectBackoff)."""
        conn.close()
        with self._state_lock:
            if self._conn is conn:
                self._conn = None
            self._reconnect_at_ms = self._time.hi_res_clock_ms() + self._reconnect_backoff.backoff(
                self._failed_attempts)
            self._failed_attempts += 1
