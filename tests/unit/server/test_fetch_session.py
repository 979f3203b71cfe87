"""FetchSessionCache, FetchManager contexts and the client's FetchSessionHandler (KIP-227), with MockTime."""

from __future__ import annotations

from kafkapy.common.errors import ErrorCode
from kafkapy.common.file_region import FileRegion
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import FetchRequest
from kafkapy.server.fetch_params import FetchPartitionData, FetchPartitionInfo
from kafkapy.server.fetch_session import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    CachedPartition,
    FetchManager,
    FetchSessionCache,
    FetchSessionHandler,
    next_epoch,
)

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def cached(n: int) -> dict[TopicPartition, CachedPartition]:
    return {TopicPartition("t", i): CachedPartition(0, 1024) for i in range(n)}


def info(offset: int) -> FetchPartitionInfo:
    return FetchPartitionInfo(offset, 1 << 20)


def test_next_epoch_wraps_and_stays_sessionless() -> None:
    assert next_epoch(INITIAL_EPOCH) == 1
    assert next_epoch(5) == 6
    assert next_epoch(2**31 - 1) == 1
    assert next_epoch(FINAL_EPOCH) == FINAL_EPOCH


def test_cache_full_refuses_then_evicts_stale_session() -> None:
    time = MockTime()
    cache = FetchSessionCache(2, 120_000, time)
    s1 = cache.maybe_create_session(False, cached(1))
    time.sleep(10)
    s2 = cache.maybe_create_session(False, cached(1))
    assert s1 and s2 and s1 != s2 and len(cache) == 2
    # Both young and of the same worth: a third consumer session finds no room.
    assert cache.maybe_create_session(False, cached(1)) == 0
    time.sleep(120_001)
    cache.touch(cache.get(s2), time.milliseconds())  # type: ignore[arg-type]
    s3 = cache.maybe_create_session(False, cached(1))
    assert s3 and cache.get(s1) is None and cache.get(s2) is not None and cache.evictions == 1


def test_follower_session_evicts_smallest_consumer_session() -> None:
    time = MockTime()
    cache = FetchSessionCache(2, 120_000, time)
    small = cache.maybe_create_session(False, cached(2))
    big = cache.maybe_create_session(False, cached(5))
    follower = cache.maybe_create_session(True, cached(1))
    assert follower and cache.get(small) is None and cache.get(big) is not None
    # A consumer may not evict a follower's session nor a young consumer session.
    assert cache.maybe_create_session(False, cached(100)) == 0


def test_old_smaller_consumer_session_evicted_by_bigger_one() -> None:
    time = MockTime()
    cache = FetchSessionCache(1, 1000, time)
    old = cache.maybe_create_session(False, cached(3))
    time.sleep(500)
    cache.touch(cache.get(old), time.milliseconds())  # type: ignore[arg-type]
    time.sleep(600)  # created 1100 ms ago, used 600 ms ago: not stale, but past the eviction age
    assert cache.maybe_create_session(False, cached(2)) == 0  # smaller: not worth more
    assert cache.maybe_create_session(False, cached(4)) != 0
    assert cache.get(old) is None


def test_new_session_starts_with_every_partition_touched_and_is_indexed() -> None:
    cache = FetchSessionCache(10, 120_000, MockTime())
    sid = cache.maybe_create_session(True, {A0: CachedPartition(0, 1), B0: CachedPartition(0, 1)})
    session = cache.get(sid)
    assert session is not None and session.epoch == 1
    assert sorted(session.take_touched()) == [A0, B0] and session.touched() == []
    assert cache.mark_changed(A0) == [sid] and cache.mark_changed(A1) == []
    assert session.touched() == [A0]
    # A waiting fetch sees each change once (a partition changed twice: twice), the touched set keeps it.
    cache.mark_changed(A0)
    assert session.take_recent() == [A0, A0] and session.take_recent() == [] and session.touched() == [A0]
    cache.remove(sid)
    assert cache.mark_changed(A0) == [] and cache.sessions_with(B0) == ()


def test_manager_contexts_epochs_and_errors() -> None:
    time = MockTime()
    fm = FetchManager(FetchSessionCache(10, 120_000, time), time, sweep_interval_ms=5000)
    assert fm.new_context(0, FINAL_EPOCH, {A0: info(0)}, [], False).kind == "sessionless"
    full = fm.new_context(0, INITIAL_EPOCH, {A0: info(0), A1: info(0)}, [], True)
    assert full.kind == "full"
    results = {A0: FetchPartitionData(0, 10, 10, 0), A1: FetchPartitionData(0, 3, 3, 0)}
    sid = fm.create_session(True, full.read, results)
    session = fm.cache.get(sid)
    assert session is not None
    session.take_touched()

    assert fm.new_context(sid + 1, 1, {}, [], True).error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert fm.new_context(sid, 2, {}, [], True).error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH

    # Epoch 1: nothing changed, nothing named: nothing read.
    ctx = fm.new_context(sid, 1, {}, [], True)
    assert ctx.kind == "incremental" and ctx.read == {} and session.epoch == 2
    # An append touched A1; the request moves A0's offset: both read, nothing else.
    fm.cache.mark_changed(A1)
    ctx = fm.new_context(sid, 2, {A0: info(10)}, [], True)
    assert set(ctx.read) == {A0, A1} and ctx.read[A0].fetch_offset == 10 and ctx.read[A1].fetch_offset == 0
    # Only A1's HW moved: the answer carries A1 only (A0's values were already told).
    answer = fm.changed(session, {A0: FetchPartitionData(0, 10, 10, 0), A1: FetchPartitionData(0, 4, 4, 0)})
    assert list(answer) == [A1] and answer[A1].high_watermark == 4
    # Forgetting A1, adding B0.
    ctx = fm.new_context(sid, 3, {B0: info(7)}, [A1], True)
    assert sorted(session.partitions) == [A0, B0] and set(ctx.read) == {B0}
    assert fm.cache.mark_changed(A1) == [] and fm.cache.mark_changed(B0) == [sid]
    # Records always go out; the sweep reads every partition once per interval.
    session.take_touched()
    time.sleep(5000)
    ctx = fm.new_context(sid, 4, {}, [], True)
    assert set(ctx.read) == {A0, B0}
    region = FileRegion(None, 0, 5)
    assert list(fm.changed(session, {A0: FetchPartitionData(0, 10, 10, 0, region)})) == [A0]
    # Epoch 0 with the id closes the session and opens a new full one.
    assert fm.new_context(sid, INITIAL_EPOCH, {A0: info(0)}, [], True).kind == "full"
    assert fm.cache.get(sid) is None


def test_zero_slots_means_sessionless() -> None:
    time = MockTime()
    fm = FetchManager(FetchSessionCache(0, 120_000, time), time, 5000)
    assert fm.new_context(0, INITIAL_EPOCH, {A0: info(0)}, [], True).kind == "sessionless"


def part(p: int, offset: int) -> FetchRequest.FetchPartition:
    return FetchRequest.FetchPartition(partition=p, current_leader_epoch=3, fetch_offset=offset, log_start_offset=0,
                                       partition_max_bytes=1 << 20)


def test_handler_sends_full_then_only_changes() -> None:
    h = FetchSessionHandler(1)
    first = h.build({A0: part(0, 0), A1: part(1, 0)})
    assert (first.session_id, first.epoch, sorted(first.to_send), first.to_forget) == (0, 0, [A0, A1], [])
    assert h.handle_response(0, 77)
    second = h.build({A0: part(0, 5), A1: part(1, 0)})
    assert (second.session_id, second.epoch, list(second.to_send), second.to_forget) == (77, 1, [A0], [])
    assert h.handle_response(0, 77)
    third = h.build({A0: part(0, 5)})
    assert (third.epoch, third.to_send, third.to_forget) == (2, {}, [A1])
    # The session is gone at the broker: back to a full fetch without an id.
    assert not h.handle_response(ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0)
    again = h.build({A0: part(0, 5)})
    assert (again.session_id, again.epoch, list(again.to_send)) == (0, 0, [A0])
    assert h.handle_response(0, 78)
    # A wrong epoch or a failed request: a full fetch naming the old id (the broker closes it).
    h.handle_error()
    closing = h.build({A0: part(0, 6)})
    assert (closing.session_id, closing.epoch, list(closing.to_send)) == (78, 0, [A0])
