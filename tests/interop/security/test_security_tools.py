"""The tools against a SASL_SSL listener, configured Kafka's way: `--command-config` (and the per-tool
spellings `--producer.config`, `--consumer.config`) with security.protocol, sasl.mechanism,
sasl.jaas.config and ssl.truststore.*; a wrong password is one error line and a non-zero exit."""

from __future__ import annotations

import pytest
from security_helpers import add_scram_user, run_tool

pytestmark = pytest.mark.timeout(240)


def write_client_config(path, broker, user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> str:
    module = "scram.ScramLoginModule" if mechanism.startswith("SCRAM") else "plain.PlainLoginModule"
    path.write_text(
        "security.protocol=SASL_SSL\n"
        f"sasl.mechanism={mechanism}\n"
        f'sasl.jaas.config=org.apache.kafka.common.security.{module} required username="{user}" '
        f'password="{password}";\n'
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={broker.pki.ca}\n"
    )
    return str(path)


@pytest.fixture(scope="module")
def secured(secure_broker, tmp_path_factory):
    add_scram_user(secure_broker, "tooluser", "tool-secret", "SCRAM-SHA-512")
    path = tmp_path_factory.mktemp("tools") / "client.properties"
    return secure_broker, write_client_config(path, secure_broker, "tooluser", "tool-secret")


def test_topics_create_list_describe(secured):
    broker, config = secured
    bootstrap = broker.bootstrap("SASL_SSL")
    r = run_tool("topics", "--bootstrap-server", bootstrap, "--command-config", config, "--create", "--topic",
                 "secure-tools", "--partitions", "1", "--replication-factor", "1")
    assert r.rc == 0, r.err
    assert r.out.strip() == "Created topic secure-tools."
    r = run_tool("topics", "--bootstrap-server", bootstrap, "--command-config", config, "--list")
    assert r.rc == 0, r.err
    assert "secure-tools" in r.out.splitlines()
    r = run_tool("topics", "--bootstrap-server", bootstrap, "--command-config", config, "--describe", "--topic",
                 "secure-tools")
    assert r.rc == 0, r.err
    assert "PartitionCount: 1" in r.out
    assert broker.principals_of("adminclient-1") >= {("SASL_SSL", "User:tooluser")}


def test_console_producer_and_consumer(secured):
    broker, config = secured
    bootstrap = broker.bootstrap("SASL_SSL")
    r = run_tool("console-producer", "--bootstrap-server", bootstrap, "--producer.config", config, "--topic",
                 "secure-console", "--property", "parse.key=true", stdin="k1\tv1\nk2\tv2\nk3\tv3\n")
    assert r.rc == 0, r.err
    r = run_tool("console-consumer", "--bootstrap-server", bootstrap, "--consumer.config", config, "--topic",
                 "secure-console", "--from-beginning", "--max-messages", "3", "--property", "print.key=true",
                 "--timeout-ms", "30000")
    assert r.rc == 0, r.err
    assert r.out.splitlines() == ["k1\tv1", "k2\tv2", "k3\tv3"]
    r = run_tool("console-consumer", "--bootstrap-server", bootstrap, "--command-config", config, "--topic",
                 "secure-console", "--from-beginning", "--max-messages", "1", "--timeout-ms", "30000")
    assert r.rc == 0, r.err
    assert r.out.splitlines() == ["v1"]


def test_configs_alter_and_describe(secured):
    broker, config = secured
    bootstrap = broker.bootstrap("SASL_SSL")
    r = run_tool("topics", "--bootstrap-server", bootstrap, "--command-config", config, "--create", "--topic",
                 "secure-configs")
    assert r.rc == 0, r.err
    r = run_tool("configs", "--bootstrap-server", bootstrap, "--command-config", config, "--alter", "--entity-type",
                 "topics", "--entity-name", "secure-configs", "--add-config", "retention.ms=123456")
    assert r.rc == 0, r.err
    assert r.out.strip() == "Completed updating config for topic secure-configs."
    r = run_tool("configs", "--bootstrap-server", bootstrap, "--command-config", config, "--describe",
                 "--entity-type", "topics", "--entity-name", "secure-configs")
    assert r.rc == 0, r.err
    assert "retention.ms=123456" in r.out


def test_wrong_password_is_one_error_line(secured, tmp_path):
    broker, _ = secured
    config = write_client_config(tmp_path / "bad.properties", broker, "tooluser", "not-the-password")
    r = run_tool("topics", "--bootstrap-server", broker.bootstrap("SASL_SSL"), "--command-config", config, "--list",
                 timeout=60)
    assert r.rc != 0
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert "SASL_AUTHENTICATION_FAILED" in lines[0] or "Authentication failed" in lines[0]
    assert "Traceback" not in r.err


def test_console_consumer_group_and_consumer_groups_tool(secured):
    broker, config = secured
    bootstrap = broker.bootstrap("SASL_SSL")
    r = run_tool("console-producer", "--bootstrap-server", bootstrap, "--command-config", config, "--topic",
                 "secure-group-topic", stdin="a\nb\nc\n")
    assert r.rc == 0, r.err
    # A consumer group: the group coordinator connection logs in too.
    r = run_tool("console-consumer", "--bootstrap-server", bootstrap, "--consumer.config", config, "--topic",
                 "secure-group-topic", "--group", "secure-group", "--from-beginning", "--max-messages", "3",
                 "--timeout-ms", "30000")
    assert r.rc == 0, r.err
    assert r.out.splitlines() == ["a", "b", "c"]
    r = run_tool("consumer-groups", "--bootstrap-server", bootstrap, "--command-config", config, "--list")
    assert r.rc == 0, r.err
    assert "secure-group" in r.out.splitlines()
    r = run_tool("consumer-groups", "--bootstrap-server", bootstrap, "--command-config", config, "--describe",
                 "--group", "secure-group")
    assert r.rc == 0, r.err
    row = next(line.split() for line in r.out.splitlines() if line.startswith("secure-group "))
    assert row[1:5] == ["secure-group-topic", "0", "3", "3"]  # topic, partition, committed offset, log end
