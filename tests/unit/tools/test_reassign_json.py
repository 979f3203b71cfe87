"""kafka-reassign-partitions without a broker: Kafka's JSON formats and input checks, the --generate
proposals against Kafka's AdminUtils placement, throttle bookkeeping, and the CLI's exact text for cluster
states a single kafkapy broker cannot produce (several brokers with racks, ongoing reassignments, refused
moves), through a fake AdminClient."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from typer.testing import CliRunner

import kafkapy.common.replica_assignment as placement
import kafkapy.tools.tool_support as tool_support
from kafkapy.cli.main import app
from kafkapy.client.admin_types import (
    ClusterDescription,
    ConfigResourceType,
    PartitionReassignment,
    TopicDescription,
    TopicPartitionInfo,
)
from kafkapy.client.metadata import Node
from kafkapy.common.errors import InvalidRequestError, UnknownTopicOrPartitionError
from kafkapy.common.topic_partition import TopicPartition as TP
from kafkapy.tools import reassign_partitions as rp
from kafkapy.tools.reassign_json import (
    ReassignError,
    TopicPartitionReplica,
    format_reassignment_json,
    parse_broker_list,
    parse_execute_assignment_args,
    parse_generate_assignment_args,
    parse_partition_reassignment_data,
    parse_topics_data,
)

# --- an independent statement of Kafka's AdminUtils rack-unaware placement (its documented walk) ----


def kafka_layout(brokers: list[int], partitions: int, rf: int, start: int, shift: int) -> dict[int, list[int]]:
    n = len(brokers)
    out = {}
    for p in range(partitions):
        s = shift + p // n  # the shift grows by one every n partitions
        first = (p + start) % n
        out[p] = [brokers[first]] + [brokers[(first + 1 + (s + j) % (n - 1)) % n] for j in range(rf - 1)]
    return out


def all_kafka_layouts(brokers: list[int], partitions: int, rf: int) -> list[dict[int, list[int]]]:
    n = len(brokers)
    return [kafka_layout(brokers, partitions, rf, s, k) for s in range(n) for k in range(n)]


class ZeroRandom:
    """Kafka's Random drawing 0 for both the start index and the replica shift."""

    def randrange(self, n: int) -> int:
        return 0


# --- a fake AdminClient ------------------------------------------------------------------------------


@dataclass
class FakeAdmin:
    topics: dict[str, list[list[int]]]
    nodes: list[Node]
    ongoing: dict[TP, PartitionReassignment] = field(default_factory=dict)
    alter_errors: dict[TP, Any] = field(default_factory=dict)
    config_ops: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    altered: list[dict[TP, Any]] = field(default_factory=list)
    closed: bool = False

    def describe_topics(self, names: list[str], raise_errors: bool = True) -> dict[str, TopicDescription]:
        out = {}
        for name in names:
            if name not in self.topics:
                out[name] = TopicDescription(name, False, [], uuid.UUID(int=0),
                                             UnknownTopicOrPartitionError(f"Topic '{name}' does not exist"))
                continue
            parts = [TopicPartitionInfo(p, None, [], [], replica_ids=list(r)) for p, r in enumerate(self.topics[name])]
            out[name] = TopicDescription(name, False, parts, uuid.UUID(int=1))
        return out

    def describe_cluster(self) -> ClusterDescription:
        return ClusterDescription("cluster", self.nodes[0], list(self.nodes))

    def list_partition_reassignments(self, partitions: Any = None) -> dict[TP, PartitionReassignment]:
        return {tp: r for tp, r in self.ongoing.items() if partitions is None or tp in partitions}

    def alter_partition_reassignments(self, targets: dict[TP, Any]) -> dict[TP, Any]:
        self.altered.append(dict(targets))
        return {tp: self.alter_errors.get(tp) for tp in targets}

    def incremental_alter_configs(self, configs: dict[Any, Any]) -> dict[Any, None]:
        for resource, ops in configs.items():
            kind = "broker" if resource.type == ConfigResourceType.BROKER else "topic"
            self.config_ops += [(kind, resource.name, op.name, op.value) for op in ops]
        return dict.fromkeys(configs)

    def close(self) -> None:
        self.closed = True


def nodes(racks: dict[int, str | None]) -> list[Node]:
    return [Node(i, "127.0.0.1", 9092 + i, rack) for i, rack in sorted(racks.items())]


def kafkapy(*argv: str):
    """`kafkapy <argv>` in-process through the Typer app (typer.testing.CliRunner)."""
    return CliRunner().invoke(app, list(argv), catch_exceptions=False, prog_name="kafkapy")


@pytest.fixture
def cli(monkeypatch):
    """Runs `kafkapy reassign-partitions ...` with the AdminClient replaced by `admin`."""

    def run(admin: FakeAdmin, *argv: str) -> tuple[int, str, str]:
        monkeypatch.setattr(tool_support, "admin_client", lambda bootstrap, props=None, client_id=None: admin)
        r = kafkapy("reassign-partitions", "--bootstrap-server", "127.0.0.1:1", *argv)
        return r.exit_code, r.stdout, r.stderr

    return run


def write(tmp_path, name: str, obj: Any) -> str:
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return str(path)


# --- formats -----------------------------------------------------------------------------------------


def test_reassignment_json_is_kafkas_compact_sorted_form() -> None:
    parts = {TP("b", 0): [2, 1], TP("a", 10): [1], TP("a", 2): [0, 1]}
    dirs = {TopicPartitionReplica("b", 0, 1): "/data/d1"}
    assert format_reassignment_json(parts, dirs) == (
        '{"version":1,"partitions":[{"topic":"a","partition":2,"replicas":[0,1],"log_dirs":["any","any"]},'
        '{"topic":"a","partition":10,"replicas":[1],"log_dirs":["any"]},'
        '{"topic":"b","partition":0,"replicas":[2,1],"log_dirs":["any","/data/d1"]}]}')
    assert format_reassignment_json({}) == '{"version":1,"partitions":[]}'


def test_parse_reassignment_data_round_trip_and_log_dirs() -> None:
    text = ('{"partitions":[{"topic":"foo","partition":1,"replicas":[1,2,3],"log_dirs":["any","/d2","any"]},'
            '{"topic":"bar","partition":0,"replicas":[4]}],"version":1}')
    parts, dirs = parse_partition_reassignment_data(text)
    assert parts == [(TP("foo", 1), [1, 2, 3]), (TP("bar", 0), [4])]
    assert dirs == {TopicPartitionReplica("foo", 1, 2): "/d2"}
    assert str(TopicPartitionReplica("foo", 1, 2)) == "foo-1-2"
    again = parse_partition_reassignment_data(format_reassignment_json(dict(parts), dirs))
    assert sorted(again[0]) == sorted(parts) and again[1] == dirs


@pytest.mark.parametrize("text, message", [
    ('{"partitions":[]}', "Partition reassignment list cannot be empty"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[]}]}', "Partition replica list cannot be empty"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[1]},{"topic":"a","partition":0,"replicas":[2]}]}',
     "Partition reassignment contains duplicate topic partitions: a-0"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[1,2,1,2]}]}',
     "Partition replica lists may not contain duplicate entries: a-0 contains multiple entries for 1,2"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[1,1]},{"topic":"b","partition":0,"replicas":[3,3]}]}',
     "Partition replica lists may not contain duplicate entries: a-0 contains multiple entries for 1. "
     "b-0 contains multiple entries for 3"),
    ('{"partitions":[{"topic":"a","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
     "Size of replicas list [1, 2] is different from size of log dirs list [any] for partition a-0"),
    ('{"version":2,"partitions":[]}', "Not supported version field value 2"),
    ('{"partitions":[{"partition":0,"replicas":[1]}]}', "No such field exists: `topic`"),
    ('{"partitions":[{"topic":"a","partition":"0","replicas":[1]}]}', 'Expected `Int` value, received "0"'),
    ("[1]", "Expected JSON object, received [1]"),
])
def test_execute_json_checks(text: str, message: str) -> None:
    with pytest.raises(ReassignError) as e:
        parse_execute_assignment_args(text)
    assert str(e.value) == message


def test_not_json() -> None:
    with pytest.raises(ReassignError, match="^The input string is not a valid JSON"):
        parse_partition_reassignment_data("{nope")
    with pytest.raises(ReassignError, match="^The input string is not a valid JSON$"):
        parse_topics_data("{nope")


def test_generate_args() -> None:
    assert parse_generate_assignment_args('{"topics":[{"topic":"foo"},{"topic":"foo1"}],"version":1}',
                                          "0,1,2") == ([0, 1, 2], ["foo", "foo1"])
    assert parse_broker_list("3,+4,-1,") == [3, 4, -1]  # Java's split and Integer.parseInt
    for bad, piece in (("1,x", "x"), ("", ""), ("1,,2", ""), ("1 ,2", "1 "), ("99999999999", "99999999999")):
        with pytest.raises(ReassignError) as e:
            parse_broker_list(bad)
        assert str(e.value) == f'For input string: "{piece}"'
    with pytest.raises(ReassignError, match=r"^Broker list contains duplicate entries: \[1, 2\]$"):
        parse_generate_assignment_args('{"topics":[]}', "2,1,2,1")
    with pytest.raises(ReassignError, match=r"^List of topics to reassign contains duplicate entries: \[foo\]$"):
        parse_generate_assignment_args('{"topics":[{"topic":"foo"},{"topic":"foo"}]}', "0")


# --- --generate proposals against Kafka's placement --------------------------------------------------


def test_generate_matches_kafkas_documented_layout() -> None:
    # AdminUtils' doc example: 5 brokers, 10 partitions, RF 3, start index 0, shift 0.
    admin = FakeAdmin({"t": [[0, 1, 2]] * 10}, nodes(dict.fromkeys(range(5))))
    result = rp.generate_assignment(admin, '{"topics":[{"topic":"t"}]}', "0,1,2,3,4", rng=ZeroRandom())
    expected = {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
                5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}
    assert result.proposed == {TP("t", p): r for p, r in expected.items()}
    assert expected == kafka_layout([0, 1, 2, 3, 4], 10, 3, 0, 0)
    assert result.current == {TP("t", p): [0, 1, 2] for p in range(10)}


@pytest.mark.parametrize("seed", range(5))
def test_generate_random_start_is_one_of_kafkas_layouts(seed: int) -> None:
    import random

    admin = FakeAdmin({"a": [[1, 3]] * 7, "b": [[5, 1, 3]] * 4}, nodes(dict.fromkeys([1, 3, 5, 7])))
    result = rp.generate_assignment(admin, '{"topics":[{"topic":"a"},{"topic":"b"}]}', "7,5,3,1,9",
                                    rng=random.Random(seed))
    for topic, count, rf in (("a", 7, 2), ("b", 4, 3)):
        got = {tp.partition: r for tp, r in result.proposed.items() if tp.topic == topic}
        assert got in all_kafka_layouts([1, 3, 5, 7], count, rf)  # broker 9 is unknown: dropped, as Kafka does


def test_generate_rack_aware_matches_kafkas_layout() -> None:
    # Kafka's AdminRackAwareTest layout for 6 brokers on 3 racks, 7 partitions, RF 3.
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    admin = FakeAdmin({"t": [[0, 1, 2]] * 7}, nodes(racks))
    result = rp.generate_assignment(admin, '{"topics":[{"topic":"t"}]}', "0,1,2,3,4,5", rng=ZeroRandom())
    assert {tp.partition: r for tp, r in result.proposed.items()} == {
        0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2]}
    unaware = rp.generate_assignment(admin, '{"topics":[{"topic":"t"}]}', "0,1,2,3,4,5", False, ZeroRandom())
    assert {tp.partition: r for tp, r in unaware.proposed.items()} == kafka_layout(list(range(6)), 7, 3, 0, 0)


def test_generate_refusals() -> None:
    admin = FakeAdmin({"t": [[0, 1]]}, nodes({0: "r1", 1: None, 2: "r2"}))
    with pytest.raises(ReassignError, match="^Not all brokers have rack information. Add --disable-rack-aware in "
                                            "command line to make replica assignment without rack information.$"):
        rp.generate_assignment(admin, '{"topics":[{"topic":"t"}]}', "0,1,2")
    with pytest.raises(ReassignError, match=r"^Replication factor: 2 larger than available brokers: 1\.$"):
        rp.generate_assignment(admin, '{"topics":[{"topic":"t"}]}', "1,8", False)
    with pytest.raises(UnknownTopicOrPartitionError, match="^Topic nope not found.$"):
        rp.generate_assignment(admin, '{"topics":[{"topic":"t"},{"topic":"nope"}]}', "0,1")


def test_generate_cli_text_on_three_racked_brokers(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(placement, "_RANDOM", ZeroRandom())
    admin = FakeAdmin({"foo": [[0], [0]], "bar": [[1, 2]]}, nodes({0: "a", 1: "b", 2: "c"}))
    topics = write(tmp_path, "topics.json", {"topics": [{"topic": "foo"}, {"topic": "bar"}], "version": 1})
    rc, out, err = cli(admin, "--generate", "--topics-to-move-json-file", topics, "--broker-list", "0,1,2")
    assert (rc, err) == (0, "")
    assert out == (
        "Current partition replica assignment\n"
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":0,"replicas":[0],"log_dirs":["any"]},'
        '{"topic":"foo","partition":1,"replicas":[0],"log_dirs":["any"]}]}\n'
        "\n"
        "Proposed partition reassignment configuration\n"
        '{"version":1,"partitions":[{"topic":"bar","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":0,"replicas":[0],"log_dirs":["any"]},'
        '{"topic":"foo","partition":1,"replicas":[1],"log_dirs":["any"]}]}\n')
    assert admin.closed
    rc, out, _ = cli(admin, "--generate", "--topics-to-move-json-file", topics, "--broker-list", "0,1,2",
                     "--output", "json")
    doc = json.loads(out)
    assert doc["proposedAssignment"]["partitions"][0] == {"topic": "bar", "partition": 0, "replicas": [0, 1],
                                                          "log_dirs": ["any", "any"]}
    assert doc["currentAssignment"]["version"] == 1


# --- --execute / --verify / --cancel / --list on states a single broker cannot show ------------------


def test_throttle_bookkeeping() -> None:
    ongoing = {TP("t", 1): PartitionReassignment([1, 2, 3], adding_replicas=[3], removing_replicas=[1])}
    moves = rp.calculate_proposed_move_map(ongoing, {TP("t", 0): [2, 3], TP("u", 0): [1]},
                                           {TP("t", 0): [1, 2], TP("u", 0): [1]})
    assert rp.calculate_leader_throttles(moves) == {"t": "0:1,0:2,1:1,1:2", "u": "0:1"}
    assert rp.calculate_follower_throttles(moves) == {"t": "0:3,1:3", "u": ""}
    assert rp.calculate_reassigning_brokers(moves) == [1, 2, 3]


def test_execute_with_throttle_sets_kafkas_configs(cli, tmp_path) -> None:
    admin = FakeAdmin({"t": [[0, 1], [1, 2]]}, nodes(dict.fromkeys(range(3))))
    plan = write(tmp_path, "plan.json", {"version": 1, "partitions": [
        {"topic": "t", "partition": 0, "replicas": [1, 2]}, {"topic": "t", "partition": 1, "replicas": [1, 2]}]})
    rc, out, err = cli(admin, "--execute", "--reassignment-json-file", plan, "--throttle", "50000")
    assert (rc, err) == (0, "")
    assert out == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},'
        '{"topic":"t","partition":1,"replicas":[1,2],"log_dirs":["any","any"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is "
        "removed.\n"
        "The inter-broker throttle limit was set to 50000 B/s\n"
        "Successfully started partition reassignments for t-0,t-1\n")
    assert admin.config_ops == [
        ("topic", "t", "leader.replication.throttled.replicas", "0:0,0:1,1:1,1:2"),
        ("topic", "t", "follower.replication.throttled.replicas", "0:2"),
        *[("broker", str(b), k, "50000") for b in range(3)
          for k in ("leader.replication.throttled.rate", "follower.replication.throttled.rate")]]
    assert admin.altered == [{TP("t", 0): [1, 2], TP("t", 1): [1, 2]}]


def test_execute_refused_by_the_broker_is_one_line(cli, tmp_path) -> None:
    admin = FakeAdmin({"t": [[0], [0]]}, nodes(dict.fromkeys(range(2))),
                      alter_errors={TP("t", 0): InvalidRequestError("Moving replicas is not supported."),
                                    TP("t", 1): UnknownTopicOrPartitionError(None)})
    plan = write(tmp_path, "plan.json", {"partitions": [{"topic": "t", "partition": 1, "replicas": [1]},
                                                         {"topic": "t", "partition": 0, "replicas": [1]}]})
    rc, out, err = cli(admin, "--execute", "--reassignment-json-file", plan)
    assert rc == 1
    assert out.endswith("Save this to use as the --reassignment-json-file option during rollback\n")
    assert err == ("Error reassigning partition(s): t-0: Moving replicas is not supported.; "
                   "t-1: This server does not host this topic-partition.\n")


def test_execute_refuses_while_another_reassignment_runs(cli, tmp_path) -> None:
    ongoing = {TP("x", 0): PartitionReassignment([0, 1], [1], [0])}
    admin = FakeAdmin({"t": [[0]]}, nodes(dict.fromkeys(range(2))), ongoing=ongoing)
    plan = write(tmp_path, "plan.json", {"partitions": [{"topic": "t", "partition": 0, "replicas": [0]}]})
    rc, out, err = cli(admin, "--execute", "--reassignment-json-file", plan)
    assert (rc, out) == (1, "")
    assert err == rp.CANNOT_EXECUTE_BECAUSE_OF_EXISTING_MESSAGE + "\n"
    rc, out, err = cli(admin, "--execute", "--reassignment-json-file", plan, "--additional")
    assert (rc, err) == (0, "")
    assert out.endswith("Successfully started partition reassignment for t-0\n")


def test_verify_cancel_and_list_with_ongoing_reassignments(cli, tmp_path) -> None:
    ongoing = {TP("t", 0): PartitionReassignment([0, 1, 2], [2], [0]),
               TP("t", 10): PartitionReassignment([1, 2], [2], [])}
    admin = FakeAdmin({"t": [[0, 1]] * 11, "u": [[5, 4, 6]]}, nodes(dict.fromkeys(range(7))), ongoing=ongoing)
    plan = write(tmp_path, "plan.json", {"partitions": [
        {"topic": "t", "partition": 10, "replicas": [2]}, {"topic": "t", "partition": 0, "replicas": [1, 2]},
        {"topic": "u", "partition": 0, "replicas": [0, 1, 2]}, {"topic": "v", "partition": 3, "replicas": [1]},
        {"topic": "t", "partition": 1, "replicas": [0, 1]}]})
    rc, out, err = cli(admin, "--verify", "--reassignment-json-file", plan)
    assert (rc, err) == (0, "")
    assert out == ("Status of partition reassignment:\n"
                   "Reassignment of partition t-0 is still in progress.\n"
                   "Reassignment of partition t-1 is completed.\n"
                   "Reassignment of partition t-10 is still in progress.\n"
                   "There is no active reassignment of partition u-0, but replica set is 5,4,6 rather than 0,1,2.\n"
                   "There is no active reassignment of partition v-3, but replica set is  rather than 1.\n"
                   "\n")
    assert admin.config_ops == []  # reassignments still run: throttles stay

    rc, out, err = cli(admin, "--list")
    assert (rc, out) == (0, "Current partition reassignments:\n"
                            "t-0: replicas: 0,1,2. adding: 2. removing: 0.\n"
                            "t-10: replicas: 1,2. adding: 2.\n")
    rc, out, _ = cli(admin, "--list", "--output", "json")
    assert json.loads(out)["reassignments"][0] == {"topic": "t", "partition": 0, "replicas": [0, 1, 2],
                                                   "addingReplicas": [2], "removingReplicas": [0]}

    rc, out, err = cli(admin, "--cancel", "--reassignment-json-file", plan, "--preserve-throttles")
    assert (rc, err) == (0, "")
    # Kafka cancels those with nothing being added, or something being removed (t-10 only adds: kept).
    assert out == ("Successfully cancelled partition reassignment for: t-0\n"
                   "None of the specified partition moves are active.")
    assert admin.altered == [{TP("t", 0): None}]

    admin.ongoing = {}
    rc, out, err = cli(admin, "--verify", "--reassignment-json-file", plan)
    assert out.endswith("\n\nClearing broker-level throttles on brokers 0,1,2,3,4,5,6\n"
                        "Clearing topic-level throttles on topics t,u,v\n")
    assert ("broker", "6", "replica.alter.log.dirs.io.max.bytes.per.second", None) in admin.config_ops
    assert ("topic", "v", "follower.replication.throttled.replicas", None) in admin.config_ops


def test_execute_checks_before_touching_the_cluster(cli, tmp_path) -> None:
    admin = FakeAdmin({"t": [[0]]}, nodes({0: None}))
    plan = write(tmp_path, "plan.json", {"partitions": [{"topic": "t", "partition": 0, "replicas": [0, 3]}]})
    assert cli(admin, "--execute", "--reassignment-json-file", plan)[1:] == ("", "Error: Unknown broker id 3\n")
    plan = write(tmp_path, "plan.json", {"partitions": [{"topic": "t", "partition": 4, "replicas": [0]}]})
    assert cli(admin, "--execute", "--reassignment-json-file", plan)[2] == (
        "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Unable to find partition: t-4\n")
    plan = write(tmp_path, "plan.json", {"partitions": [{"topic": "t", "partition": 0, "replicas": [0],
                                                         "log_dirs": ["/elsewhere"]}]})
    rc, _, err = cli(admin, "--execute", "--reassignment-json-file", plan)
    assert rc == 1 and err.startswith("Error: Moving replicas between log directories")
    assert admin.altered == []


@pytest.mark.parametrize("argv, message", [
    ([], "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list"),
    (["--list", "--verify"], "Command must include exactly one action: --generate, --execute, --verify, --cancel, "
                             "--list"),
    (["--generate", "--broker-list", "0"], 'Missing required argument "[topics-to-move-json-file]"'),
    (["--generate", "--topics-to-move-json-file", "f"], 'Missing required argument "[broker-list]"'),
    (["--execute"], 'Missing required argument "[reassignment-json-file]"'),
    (["--verify", "--reassignment-json-file", "f", "--throttle", "1"],
     'Option "[throttle]" can\'t be used with action "[verify]"'),
    (["--list", "--additional", "--preserve-throttles"], 'Option "[additional]" can\'t be used with action "[list]"'),
    (["--generate", "--topics-to-move-json-file", "f", "--broker-list", "0", "--timeout", "5"],
     'Option "[timeout]" can\'t be used with action "[generate]"'),
    (["--execute", "--reassignment-json-file", "f", "--throttle", "fast"],
     "Cannot parse argument 'fast' of option throttle"),
])
def test_usage_errors(argv: list[str], message: str) -> None:
    r = kafkapy("reassign-partitions", "--bootstrap-server", "127.0.0.1:1", *argv)
    assert (r.exit_code, r.stderr) == (2, f"kafkapy reassign-partitions: error: {message}\n")
    r = kafkapy("reassign-partitions", "--list")
    assert (r.exit_code, r.stderr) == (2, "kafkapy reassign-partitions: error: Please specify --bootstrap-server\n")
