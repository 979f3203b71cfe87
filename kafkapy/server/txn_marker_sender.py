"""TxnMarkerSender: the transaction coordinator's network path to partition leaders (WriteTxnMarkers).

`send(broker_id, WriteTxnMarkersRequest) -> Future[WriteTxnMarkersResponse]` sends the request to the
broker's endpoint on the inter-broker listener (from the MetadataCache) over the Kafka protocol, even
when the broker is this one, so markers take the same path once partitions live on other brokers. One
BrokerBlockingSender per destination (InterBrokerConnections) connects, backs off (Kafka's 50 ms
reconnect backoff for this channel) and reconnects; a failed exchange fails the future and the
TransactionMarkerChannelManager retries the markers.
Bytes: Kafka's request frames (client.connection.BrokerConnection does the framing).
Thread-safety: `send` is called from the marker sender thread only; `close` from any thread.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from kafkapy.protocol.messages import WriteTxnMarkersRequest, WriteTxnMarkersResponse
from kafkapy.server.broker_blocking_sender import SenderConfig, sender_config
from kafkapy.server.inter_broker_connections import InterBrokerConnections

if TYPE_CHECKING:
    from kafkapy.client.client_security import ClientSecurity

RECONNECT_BACKOFF_MS = 50  # Kafka's TransactionMarkerChannelManager NetworkClient: 50 ms, not growing


def txn_marker_sender_config(config: Any, broker_id: int) -> SenderConfig:
    """Kafka's marker channel client: request.timeout.ms, socket.receive.buffer.bytes, connection setup timeouts."""
    return sender_config(config, f"broker-{broker_id}-txn-marker-sender", config.get_int("request.timeout.ms"),
                         RECONNECT_BACKOFF_MS, RECONNECT_BACKOFF_MS, config.get_int("socket.receive.buffer.bytes"))


class TxnMarkerSender:
    def __init__(self, broker_id: int, listener_name: str, metadata_cache: Any, config: SenderConfig,
                 security: ClientSecurity | None = None) -> None:
        self.broker_id = broker_id
        # inter.broker.listener.name's endpoints with its TLS / SASL
        self._connections = InterBrokerConnections(broker_id, listener_name, metadata_cache, config.client_id,
                                                   config.request_timeout_ms, security, config)

    def send(self, broker_id: int, request: WriteTxnMarkersRequest) -> Future[WriteTxnMarkersResponse]:
        future: Future[WriteTxnMarkersResponse] = Future()
        try:
            future.set_result(self._connections.get(broker_id).send_and_receive(request))
        except Exception as e:
            future.set_exception(e)
        return future

    def close(self) -> None:
        self._connections.close()
