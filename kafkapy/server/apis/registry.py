"""The API handler registry: which handler serves which api key at which versions.

Each module in server/apis/ registers its handlers with `@api(ApiKey.X, min_version, max_version)`.
ApiVersions is answered from this registry, so the broker advertises exactly what its handlers
implement. A handler takes (ctx, request_body) and returns the response body, or DEFERRED when a
purgatory operation will call `ctx.respond(...)` later, or NO_RESPONSE (acks=0 produce).

Thread-safety: registration happens at import time (one thread); lookups afterwards are read-only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.protocol.message import Message

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

DEFERRED = object()
NO_RESPONSE = object()

# The request body is the api's generated request class (Any: each handler names its own).
Handler = Callable[["RequestContext", Any], Any]
ErrorResponse = Callable[[Message, int, int], Message]


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


def api(api_key: int, min_version: int, max_version: int, error_response: ErrorResponse | None = None):
    """Register the decorated function as the handler of `api_key` for [min_version, max_version].

    `error_response(request, version, error_code)` builds the whole-request error answer used when the
    handler raises a KafkaError; without it the dispatcher fills every `error_code` field it finds.
    """

    def register(fn: Handler) -> Handler:
        _REGISTRY[int(api_key)] = ApiSpec(int(api_key), min_version, max_version, fn, error_response)
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
