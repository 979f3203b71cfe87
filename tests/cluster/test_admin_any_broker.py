"""Admin requests sent to a broker that is not the controller (raw protocol, so no client routing helps): as
in Kafka 2.x, CreateTopics, CreatePartitions, DeleteTopics and IncrementalAlterConfigs are served by writing
ZooKeeper (topic znodes, /admin/delete_topics, /config/topics + /config/changes) and the controller's watches
do the rest; every broker then applies the new topic config. A deleted topic's replicas are stopped and their
log dirs go on every broker."""

from __future__ import annotations

import os

import pytest

from kafkapy.protocol.messages.create_partitions import CreatePartitionsRequest
from kafkapy.protocol.messages.create_topics import CreateTopicsRequest
from kafkapy.protocol.messages.delete_topics import DeleteTopicsRequest
from kafkapy.protocol.messages.incremental_alter_configs import IncrementalAlterConfigsRequest


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(3)


def test_admin_writes_through_a_non_controller_broker(cluster, wire_client) -> None:
    controller = cluster.controller_id()
    other = next(b for b in cluster.brokers.values() if b.broker_id != controller)
    client = wire_client(other.port)
    R = CreateTopicsRequest
    resp = client.request(R(timeout_ms=30000, topics=[R.CreatableTopic(
        name="via-any", num_partitions=2, replication_factor=3,
        configs=[R.CreatableTopicConfig(name="retention.ms", value="3600000")])]), 5)
    assert [(t.name, t.error_code) for t in resp.topics] == [("via-any", 0)]
    assert (resp.topics[0].num_partitions, resp.topics[0].replication_factor) == (2, 3)
    cluster.wait_for(lambda: all((s := cluster.partition_state("via-any", p)) and s["leader"] >= 0
                                 for p in range(2)), 30, what="leaders elected by the controller")
    assert cluster.zk_json("/config/topics/via-any") == {"version": 1, "config": {"retention.ms": "3600000"}}

    P = CreatePartitionsRequest
    resp = client.request(P(timeout_ms=30000, topics=[P.CreatePartitionsTopic(name="via-any", count=4, assignments=None)]), 2)
    assert [(r.name, r.error_code) for r in resp.results] == [("via-any", 0)]
    cluster.wait_for(lambda: all(cluster.partition_state("via-any", p) for p in range(4)), 30,
                     what="the new partitions' states")

    cluster.wait_for(lambda: len(cluster.describe("via-any", other.bootstrap)) == 4, 30,
                     what="the broker's metadata with the new partitions")
    C = IncrementalAlterConfigsRequest
    resp = client.request(C(validate_only=False, resources=[C.AlterConfigsResource(
        resource_type=2, resource_name="via-any",
        configs=[C.AlterableConfig(name="retention.ms", config_operation=0, value="7200000")])]), 1)
    assert [r.error_code for r in resp.responses] == [0]
    cluster.wait_for(lambda: cluster.zk_json("/config/topics/via-any")["config"] == {"retention.ms": "7200000"}, 10,
                     what="the config in ZooKeeper")
    # Every broker's logs follow the /config/changes notification (Kafka's ZkConfigManager on each broker).
    admin = cluster.admin(cluster.brokers[controller].bootstrap)
    try:
        from kafkapy.client.admin_types import ConfigResource

        def retention() -> str | None:
            config = next(iter(admin.describe_configs([ConfigResource(2, "via-any")]).values()))
            entry = config.get("retention.ms")
            return entry.value if entry is not None else None

        cluster.wait_for(lambda: retention() == "7200000", 20, what="the controller broker seeing the new config")
    finally:
        admin.close()
    cluster.wait_for(lambda: all("Processing override for entityPath: topics/via-any" in b.output()
                                 for b in cluster.brokers.values()), 20, what="every broker applying the override")

    resp = client.request(DeleteTopicsRequest(timeout_ms=30000, topic_names=["via-any"]), 4)
    assert [(r.name, r.error_code) for r in resp.responses] == [("via-any", 0)]
    # The controller removes /brokers/topics/<t> before /admin/delete_topics/<t> (Kafka's order), so wait for both.
    cluster.wait_for(lambda: cluster.zk_json("/brokers/topics/via-any") is None
                     and cluster.zk().exists("/admin/delete_topics/via-any") is None, 30,
                     what="the topic and its deletion request removed")

    def log_dirs_gone() -> bool:
        for broker in cluster.brokers.values():
            names = os.listdir(broker.log_dir)
            if any(n.startswith("via-any-") and not n.endswith("-delete") for n in names):
                return False
        return True

    cluster.wait_for(log_dirs_gone, 30, what="the replicas' log dirs removed on every broker")
