"""`kafkapy topics` against the in-process kafkapy broker: Kafka's exact lines for every action."""

from __future__ import annotations

import json
import re

import pytest

ID = r"[A-Za-z0-9_-]{22}"
ELR = "\tElr: N/A\tLastKnownElr: N/A"


@pytest.fixture
def b(kafkapy_broker) -> list[str]:
    return ["--bootstrap-server", kafkapy_broker.bootstrap]


def test_create_list_describe_alter_delete(cli, b, unique_topic):
    t = unique_topic
    r = cli("topics", "--create", "--topic", t, "--partitions", "3", "--replication-factor", "1", *b)
    assert (r.rc, r.text, r.err) == (0, f"Created topic {t}.\n", "")
    assert t in cli("topics", "--list", *b).lines

    r = cli("topics", "--describe", "--topic", t, *b)
    assert r.rc == 0
    head, *parts = r.lines
    assert re.fullmatch(rf"Topic: {t}\tTopicId: {ID}\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: ", head)
    assert parts == [f"\tTopic: {t}\tPartition: {p}\tLeader: 0\tReplicas: 0\tIsr: 0{ELR}" for p in range(3)]

    r = cli("topics", "--alter", "--topic", t, "--partitions", "5", *b)
    assert (r.rc, r.out, r.err) == (0, b"", "")
    r = cli("topics", "--describe", "--topic", t, *b)
    assert "PartitionCount: 5" in r.lines[0] and len(r.lines) == 6

    r = cli("topics", "--delete", "--topic", t, *b)
    assert (r.rc, r.out, r.err) == (0, b"", "")
    assert t not in cli("topics", "--list", *b).lines


def test_create_with_configs_collision_warning_and_overrides_filter(cli, b, unique_topic):
    t = unique_topic.replace("-", "_", 1) + ".x"
    r = cli("topics", "--create", "--topic", t, "--config", "retention.ms=1000", "--config", "cleanup.policy=compact",
            *b)
    assert r.rc == 0
    assert r.lines == [
        "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. "
        "To avoid issues it is best to use either, but not both.",
        f"Created topic {t}.",
    ]
    r = cli("topics", "--describe", "--topic", re.escape(t), *b)
    # Java's HashMap order of the two overridden configs: cleanup.policy, then retention.ms.
    assert r.lines[0].endswith("\tConfigs: cleanup.policy=compact,retention.ms=1000")
    assert r.lines[0].startswith(f"Topic: {t}\tTopicId: ") and "PartitionCount: 1\tReplicationFactor: 1" in r.lines[0]
    r = cli("topics", "--describe", "--topics-with-overrides", *b)
    assert any(line.startswith(f"Topic: {t}\t") for line in r.lines)
    assert all(not line.startswith("\t") for line in r.lines)  # no partition lines


def test_regex_topics_and_describe_report_filters(cli, b, unique_topic):
    for suffix in ("a", "b"):
        assert cli("topics", "--create", "--topic", f"{unique_topic}-{suffix}", "--partitions", "2", *b).rc == 0
    r = cli("topics", "--list", "--topic", f"{unique_topic}-.*", *b)
    assert r.lines == [f"{unique_topic}-a", f"{unique_topic}-b"]
    # min.insync.replicas is 1 and ISR is 1: every partition is at min ISR, none under.
    r = cli("topics", "--describe", "--topic", f"{unique_topic}-.*", "--at-min-isr-partitions", *b)
    assert sorted(r.lines) == sorted(f"\tTopic: {unique_topic}-{s}\tPartition: {p}\tLeader: 0\tReplicas: 0\tIsr: 0{ELR}"
                                     for s in "ab" for p in range(2))
    for flag in ("--under-min-isr-partitions", "--under-replicated-partitions", "--unavailable-partitions"):
        r = cli("topics", "--describe", "--topic", f"{unique_topic}-.*", flag, *b)
        assert (r.rc, r.out) == (0, b""), flag
    r = cli("topics", "--delete", "--topic", f"{unique_topic}-.*", *b)
    assert r.rc == 0
    assert cli("topics", "--list", "--topic", f"{unique_topic}-.*", *b).out == b"\n"  # println of an empty join


def test_replica_assignment_and_topic_id(cli, b, unique_topic):
    r = cli("topics", "--create", "--topic", unique_topic, "--replica-assignment", "0,0", *b)
    assert r.rc == 0
    r = cli("topics", "--describe", "--topic", unique_topic, "--output", "json", *b)
    [doc] = json.loads(r.out)
    assert doc["partitionCount"] == 2 and doc["replicationFactor"] == 1
    assert [p["replicas"] for p in doc["partitions"]] == [[0], [0]]
    r = cli("topics", "--describe", "--topic-id", doc["topicId"], *b)
    assert r.lines[0].startswith(f"Topic: {unique_topic}\tTopicId: {doc['topicId']}\t")
    r = cli("topics", "--alter", "--topic", unique_topic, "--partitions", "3", "--replica-assignment", "0,0,0", *b)
    assert r.rc == 0
    assert "PartitionCount: 3" in cli("topics", "--describe", "--topic", unique_topic, *b).lines[0]


def test_errors(cli, b, unique_topic):
    assert cli("topics", "--create", "--topic", unique_topic, *b).rc == 0
    r = cli("topics", "--create", "--topic", unique_topic, *b)
    assert (r.rc, r.out) == (1, b"")
    assert r.err == f"Error while executing topic command : Topic '{unique_topic}' already exists.\n"
    r = cli("topics", "--create", "--topic", unique_topic, "--if-not-exists", *b)
    assert (r.rc, r.out, r.err) == (0, b"", "")
    r = cli("topics", "--describe", "--topic", "no-such-topic", *b)
    assert (r.rc, r.out) == (1, b"")
    assert r.err == "Error while executing topic command : Topic 'no-such-topic' does not exist as expected\n"
    for action in ("--describe", "--delete"):
        r = cli("topics", action, "--topic", "no-such-topic", "--if-exists", *b)
        assert (r.rc, r.out, r.err) == (0, b"", "")
    r = cli("topics", "--create", "--topic", unique_topic + "x", "--replication-factor", "3", *b)
    assert r.rc == 1 and r.err.startswith("Error while executing topic command : ")
    assert r.err.count("\n") == 1 and "Traceback" not in r.err
    r = cli("topics", "--create", "--topic", unique_topic + "y", "--partitions", "0", *b)
    assert (r.rc, r.err) == (1, "Error while executing topic command : The partitions must be greater than 0\n")


def test_json_outputs(cli, b, unique_topic):
    r = cli("topics", "--create", "--topic", unique_topic, "--output", "json", *b)
    assert json.loads(r.out) == {"topic": unique_topic, "created": True}
    names = json.loads(cli("topics", "--list", "--output", "json", *b).out)
    assert unique_topic in names and names == sorted(names)
    r = cli("topics", "--delete", "--topic", unique_topic, "--output", "json", *b)
    assert json.loads(r.out) == {"deleted": [unique_topic]}


def test_unreachable_bootstrap_is_one_line(cli, tmp_path):
    cfg = tmp_path / "admin.properties"
    cfg.write_text("default.api.timeout.ms=300\nrequest.timeout.ms=200\nreconnect.backoff.max.ms=50\n")
    r = cli("topics", "--list", "--bootstrap-server", "127.0.0.1:1", "--command-config", str(cfg))
    assert r.rc == 1 and r.out == b""
    assert r.err.count("\n") == 1 and "Traceback" not in r.err
