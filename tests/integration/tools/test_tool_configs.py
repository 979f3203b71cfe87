"""`kafkapy configs` against the in-process kafkapy broker: Kafka's describe/alter lines."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def b(kafkapy_broker) -> list[str]:
    return ["--bootstrap-server", kafkapy_broker.bootstrap]


def test_topic_configs_alter_describe_delete(cli, b, unique_topic):
    t = unique_topic
    assert cli("topics", "--create", "--topic", t, *b).rc == 0
    r = cli("configs", "--describe", "--topic", t, *b)
    assert (r.rc, r.lines) == (0, [f"Dynamic configs for topic {t} are:"])

    r = cli("configs", "--alter", "--topic", t, "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]", *b)
    assert (r.rc, r.text, r.err) == (0, f"Completed updating config for topic {t}.\n", "")
    r = cli("configs", "--describe", "--entity-type", "topics", "--entity-name", t, *b)
    assert r.lines == [
        f"Dynamic configs for topic {t} are:",
        "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete,"
        " DEFAULT_CONFIG:log.cleanup.policy=delete}",
        "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}",
    ]
    # kafka-topics shows the overrides too.
    assert cli("topics", "--describe", "--topic", t, *b).lines[0].endswith(
        "Configs: cleanup.policy=compact,delete,retention.ms=1000")

    r = cli("configs", "--alter", "--topic", t, "--delete-config", "retention.ms", *b)
    assert r.text == f"Completed updating config for topic {t}.\n"
    r = cli("configs", "--alter", "--topic", t, "--delete-config", "retention.ms", *b)
    assert (r.rc, r.out, r.err) == (1, b"", "Invalid config(s): retention.ms\n")
    r = cli("configs", "--describe", "--topic", t, "--output", "json", *b)
    [doc] = json.loads(r.out)
    assert doc["entityName"] == t and [c["name"] for c in doc["configs"]] == ["cleanup.policy"]
    assert doc["configs"][0]["source"] == "DYNAMIC_TOPIC_CONFIG"


def test_add_config_file_and_all(cli, b, unique_topic, tmp_path):
    t = unique_topic
    assert cli("topics", "--create", "--topic", t, *b).rc == 0
    f = tmp_path / "add.properties"
    f.write_text("segment.ms=3600000\nmax.message.bytes=2048\n")
    r = cli("configs", "--alter", "--topic", t, "--add-config-file", str(f), *b)
    assert r.rc == 0
    r = cli("configs", "--describe", "--topic", t, "--all", *b)
    assert r.lines[0] == f"All configs for topic {t} are:"
    body = r.lines[1:]
    assert body == sorted(body)  # sorted by name
    assert ("  max.message.bytes=2048 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:max.message.bytes=2048, "
            "DEFAULT_CONFIG:message.max.bytes=1048588}") in body
    assert any(line.startswith("  min.insync.replicas=1 sensitive=false synonyms={DEFAULT_CONFIG:") for line in body)


def test_missing_topic_and_bad_values(cli, b, unique_topic):
    r = cli("configs", "--describe", "--topic", "no-such-topic", *b)
    assert (r.rc, r.text) == (0, "The topic 'no-such-topic' doesn't exist and doesn't have dynamic config.\n")
    assert cli("topics", "--create", "--topic", unique_topic, *b).rc == 0
    r = cli("configs", "--alter", "--topic", unique_topic, "--add-config", "retention.ms=abc", *b)
    assert r.rc == 1 and r.out == b""
    assert r.err.startswith(f"Error while executing config command with args '--alter --topic {unique_topic} ")
    assert "InvalidConfigurationException" in r.err and r.err.count("\n") == 1


def test_broker_and_broker_default_configs(cli, b):
    r = cli("configs", "--alter", "--broker", "0", "--add-config", "log.cleaner.threads=2", *b)
    assert (r.rc, r.text) == (0, "Completed updating config for broker 0.\n")
    r = cli("configs", "--describe", "--broker", "0", *b)
    assert r.lines == ["Dynamic configs for broker 0 are:",
                       "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, "
                       "DEFAULT_CONFIG:log.cleaner.threads=1}"]
    r = cli("configs", "--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
            "log.retention.ms=604800000", *b)
    assert r.text == "Completed updating default config for brokers in the cluster.\n"
    r = cli("configs", "--describe", "--entity-type", "brokers", *b)
    assert r.lines[0] == "Dynamic configs for broker 0 are:"
    assert r.lines[-2:] == ["Default configs for brokers in the cluster are:",
                            "  log.retention.ms=604800000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
                            "log.retention.ms=604800000}"]
    r = cli("configs", "--alter", "--broker-defaults", "--delete-config", "log.retention.ms", *b)
    assert r.rc == 0
    r = cli("configs", "--alter", "--broker", "0", "--delete-config", "log.cleaner.threads", *b)
    assert r.rc == 0
    assert cli("configs", "--describe", "--broker", "0", *b).lines == ["Dynamic configs for broker 0 are:"]
    r = cli("configs", "--describe", "--broker", "7", *b)
    assert r.text == "The broker '7' doesn't exist and doesn't have dynamic config.\n"


def test_broker_loggers(cli, b):
    r = cli("configs", "--describe", "--broker-logger", "0", *b)
    assert r.rc == 0 and r.lines[0] == "Dynamic configs for broker-logger 0 are:"
    assert any(line.startswith("  root=") for line in r.lines[1:])
    r = cli("configs", "--alter", "--broker-logger", "0", "--add-config", "no.such.logger.anywhere=DEBUG", *b)
    assert (r.rc, r.err) == (1, "Invalid broker logger(s): no.such.logger.anywhere\n")
