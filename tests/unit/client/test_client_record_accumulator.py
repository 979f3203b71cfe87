"""RecordAccumulator: batching by batch.size, linger.ms readiness, drain per leader, retry order."""

from __future__ import annotations

from kafkapy.client.metadata import Cluster, Node, PartitionInfo, TopicMetadata
from kafkapy.client.record_accumulator import RecordAccumulator
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.memory_records import MemoryRecords

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)
T2 = TopicPartition("t", 2)


def cluster() -> Cluster:
    parts = {p: PartitionInfo("t", p, leader) for p, leader in ((0, 1), (1, 1), (2, 2))}
    return Cluster({1: Node(1, "h", 1), 2: Node(2, "h", 2)}, {"t": TopicMetadata("t", partitions=parts)})


def acc(time: MockTime, **kw) -> RecordAccumulator:
    return RecordAccumulator(batch_size=kw.pop("batch_size", 1000), linger_ms=kw.pop("linger_ms", 10), time=time, **kw)


def test_linger_and_batch_full_readiness() -> None:
    time = MockTime()
    a = acc(time)
    fut, full, new = a.append(T0, time.milliseconds(), b"k", b"v" * 10, [], None, 1000)
    assert new and not full
    ready, delay, unknown = a.ready(cluster(), time.milliseconds())
    assert ready == set() and delay == 10 and unknown == set()
    time.advance(10)
    ready, _, _ = a.ready(cluster(), time.milliseconds())
    assert ready == {1}
    # Filling past batch.size opens a second batch: the first is then sendable at once.
    a2 = acc(time, linger_ms=1000)
    created = 0
    for _ in range(30):
        _, full, new = a2.append(T2, time.milliseconds(), None, b"x" * 100, [], None, 1000)
        created += new
    assert created >= 3 and full
    ready, _, _ = a2.ready(cluster(), time.milliseconds())
    assert ready == {2}


def test_drain_groups_by_leader_one_batch_per_partition() -> None:
    time = MockTime()
    a = acc(time, linger_ms=0)
    for tp in (T0, T1, T2):
        for i in range(3):
            a.append(tp, 1000 + i, None, b"%s-%d" % (str(tp).encode(), i), [("h", b"1")], None, 1000)
    drained = a.drain(cluster(), {1, 2}, 1 << 20, time.milliseconds())
    assert sorted(b.tp for b in drained[1]) == [T0, T1]
    assert [b.tp for b in drained[2]] == [T2]
    batch = drained[2][0]
    recs = [r for b in MemoryRecords(batch.close()).batches() for r in b.records()]
    assert [(r.offset, r.timestamp, r.value, r.headers) for r in recs] == [
        (i, 1000 + i, b"t-2-%d" % i, [("h", b"1")]) for i in range(3)
    ]
    batch.done(40, -1, None)
    assert batch.records[2].result(0).offset == 42
    assert batch.records[2].result(0).timestamp == 1002
    assert not a.has_undrained()


def test_unknown_leader_reported() -> None:
    time = MockTime()
    a = acc(time, linger_ms=0)
    a.append(TopicPartition("other", 0), 1, None, b"x", [], None, 1000)
    ready, _, unknown = a.ready(cluster(), time.milliseconds())
    assert ready == set() and unknown == {"other"}


def test_reenqueue_orders_by_sequence_and_backs_off() -> None:
    time = MockTime()
    a = acc(time, linger_ms=0, retry_backoff_ms=100)
    for i in range(2):
        a.append(T0, 1, None, b"a%d" % i, [], None, 1000)
        (b,) = a.drain(cluster(), {1}, 1 << 20, time.milliseconds())[1]
        b.base_sequence = i * 10
        if i == 0:
            first = b
        else:
            second = b
    a.reenqueue(second, time.milliseconds())
    a.reenqueue(first, time.milliseconds())
    assert a.ready(cluster(), time.milliseconds())[0] == set()  # backing off
    time.advance(100)
    assert a.ready(cluster(), time.milliseconds())[0] == {1}
    (b,) = a.drain(cluster(), {1}, 1 << 20, time.milliseconds())[1]
    assert b is first and b.attempts == 1


def test_delivery_timeout_expiry_and_callbacks() -> None:
    time = MockTime()
    a = acc(time, delivery_timeout_ms=500)
    calls = []
    a.append(T0, 1, None, b"x", [], lambda md, err: calls.append((md, err)), 1000)
    assert a.expired_batches(time.milliseconds()) == []
    time.advance(500)
    (b,) = a.expired_batches(time.milliseconds())
    err = RuntimeError("expired")
    b.done(-1, -1, err)
    assert calls == [(None, err)]
    assert b.records[0].exception(0) is err
