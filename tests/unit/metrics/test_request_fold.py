"""request_fold: the compiled and Python per-column statistics agree, and match the values derived row by row."""

from __future__ import annotations

import random
from array import array

import pytest

from kafkapy.metrics import request_fold
from kafkapy.metrics.request_fold import ROW, request_stats_py, row_values, scaled_rows_py


def _rows(n: int, seed: int) -> array[int]:
    rnd = random.Random(seed)
    rows: array[int] = array("q")
    for _ in range(n):
        start = rnd.randrange(10**12)
        dequeue = 0 if rnd.random() < 0.2 else start + rnd.randrange(10**6)  # 0: answered without a dequeue
        handler = rnd.randrange(10**6)
        send = (dequeue or start) + handler + rnd.randrange(-1000, 10**6)  # remote < 0 clamps to 0
        rows.extend((start, dequeue, handler, send, send + rnd.randrange(10**5), rnd.randrange(1, 10**6),
                     rnd.choice((0, 0, 250)), rnd.randrange(3)))
    return rows


def _expected(rows: array[int]) -> tuple[int, int, list[tuple[int, int, int, int]]]:
    values = [row_values(rows, i) for i in range(len(rows) // ROW)]
    cols = list(zip(*values, strict=True))
    return len(values), sum(rows[7::ROW]), [(min(c), max(c), sum(c), sum(x * x for x in c)) for c in cols]


@pytest.mark.parametrize("n", [1, 2, 7, 500])
def test_python_and_compiled_agree_with_row_values(n: int) -> None:
    rows = _rows(n, n)
    count, nones, cols = _expected(rows)
    impls = [request_stats_py]
    if request_fold._compiled is not None:
        impls.append(request_fold._compiled)
    for impl in impls:
        got_n, got_nones, stats = impl(rows)
        assert (got_n, got_nones) == (count, nones)
        for (lo, hi, total, sq), (elo, ehi, etotal, esq) in zip(stats, cols, strict=True):
            assert (lo, hi, total) == (elo, ehi, etotal)
            assert sq == pytest.approx(esq, rel=1e-12)


@pytest.mark.parametrize("n", [1, 500])
def test_scaled_rows_python_and_compiled_agree(n: int) -> None:
    rows = _rows(n, n + 1)
    scales = (1e-6, 1e-6, 1e-6, 1e-6, 1.0, 1.0, 1e-6, 1.0)
    picked = random.Random(n).sample(range(n), min(n, 40))
    expected = [tuple(v * s for v, s in zip(row_values(rows, i), scales, strict=True)) for i in picked]
    assert scaled_rows_py(rows, picked, scales) == expected
    assert request_fold._compiled_scaled_rows is not None
    assert request_fold._compiled_scaled_rows(rows, picked, scales) == expected
    with pytest.raises(IndexError):
        request_fold._compiled_scaled_rows(rows, [n], scales)


def test_compiled_is_built_and_used() -> None:
    """`pip install -e .` builds the extension (optional in pyproject; a build without a compiler falls back)."""
    assert request_fold._compiled is not None
    assert request_fold.request_stats is request_fold._compiled


def test_remote_clamped_and_dequeue_defaults_to_arrival() -> None:
    rows = array("q", [100, 0, 30, 120, 150, 64, 5, 1])  # remote = 120 - (100 + 30) < 0 -> 0
    assert row_values(rows, 0) == (50, 0, 30, 0, 5, 0, 30, 64)
    assert request_stats_py(rows)[2][3] == (0, 0, 0, 0.0)


def test_compiled_rejects_partial_rows() -> None:
    assert request_fold._compiled is not None
    with pytest.raises(ValueError):
        request_fold._compiled(array("q", [1, 2, 3]))


def test_histogram_set_members_share_one_reservoir_and_rescale() -> None:
    """A HistogramSet keeps one heap of (priority, the members' values): member k reads column k (scaled); after
    an hour's rescale the same values remain and new ones still enter."""
    from kafkapy.common.time import MockTime
    from kafkapy.metrics.histogram import HistogramSet

    time = MockTime()
    hs = HistogramSet(2, time)
    rows = array("q", [v for i in range(10) for v in (0, 0, 1_000_000 * i, 0, 0, 100 + i, 0, 1)])
    hs.update_summary(10, request_stats_py(rows)[2][2:4], time.nanoseconds(), (1e-6, 1.0),
                      lambda picked: [v[2:4] for v in scaled_rows_py(rows, picked, (1.0, 1.0, 1e-6, 1.0) * 2)])
    first, second = hs.members
    assert first.values() == [float(i) for i in range(10)]  # LocalTimeMs: handler ns scaled to ms
    assert second.values() == [0.0] * 10  # RemoteTimeMs of these rows: clamped at 0
    time.sleep(3601 * 1000)
    hs.update((20.0, 5.0))
    assert first.values() == [float(i) for i in range(10)] + [20.0] and sorted(second.values())[-1] == 5.0
    attrs = first.attributes()
    assert (attrs["Count"], attrs["Min"], attrs["Max"]) == (11, 0.0, 20.0)
