"""Broker identity as the cluster sees it: EndPoint, Broker (a registration) and Node (one listener's view).

A Broker is what a broker registers in the metadata store (ZooKeeper's /brokers/ids/<id>) and what the
MetadataCache serves to Metadata / FindCoordinator handlers. Immutable (frozen dataclasses): safe to share
between threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class EndPoint:
    """One listener of a broker, e.g. PLAINTEXT://127.0.0.1:9092."""

    listener_name: str
    host: str
    port: int
    security_protocol: str = "PLAINTEXT"

    def connection_string(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener_name}://{host}:{self.port}"

    @classmethod
    def parse(cls, text: str, protocol_map: dict[str, str] | None = None) -> EndPoint:
        """Parse `LISTENER://host:port` (host may be empty or an [ipv6] literal)."""
        name, sep, rest = text.partition("://")
        if not sep:
            raise ValueError(f"not an endpoint: {text!r}")
        host, _, port = rest.rpartition(":")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        protocol = (protocol_map or {}).get(name, name)
        return cls(name, host, int(port), protocol)


@dataclass(frozen=True, slots=True)
class Node:
    """A broker as clients see it through one listener (Metadata response `Brokers` entries)."""

    id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class Broker:
    """A live broker's registration: its id, listeners, rack, and the epoch the store gave its registration."""

    id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None
    epoch: int = -1  # Kafka's broker epoch (the czxid of /brokers/ids/<id> in ZooKeeper)
    features: dict[str, dict[str, int]] = field(default_factory=dict, compare=False, hash=False)

    @property
    def host(self) -> str:
        return self.endpoints[0].host if self.endpoints else ""

    @property
    def port(self) -> int:
        return self.endpoints[0].port if self.endpoints else -1

    def endpoint(self, listener_name: str | None = None) -> EndPoint | None:
        """The endpoint for a listener name; the first endpoint when listener_name is None."""
        if listener_name is None:
            return self.endpoints[0] if self.endpoints else None
        for ep in self.endpoints:
            if ep.listener_name == listener_name:
                return ep
        return None

    def node(self, listener_name: str | None = None) -> Node | None:
        ep = self.endpoint(listener_name)
        if ep is None:
            return None
        return Node(self.id, ep.host, ep.port, self.rack)

    def with_epoch(self, epoch: int) -> Broker:
        return Broker(self.id, self.endpoints, self.rack, epoch, self.features)

    @classmethod
    def simple(cls, broker_id: int, host: str, port: int, rack: str | None = None,
               listener_name: str = "PLAINTEXT") -> Broker:
        return cls(broker_id, (EndPoint(listener_name, host, port, "PLAINTEXT"),), rack)
