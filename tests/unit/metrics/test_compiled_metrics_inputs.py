"""The compiled metrics helpers given inputs outside their callers' habits: out-of-range uniforms, negative
counts, lists mutated by the conversions they trigger, values at the int64 bounds, unaligned buffers, malformed
error plans, objects never initialized. Each gives a result or a Python exception, never a read or write outside
its buffers (these are the cases an AddressSanitizer build of kafkapy/metrics/_reservoir.c, _request_fold.c and
_recorders.c found). Seeded and bounded."""

from __future__ import annotations

import random
import sys
import time
from array import array
from types import SimpleNamespace
from typing import Any

import pytest

from kafkapy.metrics import histogram, recorders, request_fold

needs_reservoir = pytest.mark.skipif(histogram._compiled_draw is None, reason="_reservoir is not built")
needs_fold = pytest.mark.skipif(request_fold._compiled is None, reason="_request_fold is not built")
needs_recorders = pytest.mark.skipif(recorders._compiled is None, reason="_recorders is not built")


@needs_reservoir
@pytest.mark.parametrize("u", [-0.5, -1e300, float("nan"), 1.0, 7.5, float("inf"), float("-inf")])
@pytest.mark.parametrize("n", [3, 10, 5_000])  # the shuffle (n <= 2k) and the rejection (n > 2k) branches
def test_draw_keeps_out_of_range_uniforms_inside_the_events(n: int, u: float) -> None:
    """rnd() outside [0, 1) (a NaN, a negative, 1.0 or more) still picks distinct indexes of 0..n-1; a rnd that
    repeats one value (every rejection draw a miss) ends."""
    draws = iter([0.25] * 4 + [u] * 100_000)
    priorities, picked = histogram._compiled_draw(n, 1.0, 0.0, 4, lambda: next(draws))
    assert len(picked) == len(set(picked)) == len(priorities) <= min(n, 4)
    assert all(0 <= i < n for i in picked)


@needs_reservoir
@pytest.mark.parametrize("n,size", [(-5, 8), (0, 8), (10, -1), (10, 0)])
def test_draw_of_nothing_is_empty(n: int, size: int) -> None:
    assert histogram._compiled_draw(n, 1.0, 0.0, size, random.Random(1).random) == ([], [])


@needs_reservoir
def test_draw_converts_each_argument_before_the_next() -> None:
    with pytest.raises(TypeError):
        histogram._compiled_draw("10", object(), 0.0, 4, random.random)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        histogram._compiled_draw(10, 1.0, 0.0, 4.5, random.random)  # type: ignore[arg-type]


def _rows(rng: random.Random, n: int, bound: int) -> array[int]:
    return array("q", [rng.randint(-bound, bound) if rng.random() < 0.9 else rng.choice((0, bound, -bound))
                       for _ in range(n * request_fold.ROW)])


@needs_fold
def test_fold_of_random_rows_equals_the_python_fold_from_any_alignment() -> None:
    """Random rows (negative values, zeros, dequeue 0) fold alike in C and Python, from an array and from a
    buffer starting at an odd address (values small enough that the sums of squares are exact doubles)."""
    rng = random.Random(16)
    for n in (0, 1, 2, 7, 300):
        rows = _rows(rng, n, 1 << 20)
        expected = request_fold.request_stats_py(rows)
        assert request_fold._compiled(rows) == expected
        unaligned = memoryview(b"\x00" + rows.tobytes())[1:]
        assert request_fold._compiled(unaligned) == expected  # type: ignore[arg-type]
        picks = [rng.randrange(n) for _ in range(min(n, 5))]
        scales = tuple(rng.choice((1.0, 1e-6, 0.5)) for _ in range(request_fold.ROW))
        assert request_fold._compiled_scaled_rows(rows, picks, scales) == request_fold.scaled_rows_py(rows, picks, scales)


@needs_fold
def test_fold_at_the_int64_bounds_wraps_without_undefined_arithmetic() -> None:
    """Past the int64 bounds the compiled sums wrap (the Python fold's are exact): defined, and no crash."""
    top = (1 << 63) - 1
    rows = array("q", [-top - 1, 0, top, top, top, top, top, top] * 3)
    n, nones, stats = request_fold._compiled(rows)
    assert (n, len(stats)) == (3, request_fold.ROW)
    assert nones == (3 * top + (1 << 63)) % (1 << 64) - (1 << 63)  # 3 * top, wrapped to int64


@needs_fold
def test_scaled_rows_reads_a_copy_of_the_indexes_a_conversion_mutates() -> None:
    rows = array("q", range(4 * request_fold.ROW))
    indices: list[Any] = []

    class Shrinking:
        def __index__(self) -> int:
            indices.clear()
            return 0

    indices.extend([Shrinking(), 1, 2, 3] * 50)
    out = request_fold._compiled_scaled_rows(rows, indices, (1.0,) * request_fold.ROW)
    assert len(out) == 200 and out[1] == tuple(float(v) for v in request_fold.row_values(rows, 1))
    with pytest.raises(IndexError):
        request_fold._compiled_scaled_rows(rows, [4], (1.0,) * request_fold.ROW)
    with pytest.raises(ValueError):
        request_fold._compiled_scaled_rows(rows, [0], (1.0,) * 7)


def _ctx(api_key: int = 3, api_version: int = 1, exempt: bool = False) -> SimpleNamespace:
    request = SimpleNamespace(start_ns=10, dequeue_ns=20, frame=b"abcd")
    header = SimpleNamespace(api_key=api_key, api_version=api_version)
    return SimpleNamespace(request=request, header=header, handler_ns=5, quota_exempt=exempt)


@needs_recorders
@pytest.mark.parametrize("plan", [
    (5,), ((0, "error_code"),), ((0, "error_code", None, None),), (("0", "error_code", None),),
    ((0, 17, None),), ((2, "topics", 3),), [(0, "error_code", None)],
])
def test_malformed_error_plans_raise_type_error(plan: Any) -> None:
    """An error_plan answer that is not a tuple of (int kind, str outer, str inner) is refused when first asked
    (walking it read through a non-tuple's memory)."""
    rec = recorders._compiled.RequestRecorder(100, None, lambda cls: plan, lambda k, b: 0, lambda c, t: None)
    with pytest.raises(TypeError):
        rec.record(_ctx(), SimpleNamespace(error_code=0, topics=[]), 30, 0)
    assert rec.drain() == {}


@needs_recorders
def test_negative_api_key_and_version_make_the_python_key() -> None:
    rows = {}
    for impl in (recorders._compiled.RequestRecorder, recorders.RequestRecorderPy):
        rec = impl(100, None, lambda cls: None, lambda k, b: 0, lambda c, t: None, lambda: 99)
        rec.record(_ctx(-1, -1, True), None, 30, 0)
        rec.record(_ctx(-7, 32767, False), None, 30, 0)
        rows[impl] = {k: bytes(v) for k, v in rec.drain().items()}
    assert rows[recorders._compiled.RequestRecorder] == rows[recorders.RequestRecorderPy]
    assert sorted(rows[recorders.RequestRecorderPy]) == [-7 << 16 | 32767 << 1, -1 << 16 | -1 << 1 | 1]


@needs_recorders
def test_recorders_never_initialized_raise() -> None:
    queues = recorders._compiled.RowQueues.__new__(recorders._compiled.RowQueues)
    with pytest.raises(RuntimeError):
        queues.append("topic")
    with pytest.raises(RuntimeError):
        queues.drain()
    rec = recorders._compiled.RequestRecorder.__new__(recorders._compiled.RequestRecorder)
    with pytest.raises(RuntimeError):
        rec.record(_ctx(), None, 1, 0)
    with pytest.raises(RuntimeError):
        rec.drain()


def _slot_classes(rng: random.Random) -> tuple[Any, ...]:
    req = type("Req", (), {"__slots__": ("start_ns", "dequeue_ns", "frame")})
    members = {name: req.__dict__[name] for name in req.__slots__}
    if rng.random() < 0.3:  # a subclass: the slots at its base's offsets
        req = type("SubReq", (req,), {"__slots__": ("extra",)})
    hdr = type("Hdr", (), {"__slots__": ("api_key", "api_version")} if rng.random() < 0.8 else {})
    ctx = type("Ctx", (), {"__slots__": ("request", "header", "handler_ns", "quota_exempt")})
    part = type("Part", (), {"__slots__": ("error_code",)})
    topic = type("Topic", (), {"__slots__": ("partitions", "error_code")})
    body = type("Body", (), {"__slots__": ("error_code", "topics")})
    return req, members, hdr, ctx, part, topic, body


def _body_plan(cls: type) -> Any:
    return ((0, "error_code", ""), (1, "topics", ""), (2, "topics", "partitions")) if cls.__name__ == "Body" else None


@needs_recorders
def test_compiled_recorder_equals_the_python_one_while_slot_classes_change() -> None:
    """RequestRecorder (C, with its slot-offset cache) and RequestRecorderPy record the same rows, or raise the
    same exception, while __slots__ classes are created and dropped (a new type may take a freed one's address),
    class attributes shadow a slot and are removed again (each a new version tag: a cached offset must not be
    used), slots are left empty, and overflow drains the compiled recorder in the middle of its calls."""
    rng = random.Random(20)
    tick = [0]

    def clock() -> int:
        tick[0] += 1
        return tick[0]

    drained: list[dict] = []
    compiled = recorders._compiled.RequestRecorder(3, lambda: drained.append(compiled.drain()), _body_plan,
                                                   lambda k, b: 7, lambda c, t: None, clock)
    python = recorders.RequestRecorderPy(1 << 30, None, _body_plan, lambda k, b: 7, lambda c, t: None, clock)
    classes = _slot_classes(rng)
    raised = 0
    for n in range(4_000):
        if rng.random() < 0.02:
            classes = _slot_classes(rng)
        req_cls, members, hdr_cls, ctx_cls, part_cls, topic_cls, body_cls = classes
        name = rng.choice(("start_ns", "dequeue_ns"))
        if rng.random() < 0.02:
            setattr(req_cls, name, property(lambda self: 123))
        elif rng.random() < 0.02 and isinstance(req_cls.__dict__.get(name), property):
            delattr(req_cls, name)
        req, hdr, ctx = req_cls(), hdr_cls(), ctx_cls()
        members["start_ns"].__set__(req, rng.randrange(1 << 40))
        members["dequeue_ns"].__set__(req, rng.choice((0, None, 5)))
        members["frame"].__set__(req, rng.randbytes(rng.randrange(4)))
        hdr.api_key, hdr.api_version = rng.choice((0, 1, 3, -1, 32767)), rng.choice((0, 1, -1, 12))
        ctx.request, ctx.header, ctx.handler_ns, ctx.quota_exempt = req, hdr, rng.randrange(100), rng.random() < 0.5
        if rng.random() < 0.03:
            try:
                delattr(rng.choice((req, hdr, ctx)), rng.choice(("start_ns", "api_key", "handler_ns", "frame")))
            except (AttributeError, TypeError):
                pass
        body = None
        if rng.random() < 0.8:
            body = body_cls()
            body.error_code = rng.choice((0, 0, 0, None, 3))
            topics = []
            for _ in range(rng.randrange(4)):
                t = topic_cls()
                t.error_code = rng.choice((0, 0, None, 1))
                t.partitions = []
                for _ in range(rng.randrange(4)):
                    p = part_cls()
                    p.error_code = rng.choice((0, 0, 0, None, 6))
                    t.partitions.append(p)
                topics.append(t)
            body.topics = rng.choice((topics, tuple(topics), None))
        outcomes = []
        for rec in (compiled, python):
            before = tick[0]
            try:
                rec.record(ctx, body, 50, 0)
                outcomes.append("ok")
            except Exception as e:  # compared: the same exception from both
                outcomes.append(type(e).__name__)
            if rec is compiled:
                tick[0] = before  # both read the same clock value
        assert outcomes[0] == outcomes[1], (n, outcomes)
        raised += outcomes[0] != "ok"
    drained.append(compiled.drain())
    got: dict[int, bytes] = {}
    for d in drained:
        for key, rows in d.items():
            got[key] = got.get(key, b"") + bytes(rows)
    assert got == {key: bytes(rows) for key, rows in python.drain().items()}
    assert 50 < raised < 400 and len(got) > 10


@needs_recorders
def test_row_queues_survive_a_key_that_drains_during_its_lookup() -> None:
    """Any hashable key: one whose __hash__ or __eq__ drains the queues (and drops them) mid-lookup freed the
    dict being searched. Now the row lands in the fresh queues, and a key that drains at every lookup gets
    RuntimeError."""
    queues = recorders._compiled.RowQueues(1, 100)
    budget = [0]  # drains left to the __eq__ of any Draining key
    drains = [0]

    def drain() -> None:
        if budget[0]:
            budget[0] -= 1
            drains[0] += 1
            queues.drain()  # the dict under lookup is handed over and dropped here

    class Draining:
        def __hash__(self) -> int:
            drain()
            return 1

        def __eq__(self, other: object) -> bool:
            drain()
            return False

    queues.append(Draining(), 1)
    budget[0] = 2
    queues.append(Draining(), 2)  # __hash__ and __eq__ drain in the first lookup: the row goes to the next
    assert drains[0] == 2 and [bytes(v) for v in queues.drain().values()] == [array("q", [2]).tobytes()]
    queues.append(Draining(), 3)
    budget[0] = 1_000
    with pytest.raises(RuntimeError):
        queues.append(Draining(), 4)


class _Boom(Exception):
    pass


def _raising_after(calls: int, rng: random.Random) -> Any:
    left = [calls]

    def rnd() -> float:
        if not left[0]:
            raise _Boom
        left[0] -= 1
        return rng.random()

    return rnd


@needs_reservoir
@pytest.mark.parametrize("n", [3, 10, 5_000])
def test_draw_passes_on_an_exception_from_rnd_at_any_call(n: int) -> None:
    """The priority loop, the shuffle and the rejection loop each give up cleanly when rnd() raises."""
    k = min(n, 4)
    outcomes = []
    for calls in range(20):
        try:
            priorities, picked = histogram._compiled_draw(n, 1.0, 0.0, 4, _raising_after(calls, random.Random(n)))
        except _Boom:  # the same uniforms every time, cut after `calls`
            outcomes.append(False)
            continue
        outcomes.append(True)
        assert len(picked) == len(set(picked)) == len(priorities) == k
    # k priorities then at least k picks: every shorter supply of uniforms raised, every longer one drew
    first = outcomes.index(True)
    assert first >= 2 * k and all(outcomes[first:]), outcomes


@needs_fold
def test_fold_refuses_what_is_not_rows_indexes_or_scales() -> None:
    rows = array("q", range(2 * request_fold.ROW))
    scales = (1.0,) * request_fold.ROW
    with pytest.raises(TypeError):
        request_fold._compiled(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        request_fold._compiled(array("q", [1, 2, 3]))
    with pytest.raises(TypeError):
        request_fold._compiled_scaled_rows(rows, [0], (1.0,) * 7 + ("x",))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        request_fold._compiled_scaled_rows(rows, 5, scales)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        request_fold._compiled_scaled_rows(object(), [0], scales)  # type: ignore[arg-type]

    class Raising:
        def __index__(self) -> int:
            raise _Boom

    with pytest.raises(_Boom):
        request_fold._compiled_scaled_rows(rows, [0, Raising()], scales)


@needs_recorders
@pytest.mark.parametrize("failing", ["slow_errors", "on_quota", "clock", "overflow", "frame", "exempt", "api_key"])
def test_recorder_callbacks_that_raise_pass_the_exception_on_and_keep_no_reference(failing: str) -> None:
    """Every error exit of record() releases what it read: the context's reference count is unchanged after
    100 failed calls, and the exception is the callback's."""
    def boom(*_: Any) -> Any:
        raise _Boom

    class Exempt:
        def __bool__(self) -> bool:
            raise _Boom

    rec = recorders._compiled.RequestRecorder(
        0, boom if failing == "overflow" else None, _body_plan, boom if failing == "slow_errors" else lambda k, b: 0,
        boom if failing == "on_quota" else lambda c, t: None, boom if failing == "clock" else lambda: 5)
    rec.quotas_on = True
    ctx = _ctx(api_key=0)
    if failing == "frame":
        ctx.request.frame = 17  # no len()
    if failing == "exempt":
        ctx.quota_exempt = Exempt()
    if failing == "api_key":
        ctx.header.api_key = "0"
    body = type("Body", (), {"__slots__": ("error_code", "topics")})()
    body.error_code, body.topics = 3, None  # a code that is not NONE: slow_errors counts
    refs = [sys.getrefcount(x) for x in (ctx, ctx.request, ctx.header, body)]
    for _ in range(100):
        with pytest.raises((_Boom, TypeError)):
            rec.record(ctx, body, 1, 0)
    assert [sys.getrefcount(x) for x in (ctx, ctx.request, ctx.header, body)] == refs


@needs_recorders
def test_recorder_without_a_clock_reads_the_monotonic_clock() -> None:
    rec = recorders._compiled.RequestRecorder(100, None, lambda cls: None, lambda k, b: 0, lambda c, t: None)
    before = time.monotonic_ns()
    rec.record(_ctx(), None, 1, 0)
    after = time.monotonic_ns()
    (rows,) = rec.drain().values()
    assert before <= array("q", rows)[4] <= after


@pytest.mark.skipif(getattr(histogram, "_compiled_offer", None) is None, reason="_reservoir.offer is not built")
def test_offer_equals_heapq_and_survives_code_that_changes_the_heap_mid_offer() -> None:
    """_reservoir.offer gives _offer_py's heap on random heaps; and when the replaced entries' finalizers or the
    priorities' __float__ change the heap during the offer (cleared, grown, shrunk, filled with malformed
    entries), it returns or raises TypeError, never touching memory the list no longer holds."""
    import heapq

    offer = histogram._compiled_offer
    rng = random.Random(1028)
    heap: list[Any] = []  # the heap under offer in the second half of each round

    def meddle() -> None:
        op = rng.randrange(4)
        if op == 0:
            heap.clear()
        elif op == 1:
            heap.append((rng.random(), (0,)))
        elif op == 2 and heap:
            heap.pop()
        else:
            heap[:] = [("bad",)] * rng.randrange(3)

    class Meddling:
        def __del__(self) -> None:
            meddle()

    class Priority:
        def __init__(self, value: float) -> None:
            self.value = value

        def __float__(self) -> float:
            if rng.random() < 0.3:
                meddle()
            return self.value

    raised = 0
    for _ in range(600):
        size = rng.choice((1, 2, 5, 17, 64))
        base = [(rng.random() * 100, (i,)) for i in range(rng.randrange(0, size + 3))]
        heapq.heapify(base)
        priorities = sorted((rng.random() * 200 for _ in range(rng.randrange(0, 40))), reverse=True)
        rows = [("r", i) for i in range(len(priorities))]
        compiled, reference = list(base), list(base)
        offer(compiled, size, priorities, rows)
        histogram._offer_py(reference, size, priorities, rows)
        assert compiled == reference

        heap[:] = [(p, Meddling()) for p, _ in base]
        odd: list[Any] = [Priority(p) if rng.random() < 0.5 else rng.choice((p, float("nan"), "x")) for p in priorities]
        try:
            offer(heap, size, odd, [Meddling() for _ in odd])
        except TypeError:
            raised += 1
        heap.clear()
    assert raised > 50


@needs_recorders
def test_another_class_slot_descriptor_is_not_read_at_its_offset() -> None:
    """A slot descriptor of class Big assigned to class Small: Python refuses to read it on a Small; the
    recorder's slot cache took its offset into Big's layout and read past the Small object (ASAN) the second
    time. Now every call raises Python's TypeError."""
    big = type("Big", (), {"__slots__": tuple(f"s{i}" for i in range(40)) + ("start_ns",)})
    small = type("Small", (), {"__slots__": ("dequeue_ns", "frame")})
    small.start_ns = big.__dict__["start_ns"]
    ctx = _ctx()
    ctx.request = small()
    ctx.request.dequeue_ns, ctx.request.frame = 1, b"x"
    rec = recorders._compiled.RequestRecorder(100, None, lambda cls: None, lambda k, b: 0, lambda c, t: None,
                                              lambda: 1)
    for _ in range(3):
        with pytest.raises(TypeError, match="doesn't apply"):
            rec.record(ctx, None, 1, 0)
