"""`kafkapy consumer-groups` against kafkapy's broker: exact text of list/describe/reset/delete, checked
against confluent-kafka's admin view of the same groups (and its consumers as group members).

One broker for the module (group.initial.rebalance.delay.ms=0, 3 offsets partitions); every test uses
fresh topics and groups. Expected tables are built here from confluent-kafka's data with an
independent rendering of Kafka's Java format strings.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kafkapy.client.admin import AdminClient, NewTopic
from kafkapy.client.consumer import KafkaConsumer
from kafkapy.client.producer import KafkaProducer
from kafkapy.common.topic_partition import TopicPartition as TP

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient as ConfluentAdmin  # noqa: E402

OVERRIDES = {
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "3",
    "offsets.topic.replication.factor": "1",
}
STATES = {"STABLE": "Stable", "EMPTY": "Empty", "DEAD": "Dead", "PREPARING_REBALANCING": "PreparingRebalance",
          "COMPLETING_REBALANCING": "CompletingRebalance"}


@pytest.fixture(scope="module")
def bs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    props = dict(OVERRIDES, **{"log.dirs": str(tmp_path_factory.mktemp("cg-tool"))})
    server = KafkaServer(KafkaConfig.from_properties(None, props))
    server.startup()
    try:
        yield f"127.0.0.1:{server.bound_port()}"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def cadmin(bs: str) -> Any:
    return ConfluentAdmin({"bootstrap.servers": bs})


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def topic_with(bs: str, counts: list[int], prefix: str = "t", timestamps: list[int] | None = None) -> str:
    """A topic whose partition p holds counts[p] records (timestamps[i] for the i-th record if given)."""
    topic = uid(prefix)
    admin = AdminClient({"bootstrap.servers": bs})
    admin.create_topics([NewTopic(topic, len(counts), 1)])
    admin.close()
    producer = KafkaProducer({"bootstrap.servers": bs, "linger.ms": 0})
    i = 0
    for p, n in enumerate(counts):
        for _ in range(n):
            ts = timestamps[i] if timestamps else None
            producer.send(topic, value=f"v{i}".encode(), partition=p, timestamp=ts)
            i += 1
    producer.flush()
    producer.close()
    return topic


def cg(cli, bs: str, *args: str):
    return cli("consumer-groups", "--bootstrap-server", bs, *args)


def commit(bs: str, group: str, offsets: dict[TP, int]) -> None:
    """Committed offsets for an inactive group (the admin path: generation -1)."""
    admin = AdminClient({"bootstrap.servers": bs})
    try:
        admin.alter_consumer_group_offsets(group, offsets)
    finally:
        admin.close()


def confluent_offsets(cadmin: Any, group: str) -> dict[TP, int]:
    req = ck.ConsumerGroupTopicPartitions(group)
    res = cadmin.list_consumer_group_offsets([req])[group].result()
    return {TP(tp.topic, tp.partition): tp.offset for tp in res.topic_partitions if tp.offset >= 0}


def confluent_groups(cadmin: Any) -> dict[str, str]:
    res = cadmin.list_consumer_groups(request_timeout=10).result()
    return {g.group_id: STATES.get(g.state.name, g.state.name) for g in res.valid}


def java_fmt(widths: list[int | None], values: list[Any]) -> str:
    """An independent rendering of Java's '%-Ns %-Ns ... %s'."""
    out = []
    for w, v in zip(widths, values, strict=True):
        s = "-" if v is None else str(v)
        out.append(s if w is None else s + " " * max(0, w - len(s)))
    return " ".join(out)


def poll_until(consumers: list[Any], done: Any, timeout_s: float = 20.0) -> None:
    stop = threading.Event()

    def run(c: Any) -> None:
        while not stop.is_set():
            if isinstance(c, KafkaConsumer):
                c.poll(100)
            else:
                c.poll(0.1)

    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in consumers]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not done():
        time.sleep(0.02)
    stop.set()
    for t in threads:
        t.join(10)
    assert done()


def kafkapy_member(bs: str, group: str, topics: list[str], client_id: str) -> KafkaConsumer:
    c = KafkaConsumer({"bootstrap.servers": bs, "group.id": group, "client.id": client_id, "enable.auto.commit": False,
                       "session.timeout.ms": 6000, "heartbeat.interval.ms": 100, "auto.offset.reset": "earliest"})
    c.subscribe(topics)
    return c


# --------------------------------------------------------------------------------------------------
# list


def test_list_and_list_with_states(cli, bs, cadmin) -> None:
    topic = topic_with(bs, [1, 1])
    active, idle = uid("active"), uid("idle")
    commit(bs, idle, {TP(topic, 0): 1})
    c = kafkapy_member(bs, active, [topic], "lister")
    try:
        poll_until([c], lambda: len(c.assignment()) == 2)
        r = cg(cli, bs, "--list")
        assert r.rc == 0 and r.err == ""
        theirs = confluent_groups(cadmin)
        assert set(r.lines) == set(theirs) and {active, idle} <= set(r.lines)
        r = cg(cli, bs, "--list", "--state")
        width = max(15, *(len(g) for g in theirs)) + 10
        assert r.lines[0] == java_fmt([width, 20], ["GROUP", "STATE"])
        assert sorted(r.lines[1:]) == sorted(java_fmt([width, 20], [g, s]) for g, s in theirs.items())
        r = cg(cli, bs, "--list", "--state", "EMPTY")
        assert idle in r.text and active not in r.text
        r = cg(cli, bs, "--list", "--type")
        assert java_fmt([width, 20], [active, "Classic"]) in r.lines
        r = cg(cli, bs, "--list", "--output", "json")
        docs = json.loads(r.text)
        assert {d["groupId"] for d in docs} == set(theirs)
    finally:
        c.close()


# --------------------------------------------------------------------------------------------------
# describe


def test_describe_offsets_members_state_match_confluent(cli, bs, cadmin) -> None:
    topic = topic_with(bs, [5, 3, 4], prefix="orders")
    other = topic_with(bs, [6], prefix="other-topic-with-a-long-name")
    group = uid("mixed")
    ours = kafkapy_member(bs, group, [topic], "a-kafkapy")
    theirs = ck.Consumer({"bootstrap.servers": bs, "group.id": group, "client.id": "b-librdkafka",
                          "session.timeout.ms": 6000, "heartbeat.interval.ms": 100, "enable.auto.commit": False,
                          "partition.assignment.strategy": "range"})
    theirs.subscribe([topic])
    try:
        poll_until([ours, theirs], lambda: len(ours.assignment()) == 2)
        assert ours.assignment() == {TP(topic, 0), TP(topic, 1)}
        ours.commit_sync({TP(topic, 0): 2, TP(other, 0): 4})  # partition 1 stays uncommitted; `other` unassigned
        theirs.commit(offsets=[ck.TopicPartition(topic, 2, 1)], asynchronous=False)

        desc = cadmin.describe_consumer_groups([group])[group].result()
        committed = confluent_offsets(cadmin, group)
        members = sorted(desc.members, key=lambda m: -len(m.assignment.topic_partitions))
        probe = ck.Consumer({"bootstrap.servers": bs, "group.id": uid("probe")})
        ends = {tp: probe.get_watermark_offsets(ck.TopicPartition(tp.topic, tp.partition), timeout=10)[1]
                for tp in [TP(topic, 0), TP(topic, 1), TP(topic, 2), TP(other, 0)]}
        probe.close()
        rows = []
        for m in members:
            for tp in sorted(TP(p.topic, p.partition) for p in m.assignment.topic_partitions):
                off = committed.get(tp)
                rows.append([group, tp.topic, tp.partition, off, ends[tp], None if off is None else ends[tp] - off,
                             m.member_id, m.host, m.client_id])
        rows.append([group, other, 0, 4, ends[TP(other, 0)], ends[TP(other, 0)] - 4, None, None, None])
        widths = [max(15, len(group)), max(15, len(other)), 10, 15, 15, 15,
                  max(15, *(len(m.member_id) for m in members)), max(15, *(len(m.host) for m in members)), None]
        header = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                  "CLIENT-ID"]
        expected = "\n" + "\n".join(java_fmt(widths, r) for r in [header] + rows) + "\n"
        r = cg(cli, bs, "--describe", "--group", group)
        assert (r.rc, r.err) == (0, "")
        assert r.text == expected
        assert [row[3] for row in rows] == [2, None, 1, 4]  # ours (2 partitions) first, then theirs, then -
        assert [m.client_id for m in members] == ["a-kafkapy", "b-librdkafka"]
        assert r.lines[2].split()[6:] == [members[0].member_id, "/127.0.0.1", "a-kafkapy"]

        r = cg(cli, bs, "--describe", "--group", group, "--members")
        mw = [max(15, len(group)), max(15, *(len(m.member_id) for m in desc.members)), 15,
              max(15, *(len(m.client_id) for m in desc.members)), 15]
        assert r.lines[0] == ""
        assert r.lines[1] == java_fmt(mw, ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]) + " "
        assert sorted(r.lines[2:]) == sorted(
            java_fmt(mw, [group, m.member_id, m.host, m.client_id, len(m.assignment.topic_partitions)]) + " "
            for m in desc.members)

        r = cg(cli, bs, "--describe", "--group", group, "--members", "--verbose")
        line = next(line for line in r.lines if "a-kafkapy" in line)
        assert line.endswith(" " + java_fmt([15, 20, 15, 20], ["-", f"{topic}:0,1", "-", "-"]))

        r = cg(cli, bs, "--describe", "--group", group, "--state")
        coordinator = f"{desc.coordinator.host}:{desc.coordinator.port}  ({desc.coordinator.id})"
        sw = [max(15, len(group)), max(25, len(coordinator)), 20, 20, None]
        assert r.text == ("\n" + java_fmt(sw, ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"])
                          + "\n" + java_fmt(sw, [group, coordinator, desc.partition_assignor,
                                                 STATES[desc.state.name], 2]) + "\n")
        assert desc.partition_assignor == "range"

        r = cg(cli, bs, "--describe", "--group", group, "--output", "json")
        doc = json.loads(r.text)[0]
        assert doc["state"] == "Stable" and [(x["topic"], x["partition"], x["offset"]) for x in doc["rows"]] == \
            [(row[1], row[2], row[3]) for row in rows]
        assert doc["rows"][-1]["consumerId"] is None
    finally:
        theirs.close()
        ours.close()


def test_describe_empty_and_missing_groups(cli, bs) -> None:
    topic = topic_with(bs, [3])
    group = uid("empty")
    commit(bs, group, {TP(topic, 0): 1})
    r = cg(cli, bs, "--describe", "--group", group, "--verbose")
    assert r.rc == 0
    assert r.err == f"\nConsumer group '{group}' has no active members.\n"
    widths = [15, max(15, len(topic)), 10, 15, 15, 15, 15, 15, 15, None]
    assert r.text == "\n" + java_fmt(widths, ["GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "CURRENT-OFFSET",
                                              "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]) + "\n" + \
        java_fmt(widths, [group, topic, 0, None, 1, 3, 2, None, None, None]) + "\n"
    missing = uid("missing")
    r = cg(cli, bs, "--describe", "--group", missing)
    assert (r.rc, r.out, r.err) == (1, b"", f"Error: Consumer group '{missing}' does not exist.\n")
    r = cg(cli, bs, "--describe", "--group", group, "--state")
    assert r.err == f"\nConsumer group '{group}' has no active members.\n" and " Empty " in r.text


def test_console_consumer_group_commits_and_describe_shows_no_lag(cli, bs, cadmin) -> None:
    topic = topic_with(bs, [4, 2])
    group = uid("console")
    r = cli("console-consumer", "--bootstrap-server", bs, "--topic", topic, "--group", group, "--from-beginning",
            "--max-messages", "6", "--timeout-ms", "10000")
    assert r.rc == 0 and len(r.lines) == 6
    assert confluent_offsets(cadmin, group) == {TP(topic, 0): 4, TP(topic, 1): 2}
    r = cg(cli, bs, "--describe", "--group", group)
    lines = r.lines[2:]
    assert [line.split()[2:6] for line in lines] == [["0", "4", "4", "0"], ["1", "2", "2", "0"]]
    # the same group resumes where it stopped: nothing new to read
    produce = KafkaProducer({"bootstrap.servers": bs})
    produce.send(topic, value=b"late", partition=1)
    produce.close()
    r = cli("console-consumer", "--bootstrap-server", bs, "--topic", topic, "--group", group, "--max-messages", "1",
            "--timeout-ms", "10000")
    assert r.out == b"late\n"


# --------------------------------------------------------------------------------------------------
# reset


def reset_table(group: str, topic: str, offsets: dict[int, int]) -> list[str]:
    widths = [max(15, len(group)), max(15, len(topic)), 10, None]
    return ["", java_fmt(widths, ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"])] + [
        java_fmt(widths, [group, topic, p, o]) for p, o in offsets.items()]


def test_reset_offsets_dry_run_execute_export_and_from_file(cli, bs, cadmin, tmp_path) -> None:
    topic = topic_with(bs, [10, 4, 7])
    group = uid("reset")
    commit(bs, group, {TP(topic, 0): 6, TP(topic, 1): 2})

    r = cg(cli, bs, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest")
    assert r.rc == 0 and r.err.startswith("WARN: No action will be performed as the --execute option is missing.In ")
    assert sorted(r.lines) == sorted(reset_table(group, topic, {0: 0, 1: 0, 2: 0}))
    assert confluent_offsets(cadmin, group) == {TP(topic, 0): 6, TP(topic, 1): 2}  # dry run changed nothing

    r = cg(cli, bs, "--reset-offsets", "--group", group, "--all-topics", "--to-offset", "3", "--execute")
    assert (r.rc, r.err) == (0, "")
    assert sorted(r.lines) == sorted(reset_table(group, topic, {0: 3, 1: 3}))
    assert confluent_offsets(cadmin, group) == {TP(topic, 0): 3, TP(topic, 1): 3}

    r = cg(cli, bs, "--reset-offsets", "--group", group, "--topic", f"{topic}:0,1", "--shift-by", "-5", "--dry-run")
    assert r.err == (f"WARN New offset (-2) is lower than earliest offset for topic partition {topic}-0. Value will "
                     f"be set to 0.\nWARN New offset (-2) is lower than earliest offset for topic partition "
                     f"{topic}-1. Value will be set to 0.\n")
    r = cg(cli, bs, "--reset-offsets", "--group", group, "--topic", topic, "--to-current", "--dry-run")
    assert sorted(r.lines) == sorted(reset_table(group, topic, {0: 3, 1: 3, 2: 7}))

    r = cg(cli, bs, "--reset-offsets", "--group", group, "--topic", topic, "--to-latest", "--dry-run", "--export")
    assert r.rc == 0
    assert sorted(r.text.split("\n")) == sorted(["", "", f"{topic},0,10", f"{topic},1,4", f"{topic},2,7"])
    assert r.text.endswith("\n\n")
    plan = tmp_path / "plan.csv"
    plan.write_text(r.text)
    r = cg(cli, bs, "--reset-offsets", "--group", group, "--from-file", str(plan), "--execute")
    assert r.rc == 0 and sorted(r.lines) == sorted(reset_table(group, topic, {0: 10, 1: 4, 2: 7}))
    assert confluent_offsets(cadmin, group) == {TP(topic, 0): 10, TP(topic, 1): 4, TP(topic, 2): 7}

    r = cg(cli, bs, "--reset-offsets", "--group", group, "--topic", topic, "--by-duration", "P1D", "--dry-run")
    assert sorted(r.lines) == sorted(reset_table(group, topic, {0: 0, 1: 0, 2: 0}))
    r = cg(cli, bs, "--reset-offsets", "--group", group, "--topic", topic, "--output", "json", "--to-offset", "1",
           "--dry-run")
    assert json.loads(r.text) == {"groups": {group: [{"topic": topic, "partition": p, "offset": 1}
                                                     for p in json_order(r.text, group)]}, "errors": []}


def json_order(text: str, group: str) -> list[int]:
    return [x["partition"] for x in json.loads(text)["groups"][group]]


def test_reset_to_datetime_and_several_groups(cli, bs, cadmin) -> None:
    base = 1_700_000_000_000
    topic = topic_with(bs, [4], timestamps=[base, base + 1000, base + 2000, base + 3000])
    g1, g2 = uid("dt1"), uid("dt2")
    for g in (g1, g2):
        commit(bs, g, {TP(topic, 0): 0})
    when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((base + 1500) // 1000)) + ".500"
    r = cg(cli, bs, "--reset-offsets", "--group", g1, "--group", g2, "--topic", topic, "--to-datetime", when,
           "--execute", "--export")
    assert r.rc == 0
    assert sorted(r.text.split("\n")) == sorted(["", "", f"{g1},{topic},0,2", f"{g2},{topic},0,2"])
    assert confluent_offsets(cadmin, g1) == confluent_offsets(cadmin, g2) == {TP(topic, 0): 2}
    r = cg(cli, bs, "--reset-offsets", "--group", g1, "--topic", topic, "--to-datetime", "2100-01-01T00:00:00.000",
           "--dry-run")
    assert r.lines[:2] == ["", f"Warn: Partition 0 from topic {topic} is empty. Falling back to latest known offset."]
    assert r.lines[2:] == reset_table(g1, topic, {0: 4})


def test_reset_refused_while_group_is_active(cli, bs, cadmin) -> None:
    topic = topic_with(bs, [2])
    group = uid("busy")
    c = kafkapy_member(bs, group, [topic], "busy-client")
    try:
        poll_until([c], lambda: len(c.assignment()) == 1)
        c.commit_sync({TP(topic, 0): 1})
        r = cg(cli, bs, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
        assert r.rc == 1
        assert r.err == (f"Error: Assignments can only be reset if the group '{group}' is inactive, but the current "
                         "state is Stable.\n")
        assert r.lines == ["", java_fmt([15, 15, 10, None], ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"])]
        assert confluent_offsets(cadmin, group) == {TP(topic, 0): 1}
    finally:
        c.close()


# --------------------------------------------------------------------------------------------------
# delete


def test_delete_offsets_and_groups(cli, bs, cadmin) -> None:
    topic, keep = topic_with(bs, [2, 2]), topic_with(bs, [1])
    idle, busy = uid("idle"), uid("busy")
    commit(bs, idle, {TP(topic, 0): 1, TP(topic, 1): 2, TP(keep, 0): 1})
    r = cg(cli, bs, "--delete-offsets", "--group", idle, "--topic", topic)
    tw = max(15, len(topic))
    assert (r.rc, r.err) == (0, "")
    assert r.text == (f"Request succeeded for deleting offsets from group {idle}.\n\n"
                      + java_fmt([tw, 10, 15], ["TOPIC", "PARTITION", "STATUS"]) + "\n"
                      + java_fmt([tw, 10, 15], [topic, 0, "Successful"]) + "\n"
                      + java_fmt([tw, 10, 15], [topic, 1, "Successful"]) + "\n")
    assert confluent_offsets(cadmin, idle) == {TP(keep, 0): 1}

    c = kafkapy_member(bs, busy, [topic], "busy")
    try:
        poll_until([c], lambda: len(c.assignment()) == 2)
        c.commit_sync({TP(topic, 0): 1})
        r = cg(cli, bs, "--delete-offsets", "--group", busy, "--topic", f"{topic}:0")
        assert r.rc == 1
        assert r.err == "Error: Encountered some partition-level error, see the follow-up details.\n"
        assert r.lines[-1] == java_fmt([tw, 10, 15], [topic, 0, "Error: org.apache.kafka.common.errors."
                                                      "GroupSubscribedToTopicException: The consumer group is "
                                                      "actively subscribed to the topic"])
        r = cg(cli, bs, "--delete", "--group", busy, "--group", idle)
        assert r.rc == 1
        assert r.err == ("Error: Deletion of some consumer groups failed:\n"
                         f"* Group '{busy}' could not be deleted due to: org.apache.kafka.common.errors."
                         "GroupNotEmptyException: The group is not empty.\n")
        assert r.text == f"\nThese consumer groups were deleted successfully: '{idle}'\n"
    finally:
        c.close()
    r = cg(cli, bs, "--delete", "--group", busy)
    assert (r.rc, r.text, r.err) == (0, f"Deletion of requested consumer groups ('{busy}') was successful.\n", "")
    assert busy not in confluent_groups(cadmin) and idle not in confluent_groups(cadmin)


# --------------------------------------------------------------------------------------------------
# flags


@pytest.mark.parametrize("args,message", [
    ([], "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
         "--delete-offsets, --validate-regex"),
    (["--describe"], "Option [describe] takes one of these options: [group], [all-groups]"),
    (["--describe", "--group", "g", "--members", "--state"],
     "Option [describe] takes at most one of these options: [members], [offsets], [state]"),
    (["--describe", "--group", "g", "--state", "stable"], "Option [describe] does not take a value for [state]"),
    (["--delete", "--group", "g", "--topic", "t"],
     "The consumer does not support topic-specific offset deletion from a consumer group."),
    (["--delete-offsets", "--group", "g"], "Option [delete-offsets] takes the following options: [group], [topic]"),
    (["--reset-offsets", "--group", "g", "--dry-run", "--execute", "--to-earliest", "--all-topics"],
     "Option [reset-offsets] only accepts one of [execute] and [dry-run]"),
    (["--reset-offsets", "--group", "g", "--to-earliest", "--to-latest", "--all-topics", "--dry-run"],
     'Option "[to-earliest]" can\'t be used with option "[to-latest]"'),
    (["--list", "--group", "g"], 'Option "[group]" can\'t be used with option "[list]"'),
    (["--describe", "--group", "g", "--all-groups"], 'Option "[group]" can\'t be used with option "[all-groups]"'),
    (["--list", "--members"], "Option(s) [members] are unavailable given other options on the command line"),
])
def test_usage_errors(cli, args: list[str], message: str) -> None:
    r = cli("consumer-groups", "--bootstrap-server", "127.0.0.1:1", *args)
    assert (r.rc, r.out) == (2, b"")
    assert r.err == f"kafkapy consumer-groups: error: {message}\n"


def test_reset_scope_required_and_shift_without_commit(cli, bs) -> None:
    topic = topic_with(bs, [1])
    group = uid("scope")
    r = cg(cli, bs, "--reset-offsets", "--group", group, "--to-earliest", "--dry-run")
    assert (r.rc, r.err) == (2, "kafkapy consumer-groups: error: One of the reset scopes should be defined: "
                                "--all-topics, --topic.\n")
    r = cg(cli, bs, "--reset-offsets", "--group", group, "--topic", topic, "--shift-by", "1", "--dry-run")
    assert r.rc == 2 and f"Cannot shift offset for partition {topic}-0 since there is no current committed offset" \
        in r.err
    r = cg(cli, bs, "--reset-offsets", "--group", group, "--topic", f"{topic}:7", "--to-earliest", "--dry-run")
    assert (r.rc, r.err) == (1, "Error: Executing consumer group command failed due to The partitions "
                                f"\"{topic}-7\" do not exist\n")
    r = cg(cli, bs, "--validate-regex", "a[")
    assert r.rc == 0 and r.text.startswith("The regular expression `a[` is invalid: ")


def test_all_groups_and_json_for_every_action(cli, bs, cadmin) -> None:
    topic = topic_with(bs, [2])
    g1, g2 = uid("jz1"), uid("jz2")
    for g in (g1, g2):
        commit(bs, g, {TP(topic, 0): 1})
    r = cg(cli, bs, "--describe", "--all-groups", "--state")
    names = set(confluent_groups(cadmin))
    blocks = [b for b in r.text.split("\n\nGROUP") if b.strip()]
    assert len(blocks) == len(names)
    described = [line.split()[0] for line in r.lines if line and not line.startswith("GROUP")]
    assert described == sorted(names)  # Kafka's TreeMap: groups in id order
    docs = json.loads(cg(cli, bs, "--describe", "--group", g1, "--group", g2, "--members", "--output", "json").text)
    assert [(d["group"], d["state"], d["members"]) for d in docs] == [(g1, "Empty", []), (g2, "Empty", [])]
    docs = json.loads(cg(cli, bs, "--describe", "--group", g1, "--state", "--output", "json").text)
    assert docs[0]["group"] == g1 and docs[0]["state"] == "Empty" and docs[0]["numMembers"] == 0
    doc = json.loads(cg(cli, bs, "--delete-offsets", "--group", g1, "--topic", topic, "--output", "json").text)
    assert doc == {"group": g1, "error": None, "partitions": [{"topic": topic, "partition": 0, "status": "Successful"}]}
    doc = json.loads(cg(cli, bs, "--delete", "--group", g1, "--group", g2, "--output", "json").text)
    # g1 lost its last offsets above, so the coordinator dropped it (Kafka's Empty -> Dead): only g2 remains.
    assert doc == {"deleted": [g2], "failed": {g1: "org.apache.kafka.common.errors.GroupIdNotFoundException: The "
                                                   "group id does not exist."}}
    assert not {g1, g2} & set(confluent_groups(cadmin))
