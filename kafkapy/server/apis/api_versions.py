"""ApiVersions (api key 18): advertises, per api key, the version range its registered handler serves.

The advertised ranges come from the registry, so they are exactly what the handlers implement.
Thread-safety: stateless.
"""

from __future__ import annotations

from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import ApiVersionsRequest, ApiVersionsResponse
from kafkapy.server.apis import registry
from kafkapy.server.apis.registry import api

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
def handle_api_versions(ctx, request: ApiVersionsRequest) -> ApiVersionsResponse:
    return api_versions_response()
