"""Dynamic broker configs (IncrementalAlterConfigs on a broker resource) reach the open logs at once and
survive a restart, with Kafka's precedence: topic override > this broker > cluster default > static."""

from __future__ import annotations

from kafkapy.client.admin import AdminClient
from kafkapy.client.admin_types import (
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
    NewTopic,
)
from kafkapy.common.topic_partition import TopicPartition


def _alter(admin: AdminClient, broker: str, key: str, value: str | None) -> None:
    op = AlterConfigOpType.SET if value is not None else AlterConfigOpType.DELETE
    admin.incremental_alter_configs({ConfigResource(ConfigResourceType.BROKER, broker): [AlterConfigOp(key, value, op)]})


def test_dynamic_broker_retention_applies_to_open_logs_and_survives_restart(broker_factory) -> None:
    handle = broker_factory()
    admin = AdminClient({"bootstrap.servers": handle.bootstrap})
    admin.create_topics([NewTopic("dyn-a", 1, 1), NewTopic("dyn-b", 1, 1, configs={"retention.ms": "5000"})])

    def retention(topic: str) -> int:
        return handle.server.log_manager.get_log(TopicPartition(topic, 0)).config.retention_ms

    assert retention("dyn-a") == 7 * 24 * 3600 * 1000
    _alter(admin, "", "log.retention.ms", "3600000")  # the cluster-wide default
    assert retention("dyn-a") == 3_600_000
    assert retention("dyn-b") == 5000  # the topic override wins
    _alter(admin, "0", "log.retention.ms", "1800000")  # this broker's own beats <default>
    assert retention("dyn-a") == 1_800_000

    admin.close()
    handle.restart()
    assert retention("dyn-a") == 1_800_000
    assert retention("dyn-b") == 5000
    admin = AdminClient({"bootstrap.servers": handle.bootstrap})
    _alter(admin, "0", "log.retention.ms", None)
    assert retention("dyn-a") == 3_600_000
    admin.close()


def test_replication_throttles_are_per_broker_dynamic_configs(broker_factory) -> None:
    """kafka-reassign-partitions --throttle sets Kafka's DynamicReplicationConfig keys on each broker."""
    from kafkapy.common.errors import InvalidRequestError

    handle = broker_factory()
    admin = AdminClient({"bootstrap.servers": handle.bootstrap})
    _alter(admin, "0", "leader.replication.throttled.rate", "1048576")
    _alter(admin, "0", "follower.replication.throttled.rate", "1048576")
    described = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "0")])
    entries = next(iter(described.values())).entries
    assert entries["leader.replication.throttled.rate"].value == "1048576"
    assert entries["follower.replication.throttled.rate"].value == "1048576"
    try:
        _alter(admin, "0", "leader.replication.throttled.rate", "-5")
        raise AssertionError("a negative throttle was accepted")
    except InvalidRequestError as e:
        assert "leader.replication.throttled.rate" in str(e)
    _alter(admin, "0", "leader.replication.throttled.rate", None)
    described = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "0")])
    assert "leader.replication.throttled.rate" not in next(iter(described.values())).entries
    admin.close()
