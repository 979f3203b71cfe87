"""TransactionCoordinator state machine with fakes (a replica manager that appends at once, a marker sender that
answers NONE) and MockTime: InitProducerId epochs and fencing, the commit/abort paths through PrepareX and
CompleteX, timed-out transactions aborted with a bumped epoch, transactional.id expiry (tombstone), reloading
__transaction_state records (markers re-sent for PrepareCommit), DescribeTransactions / ListTransactions."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace

import pytest

from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator import transaction_log
from kafkapy.coordinator.transaction_coordinator import TransactionCoordinator
from kafkapy.coordinator.transaction_metadata import TransactionMetadata, TransactionState
from kafkapy.coordinator.transaction_state_manager import TransactionConfig, TransactionStateManager
from kafkapy.protocol.messages import WriteTxnMarkersResponse
from kafkapy.record.memory_records import MemoryRecords

TP = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)


class FakeReplicaManager:
    partitions: dict = {}

    def __init__(self) -> None:
        self.records: list[tuple[str, object]] = []  # (transactional id, transit or None)
        self.fail_code = 0

    def append_records(self, timeout_ms, acks, entries, callback, **kw) -> None:
        assert acks == -1 and kw["origin"] == "coordinator" and kw["internal_topics_allowed"]
        for data in entries.values():
            for rec in MemoryRecords(data).records():
                self.records.append((transaction_log.read_key(rec.key), transaction_log.read_value(rec.value)))
        callback({tp: SimpleNamespace(error=self.fail_code) for tp in entries})

    def get_partition(self, tp):
        return None

    def states(self, tid: str) -> list[str]:
        return [str(t.txn_state) if t is not None else "tombstone" for i, t in self.records if i == tid]


class FakeMetadataCache:
    def get_partition_state(self, tp):
        return SimpleNamespace(leader=0)

    def contains_topic(self, topic):
        return True

    def num_partitions(self, topic):
        return None


class FakeSender:
    def __init__(self) -> None:
        self.requests = []

    def __call__(self, broker_id, request) -> Future:
        self.requests.append(request)
        R = WriteTxnMarkersResponse
        resp = R(markers=[R.WritableTxnMarkerResult(producer_id=m.producer_id, topics=[
            R.WritableTxnMarkerTopicResult(name=t.name, partitions=[
                R.WritableTxnMarkerPartitionResult(partition_index=p, error_code=0) for p in t.partition_indexes])
            for t in m.topics]) for m in request.markers])
        f: Future = Future()
        f.set_result(resp)
        return f


class Ids:
    def __init__(self) -> None:
        self.next = 1000

    def generate_producer_id(self) -> int:
        self.next += 1
        return self.next


def sync(fn) -> None:
    fn()


@pytest.fixture
def env():
    time = MockTime()
    rm = FakeReplicaManager()
    config = TransactionConfig(transaction_log_num_partitions=1, transactional_id_expiration_ms=60_000)
    manager = TransactionStateManager(0, config, time, rm, None, append_executor=sync, load_executor=sync)
    sender = FakeSender()
    coordinator = TransactionCoordinator(0, config, time, manager, Ids(), sender, FakeMetadataCache())
    coordinator.is_active = True
    coordinator.on_election(0, 5)
    return SimpleNamespace(time=time, rm=rm, manager=manager, sender=sender, coordinator=coordinator)


def drain(c: TransactionCoordinator) -> None:
    """Run the marker sender's work in the test thread."""
    mm = c.marker_manager
    while mm._unsent:
        batch, mm._unsent = mm._unsent, []
        mm._send_batch(batch)


def init(c, tid: str, timeout_ms: int = 60_000, pid: int = -1, epoch: int = -1) -> tuple[int, int, int]:
    out = []
    c.handle_init_producer_id(tid, timeout_ms, pid, epoch, lambda *a: out.append(a))
    return out[0]


def add(c, tid, pid, epoch, *tps) -> int:
    out = []
    c.handle_add_partitions_to_transaction(tid, pid, epoch, set(tps), out.append)
    return out[0]


def end(c, tid, pid, epoch, commit: bool) -> int:
    out = []
    c.handle_end_transaction(tid, pid, epoch, commit, out.append)
    return out[0]


def test_commit_goes_through_prepare_and_complete(env) -> None:
    c = env.coordinator
    assert init(c, "a") == (0, 1001, 0)
    assert add(c, "a", 1001, 0, TP, TP1) == 0
    assert add(c, "a", 1001, 0, TP) == 0  # already in: nothing written
    assert end(c, "a", 1001, 0, True) == 0
    assert c.handle_describe_transactions(["a"])[0].state == "PrepareCommit"
    drain(c)
    marker = env.sender.requests[0].markers[0]
    assert (marker.producer_id, marker.producer_epoch, marker.transaction_result, marker.coordinator_epoch) == (
        1001, 0, True, 5)
    assert [(t.name, t.partition_indexes) for t in marker.topics] == [("t", [0, 1])]
    assert env.rm.states("a") == ["Empty", "Ongoing", "PrepareCommit", "CompleteCommit"]
    assert end(c, "a", 1001, 0, True) == 0  # a retried commit
    assert end(c, "a", 1001, 0, False) == ErrorCode.INVALID_TXN_STATE
    assert init(c, "a") == (0, 1001, 1)


def test_errors_for_unknown_fenced_and_concurrent(env) -> None:
    c = env.coordinator
    assert end(c, "nobody", 1, 0, True) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert add(c, "nobody", 1, 0, TP) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert init(c, "x", timeout_ms=10**9)[0] == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    _, pid, epoch = init(c, "x")
    assert add(c, "x", pid + 1, epoch, TP) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert add(c, "x", pid, epoch + 1, TP) == ErrorCode.PRODUCER_FENCED
    assert end(c, "x", pid, epoch, True) == ErrorCode.INVALID_TXN_STATE  # Empty
    assert add(c, "x", pid, epoch, TP) == 0
    assert end(c, "x", pid, epoch, False) == 0
    parked: list[int] = []
    c.handle_add_partitions_to_transaction("x", pid, epoch, {TP1}, parked.append)
    assert parked == []  # PrepareAbort, markers pending: the request waits for the completion
    assert init(c, "x")[0] == ErrorCode.CONCURRENT_TRANSACTIONS
    drain(c)
    assert parked == [0]  # answered once CompleteAbort was written: a new transaction with TP1
    env.rm.fail_code = ErrorCode.NOT_ENOUGH_REPLICAS
    assert end(c, "x", pid, epoch, True) == ErrorCode.COORDINATOR_NOT_AVAILABLE
    env.rm.fail_code = 0
    assert end(c, "x", pid, epoch, True) == 0  # the failed write left no pending state
    c.on_resignation(0, 5)
    assert init(c, "x")[0] == ErrorCode.NOT_COORDINATOR


def test_add_partitions_gives_up_waiting_with_concurrent_transactions(env, monkeypatch) -> None:
    import threading

    from kafkapy.coordinator import transaction_coordinator

    monkeypatch.setattr(transaction_coordinator, "COMPLETION_WAIT_S", 0.05)
    c = env.coordinator
    _, pid, epoch = init(c, "w")
    assert add(c, "w", pid, epoch, TP) == 0
    assert end(c, "w", pid, epoch, True) == 0
    answered = threading.Event()
    codes: list[int] = []
    c.handle_add_partitions_to_transaction("w", pid, epoch, {TP}, lambda code: (codes.append(code), answered.set()))
    assert answered.wait(5)  # the markers never went out: Kafka's answer after the wait
    assert codes == [ErrorCode.CONCURRENT_TRANSACTIONS]
    drain(c)
    assert codes == [ErrorCode.CONCURRENT_TRANSACTIONS]  # answered once only


def test_init_while_ongoing_fences_and_aborts(env) -> None:
    c = env.coordinator
    _, pid, epoch = init(c, "f")
    assert add(c, "f", pid, epoch, TP) == 0
    assert init(c, "f")[0] == ErrorCode.CONCURRENT_TRANSACTIONS  # aborting the ongoing transaction first
    drain(c)
    assert env.sender.requests[-1].markers[0].producer_epoch == epoch + 1  # the abort fences with a new epoch
    assert env.rm.states("f")[-2:] == ["PrepareAbort", "CompleteAbort"]
    assert init(c, "f") == (0, pid, epoch + 2)
    assert end(c, "f", pid, epoch, False) == ErrorCode.PRODUCER_FENCED


def test_timed_out_transaction_is_aborted_on_mock_time(env) -> None:
    c, time = env.coordinator, env.time
    _, pid, epoch = init(c, "slow", timeout_ms=10_000)
    assert add(c, "slow", pid, epoch, TP) == 0
    time.advance(9_000)
    assert c.abort_timed_out_transactions() == 0
    time.advance(2_000)
    assert c.abort_timed_out_transactions() == 1
    drain(c)
    d = c.handle_describe_transactions(["slow"])[0]
    assert (d.state, d.producer_epoch, d.topic_partitions) == ("CompleteAbort", epoch + 1, ())
    assert end(c, "slow", pid, epoch, True) == ErrorCode.PRODUCER_FENCED


def test_transactional_id_expiry_writes_a_tombstone(env) -> None:
    c, time = env.coordinator, env.time
    init(c, "old")
    init(c, "young")
    time.advance(50_000)
    init(c, "young")
    time.advance(20_000)
    assert c.remove_expired_transactional_ids() == 1
    assert env.rm.states("old")[-1] == "tombstone"
    assert c.handle_describe_transactions(["old"])[0].error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    assert c.handle_describe_transactions(["young"])[0].error_code == 0


def test_reload_resends_markers_of_prepared_transactions(env) -> None:
    c = env.coordinator
    _, pid, epoch = init(c, "p")
    add(c, "p", pid, epoch, TP)
    end(c, "p", pid, epoch, True)  # PrepareCommit written, markers not sent yet
    loaded: dict = {}
    for tid, transit in env.rm.records:
        if transit is None:
            loaded.pop(tid, None)
        else:
            loaded[tid] = transit
    assert loaded["p"].txn_state == TransactionState.PREPARE_COMMIT
    # A new coordinator (say after a failover) replays the records and completes the commit.
    rm2 = FakeReplicaManager()
    manager2 = TransactionStateManager(0, env.manager.config, env.time, rm2, None, append_executor=sync,
                                       load_executor=sync)
    manager2._read_partition = lambda tp: {  # type: ignore[method-assign]
        tid: TransactionMetadata.from_transit(tid, t) for tid, t in loaded.items()}
    sender2 = FakeSender()
    c2 = TransactionCoordinator(0, env.manager.config, env.time, manager2, Ids(), sender2, FakeMetadataCache())
    c2.is_active = True
    c2.on_election(0, 6)
    drain(c2)
    assert sender2.requests[0].markers[0].coordinator_epoch == 6
    assert rm2.states("p") == ["CompleteCommit"]


def test_describe_and_list(env) -> None:
    c = env.coordinator
    _, pid, epoch = init(c, "l1")
    add(c, "l1", pid, epoch, TP)
    init(c, "l2")
    error, unknown, listings = c.handle_list_transactions(["Ongoing", "Nope"], [])
    assert (error, unknown) == (0, ["Nope"])
    assert [(t.transactional_id, t.state) for t in listings] == [("l1", "Ongoing")]
    _, _, everything = c.handle_list_transactions([], [])
    assert [t.transactional_id for t in everything] == ["l1", "l2"]
    d = c.handle_describe_transactions(["l1"])[0]
    assert (d.state, d.topic_partitions, d.transaction_start_time_ms) == ("Ongoing", (TP,), env.time.milliseconds())
