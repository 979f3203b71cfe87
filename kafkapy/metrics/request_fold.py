"""The arithmetic of RequestMetrics' fold: per-column statistics of the queued request rows.

Byte format read: rows of 8 native int64 in an `array('q')` (arrival ns, dequeue ns, handler ns, send start ns,
end ns, request bytes, throttle ms, count of NONE error codes), as `RequestMetrics.record` packs them. From each
row the values of COLUMNS are derived (as Kafka's RequestChannel computes them: a dequeue of 0 means the arrival
time; remote = send start - (dequeue + handler), clamped at 0; response queue time 0) and `request_stats`
returns, per column, (min, max, integer sum, float sum of squares) over all rows, raw (ns, bytes, ms), plus
the row count and the NONE total. kafkapy/metrics/_request_fold.c is the same loop compiled (an optional
extension built by `pip install -e .`) and runs instead when present; `request_stats_py` is the reference
and the fallback; tests/unit/metrics/test_request_fold.py runs both on the same rows. `row_values` derives
one row's values; `scaled_rows` those of the few rows the reservoir picks, each column scaled (ns -> ms),
as tuples of floats (compiled too).

No state, no locks: thread-safe.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Sequence

ROW = 8
# Histogram order of the derived values (RequestMetrics registers its histograms in this order).
COLUMNS = ("TotalTimeMs", "RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ThrottleTimeMs",
           "ResponseQueueTimeMs", "ResponseSendTimeMs", "RequestBytes")

ColumnStats = tuple[int, int, int, float]  # min, max, sum, sum of squares
Stats = tuple[int, int, tuple[ColumnStats, ...]]  # rows, NONE total, per column


def row_values(rows: array[int], i: int) -> tuple[int, ...]:
    """The COLUMNS values of row i."""
    start, dequeue, handler, send, end, size, throttle, _ = rows[i * ROW:(i + 1) * ROW]
    dequeue = dequeue or start
    remote = send - dequeue - handler
    return (end - start, dequeue - start, handler, remote if remote > 0 else 0, throttle, 0, end - send, size)


def request_stats_py(rows: array[int]) -> Stats:
    """request_stats in Python (C loops over columns: map/operator, min/max/sum)."""
    flat = rows.tolist()
    starts, dequeues, handler, sends, ends, sizes, throttles, nones = (flat[i::ROW] for i in range(ROW))
    n = len(starts)
    if not n:
        return 0, 0, tuple((0, 0, 0, 0.0) for _ in COLUMNS)
    if not all(dequeues):
        dequeues = [d or s for d, s in zip(dequeues, starts, strict=True)]
    local_done = list(map(operator.add, dequeues, handler))
    remote = [r if r > 0 else 0 for r in map(operator.sub, sends, local_done)]
    columns = (list(map(operator.sub, ends, starts)), list(map(operator.sub, dequeues, starts)), handler, remote,
               throttles, [0] * n, list(map(operator.sub, ends, sends)), sizes)
    stats = tuple((min(c), max(c), sum(c), float(sum(x * x for x in c))) for c in columns)
    return n, sum(nones), stats


def scaled_rows_py(rows: array[int], indices: Sequence[int], scales: Sequence[float]) -> list[tuple[float, ...]]:
    """The values of the rows at indices, column k multiplied by scales[k]."""
    return [tuple(v * scale for v, scale in zip(row_values(rows, i), scales, strict=True)) for i in indices]


try:  # the compiled loops (kafkapy/metrics/_request_fold.c), when the install built them
    from kafkapy.metrics._request_fold import request_stats as _compiled
    from kafkapy.metrics._request_fold import scaled_rows as _compiled_scaled_rows
except ImportError:  # pragma: no cover - the Python loops above are the reference and the fallback
    _compiled = None  # type: ignore[assignment]
    _compiled_scaled_rows = None  # type: ignore[assignment]

request_stats: Callable[[array[int]], Stats] = _compiled if _compiled is not None else request_stats_py
scaled_rows: Callable[[array[int], Sequence[int], Sequence[float]], list[tuple[float, ...]]] = (
    _compiled_scaled_rows if _compiled_scaled_rows is not None else scaled_rows_py)
