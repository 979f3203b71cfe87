"""leader-election, preferred-replica-election and reassign-partitions end to end against the in-process
broker: Kafka's exact lines, JSON output, exit codes and usage errors. One broker: every election is
ELECTION_NOT_NEEDED, every valid reassignment target is the current one (a no-op Kafka completes at once)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkapy.client.admin import AdminClient
from kafkapy.client.admin_types import (
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
    NewTopic,
)

EL_TOPIC = "el-topic"  # 3 partitions
RA_TOPIC = "ra-topic"  # 2 partitions


@pytest.fixture(scope="module")
def bootstrap(kafkapy_broker) -> str:
    admin = AdminClient({"bootstrap.servers": kafkapy_broker.bootstrap})
    try:
        admin.create_topics([NewTopic(EL_TOPIC, 3, 1), NewTopic(RA_TOPIC, 2, 1)])
    finally:
        admin.close()
    return kafkapy_broker.bootstrap


def write(tmp_path: Path, name: str, obj: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return str(path)


# --- leader-election ---------------------------------------------------------------------------------


def test_preferred_election_of_one_partition(cli, bootstrap) -> None:
    r = cli("leader-election", "--bootstrap-server", bootstrap, "--election-type", "preferred",
            "--topic", EL_TOPIC, "--partition", "1")
    assert (r.rc, r.text, r.err) == (0, f"Valid replica already elected for partitions {EL_TOPIC}-1\n", "")


def test_all_partitions_election_prints_nothing_when_none_is_needed(cli, bootstrap) -> None:
    # Kafka's controller leaves partitions that need no election out of a null-partitions answer.
    r = cli("leader-election", "--bootstrap-server", bootstrap, "--election-type", "PREFERRED",
            "--all-topic-partitions")
    assert (r.rc, r.text, r.err) == (0, "", "")


def test_election_from_json_file_with_a_failure(cli, bootstrap, tmp_path) -> None:
    path = write(tmp_path, "el.json", {"partitions": [{"topic": EL_TOPIC, "partition": p} for p in (0, 1, 2)]
                                       + [{"topic": "nope", "partition": 0}]})
    r = cli("leader-election", "--bootstrap-server", bootstrap, "--election-type", "unclean",
            "--path-to-json-file", path)
    assert r.rc == 1
    # Partitions in the order of the Java HashSet Kafka prints.
    assert r.lines == [
        f"Valid replica already elected for partitions {EL_TOPIC}-2, {EL_TOPIC}-1, {EL_TOPIC}-0",
        "Error completing leader election (UNCLEAN) for partition: nope-0: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition nope-0 does not exist."]
    assert r.err == "1 replica(s) could not be elected\n"

    r = cli("leader-election", "--bootstrap-server", bootstrap, "--election-type", "unclean",
            "--path-to-json-file", path, "--output", "json")
    assert r.rc == 1
    assert json.loads(r.text) == {
        "electionType": "UNCLEAN", "succeeded": [],
        "noop": [{"topic": EL_TOPIC, "partition": p} for p in (2, 1, 0)],
        "failed": [{"topic": "nope", "partition": 0, "error": "org.apache.kafka.common.errors."
                    "UnknownTopicOrPartitionException: The partition nope-0 does not exist."}]}


def test_admin_config_is_deprecated_and_command_config_is_read(cli, bootstrap, tmp_path) -> None:
    props = tmp_path / "admin.properties"
    props.write_text("client.id=election-test\nrequest.timeout.ms=5000\n")
    base = ("leader-election", "--bootstrap-server", bootstrap, "--election-type", "preferred", "--topic", EL_TOPIC,
            "--partition", "0")
    r = cli(*base, "--admin.config", str(props))
    assert (r.rc, r.lines) == (0, [
        "Option --admin.config has been deprecated and will be removed in a future version. Use --command-config "
        "instead.", f"Valid replica already elected for partitions {EL_TOPIC}-0"])
    r = cli(*base, "--command-config", str(props))
    assert (r.rc, r.lines) == (0, [f"Valid replica already elected for partitions {EL_TOPIC}-0"])
    r = cli(*base, "--command-config", str(tmp_path / "missing.properties"))
    assert (r.rc, r.err) == (1, f"{tmp_path / 'missing.properties'} (No such file or directory)\n")


@pytest.mark.parametrize("argv, message", [
    (["--election-type", "preferred", "--all-topic-partitions"], "Missing required option(s): bootstrap-server"),
    (["--all-topic-partitions"], "Missing required option(s): bootstrap-server, election-type"),
    (["-B", "--election-type", "random", "--all-topic-partitions"],
     "Cannot parse argument 'random' of option election-type"),
    (["-B", "--election-type", "preferred"],
     "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file"),
    (["-B", "--election-type", "preferred", "--all-topic-partitions", "--path-to-json-file", "f"],
     "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file"),
    (["-B", "--election-type", "preferred", "--topic", "t"], "Missing required option(s): partition"),
    (["-B", "--election-type", "preferred", "--all-topic-partitions", "--partition", "0"],
     "Option partition is only allowed if topic is used"),
    (["-B", "--election-type", "preferred", "--topic", "t", "--partition", "x"],
     "Cannot parse argument 'x' of option partition"),
    (["-B", "--election-type", "preferred", "--all-topic-partitions", "--admin.config", "a", "--command-config", "b"],
     'Option "[admin.config]" can\'t be used with option "[command-config]"'),
])
def test_leader_election_usage_errors(cli, argv: list[str], message: str) -> None:
    argv = [a for x in argv for a in (["--bootstrap-server", "127.0.0.1:1"] if x == "-B" else [x])]
    r = cli("leader-election", *argv)
    assert (r.rc, r.text, r.err) == (2, "", f"kafkapy leader-election: error: {message}\n")


@pytest.mark.parametrize("content, message", [
    ('{"partitions":[{"topic":"a","partition":0},{"topic":"a","partition":0}]}',
     "Replica election data contains duplicate partitions: [a-0]"),
    ('{"topics":[]}', 'Replica election data is missing "partitions" field'),
    ("not json", "Replica election data is empty"),
    ('{"partitions":[{"topic":"a"}]}', "No such field exists: `partition`"),
])
def test_leader_election_bad_json_file(cli, tmp_path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    r = cli("leader-election", "--bootstrap-server", "127.0.0.1:1", "--election-type", "preferred",
            "--path-to-json-file", str(path))
    assert (r.rc, r.text, r.err) == (1, "", message + "\n")


# --- preferred-replica-election (deprecated) -----------------------------------------------------------


def test_preferred_replica_election(cli, bootstrap, tmp_path) -> None:
    r = cli("preferred-replica-election", "--bootstrap-server", bootstrap)
    assert (r.rc, r.lines) == (0, ["This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: "
                                   "KAFKA-8405"])
    path = write(tmp_path, "p.json", {"partitions": [{"topic": EL_TOPIC, "partition": 0},
                                                     {"topic": "nope", "partition": 3}]})
    r = cli("preferred-replica-election", "--bootstrap-server", bootstrap, "--path-to-json-file", path)
    assert r.rc == 1
    # Kafka 2.x's "already elected" line lists the succeeded partitions (none here): reproduced as is.
    assert r.lines == [
        "This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405",
        "Preferred replica already elected for partitions ",
        "Error completing preferred leader election for partition: nope-3: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition nope-3 does not exist."]
    assert r.err == "Error: 1 preferred replica(s) could not be elected\n"
    r = cli("preferred-replica-election", "--path-to-json-file", path)
    assert (r.rc, r.err) == (2, "kafkapy preferred-replica-election: error: Exactly one of '[bootstrap-server]' or "
                                "'[zookeeper]' must be provided\n")


# --- reassign-partitions -------------------------------------------------------------------------------


def _plan(topic: str, *partitions: int) -> dict:
    return {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": [0]} for p in partitions]}


def _json(topic: str, *partitions: int) -> str:
    return ('{"version":1,"partitions":['
            + ",".join(f'{{"topic":"{topic}","partition":{p},"replicas":[0],"log_dirs":["any"]}}' for p in partitions)
            + "]}")


def test_generate_on_one_broker(cli, bootstrap, tmp_path) -> None:
    topics = write(tmp_path, "topics.json", {"topics": [{"topic": RA_TOPIC}], "version": 1})
    # Brokers 1 and 2 are not in the cluster: Kafka drops them from the placement.
    r = cli("reassign-partitions", "--bootstrap-server", bootstrap, "--generate", "--topics-to-move-json-file",
            topics, "--broker-list", "0,1,2")
    assert (r.rc, r.err) == (0, "")
    assert r.text == (f"Current partition replica assignment\n{_json(RA_TOPIC, 0, 1)}\n\n"
                      f"Proposed partition reassignment configuration\n{_json(RA_TOPIC, 0, 1)}\n")
    r = cli("reassign-partitions", "--bootstrap-server", bootstrap, "--generate", "--topics-to-move-json-file",
            topics, "--broker-list", "0", "--disable-rack-aware", "--output", "json")
    assert json.loads(r.text) == {"currentAssignment": json.loads(_json(RA_TOPIC, 0, 1)),
                                  "proposedAssignment": json.loads(_json(RA_TOPIC, 0, 1))}
    r = cli("reassign-partitions", "--bootstrap-server", bootstrap, "--generate", "--topics-to-move-json-file",
            topics, "--broker-list", "7")
    assert (r.rc, r.text, r.err) == (1, "", "Error: Replication factor: 1 larger than available brokers: 0.\n")
    missing = write(tmp_path, "missing.json", {"topics": [{"topic": "no-such-topic"}]})
    r = cli("reassign-partitions", "--bootstrap-server", bootstrap, "--generate", "--topics-to-move-json-file",
            missing, "--broker-list", "0")
    assert (r.rc, r.err) == (1, "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic "
                                "no-such-topic not found.\n")


def test_execute_verify_cancel_list_of_a_noop_reassignment(cli, bootstrap, tmp_path) -> None:
    plan = write(tmp_path, "plan.json", _plan(RA_TOPIC, 1, 0))
    base = ("reassign-partitions", "--bootstrap-server", bootstrap)
    r = cli(*base, "--execute", "--reassignment-json-file", plan)
    assert (r.rc, r.err) == (0, "")
    assert r.text == (f"Current partition replica assignment\n\n{_json(RA_TOPIC, 0, 1)}\n\n"
                      "Save this to use as the --reassignment-json-file option during rollback\n"
                      f"Successfully started partition reassignments for {RA_TOPIC}-0,{RA_TOPIC}-1\n")

    # Throttles a reassignment left behind are cleared by --verify once nothing is moving.
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ConfigResourceType.TOPIC, RA_TOPIC)
    try:
        admin.incremental_alter_configs({resource: [AlterConfigOp("leader.replication.throttled.replicas", "0:0",
                                                                  AlterConfigOpType.SET)]})
        r = cli(*base, "--verify", "--reassignment-json-file", plan, "--preserve-throttles")
        assert (r.rc, r.text) == (0, f"Status of partition reassignment:\n"
                                     f"Reassignment of partition {RA_TOPIC}-0 is completed.\n"
                                     f"Reassignment of partition {RA_TOPIC}-1 is completed.\n\n")
        r = cli(*base, "--verify", "--reassignment-json-file", plan)
        assert (r.rc, r.err) == (0, "")
        assert r.text == (f"Status of partition reassignment:\n"
                          f"Reassignment of partition {RA_TOPIC}-0 is completed.\n"
                          f"Reassignment of partition {RA_TOPIC}-1 is completed.\n\n"
                          "Clearing broker-level throttles on broker 0\n"
                          f"Clearing topic-level throttles on topic {RA_TOPIC}\n")
        entry = admin.describe_configs([resource])[resource].entries["leader.replication.throttled.replicas"]
        assert entry.value == ""
    finally:
        admin.close()

    r = cli(*base, "--verify", "--reassignment-json-file", plan, "--output", "json")
    doc = json.loads(r.text)
    assert doc["partitions"] == [{"topic": RA_TOPIC, "partition": p, "state": "completed", "currentReplicas": [0],
                                  "targetReplicas": [0]} for p in (0, 1)]
    assert (doc["throttlesClearedOnBrokers"], doc["throttlesClearedOnTopics"]) == ([0], [RA_TOPIC])

    r = cli(*base, "--cancel", "--reassignment-json-file", plan)
    assert (r.rc, r.err) == (0, "")
    assert r.text == ("None of the specified partition reassignments are active.\n"
                      "None of the specified partition moves are active.Clearing broker-level throttles on broker 0\n"
                      f"Clearing topic-level throttles on topic {RA_TOPIC}\n")
    r = cli(*base, "--list")
    assert (r.rc, r.text) == (0, "No partition reassignments found.\n")
    r = cli(*base, "--list", "--output", "json")
    assert json.loads(r.text) == {"reassignments": []}
    r = cli(*base, "--execute", "--reassignment-json-file", plan, "--output", "json")
    assert json.loads(r.text)["started"] == [{"topic": RA_TOPIC, "partition": 0}, {"topic": RA_TOPIC, "partition": 1}]


def test_execute_of_a_real_move_fails_with_one_line(cli, bootstrap, tmp_path) -> None:
    base = ("reassign-partitions", "--bootstrap-server", bootstrap, "--execute", "--reassignment-json-file")
    move = write(tmp_path, "move.json", {"partitions": [{"topic": RA_TOPIC, "partition": 0, "replicas": [0, 1]}]})
    r = cli(*base, move)
    assert (r.rc, r.text, r.err) == (1, "", "Error: Unknown broker id 1\n")
    missing = write(tmp_path, "missing.json", _plan(RA_TOPIC, 9))
    r = cli(*base, missing)
    assert (r.rc, r.text, r.err) == (1, "", "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
                                            f"Unable to find partition: {RA_TOPIC}-9\n")
    bad = tmp_path / "bad.json"
    bad.write_text('{"partitions":[{"topic":"a","partition":0,"replicas":[0,0]}]}')
    r = cli(*base, str(bad))
    assert (r.rc, r.err) == (1, "Error: Partition replica lists may not contain duplicate entries: a-0 contains "
                                "multiple entries for 0\n")
    r = cli(*base, str(tmp_path / "absent.json"))
    assert (r.rc, r.err) == (1, f"Error: {tmp_path / 'absent.json'} (No such file or directory)\n")
