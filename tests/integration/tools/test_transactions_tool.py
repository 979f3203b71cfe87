"""`kafkapy transactions` against a live hanging transaction (a confluent-kafka producer that began a
transaction and never ends it): list, describe, describe-producers, find-hanging, then abort by start
offset, which releases the LSO for read_committed readers; --output json; Kafka's failure messages."""

from __future__ import annotations

import json

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


def lso(bootstrap: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "tool-lso", "isolation.level": "read_committed"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1]
    finally:
        c.close()


def test_list_describe_and_abort_a_hanging_transaction(kafkapy_broker, cli, unique_topic) -> None:
    bootstrap = kafkapy_broker.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(unique_topic, 1, 1)]).values():
        f.result(30)
    txn_id = f"tool-{unique_topic}"
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    p.init_transactions(60)
    p.begin_transaction()
    p.produce(unique_topic, b"a")
    p.produce(unique_topic, b"b")
    p.flush(10)
    assert lso(bootstrap, unique_topic) == 0

    r = cli("transactions", "--bootstrap-server", bootstrap, "list")
    assert r.rc == 0, r.err
    assert r.lines[0].split() == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
    row = next(line for line in r.lines if line.startswith(txn_id + " ") or line.startswith(txn_id + "\t"))
    assert row.split()[1] == "0" and row.split()[3] == "Ongoing"
    producer_id = row.split()[2]
    assert all(line.endswith("\t") for line in r.lines)

    r = cli("transactions", "--bootstrap-server", bootstrap, "describe", "--transactional-id", txn_id)
    assert r.rc == 0, r.err
    header, values = r.lines[0].split(), r.lines[1].split("\t")
    described = dict(zip(header, (v.strip() for v in values), strict=False))
    assert described["TransactionState"] == "Ongoing"
    assert described["ProducerId"] == producer_id and described["ProducerEpoch"] == "0"
    assert described["TopicPartitions"] == f"{unique_topic}-0"
    assert int(described["TransactionDurationMs"]) >= 0

    r = cli("transactions", "--bootstrap-server", bootstrap, "describe-producers", "--topic", unique_topic,
            "--partition", "0")
    assert r.rc == 0, r.err
    assert r.lines[0].split() == ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence",
                                  "LastTimestamp", "CurrentTransactionStartOffset"]
    cols = r.lines[1].split()
    assert (cols[0], cols[1], cols[2], cols[3], cols[5]) == (producer_id, "0", "-1", "1", "0")

    # --broker-id names the replica to ask (a fresh client learns its address from Metadata first).
    by_broker = cli("transactions", "--bootstrap-server", bootstrap, "describe-producers", "--topic", unique_topic,
                    "--partition", "0", "--broker-id", "0")
    assert (by_broker.rc, by_broker.lines) == (0, r.lines), by_broker.err

    r = cli("transactions", "--bootstrap-server", bootstrap, "find-hanging", "--topic", unique_topic,
            "--max-transaction-timeout", "0")
    assert r.rc == 0, r.err
    assert len(r.lines) == 1  # the coordinator still lists the partition: open, not hanging
    r = cli("transactions", "--bootstrap-server", bootstrap, "find-hanging", "--broker-id", "0",
            "--max-transaction-timeout", "0")
    assert (r.rc, len(r.lines)) == (0, 1), r.err

    r = cli("transactions", "--bootstrap-server", bootstrap, "--output", "json", "list")
    assert r.rc == 0, r.err
    listed = json.loads(r.text)
    assert {"TransactionalId": txn_id, "Coordinator": 0, "ProducerId": int(producer_id),
            "TransactionState": "Ongoing"} in listed
    r = cli("transactions", "--bootstrap-server", bootstrap, "--output", "json", "describe", "--transactional-id",
            txn_id)
    [doc] = json.loads(r.text)
    assert (doc["ProducerId"], doc["ProducerEpoch"], doc["TopicPartitions"]) == (int(producer_id), 0,
                                                                                 [f"{unique_topic}-0"])
    assert isinstance(doc["TransactionTimeoutMs"], int) and doc["TransactionDurationMs"] >= 0

    r = cli("transactions", "--bootstrap-server", bootstrap, "abort", "--topic", unique_topic, "--partition", "0",
            "--start-offset", "0")
    assert r.rc == 0, r.err
    assert r.text == ""
    assert lso(bootstrap, unique_topic) == 3  # two records and the ABORT marker
    r = cli("transactions", "--bootstrap-server", bootstrap, "describe-producers", "--topic", unique_topic,
            "--partition", "0")
    assert r.lines[1].split()[5] == "None"
    p.purge()


def test_failures_use_kafkas_messages(kafkapy_broker, cli, unique_topic) -> None:
    bootstrap = kafkapy_broker.bootstrap
    r = cli("transactions", "--bootstrap-server", bootstrap, "describe", "--transactional-id", "no-such-id")
    assert r.rc == 1
    assert r.err.startswith("Failed to describe transaction state of transactional-id `no-such-id`: ")
    assert r.err.rstrip().endswith("Enable debug logging for additional detail.")
    r = cli("transactions", "--bootstrap-server", bootstrap, "find-hanging")
    assert r.rc == 1
    assert "requires either --topic or --broker-id" in r.err
    r = cli("transactions", "--bootstrap-server", bootstrap, "abort", "--topic", "t", "--partition", "0")
    assert r.rc == 1 and "must be identified either with --start-offset" in r.err
