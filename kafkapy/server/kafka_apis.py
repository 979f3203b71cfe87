"""KafkaApis: decodes each request, dispatches it to its registered handler, and maps errors to codes.

This is the one boundary where a raised KafkaError becomes an error code on the wire. Handler
modules live in server/apis/ (one per API family); ApiVersions answers from the registry.

Bad input never takes the broker down: an unknown api key or an undecodable body closes that
connection only (Kafka does the same); an ApiVersions request at a version we do not know gets
UNSUPPORTED_VERSION with the v0 body.

Thread-safety: handle() runs concurrently on every request-handler thread; it keeps no state of
its own beyond the immutable registry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kafkapy.common.errors import KafkaError, UnknownServerError
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.header import RequestHeaderError, decode_request_header
from kafkapy.protocol.message import Message, ProtocolDecodeError
from kafkapy.protocol.messages import request_class, response_class
from kafkapy.server import request_logger
from kafkapy.server.apis import registry
from kafkapy.server.apis.registry import DEFERRED, NO_RESPONSE
from kafkapy.server.network.request_channel import Request, RequestChannel
from kafkapy.server.request_context import RequestContext

if TYPE_CHECKING:
    from kafkapy.server.broker_services import BrokerServices

log = logging.getLogger("kafka.server.KafkaApis")



class KafkaApis:
    def __init__(self, request_channel: RequestChannel, services: BrokerServices) -> None:
        self.channel = request_channel
        self.services = services
        self.handlers = registry.load_handlers()
        # Only the message modules of the APIs we serve are imported (start-up time).
        self.request_classes = {key: _message_class(request_class, key) for key in self.handlers}

    def handle(self, request: Request) -> None:
        try:
            header, body_offset = decode_request_header(request.frame)
        except RequestHeaderError as e:
            log.warning("Closing connection %s: %s", request.connection_id, e)
            self.channel.close_connection(request)
            return
        except ProtocolDecodeError as e:
            log.warning("Closing connection %s: bad request header: %s", request.connection_id, e)
            self.channel.close_connection(request)
            return
        ctx = RequestContext(request, header, self.channel, self.services)
        spec = self.handlers.get(header.api_key)
        if spec is None or not spec.min_version <= header.api_version <= spec.max_version:
            self._unsupported(ctx, spec)
            return
        try:
            body = self.request_classes[header.api_key].decode_from(request.frame, body_offset, header.api_version)[0]
        except ProtocolDecodeError as e:
            log.warning("Closing connection %s: cannot decode %s v%d: %s", request.connection_id,
                        self.request_classes[header.api_key].NAME, header.api_version, e)
            self.channel.close_connection(request)
            return
        if request_logger.enabled():  # Kafka's requestLog: taken before a handler may hand the body on
            ctx.request_log = request_logger.request_json(header.api_key, header.api_version, body)
        start_ns = time.perf_counter_ns()
        try:
            result = spec.handler(ctx, body)
        except KafkaError as e:
            result = self._error_response(spec, body, header.api_version, e.code)
        except Exception:
            log.exception("Error handling %s v%d from %s", self.request_classes[header.api_key].NAME,
                          header.api_version, ctx.client_id)
            result = self._error_response(spec, body, header.api_version, UnknownServerError.code)
        ctx.handler_ns = time.perf_counter_ns() - start_ns
        if result is DEFERRED:
            return
        if result is NO_RESPONSE:
            ctx.no_response()
            return
        ctx.respond(result)

    def _unsupported(self, ctx: RequestContext, spec: registry.ApiSpec | None) -> None:
        header = ctx.header
        if header.api_key == ApiKey.API_VERSIONS:
            from kafkapy.server.apis.api_versions import UNSUPPORTED_VERSION, api_versions_response

            body = api_versions_response(error_code=UNSUPPORTED_VERSION)
            # The client cannot parse a version it did not send successfully: answer with v0.
            ctx.header.api_version = 0
            ctx.respond(body)
            return
        known = request_class(header.api_key)
        log.warning("Closing connection %s: %s v%d is not supported", ctx.request.connection_id,
                    known.NAME if known is not None else f"api key {header.api_key}", header.api_version)
        ctx.close()

    @staticmethod
    def _error_response(spec: registry.ApiSpec, body: Message, version: int, code: int) -> Message:
        if spec.error_response is not None:
            return spec.error_response(body, version, code)
        resp = _message_class(response_class, spec.api_key)()
        fill_error_code(resp, code)
        return resp


def _message_class(lookup: Callable[[int], type[Message] | None], api_key: int) -> type[Message]:
    """The generated class of a registered api (every registered api key is one Kafka defines)."""
    cls = lookup(api_key)
    if cls is None:
        raise ValueError(f"api key {api_key} has no generated message class")
    return cls


def fill_error_code(msg: Message, code: int) -> None:
    """Set every top-level `error_code` field of a response (the generic whole-request error)."""
    if hasattr(msg, "error_code"):
        msg.error_code = code
