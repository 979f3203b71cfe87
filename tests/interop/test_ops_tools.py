"""Operator tools against one in-process kafkapy broker with real clients (issue 17, items 8-11):
console-consumer's internal-topic formatters over confluent-kafka's commits and transactions."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from kafkapy.cli.main import app

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


@dataclass
class Result:
    rc: int
    out: bytes
    err: str


def cli(*argv: str, env: dict[str, str] | None = None) -> Result:
    r = CliRunner().invoke(app, list(argv), env=env, catch_exceptions=False, prog_name="kafkapy")
    return Result(r.exit_code, r.stdout_bytes, r.stderr_bytes.decode("utf-8", errors="replace"))


@pytest.fixture(scope="module")
def committed(kafkapy_broker):
    """A group's commit (offset 3, leader epoch 0) and a committed transaction by confluent-kafka."""
    bs = kafkapy_broker.bootstrap
    admin = AdminClient({"bootstrap.servers": bs})
    for f in admin.create_topics([NewTopic("ops-fmt", 1, 1)]).values():
        f.result(30)
    producer = Producer({"bootstrap.servers": bs, "transactional.id": "ops-txn", "linger.ms": 0})
    producer.init_transactions(30)
    producer.begin_transaction()
    for v in (b"a", b"b", b"c"):
        producer.produce("ops-fmt", v, partition=0)
    producer.commit_transaction(30)
    consumer = Consumer({"bootstrap.servers": bs, "group.id": "ops-fmt-g", "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition("ops-fmt", 0, 3, leader_epoch=0)], asynchronous=False)
    consumer.close()
    return bs


def _consume(bs: str, topic: str, formatter: str) -> Result:
    return cli("console-consumer", "--bootstrap-server", bs, "--topic", topic, "--from-beginning",
               "--timeout-ms", "1000", "--formatter", formatter)


def test_scala_offsets_formatter_prints_commits_after_the_deprecation_warning(committed) -> None:
    name = "kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter"
    r = _consume(committed, "__consumer_offsets", name)
    assert r.rc == 0, r.err
    lines = [line for line in r.out.decode().splitlines() if line.startswith("[ops-fmt-g,")]
    assert len(lines) == 1, r.out
    assert re.fullmatch(r"\[ops-fmt-g,ops-fmt,0\]::OffsetAndMetadata\(offset=3, leaderEpoch=Optional\[0\], "
                        r"metadata=, commitTimestamp=\d{13}, expireTimestamp=None\)", lines[0]), lines[0]
    assert r.err.splitlines()[0] == (
        f"WARNING: {name} is deprecated and will be removed in the next major release. "
        "Please use org.apache.kafka.tools.consumer.OffsetsMessageFormatter instead")


def test_json_offsets_and_group_formatters(committed) -> None:
    r = _consume(committed, "__consumer_offsets", "org.apache.kafka.tools.consumer.OffsetsMessageFormatter")
    assert r.rc == 0 and "WARNING" not in r.err
    docs = [json.loads(d) for d in re.findall(rb'\{"key".*?\}\}\}', r.out)]  # Kafka 3.9 writes no separator
    ours = [d for d in docs if d["key"]["data"]["group"] == "ops-fmt-g"]
    assert len(ours) == 1
    assert ours[0]["key"]["data"] == {"group": "ops-fmt-g", "topic": "ops-fmt", "partition": 0}
    value = ours[0]["value"]
    assert value["data"]["offset"] == 3 and value["data"]["metadata"] == ""
    assert value["data"].get("leaderEpoch", 0) == 0

    r = _consume(committed, "__consumer_offsets",
                 "kafka.coordinator.group.GroupMetadataManager$GroupMetadataMessageFormatter")
    assert r.rc == 0
    # the committing consumer never joined: its group has only an (empty) metadata record, if any
    assert all(line.startswith("ops-fmt-g::GroupMetadata(groupId=ops-fmt-g, ") or not line.startswith("ops-fmt-g")
               for line in r.out.decode().splitlines())


def test_transaction_log_formatters_show_the_committed_transaction(committed) -> None:
    r = _consume(committed, "__transaction_state",
                 "kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter")
    assert r.rc == 0, r.err
    lines = r.out.decode().splitlines()
    states = [re.search(r"state=(\w+)", line).group(1) for line in lines if line.startswith("ops-txn::")]
    assert states[:1] == ["Empty"] and states[-1] == "CompleteCommit" and "Ongoing" in states, lines
    ongoing = next(line for line in lines if "state=Ongoing" in line)
    assert "topicPartitions=HashSet(ops-fmt-0)" in ongoing and "pendingState=None" in ongoing

    r = _consume(committed, "__transaction_state", "org.apache.kafka.tools.consumer.TransactionLogMessageFormatter")
    docs = [json.loads(d) for d in re.findall(rb'\{"key".*?\}\}\}', r.out)]
    assert {d["key"]["data"]["transactionalId"] for d in docs} == {"ops-txn"}
    assert docs[-1]["value"]["data"]["transactionStatus"] == 4  # CompleteCommit
