"""TxnMarkerSender: the transaction coordinator's network path to partition leaders (WriteTxnMarkers).

`send(broker_id, WriteTxnMarkersRequest) -> Future[WriteTxnMarkersResponse]` sends the request to the
broker's endpoint on the inter-broker listener (from the MetadataCache) over the Kafka protocol, even
when the broker is this one, so markers take the same path once partitions live on other brokers. One
connection per destination, opened on first use and dropped on any failure (the channel manager retries).
Bytes: Kafka's request frames (client.connection.BrokerConnection does the framing).
Thread-safety: called from the marker sender thread only; connections are not shared across threads.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Any

from kafkapy.client.client_security import ClientSecurity
from kafkapy.client.connection import BrokerConnection
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import WriteTxnMarkersRequest, WriteTxnMarkersResponse

log = logging.getLogger("kafka.coordinator.transaction.TransactionMarkerChannelManager")


class TxnMarkerSender:
    def __init__(self, broker_id: int, listener_name: str, metadata_cache: Any, request_timeout_ms: int = 30_000,
                 security: ClientSecurity | None = None) -> None:
        self.broker_id = broker_id
        self.security = security  # inter.broker.listener.name's TLS / SASL
        self.listener_name = listener_name
        self.metadata_cache = metadata_cache
        self.request_timeout_ms = request_timeout_ms
        self._connections: dict[int, BrokerConnection] = {}

    def _connection(self, broker_id: int) -> BrokerConnection:
        conn = self._connections.get(broker_id)
        if conn is not None and conn.is_connected():
            return conn
        node = self.metadata_cache.get_alive_broker_node(broker_id, self.listener_name)
        if node is None:
            raise ConnectionError(f"Broker {broker_id} has no endpoint on listener {self.listener_name}")
        conn = BrokerConnection(broker_id, node.host, node.port, client_id=f"broker-{self.broker_id}-txn-marker-sender",
                                request_timeout_ms=self.request_timeout_ms, security=self.security)
        conn.connect(self.request_timeout_ms)
        self._connections[broker_id] = conn
        return conn

    def send(self, broker_id: int, request: WriteTxnMarkersRequest) -> Future[WriteTxnMarkersResponse]:
        future: Future[WriteTxnMarkersResponse] = Future()
        try:
            conn = self._connection(broker_id)
            version = conn.pick_version(ApiKey.WRITE_TXN_MARKERS)
            future.set_result(conn.request(request, version, self.request_timeout_ms))
        except Exception as e:
            broken = self._connections.pop(broker_id, None)
            if broken is not None:
                broken.close()
            future.set_exception(e)
        return future

    def close(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()
