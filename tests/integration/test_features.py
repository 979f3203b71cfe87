"""Feature flags on an embedded broker: ApiVersions v3+ carries Kafka 3.9's supported features and the finalized
ones with their epoch, `kafkapy features` prints Kafka's describe lines, and upgrade / downgrade / disable get the
ZooKeeper-era controller's answers (KafkaController.validateFeatureUpdate) and move the epoch. One broker."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from kafkapy.cli.features import main as features_main
from kafkapy.protocol.messages import ApiVersionsRequest, UpdateFeaturesRequest
from kafkapy.testing import KafkaBroker

ck_admin = pytest.importorskip("confluent_kafka.admin")


@pytest.fixture(scope="module")
def broker() -> Iterator[KafkaBroker]:
    with KafkaBroker() as b:
        yield b


def run(capsys: pytest.CaptureFixture[str], bootstrap: str, *argv: str) -> tuple[int, list[str], str]:
    code = features_main(["--bootstrap-server", bootstrap, *argv])
    cap = capsys.readouterr()
    return code, cap.out.splitlines(), cap.err


def describe_lines(kraft: int, epoch: int) -> list[str]:
    return [f"Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: {kraft}"
            f"\tEpoch: {epoch}",
            "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: 3.9-IV0\t"
            f"FinalizedVersionLevel: UNKNOWN 0\tEpoch: {epoch}"]


def test_api_versions_v3_carries_features(broker, wire_client) -> None:
    client = wire_client(broker.port)
    resp = client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    assert [(f.name, f.min_version, f.max_version) for f in resp.supported_features] == [
        ("kraft.version", 0, 1), ("metadata.version", 1, 21)]
    # ZooKeeper-era FinalizedFeatures: metadata.version is never reported, kraft.version starts at 0
    assert [(f.name, f.min_version_level, f.max_version_level) for f in resp.finalized_features] == [
        ("kraft.version", 0, 0)]
    assert resp.finalized_features_epoch >= 0
    old = client.request(ApiVersionsRequest(), 2)
    assert old.error_code == 0 and len(old.api_keys) > 40
    # librdkafka negotiates ApiVersions v3 and still works
    md = ck_admin.AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)
    assert list(md.brokers) == [0]


def test_describe_upgrade_downgrade_disable(broker, capsys) -> None:
    bs = broker.bootstrap
    code, out, _ = run(capsys, bs, "describe")
    assert code == 0 and out == describe_lines(0, 0)

    code, out, _ = run(capsys, bs, "upgrade", "--feature", "kraft.version=1", "--dry-run")
    assert (code, out) == (0, ["kraft.version can be upgraded to 1."])
    assert run(capsys, bs, "describe")[1] == describe_lines(0, 0)  # a dry run writes nothing

    code, out, _ = run(capsys, bs, "upgrade", "--feature", "kraft.version=1")
    assert (code, out) == (0, ["kraft.version was upgraded to 1."])
    assert run(capsys, bs, "describe")[1] == describe_lines(1, 1)

    code, out, err = run(capsys, bs, "downgrade", "--feature", "kraft.version=1")
    assert code == 1
    assert out == ["Could not downgrade kraft.version to 1. Can not downgrade a finalized feature from existing "
                   "versionLevel:1 to the same value."]
    assert err == "1 out of 1 operation(s) failed.\n"

    code, out, err = run(capsys, bs, "upgrade", "--feature", "kraft.version=0")
    assert code == 1 and out == ["Could not upgrade kraft.version to 0. Can not provide versionLevel: 0 less than 1 "
                                 "without setting the SAFE downgradeType in the request."]

    code, out, _ = run(capsys, bs, "upgrade", "--feature", "kraft.version=2", "--feature", "unknown.feature=1")
    assert code == 1
    assert out == ["Could not upgrade kraft.version to 2. Could not apply finalized feature update because the "
                   "provided versionLevel:2 is lower than the supported minVersion:0.",
                   "Could not upgrade unknown.feature to 1. Could not apply finalized feature update because the "
                   "provided feature is not supported."]

    code, out, _ = run(capsys, bs, "disable", "--feature", "kraft.version")
    assert (code, out) == (0, ["kraft.version was disabled."])
    code, out, _ = run(capsys, bs, "describe", "--output", "json")
    assert json.loads(out[0]) == [
        {"feature": "kraft.version", "supportedMinVersion": 0, "supportedMaxVersion": 1, "finalizedVersionLevel": 0,
         "epoch": 2},
        {"feature": "metadata.version", "supportedMinVersion": 1, "supportedMaxVersion": 21,
         "finalizedVersionLevel": 0, "epoch": 2}]

    code, out, err = run(capsys, bs, "disable", "--feature", "kraft.version")
    assert code == 1 and out == ["Could not disable kraft.version. Can not delete non-existing finalized feature."]


def test_metadata_version_parsing(broker, capsys) -> None:
    bs = broker.bootstrap
    code, out, _ = run(capsys, bs, "upgrade", "--metadata", "3.9", "--dry-run")
    assert (code, out) == (0, ["metadata.version can be upgraded to 21."])
    code, out, err = run(capsys, bs, "upgrade", "--metadata", "2.8")
    assert code == 1 and err.startswith("Unsupported metadata.version 2.8. Supported metadata.version are 3.3-IV0, "
                                        "3.3-IV1, 3.3-IV2, 3.3-IV3, 3.4-IV0,")
    assert err.rstrip().endswith("3.8-IV0, 3.9-IV0")
    code, _, err = run(capsys, bs, "upgrade", "--feature", "kraft.version")
    assert code == 1 and err == "Can't parse feature=level string kraft.version: equals sign not found.\n"
    code, _, err = run(capsys, bs, "upgrade")
    assert code == 1 and err == "You must specify at least one feature to upgrade\n"


def test_update_features_needs_the_active_controller_and_a_feature_name(broker, wire_client) -> None:
    R = UpdateFeaturesRequest
    resp = wire_client(broker.port).request(R(timeout_ms=5000, feature_updates=[
        R.FeatureUpdateKey(feature="", max_version_level=1, upgrade_type=1)]), 1)
    assert resp.error_code == 0
    assert [(r.feature, r.error_code, r.error_message) for r in resp.results] == [
        ("", 42, "Feature name can not be empty.")]
