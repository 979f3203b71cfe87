"""Shutdown is not held by a request blocked on a frozen broker (one that accepts and never answers): the
transaction coordinator's marker sender and transaction verification's AddPartitionsToTxnManager close their
BrokerBlockingSenders before joining their threads, as Kafka's InterBrokerSendThread.shutdown closes its network
client before awaiting the thread. Without that the blocked exchange waits out request.timeout.ms (30 s) and
shutdown its 5 s join."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from kafkapy.cluster.broker import Node
from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
from frozen_peer import FrozenPeer  # noqa: E402
from txn_support import create_topic, start_txn_broker  # noqa: E402

SHUTDOWN_BOUND_S = 1.5
TOPIC = "frozen-markers"


def test_broker_shutdown_interrupts_a_marker_send_blocked_on_a_frozen_broker(tmp_path) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    with FrozenPeer() as peer:
        # Clients use PLAINTEXT; the inter-broker listener (where markers go, even to this broker) is advertised at
        # the frozen peer, so the commit's WriteTxnMarkers blocks there.
        broker = start_txn_broker(str(tmp_path / "broker"), **{
            "listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:{peer.port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL"})
        try:
            create_topic(broker.bootstrap, TOPIC)
            producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap,
                                                 "transactional.id": "frozen-markers-txn"})
            producer.init_transactions(30)
            producer.begin_transaction()
            producer.produce(TOPIC, b"v")
            producer.commit_transaction(30)  # answered once PrepareCommit is written; the markers go after
            del producer  # librdkafka's producer is destroyed here, before the broker goes
            assert peer.wait_for_request_bytes(), "the marker sender never reached the frozen inter-broker listener"
            coordinator = broker.server.services.transaction_coordinator
            assert coordinator.marker_manager.num_pending == 0  # the batch is in flight, blocked in the send
        finally:
            started = time.monotonic()
            broker.server.shutdown()
            elapsed = time.monotonic() - started
        assert elapsed < SHUTDOWN_BOUND_S, f"shutdown took {elapsed:.2f} s"
        threads = [t.name for t in threading.enumerate() if t.name.startswith("TxnMarkerSenderThread")]
        assert threads == []


class _FrozenCoordinatorCache:
    """The one MetadataCache read the manager makes: broker 7's endpoint on the listener is the frozen peer."""

    def __init__(self, port: int) -> None:
        self.port = port

    def get_alive_broker_node(self, broker_id: int, listener: str) -> Node | None:
        return Node(broker_id, "127.0.0.1", self.port) if broker_id == 7 and listener == "INTERNAL" else None


def test_add_partitions_to_txn_manager_shutdown_fails_a_verification_blocked_on_a_frozen_coordinator() -> None:
    tp = TopicPartition("t", 0)
    answers: list[dict[TopicPartition, int]] = []
    answered = threading.Event()

    def callback(codes: dict[TopicPartition, int]) -> None:
        answers.append(codes)
        answered.set()

    with FrozenPeer() as peer:
        manager = AddPartitionsToTxnManager(1, "INTERNAL", _FrozenCoordinatorCache(peer.port), 30_000)
        manager.verify(7, "txn", 1000, 0, [tp], callback)
        assert peer.wait_for_request_bytes()
        started = time.monotonic()
        manager.shutdown()
        elapsed = time.monotonic() - started
        assert answered.wait(5)
    assert elapsed < SHUTDOWN_BOUND_S, f"shutdown took {elapsed:.2f} s"
    assert answers == [{tp: ErrorCode.NETWORK_EXCEPTION}]
