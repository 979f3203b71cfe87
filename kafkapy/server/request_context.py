"""RequestContext: what a handler knows about the request it serves, and how it answers.

A handler either returns its response body (the dispatcher sends it) or keeps the context and
calls `respond(body)` later from any thread (a completed purgatory operation). Encoding happens
here, once, with the header version the request's api version requires. Client quotas are applied
here too (server/quota/quota_managers.py): a throttled response carries throttle_time_ms and its
connection stays muted that long after it is sent.

Thread-safety: a context belongs to one request; `respond` may be called from any thread, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.common.kafka_principal import KafkaPrincipal
from kafkapy.protocol.api_keys import API_NAMES
from kafkapy.protocol.header import RequestHeader, encode_response
from kafkapy.protocol.message import Message
from kafkapy.server import request_logger
from kafkapy.server.auth.acl_authorizer import SUPPORTED_OPERATIONS, authorization_error, operations_bits

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
    request_log: Any = None  # the request's JSON, kept only while kafka.request.logger is at DEBUG

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

    def authorize(self, operation: AclOperation, resource_type: ResourceType, name: str = CLUSTER_NAME,
                  log_if_denied: bool = True) -> bool:
        """May this request's principal perform operation on the resource? (True without an authorizer.) A denial
        is logged (kafka.authorizer.logger, INFO) unless log_if_denied is False: a check that only filters or
        probes, as Kafka's logIfDenied."""
        authorizer = self.server.authorizer
        return authorizer is None or authorizer.authorize(self.principal, self.client_host, operation,
                                                          resource_type, name, API_NAMES.get(self.header.api_key, ""),
                                                          log_if_denied=log_if_denied)

    def require(self, operation: AclOperation, resource_type: ResourceType, name: str = CLUSTER_NAME) -> None:
        """Raise Kafka's *_AUTHORIZATION_FAILED error of the resource type unless authorized; the dispatcher
        answers it (whole request) with the error code in every error field."""
        if not self.authorize(operation, resource_type, name):
            raise authorization_error(resource_type, name)

    def authorized_operations(self, resource_type: ResourceType, name: str = CLUSTER_NAME) -> int:
        """The authorized_operations bit set (Metadata, DescribeCluster, DescribeGroups) of this principal on the
        resource: every supported operation without an authorizer, as Kafka."""
        authorizer = self.server.authorizer
        if authorizer is None:
            return operations_bits(SUPPORTED_OPERATIONS.get(resource_type, ()))
        return authorizer.authorized_operations(self.principal, self.client_host, resource_type, name)

    def respond(self, body: Message) -> None:
        chunks = encode_response(self.header.api_key, self.header.api_version, self.header.correlation_id, body)
        throttle = self._throttle_ms(chunks)
        if throttle > 0 and hasattr(body, "throttle_time_ms"):
            if throttle > body.throttle_time_ms:
                body.throttle_time_ms = throttle
                chunks = encode_response(self.header.api_key, self.header.api_version, self.header.correlation_id,
                                         body)
        send_start_ns = self.server.time.nanoseconds()
        self.channel.send_response(self.request, chunks, throttle)
        metrics = self.server.metrics
        if metrics is not None:
            metrics.request_metrics.record(self, body, send_start_ns, throttle)
        if self.request_log is not None:
            request_logger.log_completed(self, body, send_start_ns, self.server.time.nanoseconds(), throttle)

    def no_response(self) -> None:
        # acks=0 produce: nothing to tell the client, but the quota still mutes its connection (Kafka 2.0+).
        send_start_ns, throttle = self.server.time.nanoseconds(), self._throttle_ms(())
        self.channel.send_response(self.request, None, throttle)
        metrics = self.server.metrics
        if metrics is not None:
            metrics.request_metrics.record(self, None, send_start_ns, throttle)
        if self.request_log is not None:
            request_logger.log_completed(self, None, send_start_ns, self.server.time.nanoseconds(), throttle)

    def _throttle_ms(self, chunks: Sequence[Any]) -> int:
        quotas = self.server.quotas
        if quotas is None:
            return 0
        return quotas.throttle_ms(self.header.api_key, self.principal.name, self.client_id, len(self.request.frame),
                                  chunks, self.handler_ns, self.quota_exempt)

    def close(self) -> None:
        self.channel.close_connection(self.request)
