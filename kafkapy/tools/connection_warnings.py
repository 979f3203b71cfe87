"""Kafka's client WARN line for a failed connection, for the long-running tools (console-consumer, mirror-maker).

Kafka's NetworkClient logs, per failed connection attempt,
`[Consumer clientId=<id>, groupId=<group>] Connection to node -1 (/127.0.0.1:1) could not be established.
Node may not be available.` (logger `org.apache.kafka.clients.NetworkClient`, level WARN; the tools' log4j
layout puts it on stderr). kafkapy's client stays silent; a tool that would otherwise wait quietly attaches a
`ConnectionWarner` to its client's `connect_failure_listener` and the line goes to the logger of that name.
The address is Java's InetSocketAddress text: `/<ip>:<port>` for an IP literal, `<host>/<ip>:<port>` for a
resolved name. At most one line per node per `interval_ms` (Kafka's attempts are spaced by
reconnect.backoff.max.ms, 1 s by default; kafkapy's tool loops may retry sooner).

Thread-safety: the listener may be called from any client thread; a lock guards the per-node timestamps.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

LOGGER_NAME = "org.apache.kafka.clients.NetworkClient"
log = logging.getLogger(LOGGER_NAME)


def java_socket_address(host: str, port: int) -> str:
    """InetSocketAddress.toString() of a resolved address."""
    try:
        ipaddress.ip_address(host)
        return f"/{host}:{port}"
    except ValueError:
        pass
    try:
        ip = socket.gethostbyname(host)
    except OSError:
        return f"{host}/<unresolved>:{port}"
    return f"{host}/{ip}:{port}"


def consumer_log_prefix(props: dict[str, Any]) -> str:
    """The consumer's LogContext prefix: `[Consumer clientId=x, groupId=y] ` (groupId only with a group)."""
    group = props.get("group.id")
    tail = f", groupId={group}" if group else ""
    return f"[Consumer clientId={props.get('client.id') or ''}{tail}] "


class ConnectionWarner:
    def __init__(self, log_prefix: str, interval_ms: int = 1000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.log_prefix = log_prefix
        self.interval_s = interval_ms / 1000.0
        self.clock = clock
        self._last: dict[int, float] = {}
        self._lock = threading.Lock()

    def __call__(self, node_id: int, host: str, port: int, error: BaseException) -> None:
        now = self.clock()
        with self._lock:
            last = self._last.get(node_id)
            if last is not None and now - last < self.interval_s:
                return
            self._last[node_id] = now
        log.warning("%sConnection to node %s (%s) could not be established. Node may not be available.",
                    self.log_prefix, node_id, java_socket_address(host, port))

    def attach(self, network_client: Any) -> None:
        network_client.connect_failure_listener = self
