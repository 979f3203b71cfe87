"""KafkaConfig: server.properties parsing, --override, defaults, validation, listeners, describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkapy.server.kafka_config import (
    CONFIG_DEFS,
    ConfigError,
    ConfigSource,
    ConfigType,
    EndPoint,
    KafkaConfig,
    generate_cluster_id,
    parse_listeners,
    parse_override,
    validate_cluster_id,
)

SERVER_PROPERTIES = r"""# A server.properties in Kafka's style
! bang comments too
broker.id=3
listeners = PLAINTEXT://127.0.0.1:0
log.dirs:/tmp/a,\
    /tmp/b
num.io.threads 4
   num.network.threads=2
log.retention.minutes=90
auto.create.topics.enable = FALSE
log.cleanup.policy=compact, delete
weird\ key=tab\tvalue
unicode=caf\u00e9
zookeeper.connect=localhost:2181/kafka
my.custom.key=kept
empty.value=
"""


@pytest.fixture
def props_file(tmp_path: Path) -> Path:
    path = tmp_path / "server.properties"
    path.write_text(SERVER_PROPERTIES, encoding="utf-8")
    return path


def test_properties_file_parsing(props_file: Path) -> None:
    config = KafkaConfig.from_properties(props_file, {})
    assert config.broker_id == 3
    assert config.get_int("broker.id") == 3
    assert config.listeners == "PLAINTEXT://127.0.0.1:0"
    assert config.log_dirs == ["/tmp/a", "/tmp/b"]
    assert config.num_io_threads == 4
    assert config.num_network_threads == 2
    assert config.log_retention_time_ms == 90 * 60_000
    assert config.auto_create_topics_enable is False
    assert config.get_list("log.cleanup.policy") == ["compact", "delete"]
    assert config.originals["weird key"] == "tab\tvalue"
    assert config.originals["unicode"] == "café"
    assert config.originals["my.custom.key"] == "kept"
    assert config.originals["empty.value"] == ""
    assert config.get("my.custom.key") == "kept"
    assert config.uses_zookeeper and config.zookeeper_connect == "localhost:2181/kafka"


def test_overrides_win_over_file(props_file: Path) -> None:
    config = KafkaConfig.from_properties(props_file, {"num.io.threads": "16", "log.retention.ms": "1000"})
    assert config.num_io_threads == 16
    assert config.log_retention_time_ms == 1000
    assert config.source_of("num.io.threads") == ConfigSource.STATIC_BROKER_CONFIG


def test_kafka_defaults_with_a_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.properties"
    path.write_text("", encoding="utf-8")
    config = KafkaConfig.from_properties(path, {})
    assert config.broker_id == 0
    assert config.listeners == "PLAINTEXT://:9092"
    assert config.log_dirs == ["/tmp/kafka-logs"]
    expected = {
        "num.network.threads": 3,
        "num.io.threads": 8,
        "queued.max.requests": 500,
        "socket.request.max.bytes": 104857600,
        "socket.send.buffer.bytes": 102400,
        "socket.receive.buffer.bytes": 102400,
        "connections.max.idle.ms": 600000,
        "num.partitions": 1,
        "default.replication.factor": 1,
        "auto.create.topics.enable": True,
        "delete.topic.enable": True,
        "message.max.bytes": 1048588,
        "replica.fetch.max.bytes": 1048576,
        "log.segment.bytes": 1073741824,
        "log.retention.hours": 168,
        "log.retention.bytes": -1,
        "log.retention.check.interval.ms": 300000,
        "log.index.size.max.bytes": 10485760,
        "log.index.interval.bytes": 4096,
        "log.cleanup.policy": ["delete"],
        "min.insync.replicas": 1,
        "offsets.topic.num.partitions": 50,
        "offsets.topic.replication.factor": 3,
        "offsets.retention.minutes": 10080,
        "group.initial.rebalance.delay.ms": 3000,
        "group.min.session.timeout.ms": 6000,
        "group.max.session.timeout.ms": 1800000,
        "transaction.state.log.replication.factor": 3,
        "transaction.state.log.min.isr": 2,
        "zookeeper.connect": None,
        "zookeeper.session.timeout.ms": 18000,
        "replica.lag.time.max.ms": 30000,
        "replica.fetch.wait.max.ms": 500,
        "num.replica.fetchers": 1,
        "unclean.leader.election.enable": False,
        "auto.leader.rebalance.enable": True,
        "compression.type": "producer",
        "log.message.timestamp.type": "CreateTime",
        "fetch.max.bytes": 57671680,
        "log.flush.interval.messages": 2**63 - 1,
    }
    values = config.values()
    for key, value in expected.items():
        assert values[key] == value, key
    assert config.log_retention_time_ms == 168 * 3_600_000
    assert config.log_roll_time_ms == 168 * 3_600_000
    assert config.log_roll_time_jitter_ms == 0
    assert config.log_flush_interval_ms == 2**63 - 1
    assert not config.uses_zookeeper
    assert config.internal_topic_replication_factor("offsets.topic.replication.factor", 1) == 1
    assert config.internal_topic_replication_factor("offsets.topic.replication.factor", 5) == 3


def test_embedded_defaults_without_a_file() -> None:
    config = KafkaConfig.from_properties(None, {})
    assert config.listener_endpoints() == [EndPoint("PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT")]
    assert config.log_dirs == ["./kafkapy-data"]
    assert config.node_id == 0 and config.broker_id == 0
    assert config.source_of("listeners") == ConfigSource.DEFAULT_CONFIG
    entry = config.config_entries()["listeners"]
    assert entry.value == "PLAINTEXT://127.0.0.1:9092" and entry.is_default


def test_embedded_defaults_yield_to_overrides() -> None:
    config = KafkaConfig.from_properties(None, {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": "/x"})
    assert config.listener_endpoints()[0].port == 0
    assert config.log_dirs == ["/x"]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("num.io.threads", "abc", "Invalid value abc for configuration num.io.threads: Not a number of type INT"),
        ("num.io.threads", "0", "Invalid value 0 for configuration num.io.threads: Value must be at least 1"),
        ("num.io.threads", "2147483648", "Not a number of type INT"),
        ("log.retention.bytes", "1.5", "Invalid value 1.5 for configuration log.retention.bytes: Not a number of type LONG"),
        ("offsets.topic.replication.factor", "40000", "Not a number of type SHORT"),
        ("delete.topic.enable", "yes", "delete.topic.enable: Expected value to be either true or false"),
        ("log.cleaner.min.cleanable.ratio", "x", "Not a number of type DOUBLE"),
        ("log.cleaner.min.cleanable.ratio", "1.5", "Value must be no more than 1"),
        ("compression.type", "brotli", "compression.type: String must be one of: uncompressed, zstd"),
        ("log.cleanup.policy", "delete,forever", "Invalid value forever for configuration log.cleanup.policy"),
        ("listeners", "PLAINTEXT//x:1", "configuration listeners: Unable to parse"),
        ("listeners", "FOO://x:1", "No security protocol defined for listener FOO"),
        ("listeners", "PLAINTEXT://a:1,PLAINTEXT://b:2", "Each listener must have a different name"),
        ("listeners", "PLAINTEXT://a:70000", "port 70000 out of range"),
        ("advertised.listeners", "PLAINTEXT://0.0.0.0:9092", "nonroutable meta-address 0.0.0.0"),
        ("node.id", "5", "node.id"),
    ],
)
def test_validation_errors_name_the_key(key: str, value: str, message: str) -> None:
    overrides = {key: value}
    if key == "node.id":
        overrides["broker.id"] = "4"
    with pytest.raises(ConfigError) as info:
        KafkaConfig.from_properties(None, overrides)
    text = str(info.value)
    assert message in text
    assert "\n" not in text


def test_values_are_trimmed_and_signed() -> None:
    config = KafkaConfig({"num.io.threads": "  +12 ", "log.retention.ms": "-1", "broker.rack": " r1 "})
    assert config.num_io_threads == 12
    assert config.log_retention_time_ms == -1
    assert config.broker_rack == "r1"


def test_python_values_accepted() -> None:
    config = KafkaConfig({"num.io.threads": 2, "delete.topic.enable": False, "log.cleanup.policy": ["compact"]})
    assert config.num_io_threads == 2
    assert config.delete_topic_enable is False
    assert config.originals["delete.topic.enable"] == "false"
    assert config.log_cleanup_policy == ["compact"]


def test_missing_file_is_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Cannot read config file"):
        KafkaConfig.from_properties(tmp_path / "nope.properties", {})


def test_retention_precedence() -> None:
    assert KafkaConfig({"log.retention.hours": "2"}).log_retention_time_ms == 7_200_000
    assert KafkaConfig({"log.retention.hours": "2", "log.retention.minutes": "3"}).log_retention_time_ms == 180_000
    both = KafkaConfig({"log.retention.minutes": "3", "log.retention.ms": "5"})
    assert both.log_retention_time_ms == 5
    assert KafkaConfig({"log.roll.ms": "77"}).log_roll_time_ms == 77
    assert KafkaConfig({"log.flush.interval.ms": "9"}).log_flush_interval_ms == 9


def test_broker_id_synonyms() -> None:
    assert KafkaConfig({"node.id": "7"}).broker_id == 7
    assert KafkaConfig({"broker.id": "7", "node.id": "7"}).node_id == 7
    assert KafkaConfig({}).broker_id == 0
    assert not KafkaConfig({}).is_set("broker.id")


def test_accessors_and_types() -> None:
    config = KafkaConfig({})
    assert config.get_bool("delete.topic.enable") is True
    assert config.get_long("log.retention.bytes") == -1
    assert config.get_double("log.cleaner.min.cleanable.ratio") == 0.5
    assert config.get_string("log.message.timestamp.type") == "CreateTime"
    with pytest.raises(TypeError):
        config.get_int("log.message.timestamp.type")
    with pytest.raises(KeyError):
        config.get_int("no.such.key")
    with pytest.raises(AttributeError):
        _ = config.no_such_key


def test_listener_parsing_and_advertised_address() -> None:
    eps = parse_listeners("plaintext://:9092, PLAINTEXT2://[::1]:0", {"PLAINTEXT": "PLAINTEXT", "PLAINTEXT2": "PLAINTEXT"})
    assert eps == [EndPoint("PLAINTEXT", "", 9092), EndPoint("PLAINTEXT2", "::1", 0)]
    assert eps[1].connection_string() == "PLAINTEXT2://[::1]:0"
    config = KafkaConfig({"listeners": "PLAINTEXT://127.0.0.1:0"})
    assert config.advertised_address("PLAINTEXT", 45678) == ("127.0.0.1", 45678)
    config = KafkaConfig({"listeners": "PLAINTEXT://127.0.0.1:0", "advertised.listeners": "PLAINTEXT://broker1:9093"})
    assert config.advertised_address("plaintext", 45678) == ("broker1", 9093)
    with pytest.raises(ConfigError):
        config.advertised_address("SSL", 1)


def test_config_entries_for_describe_configs() -> None:
    config = KafkaConfig(
        {"log.retention.hours": "5", "ssl.key.password": "secret", "log.cleaner.io.max.bytes.per.second": "1.0E8"}
    )
    entries = config.config_entries()
    assert set(entries) == set(CONFIG_DEFS)
    num_io = entries["num.io.threads"]
    assert (num_io.value, num_io.default_value, num_io.source, num_io.type, num_io.sensitive) == (
        "8", "8", ConfigSource.DEFAULT_CONFIG, ConfigType.INT, False
    )
    hours = entries["log.retention.hours"]
    assert hours.value == "5" and hours.source == ConfigSource.STATIC_BROKER_CONFIG and not hours.is_default
    retention_ms = entries["log.retention.ms"]
    assert retention_ms.value is None
    assert ("log.retention.hours", "5", ConfigSource.STATIC_BROKER_CONFIG) in retention_ms.synonyms
    pw = entries["ssl.key.password"]
    assert pw.value is None and pw.sensitive and pw.type == ConfigType.PASSWORD
    assert entries["log.cleaner.io.max.bytes.per.second"].value == "1.0E8"
    assert entries["log.cleanup.policy"].value == "delete"
    assert "secret" not in repr(config)
    assert "ssl.key.password = [hidden]" in config.values_log_string()


def test_unknown_keys_warned_and_kept(caplog: pytest.LogCaptureFixture) -> None:
    config = KafkaConfig({"foo.bar": "1"})
    assert config.originals == {"foo.bar": "1"}
    assert "The configuration 'foo.bar' was supplied but isn't a known config." in caplog.text


def test_parse_override() -> None:
    assert parse_override("num.io.threads=4") == ("num.io.threads", "4")
    assert parse_override("a=b=c") == ("a", "b=c")
    with pytest.raises(ConfigError):
        parse_override("novalue")


def test_cluster_id() -> None:
    cid = generate_cluster_id()
    assert len(cid) == 22 and validate_cluster_id(cid) == cid
    assert validate_cluster_id("MkU3OEVBNTcwNTJENDM2Qk") == "MkU3OEVBNTcwNTJENDM2Qk"
    with pytest.raises(ConfigError):
        validate_cluster_id("short")


def test_broker_synonym_defaults_agree_with_storage_log_config() -> None:
    from kafkapy.storage.log_config import BROKER_SYNONYM_DEFS

    config = KafkaConfig({})
    for name, d in BROKER_SYNONYM_DEFS.items():
        assert name in CONFIG_DEFS, name
        assert CONFIG_DEFS[name].type.name == d.type, name
        assert config.get(name) == d.default, name
    with pytest.raises(ConfigError, match="log.segment.bytes: Value must be at least 14"):
        KafkaConfig({"log.segment.bytes": "13"})
    assert KafkaConfig({"log.segment.bytes": "14"}).get("log.segment.bytes") == 14
    with pytest.raises(ConfigError, match="compression.gzip.level"):
        KafkaConfig({"compression.gzip.level": "0"})
