"""Transaction verification across brokers (KIP-890, transaction.partition.verification.enable): a partition leader
whose transactional id's coordinator is another broker asks it (AddPartitionsToTxn v4 verify_only on the
inter-broker listener) before a transactional batch may open a transaction. Two broker processes on a real
ZooKeeper; raw requests built from the generated classes: a made-up producer id and a partition never added to the
transaction are refused, the same batch after AddPartitionsToTxn is taken, and after the abort the last stable
offset is the high watermark again (no hanging transaction)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kafkapy.client.admin_types import NewTopic
from kafkapy.client.connection import BrokerConnection
from kafkapy.common.errors import ErrorCode as E
from kafkapy.protocol import messages as M
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

TOPIC = "tv"


@pytest.fixture(scope="module")
def cluster(cluster_factory):
    return cluster_factory(2, overrides={"transaction.state.log.num.partitions": "4",
                                         "transaction.state.log.replication.factor": "1",
                                         "transaction.state.log.min.isr": "1"})


def _conn(cluster: Any, broker_id: int) -> BrokerConnection:
    conn = BrokerConnection(broker_id, "127.0.0.1", cluster.brokers[broker_id].port, client_id="verify-test",
                            request_timeout_ms=15000)
    conn.connect(10000)
    return conn


def _until(call: Any, ok: Any, timeout_s: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout_s
    for _ in range(600):
        r = call()
        if ok(r) or time.monotonic() > deadline:
            return r
        time.sleep(0.05)
    return r


def _produce(conn: BrokerConnection, tid: str, pid: int, epoch: int, seq: int) -> tuple[int, str | None]:
    b = MemoryRecordsBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True)
    b.append(int(time.time() * 1000), b"k", b"v%d" % seq)
    P = M.ProduceRequest
    resp = conn.request(P(transactional_id=tid, acks=-1, timeout_ms=10000, topic_data=[P.TopicProduceData(
        name=TOPIC, partition_data=[P.PartitionProduceData(index=0, records=b.build())])]), 9)
    p = resp.responses[0].partition_responses[0]
    return p.error_code, p.error_message


def _ends(conn: BrokerConnection) -> tuple[int, int]:
    R = M.ListOffsetsRequest
    out = []
    for isolation in (0, 1):
        resp = conn.request(R(replica_id=-1, isolation_level=isolation, topics=[R.ListOffsetsTopic(
            name=TOPIC, partitions=[R.ListOffsetsPartition(partition_index=0, timestamp=-1)])]), 7)
        out.append(resp.topics[0].partitions[0].offset)
    return out[0], out[1]


def test_remote_coordinator_verifies_transactional_produce(cluster) -> None:
    admin = cluster.admin()
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
    finally:
        admin.close()
    state = cluster.wait_for(lambda: (cluster.describe(TOPIC).get(0) or (-1,))[0] >= 0 and cluster.describe(TOPIC)[0],
                             30, what="a leader")
    leader = state[0]
    other = 1 - leader
    conns = {b: _conn(cluster, b) for b in (0, 1)}
    try:
        # A transactional id whose coordinator is the other broker (FindCoordinator, bounded search).
        tid = None
        for i in range(40):
            candidate = f"tv-{i}"
            found = _until(lambda c=candidate: conns[leader].request(
                M.FindCoordinatorRequest(key=c, key_type=1), 3), lambda r: r.error_code == 0)
            assert found.error_code == 0
            if found.node_id == other:
                tid = candidate
                break
        assert tid is not None
        coordinator = conns[other]
        init = _until(lambda: coordinator.request(M.InitProducerIdRequest(
            transactional_id=tid, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1), 4),
            lambda r: r.error_code == 0)
        assert init.error_code == 0
        pid, epoch = init.producer_id, init.producer_epoch
        partition_leader = conns[leader]

        assert _produce(partition_leader, tid, 4242, 0, 0) == (E.INVALID_PRODUCER_ID_MAPPING, None)
        assert _produce(partition_leader, tid, pid, epoch, 0) == (
            E.INVALID_TXN_STATE, "Partition was not added to the transaction")
        hw, lso = _ends(partition_leader)
        assert hw == lso == 0

        R = M.AddPartitionsToTxnRequest
        added = coordinator.request(R(v3_and_below_transactional_id=tid, v3_and_below_producer_id=pid,
                                      v3_and_below_producer_epoch=epoch, v3_and_below_topics=[
                                          R.AddPartitionsToTxnTopic(name=TOPIC, partitions=[0])]), 3)
        assert [p.partition_error_code for t in added.results_by_topic_v3_and_below
                for p in t.results_by_partition] == [0]
        assert _produce(partition_leader, tid, pid, epoch, 0) == (0, None)
        assert _ends(partition_leader) == (1, 0)  # the open transaction holds the LSO

        ended = coordinator.request(M.EndTxnRequest(transactional_id=tid, producer_id=pid, producer_epoch=epoch,
                                                    committed=False), 3)
        assert ended.error_code == 0
        # The abort marker lands on the leader: LSO = HW = 2 (record + marker).
        assert _until(lambda: _ends(partition_leader), lambda e: e == (2, 2)) == (2, 2)
    finally:
        for conn in conns.values():
            conn.close()
