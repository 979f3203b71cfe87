"""NetworkClient: the connections of one client to every broker, metadata refresh and routing.

Owns one BrokerConnection per node (bootstrap servers get node ids -1, -2, ... until metadata
names them), reconnects with Kafka's exponential backoff (reconnect.backoff.ms doubling up to
reconnect.backoff.max.ms, +-20% jitter), picks the least loaded node for metadata and admin
requests, and refreshes the Metadata snapshot (Metadata v0-13 on the wire).

Unreachable bootstrap: until some broker has been reached, a bootstrap address whose connect fails
hard (connection refused, host does not resolve, peer is not a Kafka broker) is remembered with its
cause; once every bootstrap address has failed hard for BOOTSTRAP_FAIL_FAST_MS, connecting raises
BootstrapUnreachableError naming each address and its cause, instead of retrying until the caller's
timeout (Kafka's 60 s default.api.timeout.ms). Timeouts are not hard failures: a broker that is
reachable but slow keeps Kafka's timeouts. After the first successful connection Kafka's retry rules
apply unchanged (a broker restarting must not make a running client give up). `bootstrap_fail_fast = False`
keeps Kafka's rule from the start (tools that wait for a broker); `connect_failure_listener(node_id, host,
port, error)` is told of every failed connection attempt (tools print Kafka's WARN line from it).

Requests may be given as a message or as a `build(version) -> message` callable, so callers can
fill version-dependent fields after the version is negotiated.

Thread-safety: all methods may be called from any thread; a per-node lock serialises connecting,
and BrokerConnection handles concurrent senders/readers.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from kafkapy.client.client_security import client_security
from kafkapy.client.config import ClientConfig
from kafkapy.client.connection import BrokerConnection
from kafkapy.client.errors import (
    BootstrapUnreachableError,
    DisconnectError,
    KafkaTimeoutError,
    NotKafkaPeerError,
)
from kafkapy.client.metadata import ZERO_UUID, Cluster, Metadata
from kafkapy.client.socket_wait import wait_readable
from kafkapy.common.errors import KafkaError
from kafkapy.common.time import SYSTEM, Time
from kafkapy.protocol.messages.metadata import MetadataRequest

log = logging.getLogger(__name__)

METADATA_KEY = 3
# How long every bootstrap address may keep failing hard before the client gives up: long enough for a
# few reconnects (reconnect.backoff.ms 50 doubling), short enough that a tool fails within seconds.
BOOTSTRAP_FAIL_FAST_MS = 1500
RequestOrBuilder = Any  # a message instance, or Callable[[int], message]


class NetworkClient:
    def __init__(
        self,
        config: ClientConfig,
        time: Time = SYSTEM,
        metadata: Metadata | None = None,
        max_versions: dict[int, int] | None = None,
    ) -> None:
        self.config = config
        self._time = time
        self.client_id = config["client.id"] or ""
        self.request_timeout_ms = int(config["request.timeout.ms"])
        self.retry_backoff_ms = int(config["retry.backoff.ms"])
        self.metadata = metadata or Metadata(
            int(config["metadata.max.age.ms"]), self.retry_backoff_ms, time
        )
        self._max_versions = max_versions or {}
        self.security = client_security(config)  # TLS context / SASL credentials, None for PLAINTEXT
        self._bootstrap: dict[int, tuple[str, int]] = {
            -(i + 1): addr for i, addr in enumerate(config.bootstrap_addresses())
        }
        if not self._bootstrap:
            raise ValueError("No resolvable bootstrap urls given in bootstrap.servers")
        self._conns: dict[int, BrokerConnection] = {}
        self._node_locks: dict[int, threading.Lock] = {}
        self._failures: dict[int, tuple[int, int]] = {}  # node -> (consecutive failures, next try ms)
        # bootstrap node -> (ms of its first hard failure, cause) while no broker was ever reached
        self._hard_failures: dict[int, tuple[int, str]] = {}
        self._ever_connected = False
        self._lock = threading.Lock()
        self._rng = random.Random()
        self._closed = False
        # Called (node_id, host, port, error) after each failed connection attempt; tools print Kafka's
        # NetworkClient WARN line from it. None: the client stays silent.
        self.connect_failure_listener: Callable[[int, str, int, KafkaError], None] | None = None
        # False: never give up on the bootstrap servers (Kafka's rule; tools that wait for a broker to come up)
        self.bootstrap_fail_fast = True

    # ------------------------------------------------------------------------------------------
    # nodes and connections

    @property
    def time(self) -> Time:
        return self._time

    @property
    def cluster(self) -> Cluster:
        return self.metadata.cluster

    def bootstrap_nodes(self) -> list[int]:
        return sorted(self._bootstrap, reverse=True)

    def node_address(self, node_id: int) -> tuple[str, int] | None:
        node = self.metadata.cluster.node(node_id)
        if node is not None:
            return node.host, node.port
        return self._bootstrap.get(node_id)

    def _node_lock(self, node_id: int) -> threading.Lock:
        with self._lock:
            lock = self._node_locks.get(node_id)
            if lock is None:
                lock = self._node_locks[node_id] = threading.Lock()
            return lock

    def connection_delay_ms(self, node_id: int) -> int:
        entry = self._failures.get(node_id)
        if entry is None:
            return 0
        return max(0, entry[1] - self._time.milliseconds())

    def _record_failure(self, node_id: int) -> None:
        count = self._failures.get(node_id, (0, 0))[0] + 1
        base = int(self.config["reconnect.backoff.ms"])
        cap = int(self.config["reconnect.backoff.max.ms"])
        backoff = min(cap, base * (2 ** min(count - 1, 20)))
        backoff = int(backoff * self._rng.uniform(0.8, 1.2))
        self._failures[node_id] = (count, self._time.milliseconds() + backoff)
        self.metadata.request_update()

    def is_ready(self, node_id: int) -> bool:
        conn = self._conns.get(node_id)
        return conn is not None and conn.is_ready()

    def get_connection(self, node_id: int, timeout_ms: float | None = None) -> BrokerConnection:
        """A READY connection to node_id, connecting (after any backoff) within timeout_ms."""
        conn = self._conns.get(node_id)
        if conn is not None and conn.is_ready():
            return conn
        if self._closed:
            raise DisconnectError("The client is closed")
        timeout_ms = self.request_timeout_ms if timeout_ms is None else timeout_ms
        deadline = self._time.milliseconds() + timeout_ms
        with self._node_lock(node_id):
            conn = self._conns.get(node_id)
            if conn is not None and conn.is_ready():
                return conn
            addr = self.node_address(node_id)
            if addr is None:
                raise DisconnectError(f"Unknown node {node_id}")
            if conn is None or (conn.host, conn.port) != addr:
                if conn is not None:
                    conn.close()
                conn = BrokerConnection(
                    node_id,
                    addr[0],
                    addr[1],
                    client_id=self.client_id,
                    request_timeout_ms=self.request_timeout_ms,
                    connection_setup_timeout_ms=int(self.config["socket.connection.setup.timeout.ms"]),
                    send_buffer_bytes=int(self.config["send.buffer.bytes"]),
                    receive_buffer_bytes=int(self.config["receive.buffer.bytes"]),
                    time=self._time,
                    max_versions=self._max_versions,
                    security=self.security,
                )
                self._conns[node_id] = conn
            self._check_bootstrap_reachable()
            delay = self.connection_delay_ms(node_id)
            if delay > 0:
                if self._time.milliseconds() + delay > deadline:
                    raise DisconnectError(f"Node {node_id} is in reconnect backoff")
                self._time.sleep(delay)
            remaining = max(1, deadline - self._time.milliseconds())
            try:
                conn.connect(int(min(remaining, int(self.config["socket.connection.setup.timeout.ms"]))))
            except KafkaError as e:
                self._record_failure(node_id)
                if self.connect_failure_listener is not None:
                    self.connect_failure_listener(node_id, addr[0], addr[1], e)
                self._record_bootstrap_failure(node_id, e)
                self._check_bootstrap_reachable(e)
                raise
            self._failures.pop(node_id, None)
            self._ever_connected = True
            self._hard_failures.clear()
            log.debug("Connected to node %s at %s:%s", node_id, conn.host, conn.port)
            return conn

    def _record_bootstrap_failure(self, node_id: int, error: KafkaError) -> None:
        if self._ever_connected or node_id not in self._bootstrap:
            return
        cause = hard_failure_cause(error)
        if cause is None:
            self._hard_failures.pop(node_id, None)  # a timeout: maybe slow, not unreachable
            return
        first = self._hard_failures.get(node_id, (self._time.milliseconds(), cause))[0]
        self._hard_failures[node_id] = (first, cause)

    def _check_bootstrap_reachable(self, error: KafkaError | None = None) -> None:
        """Raise BootstrapUnreachableError once every bootstrap address failed hard for long enough."""
        if self._ever_connected or not self.bootstrap_fail_fast or len(self._hard_failures) < len(self._bootstrap):
            return
        if self._time.milliseconds() - min(t for t, _ in self._hard_failures.values()) < BOOTSTRAP_FAIL_FAST_MS:
            return
        causes = ", ".join(f"{self._bootstrap[n][0]}:{self._bootstrap[n][1]} ({c})"
                           for n, (_, c) in sorted(self._hard_failures.items(), reverse=True))  # fmt: skip
        raise BootstrapUnreachableError(f"Could not connect to any bootstrap server: {causes}") from error

    def least_loaded_node(self) -> int:
        """A node to send metadata/admin requests to: ready with fewest in flight, else any known."""
        cluster = self.metadata.cluster
        candidates = list(cluster.brokers) or self.bootstrap_nodes()
        self._rng.shuffle(candidates)
        best, best_load = None, None
        for node_id in candidates:
            conn = self._conns.get(node_id)
            if conn is not None and conn.is_ready():
                load = conn.in_flight_count
                if best_load is None or load < best_load:
                    best, best_load = node_id, load
        if best is not None:
            return best
        not_backing_off = [n for n in candidates if self.connection_delay_ms(n) == 0]
        if not_backing_off:
            return not_backing_off[0]
        # Every known broker is backing off: fall back to bootstrap, then the one retrying soonest.
        boot = [n for n in self.bootstrap_nodes() if self.connection_delay_ms(n) == 0]
        if boot:
            return boot[0]
        return min(candidates, key=self.connection_delay_ms)

    # ------------------------------------------------------------------------------------------
    # requests

    def send(
        self,
        node_id: int,
        request: RequestOrBuilder,
        expect_response: bool = True,
        timeout_ms: float | None = None,
        api_key: int | None = None,
        max_version: int | None = None,
    ) -> Future:
        """Write a request to node_id without waiting (pipelining); returns the response Future."""
        conn = self.get_connection(node_id, timeout_ms)
        msg, version = self._materialise(conn, request, api_key, max_version, None)
        return conn.send(msg, version, expect_response)

    @staticmethod
    def _materialise(
        conn: BrokerConnection,
        request: RequestOrBuilder,
        api_key: int | None,
        max_version: int | None,
        min_version: int | None,
    ) -> tuple[Any, int]:
        if callable(request) and not hasattr(request, "encode"):
            if api_key is None:
                raise TypeError("request builders need api_key")
            version = conn.pick_version(api_key, max_version, min_version)
            return request(version), version
        return request, conn.pick_version(request.API_KEY, max_version, min_version)

    def request(
        self,
        node_id: int,
        request: RequestOrBuilder,
        timeout_ms: float | None = None,
        api_key: int | None = None,
        max_version: int | None = None,
        min_version: int | None = None,
    ) -> Any:
        """Send one request to node_id and wait for its response (raises on transport errors)."""
        timeout_ms = self.request_timeout_ms if timeout_ms is None else timeout_ms
        deadline = self._time.milliseconds() + timeout_ms
        conn = self.get_connection(node_id, timeout_ms)
        msg, version = self._materialise(conn, request, api_key, max_version, min_version)
        remaining = max(1, deadline - self._time.milliseconds())
        try:
            future = conn.send(msg, version, True, self.request_timeout_ms)
            return conn.wait(future, min(remaining, self.request_timeout_ms))
        except DisconnectError:
            self.metadata.request_update()
            raise

    def poll(self, timeout_ms: float, nodes: Iterable[int] | None = None) -> None:
        """Wait up to timeout_ms for responses on the given nodes' connections and read them."""
        conns = [c for n, c in list(self._conns.items()) if nodes is None or n in nodes]
        fds = {}
        for c in conns:
            fd = c.fileno()
            if fd is not None and c.in_flight_count:
                fds[fd] = c
        if not fds:
            if timeout_ms > 0:
                self._time.sleep(min(timeout_ms, self.retry_backoff_ms))
            return
        try:
            readable = wait_readable(fds, max(timeout_ms, 0) / 1000.0)
        except (OSError, ValueError):
            readable = list(fds)
        for c in fds.values():
            # Poll every connection so request timeouts are enforced even when nothing arrives.
            c.poll(0)
        del readable

    def api_versions(self, node_id: int, timeout_ms: float | None = None) -> dict[int, tuple[int, int]]:
        """The broker's advertised (min, max) per api key, from the connection's negotiation."""
        return dict(self.get_connection(node_id, timeout_ms).api_versions)

    def with_retries(
        self,
        call: Callable[[], Any],
        timeout_ms: float,
        what: str = "request",
        retry_on: tuple[type[BaseException], ...] = (),
    ) -> Any:
        """Run `call` until it succeeds, raising non-retriable errors at once and the last retriable
        one (or a KafkaTimeoutError) when timeout_ms runs out; backs off retry.backoff.ms doubling
        up to retry.backoff.max.ms between attempts."""
        deadline = self._time.milliseconds() + timeout_ms
        attempt = 0
        last: BaseException | None = None
        while True:
            try:
                return call()
            except KafkaError as e:
                if not (e.retriable or isinstance(e, retry_on)):
                    raise
                last = e
            attempt += 1
            backoff = min(
                int(self.config["retry.backoff.max.ms"]), self.retry_backoff_ms * (2 ** min(attempt - 1, 16))
            )
            remaining = deadline - self._time.milliseconds()
            if remaining <= 0:
                break
            log.debug("%s failed (%s), retrying in %d ms", what, last, backoff)
            self._time.sleep(min(backoff, remaining))
            if deadline - self._time.milliseconds() <= 0:
                break
        if last is not None and not isinstance(last, KafkaTimeoutError):
            raise last
        raise KafkaTimeoutError(f"Timed out waiting for {what} after {timeout_ms:.0f} ms")

    def request_least_loaded(
        self,
        request: RequestOrBuilder,
        timeout_ms: float | None = None,
        api_key: int | None = None,
        max_version: int | None = None,
    ) -> Any:
        """Send to the least loaded node, moving to another node on connection errors."""
        timeout_ms = self.request_timeout_ms if timeout_ms is None else timeout_ms

        def attempt() -> Any:
            node = self.least_loaded_node()
            return self.request(node, request, timeout_ms, api_key=api_key, max_version=max_version)

        return self.with_retries(attempt, timeout_ms, "least-loaded request")

    # ------------------------------------------------------------------------------------------
    # metadata

    def _metadata_request(self, topics: list[str] | None, allow_auto_topic_creation: bool) -> Callable[[int], Any]:
        def build(version: int) -> Any:
            if topics is None:
                req_topics: list[Any] | None = [] if version == 0 else None
            else:
                req_topics = [
                    MetadataRequest.MetadataRequestTopic(topic_id=ZERO_UUID, name=t) for t in topics
                ]
            return MetadataRequest(
                topics=req_topics,
                allow_auto_topic_creation=allow_auto_topic_creation,
                include_topic_authorized_operations=False,
            )

        return build

    def fetch_metadata(
        self,
        topics: Iterable[str] | None = None,
        timeout_ms: float | None = None,
        allow_auto_topic_creation: bool = False,
        node_id: int | None = None,
    ) -> Any:
        """Send one Metadata request (topics None = all topics); returns the raw response."""
        topic_list = None if topics is None else list(topics)
        builder = self._metadata_request(topic_list, allow_auto_topic_creation)
        timeout_ms = self.request_timeout_ms if timeout_ms is None else timeout_ms

        def attempt() -> Any:
            node = self.least_loaded_node() if node_id is None else node_id
            self.metadata.record_attempt()
            try:
                resp = self.request(node, builder, timeout_ms, api_key=METADATA_KEY)
            except KafkaError:
                self.metadata.failed_update()
                raise
            return resp

        resp = self.with_retries(attempt, timeout_ms, "metadata")
        return resp

    def update_metadata(
        self,
        topics: Iterable[str] | None = None,
        timeout_ms: float | None = None,
        allow_auto_topic_creation: bool = False,
    ) -> Cluster:
        """Refresh the Metadata snapshot for `topics` (None = every topic) and return it."""
        topic_list = None if topics is None else list(topics)
        resp = self.fetch_metadata(topic_list, timeout_ms, allow_auto_topic_creation)
        return self.metadata.update(resp, topic_list)

    def maybe_update_metadata(self, timeout_ms: float | None = None) -> Cluster:
        """Refresh the tracked topics if an update was requested or the snapshot expired."""
        if self.metadata.time_to_next_update_ms() == 0:
            topics = None if self.metadata.need_all_topics else sorted(self.metadata.topics)
            try:
                return self.update_metadata(topics, timeout_ms)
            except KafkaError as e:
                log.debug("metadata refresh failed: %s", e)
        return self.metadata.cluster

    # ------------------------------------------------------------------------------------------

    def close_node(self, node_id: int) -> None:
        conn = self._conns.pop(node_id, None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        self._closed = True
        for node_id in list(self._conns):
            self.close_node(node_id)


def hard_failure_cause(error: BaseException) -> str | None:
    """Why a connect failed, if retrying cannot help soon (refused, unresolvable, not Kafka), else None."""
    if isinstance(error, NotKafkaPeerError):
        return f"not a Kafka broker: {error.detail}" if error.detail else "not a Kafka broker"
    cause = error.__cause__
    if isinstance(cause, socket.gaierror):
        return cause.strerror or "unknown host"
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, OSError) and not isinstance(cause, TimeoutError) and cause.strerror:
        return cause.strerror  # e.g. no route to host, network unreachable
    return None
