"""Transaction verification's pieces without a broker: the batch-header test, how a coordinator's answer becomes a
produce error (Kafka 3.9's ReplicaManager / AddPartitionsToTxnManager mapping), and the AddPartitionsToTxnManager's
failure answers (no endpoint, after shutdown) that keep a produce request from waiting without bound."""

from __future__ import annotations

import threading

from kafkapy.common.errors import ErrorCode as E
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.add_partitions_to_txn_manager import AddPartitionsToTxnManager
from kafkapy.server.transaction_verification import produce_error, transactional_producer


def _batch(transactional: bool, pid: int = 7, epoch: int = 3) -> bytes:
    b = MemoryRecordsBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=transactional)
    b.append(0, None, b"v")
    return b.build()


def test_transactional_producer_reads_the_header() -> None:
    assert transactional_producer(_batch(True, 123456789012, 9)) == (123456789012, 9)
    assert transactional_producer(_batch(False)) is None
    assert transactional_producer(b"") is None
    assert transactional_producer(None) is None


def test_coordinator_answers_become_kafkas_produce_errors() -> None:
    not_added = produce_error(E.TRANSACTION_ABORTABLE, 9)
    assert (not_added.error, not_added.error_message) == (E.INVALID_TXN_STATE,
                                                          "Partition was not added to the transaction")
    assert produce_error(E.TRANSACTION_ABORTABLE, 11).error == E.TRANSACTION_ABORTABLE
    assert produce_error(E.PRODUCER_FENCED, 9).error == E.INVALID_PRODUCER_EPOCH
    busy = produce_error(E.CONCURRENT_TRANSACTIONS, 9)
    assert (busy.error, busy.error_message) == (
        E.NOT_ENOUGH_REPLICAS, "Unable to verify the partition has been added to the transaction. Underlying "
        "error: CONCURRENT_TRANSACTIONS")
    assert produce_error(E.NETWORK_EXCEPTION, 9).error == E.NOT_ENOUGH_REPLICAS
    assert produce_error(E.INVALID_PRODUCER_ID_MAPPING, 9).error == E.INVALID_PRODUCER_ID_MAPPING


class _NoEndpoints:
    def get_alive_broker_node(self, broker_id: int, listener_name: str | None = None) -> None:
        return None


def test_manager_answers_network_exception_when_it_cannot_ask() -> None:
    manager = AddPartitionsToTxnManager(0, "PLAINTEXT", _NoEndpoints(), request_timeout_ms=1000)
    tps = {TopicPartition("t", 0), TopicPartition("t", 1)}
    got: list[dict] = []
    done = threading.Event()

    def callback(codes: dict) -> None:
        got.append(codes)
        done.set()

    try:
        manager.verify(1, "tx", 5, 0, tps, callback)
        assert done.wait(10)
        assert got == [dict.fromkeys(tps, E.NETWORK_EXCEPTION)]
    finally:
        manager.shutdown()
    # Stopped: answered at once, from the caller's thread.
    manager.verify(1, "tx", 5, 0, tps, callback)
    assert got[-1] == dict.fromkeys(tps, E.NETWORK_EXCEPTION) and len(got) == 2
