"""ConnectionQuotas: Kafka's limits on open connections, shared by every listener of one SocketServer.

`max.connections` bounds the broker's connections (the inter-broker listener is exempt, as in Kafka);
`max.connections.per.ip` bounds each client address, with `max.connections.per.ip.overrides`
("host:count,host:count", host names resolved once at start) taking precedence. A connection over a
limit is closed by the Acceptor right after accept, with one INFO line; everyone else is served.
No byte format. Thread-safety: one lock; `inc` runs on acceptor threads, `dec` on processor threads.
"""

from __future__ import annotations

import logging
import socket
import threading

from kafkapy.server.kafka_config import KafkaConfig

log = logging.getLogger("kafka.network.ConnectionQuotas")


def parse_overrides(text: str) -> dict[str, int]:
    """`max.connections.per.ip.overrides` as {ip: limit}; raises ValueError on a malformed entry."""
    out: dict[str, int] = {}
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, sep, count = entry.rpartition(":")
        if not sep or not host:
            raise ValueError(f"Invalid max.connections.per.ip.overrides entry: {entry}")
        try:
            ip = socket.gethostbyname(host.strip("[]"))
        except OSError:
            ip = host.strip("[]")
        out[ip] = int(count)
    return out


class ConnectionQuotas:
    def __init__(self, max_connections: int, max_per_ip: int, overrides: dict[str, int],
                 exempt_listener: str | None = None) -> None:
        self._max = max_connections
        self._max_per_ip = max_per_ip
        self._overrides = overrides
        self._exempt_listener = exempt_listener
        self._lock = threading.Lock()
        self._total = 0
        self._per_ip: dict[str, int] = {}

    @classmethod
    def from_config(cls, config: KafkaConfig) -> ConnectionQuotas:
        return cls(config.get_int("max.connections"), config.get_int("max.connections.per.ip"),
                   parse_overrides(config.get_string("max.connections.per.ip.overrides") or ""),
                   config.inter_broker_listener_name())

    def limit_for(self, ip: str) -> int:
        return self._overrides.get(ip, self._max_per_ip)

    def inc(self, listener_name: str, ip: str) -> bool:
        """Count a new connection; False (and one log line) when it is over a limit and must be closed."""
        with self._lock:
            count = self._per_ip.get(ip, 0)
            limit = self.limit_for(ip)
            if count >= limit:
                reason = f"address already has the configured maximum of {limit} connections."
            elif self._total >= self._max and listener_name != self._exempt_listener:
                reason = f"the broker already has the configured maximum of {self._max} connections."
            else:
                self._per_ip[ip] = count + 1
                self._total += 1
                return True
        log.info("Rejected connection from /%s, %s", ip, reason)
        return False

    def dec(self, ip: str) -> None:
        with self._lock:
            count = self._per_ip.get(ip, 0)
            if count <= 0:
                return
            if count == 1:
                del self._per_ip[ip]
            else:
                self._per_ip[ip] = count - 1
            self._total -= 1

    def get(self, ip: str) -> int:
        with self._lock:
            return self._per_ip.get(ip, 0)
