"""InterBrokerConnections: one client connection per destination broker on the inter-broker listener, for the
broker's own requests to other brokers (the transaction coordinator's WriteTxnMarkers, transaction verification's
AddPartitionsToTxn).

`get(broker_id)` returns a ready BrokerConnection to the broker's endpoint on the listener (from the MetadataCache),
opened on first use with the listener's TLS / SASL client settings; `drop(broker_id)` closes it after a failure so
the next `get` reconnects; `close()` closes them all. Bytes: Kafka's request frames (client.connection does them).
Thread-safety: none; each owner uses its own instance from one thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the client stack loads with the first connection to another broker (start-up time)
    from kafkapy.client.client_security import ClientSecurity
    from kafkapy.client.connection import BrokerConnection


class InterBrokerConnections:
    def __init__(self, broker_id: int, listener_name: str, metadata_cache: Any, client_id: str,
                 request_timeout_ms: int = 30_000, security: ClientSecurity | None = None) -> None:
        self.broker_id = broker_id
        self.listener_name = listener_name
        self.metadata_cache = metadata_cache
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.security = security
        self._connections: dict[int, BrokerConnection] = {}

    def get(self, broker_id: int) -> BrokerConnection:
        conn = self._connections.get(broker_id)
        if conn is not None and conn.is_connected():
            return conn
        node = self.metadata_cache.get_alive_broker_node(broker_id, self.listener_name)
        if node is None:
            raise ConnectionError(f"Broker {broker_id} has no endpoint on listener {self.listener_name}")
        from kafkapy.client.connection import BrokerConnection

        conn = BrokerConnection(broker_id, node.host, node.port, client_id=self.client_id,
                                request_timeout_ms=self.request_timeout_ms, security=self.security)
        conn.connect(self.request_timeout_ms)
        self._connections[broker_id] = conn
        return conn

    def drop(self, broker_id: int) -> None:
        conn = self._connections.pop(broker_id, None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()
