"""Fetcher record parsing: control batches, positions inside batches, read_committed aborts."""

from __future__ import annotations

from types import SimpleNamespace

from kafkapy.client.fetcher import Fetcher, _CompletedFetch
from kafkapy.client.subscription_state import SubscriptionState
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.control_record import ControlRecordType, build_end_txn_marker_batch
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

TP = TopicPartition("t", 0)


def batch(base: int, values: list[bytes], pid: int = -1, txn: bool = False) -> bytes:
    b = MemoryRecordsBuilder(base_offset=base, producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                             base_sequence=0 if pid >= 0 else -1, is_transactional=txn)
    for v in values:
        b.append(100 + base, b"k", v)
    return b.build()


LOG = b"".join([
    batch(0, [b"a0", b"a1"], pid=5, txn=True),
    build_end_txn_marker_batch(ControlRecordType.ABORT, 5, 0, 0, 1, base_offset=2),
    batch(3, [b"c3", b"c4"], pid=6, txn=True),
    build_end_txn_marker_batch(ControlRecordType.COMMIT, 6, 0, 0, 1, base_offset=5),
    batch(6, [b"p6"]),
])
ABORTED = [SimpleNamespace(producer_id=5, first_offset=0)]


def parse(isolation: int, fetch_offset: int = 0, data: bytes = LOG) -> tuple[list, Fetcher]:
    subs = SubscriptionState()
    subs.assign([TP])
    subs.seek(TP, fetch_offset)
    f = Fetcher(client=None, subscriptions=subs, isolation_level=isolation)  # type: ignore[arg-type]
    f._completed.append(_CompletedFetch(TP, fetch_offset, memoryview(data), 7, ABORTED, 0, 7))
    return f.fetched_records(100), f


def test_read_uncommitted_returns_every_data_record() -> None:
    recs, f = parse(0)
    assert [(r.offset, r.value) for r in recs] == [(0, b"a0"), (1, b"a1"), (3, b"c3"), (4, b"c4"), (6, b"p6")]
    assert f.subscriptions.position(TP).offset == 7


def test_read_committed_skips_aborted_transactions() -> None:
    recs, _ = parse(1)
    assert [(r.offset, r.value) for r in recs] == [(3, b"c3"), (4, b"c4"), (6, b"p6")]


def test_records_before_the_fetch_position_are_dropped() -> None:
    recs, _ = parse(0, fetch_offset=4)
    assert [r.offset for r in recs] == [4, 6]


def test_partial_trailing_batch_is_dropped_and_control_only_fetch_advances() -> None:
    recs, f = parse(0, data=LOG[:-10])
    assert [r.offset for r in recs] == [0, 1, 3, 4]
    assert f.subscriptions.position(TP).offset == 5
    marker = build_end_txn_marker_batch(ControlRecordType.COMMIT, 6, 0, 0, 1, base_offset=5)
    recs, f = parse(0, fetch_offset=5, data=marker)
    assert recs == [] and f.subscriptions.position(TP).offset == 6


def test_max_records_hands_out_in_slices() -> None:
    subs = SubscriptionState()
    subs.assign([TP])
    subs.seek(TP, 0)
    f = Fetcher(client=None, subscriptions=subs)  # type: ignore[arg-type]
    f._completed.append(_CompletedFetch(TP, 0, memoryview(batch(0, [b"%d" % i for i in range(10)])), 10, [], 0, 10))
    assert [r.offset for r in f.fetched_records(4)] == [0, 1, 2, 3]
    assert subs.position(TP).offset == 4
    assert [r.offset for r in f.fetched_records(4)] == [4, 5, 6, 7]
    assert [r.offset for r in f.fetched_records(4)] == [8, 9]
    assert f.fetched_records(4) == []
