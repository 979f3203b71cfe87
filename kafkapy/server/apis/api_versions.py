"""ApiVersions (api key 18): advertises, per api key, the version range its registered handler serves.

The advertised ranges come from the registry, so they are exactly what the handlers implement.
Thread-safety: stateless.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import ApiVersionsRequest, ApiVersionsResponse
from kafkapy.server import request_logger
from kafkapy.server.apis import registry
from kafkapy.server.apis.registry import api

if TYPE_CHECKING:
    from kafkapy.server.broker_services import BrokerServices
    from kafkapy.server.request_context import RequestContext

UNSUPPORTED_VERSION = 35


def api_versions_response(error_code: int = 0) -> ApiVersionsResponse:
    """The full answer; with UNSUPPORTED_VERSION only ApiVersions' own range, as Kafka sends (KIP-511)."""
    specs = list(registry.supported().values())
    if error_code == UNSUPPORTED_VERSION:
        specs = [s for s in specs if s.api_key == ApiKey.API_VERSIONS]
    keys = [
        ApiVersionsResponse.ApiVersion(api_key=spec.api_key, min_version=spec.min_version,
                                       max_version=spec.max_version)
        for spec in sorted(specs, key=lambda s: s.api_key)
    ]
    return ApiVersionsResponse(error_code=error_code, api_keys=keys, throttle_time_ms=0)


@api(ApiKey.API_VERSIONS, 0, 4)
def handle_api_versions(ctx: RequestContext, request: ApiVersionsRequest) -> ApiVersionsResponse:
    response = api_versions_response()
    if ctx.api_version >= 3:
        add_features(ctx.server, response)
        request_logger.remember_client(ctx.request.connection_id, request.client_software_name,
                                       request.client_software_version)
    return response


def add_features(services: BrokerServices, response: ApiVersionsResponse) -> None:
    """ApiVersions v3+: the broker's supported features and the finalized ones with their epoch (KIP-584)."""
    from kafkapy.server.apis.handler_support import feature_cache
    from kafkapy.server.feature_control import SUPPORTED_FEATURES

    response.supported_features = [
        ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=lo, max_version=hi)
        for name, (lo, hi) in sorted(SUPPORTED_FEATURES.items())]
    cache = feature_cache(services)
    if cache is None:
        return
    try:
        finalized, epoch = cache.reported()
    except Exception:  # the store unreachable: ApiVersions still answers (no finalized features, epoch -1)
        return
    response.finalized_features_epoch = epoch
    response.finalized_features = [
        ApiVersionsResponse.FinalizedFeatureKey(name=name, max_version_level=level, min_version_level=level)
        for name, level in sorted(finalized.items())]
