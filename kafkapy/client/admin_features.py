"""Feature flags behind AdminClient.describe_features / update_features (KIP-584), over AdminCalls.

`describe_features()` sends ApiVersions (v3+) to the least loaded broker and reads its tagged fields:
supported features (name -> SupportedVersionRange), finalized features (name -> FinalizedVersionRange) and
their epoch (None when the broker sent -1). `update_features({name: FeatureUpdate}, validate_only)` sends
UpdateFeatures (v0-1) to the controller; per-feature errors are returned (None = done), a top-level error
is raised. Thread-safety: as AdminClient.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkapy.client.admin_calls import AdminCalls, error_or_none
from kafkapy.client.errors import error_from_code
from kafkapy.common.errors import KafkaError
from kafkapy.protocol import messages as M

API_VERSIONS, UPDATE_FEATURES = 18, 57

# FeatureUpdate.UpgradeType
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


@dataclass(frozen=True)
class SupportedVersionRange:
    min_version: int
    max_version: int


@dataclass(frozen=True)
class FinalizedVersionRange:
    min_version_level: int
    max_version_level: int


@dataclass(frozen=True)
class FeatureMetadata:
    finalized_features: dict[str, FinalizedVersionRange]
    finalized_features_epoch: int | None
    supported_features: dict[str, SupportedVersionRange]


@dataclass(frozen=True)
class FeatureUpdate:
    max_version_level: int
    upgrade_type: int = UPGRADE


def describe_features(calls: AdminCalls, timeout_ms: float | None = None) -> FeatureMetadata:
    def build(version: int) -> Any:
        return M.ApiVersionsRequest(client_software_name="kafkapy", client_software_version="1")

    def handle(resp: M.ApiVersionsResponse) -> FeatureMetadata:
        if resp.error_code:
            raise error_from_code(resp.error_code)
        finalized = {f.name: FinalizedVersionRange(f.min_version_level, f.max_version_level)
                     for f in (resp.finalized_features or [])}
        supported = {f.name: SupportedVersionRange(f.min_version, f.max_version)
                     for f in (resp.supported_features or [])}
        epoch = resp.finalized_features_epoch
        return FeatureMetadata(finalized, None if epoch is None or epoch < 0 else epoch, supported)

    return calls.call(None, build, API_VERSIONS, timeout_ms, handle, "describeFeatures", min_version=3)


def update_features(calls: AdminCalls, updates: Mapping[str, FeatureUpdate], validate_only: bool = False,
                    timeout_ms: float | None = None) -> dict[str, KafkaError | None]:
    if not updates:
        raise ValueError("Feature updates can not be null or empty.")
    timeout = calls.timeout(timeout_ms)

    def build(version: int) -> Any:
        R = M.UpdateFeaturesRequest
        keys = []
        for name, u in updates.items():
            if version == 0:
                if u.upgrade_type == UNSAFE_DOWNGRADE:
                    raise error_from_code(35, "UpdateFeatures v0 cannot do an unsafe downgrade")
                keys.append(R.FeatureUpdateKey(feature=name, max_version_level=u.max_version_level,
                                               allow_downgrade=u.upgrade_type == SAFE_DOWNGRADE))
            else:
                keys.append(R.FeatureUpdateKey(feature=name, max_version_level=u.max_version_level,
                                               upgrade_type=u.upgrade_type))
        if version == 0 and validate_only:
            raise error_from_code(35, "UpdateFeatures v0 has no validateOnly")
        return R(timeout_ms=int(timeout), feature_updates=keys, validate_only=validate_only)

    def handle(resp: M.UpdateFeaturesResponse) -> dict[str, KafkaError | None]:
        if resp.error_code:
            raise error_from_code(resp.error_code, resp.error_message)
        out: dict[str, KafkaError | None] = {r.feature: error_or_none(r.error_code, r.error_message)
                                             for r in (resp.results or [])}
        for name in updates:
            out.setdefault(name, error_from_code(-1, "The controller response did not contain a result for "
                                                     f"feature {name}"))
        return out

    return calls.call(calls.controller, build, UPDATE_FEATURES, timeout, handle, "updateFeatures", max_version=1)
