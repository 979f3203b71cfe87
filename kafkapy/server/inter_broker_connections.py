"""InterBrokerConnections: the broker's BrokerBlockingSenders to other brokers on the inter-broker listener, one per
destination broker, for its own requests to them (the transaction coordinator's WriteTxnMarkers, transaction
verification's AddPartitionsToTxn).

`get(broker_id)` returns the destination's sender, made on first use; it finds the broker's endpoint on the listener
in the MetadataCache before every exchange (so a broker that moved is reached at its new address) and connects,
backs off, times out and reconnects by itself (broker_blocking_sender.py). `drop(broker_id)` closes that sender's
connection (the next exchange reconnects); `close()` closes every sender for good, failing a blocked exchange.
Bytes: Kafka's request frames (client.connection does them).
Thread-safety: `get` is called by the owner's one sending thread; `close` and `drop` may come from any thread.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from kafkapy.server.broker_blocking_sender import BrokerBlockingSender, SenderConfig

if TYPE_CHECKING:
    from kafkapy.client.client_security import ClientSecurity


class InterBrokerConnections:
    def __init__(self, broker_id: int, listener_name: str, metadata_cache: Any, client_id: str,
                 request_timeout_ms: int = 30_000, security: ClientSecurity | None = None,
                 config: SenderConfig | None = None) -> None:
        """config: the senders' client settings (default: client_id, request_timeout_ms and the client's defaults)."""
        self.broker_id = broker_id
        self.listener_name = listener_name
        self.metadata_cache = metadata_cache
        self.config = config or SenderConfig(client_id, request_timeout_ms)
        self.security = security
        self._lock = threading.Lock()
        self._senders: dict[int, BrokerBlockingSender] = {}
        self._closed = False

    def get(self, broker_id: int) -> BrokerBlockingSender:
        with self._lock:
            sender = self._senders.get(broker_id)
            if sender is None:
                sender = BrokerBlockingSender(
                    lambda: self.metadata_cache.get_alive_broker_node(broker_id, self.listener_name), self.config,
                    self.security)
                if self._closed:
                    sender.close()
                self._senders[broker_id] = sender
            return sender

    def drop(self, broker_id: int) -> None:
        with self._lock:
            sender = self._senders.get(broker_id)
        if sender is not None:
            sender.disconnect()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            senders = list(self._senders.values())
        for sender in senders:
            sender.close()
