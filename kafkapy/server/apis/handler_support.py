"""Helpers the request handlers share, so that handler modules import none of each other (each stays a leaf):
reaching the controller and answering once its futures are done without holding a handler thread (the "topic"
purgatory), the ConfigHelper over static and dynamic broker configs, Kafka's cluster authorized-operations rule, and the
broker's FinalizedFeatureCache (made on first use). Not a handler module: it registers no API.
No byte format. Thread-safety: stateless but for the feature cache's creation, under a lock.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import KafkaError, NotControllerError, UnknownServerError
from kafkapy.protocol.message import Message
from kafkapy.server.apis import registry
from kafkapy.server.apis.registry import DEFERRED, Deferred
from kafkapy.server.config_describer import ConfigHelper
from kafkapy.server.feature_control import FinalizedFeatureCache
from kafkapy.server.purgatory.delayed_controller_operation import complete_when_done

if TYPE_CHECKING:
    from kafkapy.controller.controller import Controller
    from kafkapy.server.broker_services import BrokerServices
    from kafkapy.server.request_context import RequestContext
    from kafkapy.server.security.delegation_token_manager import DelegationTokenManager

log = logging.getLogger("kafka.server.KafkaApis")


def controller_of(ctx: RequestContext) -> Controller:
    controller = ctx.server.controller
    if controller is None:
        raise NotControllerError("This broker has no active controller.")
    return controller


def wait_ms_for(ctx: RequestContext, timeout_ms: int) -> int:
    """How long a handler waits for the controller: the request's timeout, or request.timeout.ms if <= 0."""
    return timeout_ms if timeout_ms > 0 else ctx.server.config.get_int("request.timeout.ms")


def _error_body(request: Message, version: int, code: int) -> Message:
    """The whole-request error answer of a controller-bound api (each registers its error_response)."""
    spec = registry.get(request.API_KEY)
    if spec is None or spec.error_response is None:
        raise RuntimeError(f"{type(request).__name__} has no registered error response")
    return spec.error_response(request, version, code)


def respond_after_controller(ctx: RequestContext, request: Message, futures: list[concurrent.futures.Future], timeout_ms: int,
                             build: Callable[[], Message]) -> Deferred:
    """Answer once the controller's futures are done (or the request times out) without holding this handler
    thread: `build()` makes the response from the finished futures (read them with `controller_result`)."""

    def finish() -> None:
        try:
            body = build()
        except KafkaError as e:
            body = _error_body(request, ctx.api_version, e.code)
        except Exception:
            log.exception("Could not answer %s v%d", type(request).__name__, ctx.api_version)
            body = _error_body(request, ctx.api_version, UnknownServerError.code)
        try:
            ctx.respond(body)
        except Exception:  # a completion thread must never die of one client's response
            log.exception("Could not send the %s response", type(request).__name__)

    complete_when_done(ctx.server.topic_purgatory, futures, wait_ms_for(ctx, timeout_ms), finish)
    return DEFERRED


def config_helper(ctx: RequestContext) -> ConfigHelper:
    """A ConfigHelper over this broker's static config and its stored dynamic broker configs."""
    controller = ctx.server.controller
    broker_id = ctx.server.config.broker_id
    dynamic_broker: dict[str, str] = {}
    dynamic_default: dict[str, str] = {}
    if controller is not None:
        dynamic_broker = controller.broker_config_overrides(broker_id)
        dynamic_default = controller.broker_config_overrides(None)
    return ConfigHelper(ctx.server.config, dynamic_broker, dynamic_default)


def cluster_authorized_operations(ctx: RequestContext) -> int:
    """Kafka's rule for Metadata v8-10 and DescribeCluster: 0 without DESCRIBE on the cluster, else the bit set."""
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER):
        return 0
    return ctx.authorized_operations(ResourceType.CLUSTER)


_feature_cache_lock = threading.Lock()


def feature_cache(services: BrokerServices) -> FinalizedFeatureCache | None:
    """The broker's FinalizedFeatureCache over its controller's store (None without a controller)."""
    cache = services.feature_cache
    if cache is None and services.controller is not None:
        with _feature_cache_lock:
            cache = services.feature_cache
            if cache is None:
                cache = FinalizedFeatureCache(services.controller.store)
                services.feature_cache = cache
    return cache


def delegation_token_manager(services: BrokerServices) -> DelegationTokenManager:
    """The broker's one DelegationTokenManager over its controller's store, made on first use (its module is
    imported only then: a broker without token requests or SCRAM logins never loads it)."""
    manager = services.delegation_token_manager
    if manager is None:
        from kafkapy.server.security.delegation_token_manager import DelegationTokenManager

        with _feature_cache_lock:
            manager = services.delegation_token_manager
            if manager is None:
                manager = DelegationTokenManager(services.config, services.controller.store,
                                                 services.time.milliseconds)
                services.delegation_token_manager = manager
    return manager
