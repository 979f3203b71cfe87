"""Feature flags on a ZooKeeper-mode cluster (2 brokers): the finalized features live in Kafka's /feature znode
(FeatureZNode v2 JSON, created with BrokerFeatures.defaultFinalizedFeatures), its zkVersion is the epoch every
broker reports in ApiVersions, `kafkapy features upgrade` reaches the active controller (a broker that is not the
controller answers UpdateFeatures with NOT_CONTROLLER) and the other broker sees the new level and epoch."""

from __future__ import annotations

import pytest

from kafkapy.cli.features import main as features_main
from kafkapy.protocol.messages import ApiVersionsRequest, UpdateFeaturesRequest


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(2)


def finalized(wire_client, port: int) -> tuple[list[tuple[str, int]], int]:
    resp = wire_client(port).request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    return [(f.name, f.max_version_level) for f in resp.finalized_features], resp.finalized_features_epoch


def test_feature_znode_epoch_and_updates_through_the_controller(cluster, wire_client, capsys) -> None:
    controller = cluster.controller_id()
    other = next(b for b in cluster.brokers.values() if b.broker_id != controller)
    assert finalized(wire_client, other.port) == ([("kraft.version", 0)], 0)
    assert cluster.zk_json("/feature") == {"features": {"kraft.version": {"max_version_level": 0},
                                                        "metadata.version": {"max_version_level": 21}},
                                           "version": 2, "status": 1}

    R = UpdateFeaturesRequest
    resp = wire_client(other.port).request(R(timeout_ms=5000, feature_updates=[
        R.FeatureUpdateKey(feature="kraft.version", max_version_level=1, upgrade_type=1)]), 1)
    assert (resp.error_code, resp.results) == (41, [])  # NOT_CONTROLLER, as KafkaApis.handleUpdateFeatures

    assert features_main(["--bootstrap-server", other.bootstrap, "upgrade", "--feature", "kraft.version=1"]) == 0
    assert capsys.readouterr().out == "kraft.version was upgraded to 1.\n"
    # Kafka rewrites the node with the target features only
    assert cluster.zk_json("/feature") == {"features": {"kraft.version": {"max_version_level": 1}},
                                           "version": 2, "status": 1}
    cluster.wait_for(lambda: finalized(wire_client, other.port) == ([("kraft.version", 1)], 1), 15,
                     what="the other broker's cache follows the node")
    assert features_main(["--bootstrap-server", other.bootstrap, "describe"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 1\tEpoch: 1",
        "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: 3.9-IV0\t"
        "FinalizedVersionLevel: UNKNOWN 0\tEpoch: 1"]
