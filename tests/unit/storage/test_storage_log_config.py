"""LogConfig: Kafka's topic configs, types, defaults, broker synonyms and validation."""

from __future__ import annotations

import pytest

from kafkapy.storage.errors import InvalidConfigurationError
from kafkapy.storage.log_config import (
    BROKER_SYNONYM_DEFS,
    CONFIG_TYPE_IDS,
    TOPIC_CONFIG_DEFS,
    LogConfig,
    broker_default_for,
    validate_topic_configs,
    value_to_string,
)

KAFKA_DEFAULTS = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "delete.retention.ms": "86400000",
    "file.delete.delay.ms": "60000",
    "flush.messages": "9223372036854775807",
    "flush.ms": "9223372036854775807",
    "index.interval.bytes": "4096",
    "max.compaction.lag.ms": "9223372036854775807",
    "max.message.bytes": "1048588",
    "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0",
    "min.insync.replicas": "1",
    "preallocate": "false",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.index.bytes": "10485760",
    "segment.jitter.ms": "0",
    "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
    "local.retention.ms": "-2",
    "local.retention.bytes": "-2",
    "remote.storage.enable": "false",
    "message.timestamp.before.max.ms": "9223372036854775807",
    "message.timestamp.after.max.ms": "9223372036854775807",
    "leader.replication.throttled.replicas": "",
}


def test_defaults_as_kafka_describes_them():
    described = {name: value for name, value, _ in LogConfig.from_props().describe()}
    for name, value in KAFKA_DEFAULTS.items():
        assert described[name] == value, name
    assert "internal.segment.bytes" not in described


def test_types_synonyms_and_sensitivity():
    assert TOPIC_CONFIG_DEFS["retention.ms"].type == "LONG"
    assert [s.name for s in TOPIC_CONFIG_DEFS["retention.ms"].synonyms] == [
        "log.retention.ms", "log.retention.minutes", "log.retention.hours"]
    assert [s.name for s in TOPIC_CONFIG_DEFS["segment.ms"].synonyms] == ["log.roll.ms", "log.roll.hours"]
    assert [s.name for s in TOPIC_CONFIG_DEFS["flush.ms"].synonyms] == [
        "log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    assert [s.name for s in TOPIC_CONFIG_DEFS["max.message.bytes"].synonyms] == ["message.max.bytes"]
    assert [s.name for s in TOPIC_CONFIG_DEFS["segment.index.bytes"].synonyms] == ["log.index.size.max.bytes"]
    assert [s.name for s in TOPIC_CONFIG_DEFS["file.delete.delay.ms"].synonyms] == ["log.segment.delete.delay.ms"]
    assert [s.name for s in TOPIC_CONFIG_DEFS["min.cleanable.dirty.ratio"].synonyms] == ["log.cleaner.min.cleanable.ratio"]
    assert TOPIC_CONFIG_DEFS["cleanup.policy"].type == "LIST"
    assert TOPIC_CONFIG_DEFS["min.cleanable.dirty.ratio"].type == "DOUBLE"
    assert not any(d.sensitive for d in TOPIC_CONFIG_DEFS.values())
    assert all(d.type in CONFIG_TYPE_IDS for d in TOPIC_CONFIG_DEFS.values())
    for d in TOPIC_CONFIG_DEFS.values():
        for s in d.synonyms:
            assert s.name in BROKER_SYNONYM_DEFS, s.name
    assert BROKER_SYNONYM_DEFS["log.retention.hours"].default == 168


def test_broker_defaults_apply_in_synonym_order():
    assert broker_default_for("retention.ms", {}) == (604800000, None)
    assert broker_default_for("retention.ms", {"log.retention.hours": "1"}) == (3_600_000, "log.retention.hours")
    assert broker_default_for("retention.ms", {"log.retention.minutes": "2", "log.retention.hours": "1"}) == (
        120_000, "log.retention.minutes")
    assert broker_default_for("retention.ms", {"log.retention.ms": "-5"}) == (-1, "log.retention.ms")
    cfg = LogConfig.from_props({"segment.ms": "5000"}, {"log.roll.hours": "2", "log.segment.bytes": "2097152",
                                                         "message.max.bytes": 5000, "log.cleanup.policy": "compact"})
    assert cfg.segment_ms == 5000 and cfg.segment_size == 2097152 and cfg.max_message_size == 5000
    assert cfg.compact and not cfg.delete
    assert cfg.overridden_configs == frozenset({"segment.ms"})
    topic_named = LogConfig.from_props({}, {"retention.ms": 99})
    assert topic_named.retention_ms == 99


@pytest.mark.parametrize(("props", "message"), [
    ({"segment.bytes": "13"}, "Value must be at least 14"),
    ({"nope": "1"}, "Unknown topic config name: nope"),
    ({"cleanup.policy": "compact,shred"}, "String must be one of: compact, delete"),
    ({"retention.ms": "soon"}, "Not a number of type LONG"),
    ({"preallocate": "yes"}, "Expected value to be either true or false"),
    ({"min.cleanable.dirty.ratio": "1.5"}, "Value must be no more than 1"),
    ({"compression.type": "brotli"}, "String must be one of"),
    ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, "conflict topic config setting"),
    ({"leader.replication.throttled.replicas": "x"}, "must be the literal '*'"),
])
def test_validation_errors(props, message):
    with pytest.raises(InvalidConfigurationError, match=message.replace("*", r"\*")):
        validate_topic_configs(props)


def test_values_parse_and_print_like_kafka():
    cfg = LogConfig.from_props({"cleanup.policy": "compact, delete", "min.cleanable.dirty.ratio": "1",
                                "leader.replication.throttled.replicas": "0:1,1:2", "internal.segment.bytes": 1000})
    assert cfg["cleanup.policy"] == ["compact", "delete"]
    assert value_to_string(cfg["cleanup.policy"]) == "compact,delete"
    assert value_to_string(cfg["min.cleanable.dirty.ratio"]) == "1.0"
    assert cfg.segment_size == 1000 and cfg["segment.bytes"] == 1073741824
    assert cfg.max_segment_ms() == 604800000
    assert cfg.with_overrides({"retention.ms": 5}).retention_ms == 5
