"""KafkaController.validateFeatureUpdate's answers (server/feature_control.py) and the FeatureZNode JSON."""

from __future__ import annotations

from kafkapy.server.feature_control import (
    SAFE_DOWNGRADE,
    UNSAFE_DOWNGRADE,
    UPGRADE,
    FeatureError,
    FeatureUpdateItem,
    decode_feature_znode,
    default_finalized_features,
    encode_feature_znode,
    validate_update,
    validate_updates,
)


def err(message: str) -> FeatureError:
    return FeatureError("INVALID_REQUEST", message)


def test_validate_update_rules() -> None:
    k = "kraft.version"
    assert validate_update(FeatureUpdateItem(k, 1, UPGRADE), 0) == 1
    assert validate_update(FeatureUpdateItem(k, 1, UPGRADE), None) == 1
    assert validate_update(FeatureUpdateItem("", 1, UPGRADE), None) == err("Feature name can not be empty.")
    assert validate_update(FeatureUpdateItem(k, 1, 9), 0) == err("Received unknown upgrade type.")
    assert validate_update(FeatureUpdateItem(k, 0, SAFE_DOWNGRADE), 1) is None
    assert validate_update(FeatureUpdateItem(k, 0, UNSAFE_DOWNGRADE), None) == err(
        "Can not delete non-existing finalized feature.")
    assert validate_update(FeatureUpdateItem(k, 0, UPGRADE), 1) == err(
        "Can not provide versionLevel: 0 less than 1 without setting the SAFE downgradeType in the request.")
    assert validate_update(FeatureUpdateItem(k, 1, SAFE_DOWNGRADE), 1) == err(
        "Can not downgrade a finalized feature from existing versionLevel:1 to the same value.")
    assert validate_update(FeatureUpdateItem("metadata.version", 20, UPGRADE), 21) == err(
        "Can not downgrade finalized feature from existing versionLevel:21 to provided versionLevel:20 without "
        "setting the downgradeType to SAFE in the request.")
    assert validate_update(FeatureUpdateItem("metadata.version", 21, SAFE_DOWNGRADE), 20) == err(
        "When the downgradeType is set to SAFE in the request, the provided versionLevel:21 can not be greater "
        "than existing versionLevel:20.")
    assert validate_update(FeatureUpdateItem("group.version", 1, UPGRADE), None) == err(
        "Could not apply finalized feature update because the provided feature is not supported.")
    assert validate_update(FeatureUpdateItem(k, 5, UPGRADE), 0) == err(
        "Could not apply finalized feature update because the provided versionLevel:5 is lower than the supported "
        "minVersion:0.")


def test_validate_updates_targets_and_znode_json() -> None:
    target, errors = validate_updates({"kraft.version": 0}, [FeatureUpdateItem("kraft.version", 1, UPGRADE),
                                                             FeatureUpdateItem("x", 1, UPGRADE)])
    assert target == {"kraft.version": 1} and errors["kraft.version"] is None and errors["x"] is not None
    assert default_finalized_features() == {"metadata.version": 21, "kraft.version": 0}
    node = encode_feature_znode({"kraft.version": 1})
    assert node == {"features": {"kraft.version": {"max_version_level": 1}}, "version": 2, "status": 1}
    assert decode_feature_znode(b'{"features":{"kraft.version":{"max_version_level":1}},"version":2,"status":1}') \
        == {"kraft.version": 1}
    assert decode_feature_znode({"features": {"a": {"max_version_level": 1}}, "version": 2, "status": 0}) == {}
