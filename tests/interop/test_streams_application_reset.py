"""`kafkapy streams-application-reset` against an in-process broker, with confluent-kafka consumers.

A "Streams application" is played by a confluent-kafka consumer group named after the application id,
which consumed and committed on its input topics; the tool's text (Kafka's lines), the committed offsets
a new consumer of the group resumes from, the deleted internal topics, --dry-run, --force, the offset
scenarios and an unknown internal topic are checked. One broker for the module.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer  # noqa: E402
from confluent_kafka import TopicPartition as CkTp  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from kafkapy.cli.streams_application_reset import main as reset_main  # noqa: E402
from kafkapy.testing import KafkaBroker  # noqa: E402

OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
             "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1"}


@pytest.fixture(scope="module")
def broker() -> Iterator[KafkaBroker]:
    with KafkaBroker(overrides=OVERRIDES) as b:
        yield b


def create(bootstrap: str, *names: str, partitions: int = 2) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(n, partitions, 1) for n in names]).values():
        f.result(30)


def topics(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2})
    for p in range(partitions):
        for i in range(per_partition):
            producer.produce(topic, value=f"{topic}-p{p}-{i}".encode(), partition=p)
    assert producer.flush(30) == 0


def consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})


def consume_all_and_commit(bootstrap: str, group: str, topic_names: list[str], expected: int) -> None:
    c = consumer(bootstrap, group)
    c.subscribe(topic_names)
    seen = 0
    deadline = time.monotonic() + 30
    while seen < expected:
        assert time.monotonic() < deadline, f"read {seen} of {expected}"
        msg = c.poll(0.1)
        if msg is not None and msg.error() is None:
            seen += 1
    c.commit(asynchronous=False)
    c.close()


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> list[int]:
    c = consumer(bootstrap, group)
    try:
        return [tp.offset for tp in c.committed([CkTp(topic, p) for p in range(partitions)], timeout=10)]
    finally:
        c.close()


def run_tool(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = reset_main(list(argv))
    cap = capsys.readouterr()
    return code, cap.out.splitlines(), cap.err


def test_reset_to_earliest_resets_offsets_and_deletes_internal_topics(broker, capsys) -> None:
    app, bs = "wordcount", broker.bootstrap
    create(bs, "wc-input", f"{app}-counts-store-changelog", f"{app}-KSTREAM-AGGREGATE-0000000003-repartition",
           "other-app-x-changelog", f"{app}-output")
    produce(bs, "wc-input", 2, 5)
    consume_all_and_commit(bs, app, ["wc-input"], 10)
    assert committed(bs, app, "wc-input", 2) == [5, 5]

    code, out, _ = run_tool(capsys, "--bootstrap-server", bs, "--application-id", app, "--input-topics",
                            "wc-input", "--dry-run")
    assert code == 0
    assert out[0] == "----Dry run displays the actions which will be performed when running Streams Reset Tool----"
    assert out[1:3] == ["Reset-offsets for input topics [wc-input]",
                        "Following input topics offsets will be reset to (for consumer group wordcount)"]
    assert sorted(out[3:5]) == ["Topic: wc-input Partition: 0 Offset: 0", "Topic: wc-input Partition: 1 Offset: 0"]
    assert out[5:] == ["Done.", f"Deleting inferred internal topics [{app}-KSTREAM-AGGREGATE-0000000003-repartition,"
                       f" {app}-counts-store-changelog]", "Done."]
    assert committed(bs, app, "wc-input", 2) == [5, 5]  # dry run: nothing changed
    assert f"{app}-counts-store-changelog" in topics(bs)

    code, out, _ = run_tool(capsys, "--bootstrap-server", bs, "--application-id", app, "--input-topics", "wc-input")
    assert code == 0
    assert out[-2:] == [f"Deleting inferred internal topics [{app}-KSTREAM-AGGREGATE-0000000003-repartition,"
                        f" {app}-counts-store-changelog]", "Done."]
    assert committed(bs, app, "wc-input", 2) == [0, 0]
    left = topics(bs)
    assert f"{app}-counts-store-changelog" not in left
    assert f"{app}-KSTREAM-AGGREGATE-0000000003-repartition" not in left
    assert {"wc-input", "other-app-x-changelog", f"{app}-output"} <= left  # output topics are kept

    # a consumer of the group now reads everything again, from offset 0
    c = consumer(bs, app)
    c.subscribe(["wc-input"])
    got: list[tuple[int, int, bytes]] = []
    deadline = time.monotonic() + 30
    while len(got) < 10:
        assert time.monotonic() < deadline
        msg = c.poll(0.1)
        if msg is not None and msg.error() is None:
            got.append((msg.partition(), msg.offset(), msg.value()))
    c.close()
    assert sorted(got) == [(p, i, f"wc-input-p{p}-{i}".encode()) for p in range(2) for i in range(5)]


def test_offset_scenarios_and_intermediate_topics(broker, capsys, tmp_path) -> None:
    app, bs = "scenarios", broker.bootstrap
    create(bs, "sc-in", "sc-through", partitions=1)
    produce(bs, "sc-in", 1, 6)
    produce(bs, "sc-through", 1, 4)
    consume_all_and_commit(bs, app, ["sc-in"], 6)

    code, out, _ = run_tool(capsys, "--bootstrap-server", bs, "--application-id", app, "--input-topics", "sc-in",
                            "--shift-by", "-2", "--intermediate-topics", "sc-through")
    assert code == 0
    assert out[:3] == ["Reset-offsets for input topics [sc-in]", "Seek-to-end for intermediate topics [sc-through]",
                       "Following input topics offsets will be reset to (for consumer group scenarios)"]
    assert out[3:7] == ["Topic: sc-in Partition: 0 Offset: 4",
                        "Following intermediate topics offsets will be reset to end (for consumer group scenarios)",
                        "Topic: sc-through", "Done."]
    assert committed(bs, app, "sc-in", 1) == [4]
    assert committed(bs, app, "sc-through", 1) == [4]

    code, out, _ = run_tool(capsys, "--bootstrap-server", bs, "--application-id", app, "--input-topics", "sc-in",
                            "--to-offset", "99")
    assert out[2:4] == ["New offset (99) is higher than latest offset. Value will be set to 6",
                        "Topic: sc-in Partition: 0 Offset: 6"]
    assert committed(bs, app, "sc-in", 1) == [6]

    plan = tmp_path / "plan.csv"
    plan.write_text("sc-in,0,3")
    code, out, _ = run_tool(capsys, "--bootstrap-server", bs, "--application-id", app, "--input-topics", "sc-in",
                            "--from-file", str(plan), "--output", "json")
    assert code == 0
    doc = json.loads("\n".join(out))
    assert doc["inputOffsets"] == [{"topic": "sc-in", "partition": 0, "offset": 3}]
    assert doc["deletedTopics"] == [] and doc["dryRun"] is False
    assert committed(bs, app, "sc-in", 1) == [3]

    code, out, _ = run_tool(capsys, "--bootstrap-server", bs, "--application-id", app, "--input-topics",
                            "sc-in,sc-missing", "--to-latest")
    assert code == 1  # a missing input topic is skipped, exit code 1 as Kafka
    assert out[1:3] == ["Following input topics are not found, skipping them", "Topic: sc-missing"]
    assert committed(bs, app, "sc-in", 1) == [6]


def test_active_members_refused_unless_force(broker, capsys) -> None:
    app, bs = "busy-app", broker.bootstrap
    create(bs, "busy-in", partitions=1)
    produce(bs, "busy-in", 1, 3)
    c = consumer(bs, app)
    c.subscribe(["busy-in"])
    deadline = time.monotonic() + 30
    while not c.assignment():
        assert time.monotonic() < deadline
        c.poll(0.1)
    try:
        code, out, err = run_tool(capsys, "--bootstrap-server", bs, "--application-id", app, "--input-topics",
                                  "busy-in")
        assert code == 1
        assert err.startswith("ERROR: java.lang.IllegalStateException: Consumer group 'busy-app' is still active "
                              "and has following members: [(memberId=rdkafka-")
        assert "assignment=(topicPartitions=busy-in-0), targetAssignment=Optional.empty)]. Make sure to stop" in err

        code, out, err = run_tool(capsys, "--bootstrap-server", bs, "--application-id", app, "--input-topics",
                                  "busy-in", "--force")
        assert code == 0, err
        assert out[0] == "Force deleting all active members in the group: busy-app"
        assert "Topic: busy-in Partition: 0 Offset: 0" in out
        assert committed(bs, app, "busy-in", 1) == [0]
    finally:
        c.close()


def test_internal_topics_must_be_inferred_ones(broker, capsys) -> None:
    bs = broker.bootstrap
    create(bs, "strict-a-output", partitions=1)
    code, out, err = run_tool(capsys, "--bootstrap-server", bs, "--application-id", "strict",
                              "--internal-topics", "strict-a-output")
    assert code == 1
    assert out == ["No input or intermediate topics specified. Skipping seek."]
    assert err.startswith("ERROR: java.lang.IllegalArgumentException: Invalid topic specified in the "
                          "--internal-topics option.")
    assert "strict-a-output" in topics(bs)

    code, _, err = run_tool(capsys, "--bootstrap-server", bs, "--application-id", "strict", "--to-earliest",
                            "--to-latest")
    assert code == 2 and "can't be used with option" in err
