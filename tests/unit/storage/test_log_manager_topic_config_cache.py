"""A topic's new logs share one LogConfig per distinct (topic overrides, broker defaults): creating 100 partitions
builds it once; a changed override or new broker defaults give the next log the new values."""

from __future__ import annotations

from storage_helpers import START_MS

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.log_manager import LogManager


def test_partitions_share_the_topic_config_and_see_changes(tmp_path) -> None:
    overrides: dict[str, dict[str, str]] = {"audit": {"retention.ms": "1000"}}
    mgr = LogManager([str(tmp_path / "d1")], {"log.segment.bytes": 1 << 20}, MockTime(START_MS),
                     topic_configs=lambda topic: overrides.get(topic, {}))
    mgr.startup()
    try:
        logs = [mgr.get_or_create_log(TopicPartition("audit", p)) for p in range(100)]
        assert all(lg.config is logs[0].config for lg in logs)
        assert logs[0].config.retention_ms == 1000 and logs[0].config.segment_size == 1 << 20
        other = mgr.get_or_create_log(TopicPartition("orders", 0))
        assert other.config is not logs[0].config and other.config.retention_ms == 7 * 24 * 3600 * 1000

        overrides["audit"] = {"retention.ms": "2000"}  # the store's overrides changed (AlterConfigs)
        assert mgr.get_or_create_log(TopicPartition("audit", 100)).config.retention_ms == 2000
        mgr.update_broker_defaults({"log.segment.bytes": 1 << 21})
        later = mgr.get_or_create_log(TopicPartition("audit", 101))
        assert later.config.segment_size == 1 << 21 and later.config.retention_ms == 2000
        assert mgr.get_log(TopicPartition("audit", 0)).config.segment_size == 1 << 21  # open logs too
    finally:
        mgr.shutdown()
