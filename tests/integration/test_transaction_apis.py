"""The transaction APIs on the wire (raw requests against an in-process broker): Kafka's error codes for
unknown, fenced and misbehaving producers (never a dropped connection), a missing topic failing only its
partitions, produce epoch checks on the partition, and DescribeTransactions / ListTransactions answers."""

from __future__ import annotations

import time

import pytest

from kafkapy.common.errors import ErrorCode
from kafkapy.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    ApiVersionsRequest,
    CreateTopicsRequest,
    DescribeTransactionsRequest,
    EndTxnRequest,
    FindCoordinatorRequest,
    InitProducerIdRequest,
    ListTransactionsRequest,
    ProduceRequest,
    TxnOffsetCommitRequest,
)
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

TOPIC = "txn-wire"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
    from txn_support import start_txn_broker

    b = start_txn_broker(str(tmp_path_factory.mktemp("txn-wire")))
    try:
        yield b
    finally:
        b.server.shutdown()


@pytest.fixture
def client(broker, wire_client):
    c = wire_client(broker.server.bound_port())
    c.request(CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name=TOPIC, num_partitions=2, replication_factor=1)], timeout_ms=10_000), 5)
    return c


def init_producer(client, txn_id: str, timeout_ms: int = 60_000):
    deadline = time.monotonic() + 30
    while True:
        fc = client.request(FindCoordinatorRequest(key=txn_id, key_type=1), 3)
        r = client.request(InitProducerIdRequest(transactional_id=txn_id, transaction_timeout_ms=timeout_ms,
                                                 producer_id=-1, producer_epoch=-1), 4)
        if fc.error_code == 0 and r.error_code not in (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                                                       ErrorCode.NOT_COORDINATOR,
                                                       ErrorCode.COORDINATOR_NOT_AVAILABLE):
            return r
        assert time.monotonic() < deadline, r
        time.sleep(0.1)


def add_partitions(client, txn_id, pid, epoch, topics: dict[str, list[int]], version: int = 3):
    R = AddPartitionsToTxnRequest
    resp = client.request(R(v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=pid,
                            v3_and_below_producer_epoch=epoch,
                            v3_and_below_topics=[R.AddPartitionsToTxnTopic(name=t, partitions=ps)
                                                 for t, ps in topics.items()]), version)
    return {(t.name, p.partition_index): p.partition_error_code
            for t in resp.results_by_topic_v3_and_below for p in t.results_by_partition}


def produce(client, pid: int, epoch: int, seq: int, txn_id: str | None, transactional: bool = True) -> int:
    b = MemoryRecordsBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=transactional)
    b.append(int(time.time() * 1000), b"k", b"v")
    R = ProduceRequest
    resp = client.request(R(transactional_id=txn_id, acks=-1, timeout_ms=5000, topic_data=[R.TopicProduceData(
        name=TOPIC, partition_data=[R.PartitionProduceData(index=0, records=b.build())])]), 9)
    return resp.responses[0].partition_responses[0].error_code


def test_unknown_and_fenced_producers_get_kafkas_errors(client) -> None:
    init_producer(client, "wire-warmup")
    r = client.request(EndTxnRequest(transactional_id="never-initialized", producer_id=77, producer_epoch=0,
                                      committed=True), 3)
    assert r.error_code == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    first = init_producer(client, "wire-fence")
    assert first.error_code == 0 and first.producer_epoch == 0
    second = init_producer(client, "wire-fence")
    assert (second.producer_id, second.producer_epoch) == (first.producer_id, 1)
    # The first producer is a zombie now: PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH for clients before v2.
    assert add_partitions(client, "wire-fence", first.producer_id, 0, {TOPIC: [0]}) == {
        (TOPIC, 0): ErrorCode.PRODUCER_FENCED}
    assert add_partitions(client, "wire-fence", first.producer_id, 0, {TOPIC: [0]}, version=1) == {
        (TOPIC, 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    assert add_partitions(client, "wire-fence", first.producer_id + 1000, 1, {TOPIC: [0]}) == {
        (TOPIC, 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    r = client.request(EndTxnRequest(transactional_id="wire-fence", producer_id=first.producer_id, producer_epoch=0,
                                     committed=True), 3)
    assert r.error_code == ErrorCode.PRODUCER_FENCED
    r = client.request(EndTxnRequest(transactional_id="wire-fence", producer_id=second.producer_id,
                                     producer_epoch=1, committed=True), 3)
    assert r.error_code == ErrorCode.INVALID_TXN_STATE  # nothing to commit: Empty
    r = client.request(InitProducerIdRequest(transactional_id="wire-fence", transaction_timeout_ms=10**9,
                                             producer_id=-1, producer_epoch=-1), 4)
    assert r.error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert client.request(ApiVersionsRequest(), 0).error_code == 0  # still connected


def test_missing_topic_fails_only_its_partitions(client) -> None:
    r = init_producer(client, "wire-missing")
    codes = add_partitions(client, "wire-missing", r.producer_id, r.producer_epoch,
                           {TOPIC: [0], "no-such-topic": [0, 1]})
    assert codes == {(TOPIC, 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
                     ("no-such-topic", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                     ("no-such-topic", 1): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert add_partitions(client, "wire-missing", r.producer_id, r.producer_epoch, {TOPIC: [0]}) == {
        (TOPIC, 0): 0}


def test_transaction_flow_epochs_and_describe(client) -> None:
    r = init_producer(client, "wire-flow")
    pid, epoch = r.producer_id, r.producer_epoch
    assert add_partitions(client, "wire-flow", pid, epoch, {TOPIC: [0]}) == {(TOPIC, 0): 0}
    assert produce(client, pid, epoch, 0, "wire-flow") == 0
    assert produce(client, pid, epoch, 5, "wire-flow") == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    r = client.request(AddOffsetsToTxnRequest(transactional_id="wire-flow", producer_id=pid, producer_epoch=epoch,
                                              group_id="wire-group"), 3)
    assert r.error_code == 0
    T = TxnOffsetCommitRequest
    deadline = time.monotonic() + 20
    while True:  # the group coordinator loads its partition after FindCoordinator
        client.request(FindCoordinatorRequest(key="wire-group", key_type=0), 3)
        r = client.request(T(transactional_id="wire-flow", group_id="wire-group", producer_id=pid,
                             producer_epoch=epoch, generation_id=3, member_id="ghost",
                             topics=[T.TxnOffsetCommitRequestTopic(name=TOPIC, partitions=[
                                 T.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=1)])]), 3)
        code = r.topics[0].partitions[0].error_code
        if code not in (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                        ErrorCode.COORDINATOR_NOT_AVAILABLE) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert code == ErrorCode.ILLEGAL_GENERATION  # a generation for a group that does not exist
    d = client.request(DescribeTransactionsRequest(transactional_ids=["wire-flow", "nope"]), 0)
    states = {s.transactional_id: s for s in d.transaction_states}
    assert states["nope"].error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    flow = states["wire-flow"]
    assert (flow.error_code, flow.transaction_state, flow.producer_id) == (0, "Ongoing", pid)
    assert {t.topic: list(t.partitions) for t in flow.topics}[TOPIC] == [0]
    assert {t.topic for t in flow.topics} == {TOPIC, "__consumer_offsets"}
    listed = client.request(ListTransactionsRequest(state_filters=["Ongoing", "Bogus"]), 1)
    assert listed.error_code == 0 and listed.unknown_state_filters == ["Bogus"]
    assert ("wire-flow", pid, "Ongoing") in {(t.transactional_id, t.producer_id, t.transaction_state)
                                            for t in listed.transaction_states}
    r = client.request(EndTxnRequest(transactional_id="wire-flow", producer_id=pid, producer_epoch=epoch,
                                     committed=False), 3)
    assert r.error_code == 0
    # A fresh InitProducerId bumps the epoch (once the abort completed); the old epoch can no longer write.
    deadline = time.monotonic() + 10
    while True:
        r2 = client.request(InitProducerIdRequest(transactional_id="wire-flow", transaction_timeout_ms=60_000,
                                                  producer_id=-1, producer_epoch=-1), 4)
        if r2.error_code != ErrorCode.CONCURRENT_TRANSACTIONS or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert (r2.error_code, r2.producer_epoch) == (0, epoch + 1)
    assert add_partitions(client, "wire-flow", pid, epoch + 1, {TOPIC: [0]}) == {(TOPIC, 0): 0}
    assert produce(client, pid, epoch + 1, 0, "wire-flow") == 0
    assert produce(client, pid, epoch, 1, "wire-flow") == ErrorCode.INVALID_PRODUCER_EPOCH


def test_batched_add_and_verify_only(client) -> None:
    """AddPartitionsToTxn v4+ (what brokers send, KIP-890): several transactions per request; verify_only."""
    r = init_producer(client, "wire-batched")
    pid, epoch = r.producer_id, r.producer_epoch
    R = AddPartitionsToTxnRequest

    def batched(verify: bool, topics: dict[str, list[int]], txn_id: str = "wire-batched") -> dict:
        resp = client.request(R(transactions=[R.AddPartitionsToTxnTransaction(
            transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, verify_only=verify,
            topics=[R.AddPartitionsToTxnTopic(name=t, partitions=ps) for t, ps in topics.items()])]), 5)
        assert resp.error_code == 0
        result = resp.results_by_transaction[0]
        assert result.transactional_id == txn_id
        return {(t.name, p.partition_index): p.partition_error_code
                for t in result.topic_results for p in t.results_by_partition}

    assert batched(False, {TOPIC: [0]}) == {(TOPIC, 0): 0}
    assert batched(True, {TOPIC: [0, 1]}) == {(TOPIC, 0): 0, (TOPIC, 1): ErrorCode.TRANSACTION_ABORTABLE}
    assert batched(True, {TOPIC: [0]}, "unknown-id") == {(TOPIC, 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert batched(True, {"gone": [0]}) == {("gone", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
