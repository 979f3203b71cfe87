"""UpdateFeatures (57) v0-1 as a ZooKeeper-era broker answers it, and the feature cache ApiVersions reads.

KafkaApis.handleUpdateFeatures: CLUSTER_AUTHORIZATION_FAILED without ALTER on the cluster, NOT_CONTROLLER on a
broker that is not the active controller, else the controller's per-feature checks
(server/feature_control.validate_updates) and one write of Kafka's /feature znode; errors ride in the per-feature
results (a top-level error leaves them empty, as UpdateFeaturesResponse.createWithErrors). validate_only (v1) checks
without writing (Kafka 3.9's ZooKeeper controller ignores the flag and applies the update).
Thread-safety: the FinalizedFeatureCache is made once under a lock and is thread-safe itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import UpdateFeaturesRequest, UpdateFeaturesResponse
from kafkapy.server.apis.handler_support import controller_of, feature_cache
from kafkapy.server.apis.registry import api
from kafkapy.server.feature_control import (
    SAFE_DOWNGRADE,
    UPGRADE,
    FeatureUpdateItem,
    validate_updates,
)

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

def _top_level(code: int, message: str | None = None) -> UpdateFeaturesResponse:
    return UpdateFeaturesResponse(throttle_time_ms=0, error_code=code, error_message=message, results=[])


def _error_response(request: UpdateFeaturesRequest, version: int, code: int) -> UpdateFeaturesResponse:
    return _top_level(code)


@api(ApiKey.UPDATE_FEATURES, 0, 1, error_response=_error_response)
def handle_update_features(ctx: RequestContext, request: UpdateFeaturesRequest) -> UpdateFeaturesResponse:
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER):
        return _top_level(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    controller = controller_of(ctx)
    cache = feature_cache(ctx.server)
    if not controller.is_active or cache is None:
        return _top_level(ErrorCode.NOT_CONTROLLER)
    items = []
    for u in request.feature_updates:
        if ctx.api_version == 0:
            kind = SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE
        else:
            kind = u.upgrade_type
        items.append(FeatureUpdateItem(u.feature, u.max_version_level, kind))
    if ctx.api_version >= 1 and request.validate_only:
        errors = validate_updates(cache.reported()[0], items)[1]
    else:
        errors = cache.update(items)
    R = UpdateFeaturesResponse.UpdatableFeatureResult
    results = [R(feature=name, error_code=0 if e is None else int(ErrorCode[e.code]),
                 error_message=None if e is None else (e.message or None))
               for name, e in errors.items()]
    return UpdateFeaturesResponse(throttle_time_ms=0, error_code=0, error_message=None, results=results)
