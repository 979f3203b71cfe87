"""ConfigHelper (DescribeConfigs' per-config facts) and IncrementalAlterConfigs' operation rules, without a broker."""

from __future__ import annotations

import pytest

from kafkapy.common.errors import InvalidConfigError, InvalidRequestError
from kafkapy.server.config_describer import (
    OP_APPEND,
    OP_DELETE,
    OP_SET,
    OP_SUBTRACT,
    ConfigHelper,
    prepare_incremental_configs,
    topic_config_defaults,
    topic_config_types,
    validate_dynamic_broker_configs,
)
from kafkapy.server.kafka_config import KafkaConfig

TOPIC, DYN_BROKER, DYN_DEFAULT, STATIC, DEFAULT = 1, 2, 3, 4, 5


def helper(static: dict | None = None, dynamic_broker: dict | None = None, dynamic_default: dict | None = None):
    config = KafkaConfig.from_properties(None, {"log.dirs": "/tmp/x", **(static or {})})
    return ConfigHelper(config, dynamic_broker or {}, dynamic_default or {})


def entries(described) -> dict:
    return {e.name: (e.value, e.source, [(s.name, s.value, s.source) for s in e.synonyms]) for e in described}


def test_topic_defaults_and_override() -> None:
    got = entries(helper().describe_topic({"retention.ms": "100"}, include_synonyms=True))
    assert got["retention.ms"] == ("100", TOPIC, [("retention.ms", "100", TOPIC)])
    assert got["segment.bytes"] == ("1073741824", DEFAULT, [("log.segment.bytes", "1073741824", DEFAULT)])
    assert got["segment.ms"] == ("604800000", DEFAULT, [])
    assert got["flush.ms"] == ("9223372036854775807", DEFAULT, [])
    assert got["min.cleanable.dirty.ratio"] == ("0.5", DEFAULT, [("log.cleaner.min.cleanable.ratio", "0.5", DEFAULT)])
    assert got["compression.type"] == ("producer", DEFAULT, [("compression.type", "producer", DEFAULT)])
    assert "internal.segment.bytes" not in got


def test_synonym_order_dynamic_then_static_then_default() -> None:
    h = helper(static={"min.insync.replicas": "2"}, dynamic_broker={"min.insync.replicas": "3"},
               dynamic_default={"min.insync.replicas": "2"})
    got = entries(h.describe_topic({}, ["min.insync.replicas"], include_synonyms=True))
    assert got == {"min.insync.replicas": ("3", DYN_BROKER, [
        ("min.insync.replicas", "3", DYN_BROKER), ("min.insync.replicas", "2", DYN_DEFAULT),
        ("min.insync.replicas", "2", STATIC), ("min.insync.replicas", "1", DEFAULT)])}


def test_retention_synonyms_follow_kafkas_primary_synonym_rule() -> None:
    got = entries(helper(static={"log.retention.minutes": "5"}).describe_topic({}, ["retention.ms"], True))
    assert got == {"retention.ms": ("300000", DEFAULT, [])}
    got = entries(helper(static={"log.retention.ms": "7"}).describe_topic({}, ["retention.ms"], True))
    assert got == {"retention.ms": ("7", STATIC, [("log.retention.ms", "7", STATIC),
                                                  ("log.retention.hours", "168", DEFAULT)])}


def test_synonyms_only_when_asked_and_documentation() -> None:
    (e,) = helper().describe_topic({}, ["segment.bytes"])
    assert (e.synonyms, e.documentation, e.config_type, e.read_only, e.is_sensitive) == ((), None, 3, False, False)
    (e,) = helper().describe_topic({}, ["segment.bytes"], include_documentation=True)
    assert e.documentation and "log.segment.bytes" in e.documentation


def test_broker_entries() -> None:
    h = helper(static={"num.io.threads": "4", "custom.thing": "v"}, dynamic_default={"log.cleaner.threads": "2"})
    got = {e.name: e for e in h.describe_broker(True, include_synonyms=True)}
    io = got["num.io.threads"]
    assert (io.value, io.source, io.read_only) == ("4", STATIC, False)
    assert [(s.name, s.value, s.source) for s in io.synonyms] == [("num.io.threads", "4", STATIC),
                                                                  ("num.io.threads", "8", DEFAULT)]
    assert (got["log.cleaner.threads"].value, got["log.cleaner.threads"].source) == ("2", DYN_DEFAULT)
    assert (got["zookeeper.connect"].value, got["zookeeper.connect"].source, got["zookeeper.connect"].read_only) == (
        None, DEFAULT, True)
    assert (got["custom.thing"].is_sensitive, got["custom.thing"].value) == (True, None)
    default_only = h.describe_broker(False, include_synonyms=True)
    assert [(e.name, e.value, e.source, [s.source for s in e.synonyms]) for e in default_only] == [
        ("log.cleaner.threads", "2", DYN_DEFAULT, [DYN_DEFAULT])]


def ops(*items):
    return prepare_incremental_configs(items, {"cleanup.policy": "compact", "retention.ms": "5"}, topic_config_types(),
                                       topic_config_defaults(), "Unknown topic config name: ")


def test_incremental_operations() -> None:
    assert ops(("segment.ms", OP_SET, "9"), ("retention.ms", OP_DELETE, None)) == {"cleanup.policy": "compact",
                                                                                   "segment.ms": "9"}
    assert ops(("cleanup.policy", OP_APPEND, "delete,compact"))["cleanup.policy"] == "compact,delete"
    assert ops(("cleanup.policy", OP_SUBTRACT, "compact"))["cleanup.policy"] == ""
    # APPEND starts from the default when there is no override.
    got = prepare_incremental_configs([("cleanup.policy", OP_APPEND, "compact")], {}, topic_config_types(),
                                      topic_config_defaults(), "")
    assert got == {"cleanup.policy": "delete,compact"}
    with pytest.raises(InvalidConfigError, match="Can't SUBTRACT to key retention.ms because its type is not LIST."):
        ops(("retention.ms", OP_SUBTRACT, "5"))
    with pytest.raises(InvalidConfigError, match="Unknown topic config name: nope"):
        ops(("nope", OP_APPEND, "x"))
    with pytest.raises(InvalidRequestError):
        ops(("retention.ms", 7, "x"))


def test_dynamic_broker_validation() -> None:
    validate_dynamic_broker_configs({"log.retention.ms": "10", "log.cleaner.threads": "3"}, per_broker=True)
    with pytest.raises(InvalidRequestError, match=r"Cannot update these configs dynamically: Set\(broker.id, listeners\)"):
        validate_dynamic_broker_configs({"listeners": "x", "broker.id": "1"}, per_broker=True)
    with pytest.raises(InvalidRequestError, match="log.segment.bytes"):
        validate_dynamic_broker_configs({"log.segment.bytes": "10"}, per_broker=False)
    with pytest.raises(InvalidRequestError, match="Not a number"):
        validate_dynamic_broker_configs({"log.retention.ms": "soon"}, per_broker=False)
