"""The API handler registry: which handler serves which api key at which versions.

Each module in server/apis/ registers its handlers with `@api(ApiKey.X, min_version, max_version)`.
ApiVersions is answered from this registry, so the broker advertises exactly what its handlers
implement. A handler takes (ctx, request_body) and returns the response body, or DEFERRED when a
purgatory operation will call `ctx.respond(...)` later, or NO_RESPONSE (acks=0 produce): both are members
of the `Deferred` enum, so a handler is annotated `-> FetchResponse | Deferred` and mypy checks each
registration against `Handler`.

Thread-safety: registration happens at import time (one thread); lookups afterwards are read-only.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, TypeVar, overload

from kafkapy.protocol.message import Message

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext


class Deferred(enum.Enum):
    """What a handler returns instead of a response body."""

    DEFERRED = "deferred"  # a purgatory operation or callback calls ctx.respond(...) later
    NO_RESPONSE = "no_response"  # the client expects no answer (acks=0 produce)


DEFERRED: Final = Deferred.DEFERRED
NO_RESPONSE: Final = Deferred.NO_RESPONSE

RequestT = TypeVar("RequestT", bound=Message)
ResponseT = TypeVar("ResponseT", bound=Message)

# A handler and its whole-request error answer as the dispatcher calls them: the api's generated request class
# in (already decoded with it), its response out.
Handler = Callable[["RequestContext", Message], "Message | Deferred"]
ErrorResponse = Callable[[Message, int, int], Message]
# The same as a handler module defines them, with its own request and response classes.
TypedHandler = Callable[["RequestContext", RequestT], "ResponseT | Deferred"]
TypedErrorResponse = Callable[[RequestT, int, int], ResponseT]


@dataclass(frozen=True, slots=True)
class ApiSpec:
    api_key: int
    min_version: int
    max_version: int
    handler: Handler
    error_response: ErrorResponse | None


_REGISTRY: dict[int, ApiSpec] = {}

# The handler modules, imported once by load_handlers(); one module per API family.
HANDLER_MODULES = (
    "api_versions",
    "metadata",
    "produce",
    "fetch",
    "list_offsets",
    "topics",
    "configs",
    "cluster",
    "producer_ids",
    "log_dirs",
    "groups",
    "offsets",
    "update_metadata",
    "to_controller",
    "leader_and_isr",
    "sasl_authentication",
    "scram_credentials",
    "client_quotas",
    "transactions",
    "acls",
    "delegation_tokens",
    "features",
)


class Registration(Protocol):
    """What `api(...)` returns without an error_response: registers any handler, keeping its own types."""

    def __call__(self, fn: TypedHandler[RequestT, ResponseT], /) -> TypedHandler[RequestT, ResponseT]: ...


@overload
def api(api_key: int, min_version: int, max_version: int) -> Registration: ...


@overload
def api(api_key: int, min_version: int, max_version: int, error_response: TypedErrorResponse[RequestT, ResponseT]
        ) -> Callable[[TypedHandler[RequestT, ResponseT]], TypedHandler[RequestT, ResponseT]]: ...


def api(api_key: int, min_version: int, max_version: int,
        error_response: TypedErrorResponse[RequestT, ResponseT] | None = None
        ) -> Registration | Callable[[TypedHandler[RequestT, ResponseT]], TypedHandler[RequestT, ResponseT]]:
    """Register the decorated function as the handler of `api_key` for [min_version, max_version].

    `error_response(request, version, error_code)` builds the whole-request error answer used when the
    handler raises a KafkaError; without it the dispatcher fills every `error_code` field it finds. With it,
    mypy checks that the handler takes the request class and answers the response class it names.
    """

    def register(fn: TypedHandler[RequestT, ResponseT]) -> TypedHandler[RequestT, ResponseT]:
        # The dispatcher decodes the body with this api's request class, so both get the class they name
        # (RequestT is narrower than the Message the dispatcher's types say: the ignores below are that widening).
        handler: Handler = fn  # type: ignore[assignment]
        on_error: ErrorResponse | None = error_response  # type: ignore[assignment]
        _REGISTRY[int(api_key)] = ApiSpec(int(api_key), min_version, max_version, handler, on_error)
        return fn

    return register


def load_handlers() -> dict[int, ApiSpec]:
    """Import every handler module. One that is missing or fails to import stops start-up with its error
    (a broker silently lacking an API would answer UNSUPPORTED_VERSION for it)."""
    for name in HANDLER_MODULES:
        try:
            importlib.import_module(f"kafkapy.server.apis.{name}")
        except Exception as e:
            raise ImportError(f"The request handler module kafkapy.server.apis.{name} failed to import: {e!r}") from e
    return _REGISTRY


def get(api_key: int) -> ApiSpec | None:
    return _REGISTRY.get(api_key)


def supported() -> dict[int, ApiSpec]:
    return dict(_REGISTRY)
