"""The hot-path recorders: per-key queues of int64 rows that the metrics' folds drain.

Byte format written: per key, a `bytearray` of rows of `width` native int64 (`array('q', queue)` reads it),
appended in call order; `drain()` hands over the dict {key: bytearray} and starts empty queues.

- `RowQueues(width, limit, overflow)`: `append(key, *ints)` (BrokerTopicStats: a topic's appended batches and
  fetched partitions).
- `RequestRecorder(limit, overflow, error_plan, slow_errors, on_quota, clock)`: `record(ctx, body,
  send_start_ns, throttle_ms)` (RequestMetrics: one row per request, 8 int64: arrival ns, dequeue ns, handler
  ns, send start ns, end ns, request bytes, throttle ms, count of NONE error codes, under the key
  api_key << 16 | api_version << 1 | quota_exempt). It reads by name ctx.request, ctx.header, ctx.handler_ns,
  ctx.quota_exempt, request.start_ns, request.dequeue_ns, request.frame, header.api_key, header.api_version.
  A response's error codes are counted as `error_plan(type(body))` says (asked once per class): None (a shape
  left to `slow_errors`) or parts (kind, outer, inner): kind 0 `body.outer` is an error code, 1 each item of
  `body.outer` has an `error_code`, 2 each item of each `item.inner` of `body.outer` has one. None and 0 are
  NONE; any other code hands the body to `slow_errors(api_key, body)`, which returns the NONE count and keeps
  the rest. While `quotas_on`, a client's Produce or Fetch also calls `on_quota(ctx, throttle_ms)`. The end
  time is `clock()`, or time.monotonic_ns with clock None.
Past `limit` rows since the last drain, an append calls `overflow()` (the owner's fold).

kafkapy/metrics/_recorders.c is the same compiled (an optional extension built by `pip install -e .`) and is
used when present; the classes here are the reference and the fallback (tests/unit/metrics/test_recorders.py
runs both).

Thread-safety: any thread may append or drain. The compiled recorders need no lock (each call runs under the
GIL and appends a row after its last call back into Python); here a lock covers each append and drain (a
queue looked up before a drain and appended to after it would lose the row).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from struct import Struct
from time import monotonic_ns
from typing import Any, Protocol

REQUEST_ROW = 8
Plan = tuple[tuple[int, str, str], ...] | None


class RowQueuesApi(Protocol):
    pending: int

    def append(self, key: Hashable, *values: int) -> None: ...

    def drain(self) -> dict[Any, bytearray]: ...


class RequestRecorderApi(Protocol):
    pending: int
    quotas_on: bool

    def record(self, ctx: Any, body: Any, send_start_ns: int, throttle_ms: int, /) -> None: ...

    def drain(self) -> dict[int, bytearray]: ...


class RowQueuesPy:
    def __init__(self, width: int, limit: int, overflow: Callable[[], None] | None = None) -> None:
        self._pack = Struct(f"={width}q").pack
        self._width = width
        self._queues: dict[Any, bytearray] = {}
        self.pending = 0
        self._limit = limit
        self._overflow = overflow
        self._lock = threading.Lock()

    def append(self, key: Hashable, *values: int) -> None:
        if len(values) != self._width:
            raise TypeError(f"append takes a key and {self._width} ints")
        row = self._pack(*values)
        with self._lock:
            queue = self._queues.get(key)
            if queue is None:
                queue = self._queues[key] = bytearray()
            queue += row
            self.pending += 1
            full = self.pending > self._limit
        if full and self._overflow is not None:
            self._overflow()

    def drain(self) -> dict[Any, bytearray]:
        with self._lock:
            queues, self._queues = self._queues, {}
            self.pending = 0
        return queues


class RequestRecorderPy:
    def __init__(self, limit: int, overflow: Callable[[], None], error_plan: Callable[[type], Plan],
                 slow_errors: Callable[[int, Any], int], on_quota: Callable[[Any, int], None],
                 clock: Callable[[], int] | None = None) -> None:
        self._queues = RowQueuesPy(REQUEST_ROW, limit, overflow)
        self.quotas_on = False
        self._error_plan = error_plan
        self._slow_errors = slow_errors
        self._on_quota = on_quota
        self._clock = clock or monotonic_ns
        self._plans: dict[type, Plan] = {}

    @property
    def pending(self) -> int:
        return self._queues.pending

    def _none_count(self, api_key: int, body: Any) -> int:
        cls = type(body)
        if cls in self._plans:
            plan = self._plans[cls]
        else:
            plan = self._plans[cls] = self._error_plan(cls)
        if plan is not None:
            codes: list[Any] = []
            for kind, outer, inner in plan:
                if kind == 0:
                    codes.append(getattr(body, outer))
                elif kind == 1:
                    codes += [item.error_code for item in getattr(body, outer) or ()]
                else:
                    codes += [p.error_code for t in getattr(body, outer) or () for p in getattr(t, inner) or ()]
            if not any(codes):
                return len(codes)
        return self._slow_errors(api_key, body)

    def record(self, ctx: Any, body: Any, send_start_ns: int, throttle_ms: int, /) -> None:
        request, header = ctx.request, ctx.header
        api_key = header.api_key
        exempt = 1 if ctx.quota_exempt else 0
        none = 1 if body is None else self._none_count(api_key, body)
        if self.quotas_on and api_key in (0, 1) and not exempt:
            self._on_quota(ctx, throttle_ms)
        self._queues.append(api_key << 16 | header.api_version << 1 | exempt, request.start_ns,
                            request.dequeue_ns or 0, ctx.handler_ns, send_start_ns, self._clock(), len(request.frame),
                            throttle_ms, none)

    def drain(self) -> dict[int, bytearray]:
        return self._queues.drain()


try:  # the compiled recorders (kafkapy/metrics/_recorders.c), when the install built them
    from kafkapy.metrics import _recorders as _compiled
except ImportError:  # pragma: no cover - the classes above are the reference and the fallback
    _compiled = None  # type: ignore[assignment]

RowQueues: Callable[..., RowQueuesApi] = _compiled.RowQueues if _compiled is not None else RowQueuesPy
RequestRecorder: Callable[..., RequestRecorderApi] = (_compiled.RequestRecorder if _compiled is not None
                                                      else RequestRecorderPy)
