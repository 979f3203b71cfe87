"""RequestContext: what a handler knows about the request it serves, and how it answers.

A handler either returns its response body (the dispatcher sends it) or keeps the context and
calls `respond(body)` later from any thread (a completed purgatory operation). Encoding happens
here, once, with the header version the request's api version requires.

Thread-safety: a context belongs to one request; `respond` may be called from any thread, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkapy.common.kafka_principal import KafkaPrincipal
from kafkapy.protocol.header import RequestHeader, encode_response
from kafkapy.protocol.message import Message

if TYPE_CHECKING:
    from kafkapy.server.broker_services import BrokerServices
    from kafkapy.server.network.request_channel import Request, RequestChannel


@dataclass(slots=True, eq=False)
class RequestContext:
    request: Request
    header: RequestHeader
    channel: RequestChannel
    server: BrokerServices
    handler_ns: int = 0  # the handler thread's time on this request (the request quota)
    quota_exempt: bool = False  # a follower's Fetch: not a client's bytes

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str:
        return self.header.client_id or ""

    @property
    def principal(self) -> KafkaPrincipal:
        """Who sent the request: the connection's authenticated principal (User:ANONYMOUS if none)."""
        return self.request.principal

    @property
    def client_host(self) -> str:
        return self.request.client_address[0] if self.request.client_address else ""

    def respond(self, body: Message) -> None:
        chunks = encode_response(self.header.api_key, self.header.api_version, self.header.correlation_id, body)
        quotas = self.server.quotas
        throttle = 0
        if quotas is not None:
            throttle = quotas.throttle_ms(self.header.api_key, self.principal.name, self.client_id,
                                          len(self.request.frame), chunks, self.handler_ns, self.quota_exempt)
        if throttle > 0 and hasattr(body, "throttle_time_ms"):
            if throttle > body.throttle_time_ms:
                body.throttle_time_ms = throttle
                chunks = encode_response(self.header.api_key, self.header.api_version, self.header.correlation_id,
                                         body)
        self.channel.send_response(self.request, chunks, throttle)

    def no_response(self) -> None:
        self.channel.send_response(self.request, None)

    def close(self) -> None:
        self.channel.close_connection(self.request)
