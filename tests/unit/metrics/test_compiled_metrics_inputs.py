"""The compiled metrics helpers given inputs outside their callers' habits: out-of-range uniforms, negative
counts, lists mutated by the conversions they trigger, values at the int64 bounds, unaligned buffers, malformed
error plans, objects never initialized. Each gives a result or a Python exception, never a read or write outside
its buffers (these are the cases an AddressSanitizer build of kafkapy/metrics/_reservoir.c, _request_fold.c and
_recorders.c found). Seeded and bounded."""

from __future__ import annotations

import random
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
