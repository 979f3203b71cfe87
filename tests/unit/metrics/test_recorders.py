"""kafkapy.metrics.recorders: the compiled recorders (kafkapy/metrics/_recorders.c) and the Python reference
queue the same rows, count the same NONE codes, and hand other codes, quotas and overflow to their callers."""

from __future__ import annotations

import struct
import threading
from array import array
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from kafkapy.metrics import recorders
from kafkapy.metrics.recorders import RequestRecorderPy, RowQueuesPy
from kafkapy.protocol.header import RequestHeader
from kafkapy.protocol.messages import FetchResponse, MetadataResponse, ProduceResponse
from kafkapy.server.network.request_channel import Request
from kafkapy.server.request_context import RequestContext
from kafkapy.server.request_metrics import error_counts, error_plan

IMPLS = ["python", "compiled"]


def _impl(name: str) -> Any:
    if name == "python":
        return SimpleNamespace(RowQueues=RowQueuesPy, RequestRecorder=RequestRecorderPy)
    assert recorders._compiled is not None, "pip install -e . builds kafkapy.metrics._recorders"
    return recorders._compiled


def test_compiled_is_built_and_used() -> None:
    assert recorders._compiled is not None
    assert recorders.RowQueues is recorders._compiled.RowQueues
    assert recorders.RequestRecorder is recorders._compiled.RequestRecorder


@pytest.mark.parametrize("impl", IMPLS)
def test_row_queues_append_drain_and_overflow(impl: str) -> None:
    overflows: list[int] = []
    queues = _impl(impl).RowQueues(2, 3, lambda: overflows.append(queues.pending))
    queues.append("a", 1000, 16)
    queues.append("b", 70, 1)
    queues.append("a", -5, 2**40)
    assert (queues.pending, overflows) == (3, [])
    queues.append("a", 1, 1)  # the fourth row since the drain: past the limit of 3
    assert overflows == [4]
    drained = queues.drain()
    assert {k: array("q", v).tolist() for k, v in drained.items()} == {"a": [1000, 16, -5, 2**40, 1, 1],
                                                                        "b": [70, 1]}
    assert all(type(v) is bytearray for v in drained.values())
    assert (queues.pending, queues.drain()) == (0, {})
    with pytest.raises(TypeError):
        queues.append("a", 1)  # a row is exactly `width` ints
    with pytest.raises((OverflowError, struct.error)):  # past int64
        queues.append("a", 1, 2**64)


@pytest.mark.parametrize("impl", IMPLS)
def test_row_queues_keep_every_row_of_concurrent_appends(impl: str) -> None:
    queues = _impl(impl).RowQueues(1, 10**9)
    got: list[int] = []

    def produce(base: int) -> None:
        for i in range(20_000):
            queues.append(base, base + i)

    threads = [threading.Thread(target=produce, args=(b,)) for b in (0, 100_000)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        for v in queues.drain().values():
            got += array("q", v)
    for t in threads:
        t.join()
    for v in queues.drain().values():
        got += array("q", v)
    assert sorted(got) == list(range(20_000)) + list(range(100_000, 120_000))


def _ctx(api_key: int, version: int, frame: bytes, exempt: bool = False, start: int = 1_000_000) -> RequestContext:
    request = Request(0, "c-0", api_key, version, 7, memoryview(frame), ("127.0.0.1", 1), start)
    request.dequeue_ns = start + 200
    ctx = RequestContext(request, RequestHeader(api_key, version, 7, "client"), None, None)  # type: ignore[arg-type]
    ctx.handler_ns = 300
    ctx.quota_exempt = exempt
    return ctx


def _produce(*codes: int | None) -> ProduceResponse:
    return ProduceResponse(responses=[ProduceResponse.TopicProduceResponse(name="a", partition_responses=[
        ProduceResponse.PartitionProduceResponse(index=i, error_code=c) for i, c in enumerate(codes)])])


class _Calls:
    def __init__(self) -> None:
        self.slow: list[tuple[int, dict[int, int]]] = []
        self.quota: list[tuple[str, int]] = []
        self.overflow = 0
        self.now = 5_000

    def slow_errors(self, api_key: int, body: Any) -> int:
        counts = error_counts(body)
        none = counts.pop(0, 0)
        self.slow.append((api_key, counts))
        return none

    def recorder(self, impl: str, limit: int = 1000) -> Any:
        def overflow() -> None:
            self.overflow += 1

        def on_quota(ctx: Any, throttle: int) -> None:
            self.quota.append((ctx.header.client_id, throttle))

        clock: Callable[[], int] = lambda: self.now  # noqa: E731
        return _impl(impl).RequestRecorder(limit, overflow, error_plan, self.slow_errors, on_quota, clock)


@pytest.mark.parametrize("impl", IMPLS)
def test_request_rows_and_error_codes(impl: str) -> None:
    calls = _Calls()
    rec = calls.recorder(impl)
    rec.record(_ctx(0, 9, b"p" * 100), _produce(0, None, 0), 800, 0)  # None counts as NONE
    rec.record(_ctx(0, 9, b"p" * 50), _produce(0, 6), 900, 25)  # another code: the general walk
    rec.record(_ctx(0, 7, b"p" * 10), None, 950, 0)  # acks=0: one NONE
    calls.now = 6_000
    rec.record(_ctx(1, 12, b"f" * 70, exempt=True), FetchResponse(error_code=0, responses=[
        FetchResponse.FetchableTopicResponse(topic="a", partitions=[
            FetchResponse.PartitionData(partition_index=0, error_code=0)])]), 1_000, 0)
    metadata = MetadataResponse(topics=[MetadataResponse.MetadataResponseTopic(name="x", error_code=0, partitions=[
        MetadataResponse.MetadataResponsePartition(error_code=0)])])
    rec.record(_ctx(3, 12, b"m"), metadata, 1_100, 0)
    assert rec.pending == 5
    rows = {k: array("q", v).tolist() for k, v in rec.drain().items()}
    start, dequeue = 1_000_000, 1_000_200
    assert rows == {
        0 << 16 | 9 << 1: [start, dequeue, 300, 800, 5_000, 100, 0, 3, start, dequeue, 300, 900, 5_000, 50, 25, 1],
        0 << 16 | 7 << 1: [start, dequeue, 300, 950, 5_000, 10, 0, 1],
        1 << 16 | 12 << 1 | 1: [start, dequeue, 300, 1_000, 6_000, 70, 0, 2],
        3 << 16 | 12 << 1: [start, dequeue, 300, 1_100, 6_000, 1, 0, 3],  # top level, topic, partition
    }
    assert calls.slow == [(0, {6: 1})]
    assert (calls.quota, calls.overflow, rec.pending, rec.drain()) == ([], 0, 0, {})


@pytest.mark.parametrize("impl", IMPLS)
def test_request_quota_facts_and_overflow(impl: str) -> None:
    calls = _Calls()
    rec = calls.recorder(impl, limit=2)
    rec.record(_ctx(0, 9, b"p"), _produce(0), 800, 0)  # quotas off: no call
    rec.quotas_on = True
    rec.record(_ctx(0, 9, b"p"), _produce(0), 800, 40)
    rec.record(_ctx(1, 12, b"f", exempt=True), None, 800, 0)  # a follower's Fetch: exempt
    rec.record(_ctx(3, 12, b"m"), None, 800, 0)  # not Produce or Fetch
    assert calls.quota == [("client", 40)]
    assert calls.overflow == 2  # the 3rd and 4th rows since the last drain
    assert sum(len(v) for v in rec.drain().values()) == 4 * 8 * 8


@pytest.mark.parametrize("impl", IMPLS)
def test_request_recorder_reads_any_object_with_the_names(impl: str) -> None:
    """Duck-typed contexts (the unit tests' SimpleNamespace) read as RequestContext, and a changed class is
    read afresh (the compiled recorder's slot cache follows the type's version)."""
    calls = _Calls()
    rec = calls.recorder(impl)
    ctx = SimpleNamespace(request=SimpleNamespace(start_ns=10, dequeue_ns=0, frame=b"xyz"),
                          header=SimpleNamespace(api_key=0, api_version=3), handler_ns=4, quota_exempt=False)
    rec.record(ctx, _produce(0), 20, 0)

    class Header:
        __slots__ = ("api_key", "api_version")

        def __init__(self) -> None:
            self.api_key, self.api_version = 0, 3

    ctx.header = Header()
    rec.record(ctx, None, 20, 0)
    Header.api_version = property(lambda self: 4)  # type: ignore[assignment,method-assign]
    rec.record(ctx, None, 20, 0)
    rows = {k: array("q", v).tolist() for k, v in rec.drain().items()}
    assert rows == {3 << 1: [10, 0, 4, 20, 5_000, 3, 0, 1] * 2, 4 << 1: [10, 0, 4, 20, 5_000, 3, 0, 1]}
