"""Feature flags of a ZooKeeper-era broker (KIP-584): Kafka 3.9's BrokerFeatures, the /feature znode, and the
controller's UpdateFeatures rules.

- Supported features (what ApiVersions v3+ advertises): `metadata.version` 1..21 (3.0-IV1 .. 3.9-IV0) and
  `kraft.version` 0..1, as BrokerFeatures.defaultSupportedFeatures for 3.9 (transaction.version's production
  level is 0 in 3.9, so it is not listed).
- Finalized features live in Kafka's `/feature` znode (FeatureZNode v2 JSON:
  `{"features":{"kraft.version":{"max_version_level":0}},"version":2,"status":1}`); its zkVersion is the
  finalized features' epoch. Created on first use with BrokerFeatures.defaultFinalizedFeatures (every supported
  feature at its max, kraft.version at 0) - the node Kafka's controller writes at its first election. As a ZK-mode
  FinalizedFeatures, the broker never reports metadata.version as finalized.
- `validate_updates` is KafkaController.processFeatureUpdatesWithActiveController's per-update checks.

Thread-safety: FinalizedFeatureCache is safe from any thread (one lock; the store's node watch invalidates it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafkapy.common.feature_names import KRAFT_VERSION, METADATA_VERSION
from kafkapy.zk.zk_data import FEATURE_PATH

ENABLED = 1

SUPPORTED_FEATURES: dict[str, tuple[int, int]] = {METADATA_VERSION: (1, 21), KRAFT_VERSION: (0, 1)}

# UpdateFeatures upgrade types (FeatureUpdate.UpgradeType).
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


def default_finalized_features() -> dict[str, int]:
    """BrokerFeatures.defaultFinalizedFeatures: each supported feature at its max, kraft.version at 0."""
    return {name: (0 if name == KRAFT_VERSION else hi) for name, (_, hi) in SUPPORTED_FEATURES.items()}


def encode_feature_znode(features: dict[str, int]) -> dict[str, Any]:
    return {"features": {name: {"max_version_level": level} for name, level in sorted(features.items())},
            "version": 2, "status": ENABLED}


def decode_feature_znode(data: Any) -> dict[str, int]:
    if isinstance(data, (bytes, str)):
        data = json.loads(data)
    if not isinstance(data, dict) or data.get("status") != ENABLED:
        return {}
    return {name: int(v["max_version_level"]) for name, v in (data.get("features") or {}).items()}


@dataclass(frozen=True)
class FeatureUpdateItem:
    feature: str
    max_version_level: int
    upgrade_type: int  # UPGRADE / SAFE_DOWNGRADE / UNSAFE_DOWNGRADE (v0's allow_downgrade maps to SAFE)


@dataclass(frozen=True)
class FeatureError:
    code: str  # Kafka error name (INVALID_REQUEST)
    message: str


def _new_level(item: FeatureUpdateItem) -> int | FeatureError:
    supported = SUPPORTED_FEATURES.get(item.feature)
    if supported is None:
        return FeatureError("INVALID_REQUEST", "Could not apply finalized feature update because the provided "
                            "feature is not supported.")
    lo, hi = supported
    if item.max_version_level < lo or item.max_version_level > hi:
        return FeatureError("INVALID_REQUEST", "Could not apply finalized feature update because the provided "
                            f"versionLevel:{item.max_version_level} is lower than the supported minVersion:{lo}.")
    return item.max_version_level


def validate_update(item: FeatureUpdateItem, existing: int | None) -> int | None | FeatureError:
    """The new level, None (delete the feature) or the error, as KafkaController.validateFeatureUpdate."""
    if not item.feature:
        return FeatureError("INVALID_REQUEST", "Feature name can not be empty.")
    if item.upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return FeatureError("INVALID_REQUEST", "Received unknown upgrade type.")
    if item.max_version_level < 1:
        if item.upgrade_type in (SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):  # a delete request
            if existing is None:
                return FeatureError("INVALID_REQUEST", "Can not delete non-existing finalized feature.")
            return None
        return FeatureError("INVALID_REQUEST", f"Can not provide versionLevel: {item.max_version_level} less than 1 "
                            "without setting the SAFE downgradeType in the request.")
    if existing is not None:
        if item.max_version_level == existing:
            verb = "downgrade" if item.upgrade_type == SAFE_DOWNGRADE else "upgrade"
            return FeatureError("INVALID_REQUEST", f"Can not {verb} a finalized feature from existing "
                                f"versionLevel:{existing} to the same value.")
        if item.max_version_level < existing and item.upgrade_type != SAFE_DOWNGRADE:
            return FeatureError("INVALID_REQUEST", f"Can not downgrade finalized feature from existing "
                                f"versionLevel:{existing} to provided versionLevel:{item.max_version_level} without "
                                "setting the downgradeType to SAFE in the request.")
        if item.upgrade_type != UPGRADE and item.max_version_level > existing:
            return FeatureError("INVALID_REQUEST", "When the downgradeType is set to SAFE in the request, the "
                                f"provided versionLevel:{item.max_version_level} can not be greater than existing "
                                f"versionLevel:{existing}.")
    return _new_level(item)


def validate_updates(existing: dict[str, int], items: Iterable[FeatureUpdateItem]
                     ) -> tuple[dict[str, int], dict[str, FeatureError | None]]:
    """(target finalized features, per-feature error or None)."""
    target = dict(existing)
    errors: dict[str, FeatureError | None] = {}
    for item in items:
        result = validate_update(item, existing.get(item.feature))
        if isinstance(result, FeatureError):
            errors[item.feature] = result
            continue
        if result is None:
            target.pop(item.feature, None)
        else:
            target[item.feature] = result
        errors[item.feature] = None
    return target, errors


class FinalizedFeatureCache:
    """The finalized features and epoch from the store's /feature node (Kafka's FinalizedFeatureCache).

    `store` is the controller's MetadataStore (get_feature_znode / set_feature_znode / watch_path_node)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._cached: tuple[dict[str, int], int] | None = None
        self._watching = False
        self._generation = 0  # bumped by every invalidation: a read that raced one is not cached

    def _invalidate(self) -> None:
        with self._lock:
            self._cached = None
            self._generation += 1

    def get(self) -> tuple[dict[str, int], int]:
        """(every finalized feature as stored, epoch = the node's version)."""
        with self._lock:
            if self._cached is not None:
                return self._cached
            generation = self._generation
        data, version = self._store.get_feature_znode()
        if data is None:  # Kafka's controller writes it at its first election; a race with another broker is fine
            self._store.set_feature_znode(encode_feature_znode(default_finalized_features()), -1)
            data, version = self._store.get_feature_znode()
        value = (decode_feature_znode(data), version)
        with self._lock:
            watch, self._watching = not self._watching, True
        if watch:  # outside the lock: the store may call back at once
            self._store.watch_path_node(FEATURE_PATH, self._invalidate)
            return value
        with self._lock:
            if generation == self._generation:
                self._cached = value
        return value

    def reported(self) -> tuple[dict[str, int], int]:
        """What ApiVersions carries in ZooKeeper mode: metadata.version is never reported as finalized."""
        features, epoch = self.get()
        return {k: v for k, v in features.items() if k != METADATA_VERSION}, epoch

    def update(self, items: Iterable[FeatureUpdateItem]) -> dict[str, FeatureError | None]:
        """Apply UpdateFeatures on the active controller: validate against the reported features, write the node
        when the target differs (FEATURE_UPDATE_FAILED for the valid ones when the write loses a race)."""
        existing, _ = self.reported()
        _, version = self._store.get_feature_znode()
        target, errors = validate_updates(existing, items)
        if target != existing:  # Kafka rewrites the node with the target only (a stored metadata.version goes)
            if not self._store.set_feature_znode(encode_feature_znode(target), version):
                errors = {k: (e if e is not None else FeatureError("FEATURE_UPDATE_FAILED", ""))
                          for k, e in errors.items()}
            self._invalidate()
        return errors
