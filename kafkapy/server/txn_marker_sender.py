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
from typing import TYPE_CHECKING, Any

from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import WriteTxnMarkersRequest, WriteTxnMarkersResponse
from kafkapy.server.inter_broker_connections import InterBrokerConnections

if TYPE_CHECKING:
    from kafkapy.client.client_security import ClientSecurity

log = logging.getLogger("kafka.coordinator.transaction.TransactionMarkerChannelManager")


class TxnMarkerSender:
    def __init__(self, broker_id: int, listener_name: str, metadata_cache: Any, request_timeout_ms: int = 30_000,
                 security: ClientSecurity | None = None) -> None:
        self.broker_id = broker_id
        self.request_timeout_ms = request_timeout_ms
        # inter.broker.listener.name's endpoints with its TLS / SASL
        self._connections = InterBrokerConnections(broker_id, listener_name, metadata_cache,
                                                   f"broker-{broker_id}-txn-marker-sender", request_timeout_ms,
                                                   security)

    def send(self, broker_id: int, request: WriteTxnMarkersRequest) -> Future[WriteTxnMarkersResponse]:
        future: Future[WriteTxnMarkersResponse] = Future()
        try:
            conn = self._connections.get(broker_id)
            version = conn.pick_version(ApiKey.WRITE_TXN_MARKERS)
            future.set_result(conn.request(request, version, self.request_timeout_ms))
        except Exception as e:
            self._connections.drop(broker_id)
            future.set_exception(e)
        return future

    def close(self) -> None:
        self._connections.close()
