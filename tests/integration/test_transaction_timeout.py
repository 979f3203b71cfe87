"""A transaction left open past transaction.timeout.ms is aborted by the coordinator (driven by the broker's
scheduler on a MockTime): the ABORT marker releases the LSO for read_committed readers, and the producer
that left it open is fenced (its epoch was bumped)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from kafkapy.common.time import MockTime  # noqa: E402
from kafkapy.common.topic_partition import TopicPartition as BrokerTopicPartition  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
from txn_support import start_txn_broker  # noqa: E402


def lso(bootstrap: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "lso-probe", "isolation.level": "read_committed"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1]
    finally:
        c.close()


def test_timed_out_transaction_is_aborted_and_releases_the_lso(tmp_path) -> None:
    mock = MockTime(int(time.time() * 1000))
    broker = start_txn_broker(str(tmp_path / "broker"), time=mock,
                              **{"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000"})
    try:
        bootstrap = broker.bootstrap
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_topics([NewTopic("timeout-t", 1, 1)]).values():
            f.result(30)
        committed = Producer({"bootstrap.servers": bootstrap, "transactional.id": "committed-one"})
        committed.init_transactions(30)
        committed.begin_transaction()
        committed.produce("timeout-t", b"c0")
        committed.commit_transaction(30)  # offsets 0 (data) and 1 (marker)

        p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "left-open",
                      "transaction.timeout.ms": 10_000})
        p.init_transactions(30)
        p.begin_transaction()
        p.produce("timeout-t", b"open")
        p.flush(10)
        log = broker.server.replica_manager.get_partition(BrokerTopicPartition("timeout-t", 0)).log
        assert log.log_end_offset == 3
        assert lso(bootstrap, "timeout-t") == 2  # held back by the open transaction at offset 2

        mock.advance(5_000)  # not yet past the timeout
        time.sleep(2.5)
        assert lso(bootstrap, "timeout-t") == 2
        mock.advance(6_000)
        deadline = time.monotonic() + 15
        while lso(bootstrap, "timeout-t") != 4 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert lso(bootstrap, "timeout-t") == 4  # the ABORT marker at 3 closed it
        assert log.collect_aborted_transactions(0, 4)[0][1:3] == (2, 3)
        description = broker.server.services.transaction_coordinator.handle_describe_transactions(["left-open"])[0]
        assert (description.state, description.producer_epoch) == ("CompleteAbort", 1)
        with pytest.raises(KafkaException):
            p.commit_transaction(10)
    finally:
        broker.server.shutdown()

