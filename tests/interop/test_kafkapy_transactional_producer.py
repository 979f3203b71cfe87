"""kafkapy's own transactional producer (client/transaction_manager.py) against an in-process kafkapy broker,
checked by a real client: a read_committed confluent-kafka (librdkafka) consumer sees exactly the committed
records and none of the aborted ones, a second producer with the same transactional.id fences the first,
send_offsets_to_transaction commits a group's offsets with the transaction only, and
`producer-perf-test --transactional-id` writes N records in committed transactions."""

from __future__ import annotations

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient  # noqa: E402
from txn_support import consume_all, create_topic, group_offset, start_txn_broker  # noqa: E402

from kafkapy.client.producer import KafkaProducer  # noqa: E402
from kafkapy.client.transaction_manager import State  # noqa: E402
from kafkapy.common.errors import ProducerFencedError  # noqa: E402
from kafkapy.common.topic_partition import TopicPartition as KTopicPartition  # noqa: E402


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = start_txn_broker(str(tmp_path_factory.mktemp("kafkapy-own-txn")))
    try:
        yield b
    finally:
        b.server.shutdown()


def txn_producer(bootstrap: str, txn_id: str, **extra) -> KafkaProducer:
    p = KafkaProducer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5, **extra})
    p.init_transactions(30)
    return p


def test_commit_and_abort_seen_by_read_committed_confluent_consumer(broker) -> None:
    bootstrap, topic = broker.bootstrap, "own-txn-commit-abort"
    create_topic(bootstrap, topic, 2)
    p = txn_producer(bootstrap, "own-tx-1")
    try:
        assert p.transaction_manager is not None and p.transaction_manager.state is State.READY
        p.begin_transaction()
        first = [p.send(topic, f"c1-{i}".encode(), partition=i % 2) for i in range(10)]
        p.commit_transaction(30)
        assert [f.result(0).offset for f in first[:2]] == [0, 0]
        p.begin_transaction()
        for i in range(6):
            p.send(topic, f"a-{i}".encode(), partition=i % 2)
        p.flush(30)  # the aborted records really are in the log
        p.abort_transaction(30)
        p.begin_transaction()
        for i in range(4):
            p.send(topic, f"c2-{i}".encode(), partition=i % 2)
        p.commit_transaction(30)
        assert p.transaction_manager.state is State.READY
    finally:
        p.close(10)

    committed = consume_all(bootstrap, topic, 2, "read_committed")
    by_part = {q: [v.decode() for part, _, v in committed if part == q] for q in (0, 1)}
    assert by_part == {0: ["c1-0", "c1-2", "c1-4", "c1-6", "c1-8", "c2-0", "c2-2"],
                       1: ["c1-1", "c1-3", "c1-5", "c1-7", "c1-9", "c2-1", "c2-3"]}
    # Offsets: 5 committed + marker, 3 aborted + marker, then the second committed transaction.
    assert [o for part, o, _ in committed if part == 0] == [0, 1, 2, 3, 4, 10, 11]
    uncommitted = consume_all(bootstrap, topic, 2, "read_uncommitted")
    assert sorted(v.decode() for _, _, v in uncommitted if v.startswith(b"a-")) == [f"a-{i}" for i in range(6)]
    assert len(uncommitted) == 20


def test_second_producer_with_same_transactional_id_fences_the_first(broker) -> None:
    bootstrap, topic = broker.bootstrap, "own-txn-fencing"
    create_topic(bootstrap, topic, 1)
    zombie = txn_producer(bootstrap, "own-tx-fence")
    try:
        zombie.begin_transaction()
        zombie.send(topic, b"zombie-1")
        zombie.flush(30)
        successor = txn_producer(bootstrap, "own-tx-fence")
        try:
            # The coordinator bumps the epoch to abort the open transaction, then again for the successor.
            assert successor.transaction_manager.producer_epoch == zombie.transaction_manager.producer_epoch + 2
            successor.begin_transaction()
            successor.send(topic, b"successor-1")
            successor.commit_transaction(30)
            zombie.send(topic, b"zombie-2")
            with pytest.raises(ProducerFencedError):
                zombie.commit_transaction(30)
            assert zombie.transaction_manager.state is State.FATAL_ERROR
            with pytest.raises(ProducerFencedError, match="has been fenced by another producer with the same "
                               "transactionalId"):
                zombie.begin_transaction()
        finally:
            successor.close(10)
    finally:
        zombie.close(10)
    assert [v for _, _, v in consume_all(bootstrap, topic, 1, "read_committed")] == [b"successor-1"]


def test_send_offsets_to_transaction_commits_group_offsets_atomically(broker) -> None:
    bootstrap, src, dst, group = broker.bootstrap, "own-txn-src", "own-txn-dst", "own-txn-group"
    create_topic(bootstrap, src, 1)
    create_topic(bootstrap, dst, 1)
    p = txn_producer(bootstrap, "own-tx-offsets")
    try:
        p.begin_transaction()
        p.send(dst, b"out-1")
        p.send_offsets_to_transaction({KTopicPartition(src, 0): 5}, group, 30)
        p.abort_transaction(30)
        assert group_offset(bootstrap, group, src) < 0  # aborted: no offset
        p.begin_transaction()
        p.send(dst, b"out-2")
        p.send_offsets_to_transaction({KTopicPartition(src, 0): 7}, group, 30)
        p.commit_transaction(30)
    finally:
        p.close(10)
    assert group_offset(bootstrap, group, src) == 7
    assert [v for _, _, v in consume_all(bootstrap, dst, 1, "read_committed")] == [b"out-2"]


def test_producer_perf_test_transactional_id_commits_every_record(broker, capsys) -> None:
    from kafkapy.cli.producer_perf_test import main

    bootstrap, topic, n = broker.bootstrap, "own-txn-perf", 3000
    create_topic(bootstrap, topic, 1)
    # 20,000 records/s: the 3000 records take about 150 ms, so several 20 ms transactions are committed.
    rc = main(["--topic", topic, "--num-records", str(n), "--record-size", "20", "--throughput", "20000",
               "--bootstrap-server", bootstrap, "--transactional-id", "perf-tx", "--transaction-duration-ms", "20"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.splitlines()[-1].startswith(f"{n} records sent, ")
    records = consume_all(bootstrap, topic, 1, "read_committed")
    assert len(records) == n and all(len(v) == 20 for _, _, v in records)
    markers = records[-1][1] + 1 - n  # commit markers between the records
    assert markers >= 3
    from kafkapy.client.admin import AdminClient as KAdminClient

    admin = KAdminClient({"bootstrap.servers": bootstrap})
    try:
        desc = admin.describe_transactions(["perf-tx"])["perf-tx"]
    finally:
        admin.close()
    assert not isinstance(desc, Exception) and desc.state == "CompleteCommit"


def test_close_aborts_an_open_transaction(broker) -> None:
    bootstrap, topic = broker.bootstrap, "own-txn-close"
    create_topic(bootstrap, topic, 1)
    p = txn_producer(bootstrap, "own-tx-close")
    p.begin_transaction()
    p.send(topic, b"never-committed")
    p.flush(30)
    p.close(10)  # Kafka's Sender: "Aborting incomplete transaction due to shutdown"
    assert p.transaction_manager.state is State.READY
    assert consume_all(bootstrap, topic, 1, "read_committed") == []  # the LSO moved past the aborted record
    assert [v for _, _, v in consume_all(bootstrap, topic, 1, "read_uncommitted")] == [b"never-committed"]


def test_failed_send_makes_the_transaction_abortable_and_the_next_one_commits(broker) -> None:
    from confluent_kafka.admin import NewTopic

    from kafkapy.common.errors import KafkaError

    bootstrap, topic = broker.bootstrap, "own-txn-abortable"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config={"max.message.bytes": "2000"})])[topic].result(30)
    del admin  # librdkafka's handle would outlive the broker otherwise
    p = txn_producer(bootstrap, "own-tx-abortable")
    try:
        epoch = p.transaction_manager.producer_epoch
        p.begin_transaction()
        p.send(topic, b"ok-before")
        p.flush(30)
        too_big = p.send(topic, b"x" * 5000)
        with pytest.raises(KafkaError):
            too_big.result(30)
        assert p.transaction_manager.state is State.ABORTABLE_ERROR
        with pytest.raises(KafkaError, match="Cannot execute transactional method because we are in an error state"):
            p.commit_transaction(30)
        p.abort_transaction(30)
        # The failed batch's sequence left a gap: the abort bumped the epoch (KIP-360) and sequences restart.
        assert p.transaction_manager.producer_epoch == epoch + 1
        p.begin_transaction()
        p.send(topic, b"ok-after")
        p.commit_transaction(30)
    finally:
        p.close(10)
    assert [v for _, _, v in consume_all(bootstrap, topic, 1, "read_committed")] == [b"ok-after"]


def test_transaction_timeout_over_the_brokers_maximum_is_fatal(broker) -> None:
    from kafkapy.common.errors import KafkaError

    p = KafkaProducer({"bootstrap.servers": broker.bootstrap, "transactional.id": "own-tx-timeout",
                       "transaction.timeout.ms": 900_001})  # transaction.max.timeout.ms is 900000
    try:
        with pytest.raises(KafkaError, match="Unexpected error in InitProducerIdResponse; INVALID_TRANSACTION_TIMEOUT"):
            p.init_transactions(30)
        assert p.transaction_manager.state is State.FATAL_ERROR
    finally:
        p.close(10)
