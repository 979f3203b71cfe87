"""RequestMetrics: Kafka's `kafka.network:type=RequestMetrics` family, per request type, plus quota sensors.

Recorded once per request, when its response is handed to the network: `RequestContext.respond` /
`no_response` call `record(ctx, body, send_start_ns, throttle_ms)`, which is kafkapy/metrics/recorders.py's
RequestRecorder (one C call when the extension is built): it appends one row of 8 int64 (arrival ns, dequeue
ns, handler ns, send start ns, end ns, request bytes, throttle ms, count of NONE error codes) to the
`bytearray` of its request type, version and follower flag, counting the response's error codes where
`error_plan` says they are; a response with other codes (rare) or of an unusual shape goes to `error_counts`
here, and its other codes to a deque. No Python object outlives the call, so the garbage collector sees no
growth. `fold`, run by the registry's tick thread every second and before each snapshot, drains the queues,
sums each one's rows per column (kafkapy/metrics/request_fold) and updates, per request type:
RequestsPerSec{request,version} (Meter), the Histograms TotalTimeMs, RequestQueueTimeMs, LocalTimeMs,
RemoteTimeMs, ThrottleTimeMs, ResponseQueueTimeMs, ResponseSendTimeMs and RequestBytes {request}, and
ErrorsPerSec{request,error} over every error code the response carries (Kafka's errorCounts, NONE included).
Request names are Kafka's (`Produce`, `Metadata`, ...); a Fetch also counts as `FetchConsumer` or
`FetchFollower`. Times as Kafka's RequestChannel computes them: queue = dequeue - arrival; local = the
handler's own time; remote = the wait in a purgatory (send start - handler end); response queue + send = the
hand-off to the network (the responding thread usually writes the response itself, so the queue time is 0
and the send time is the write). Quota sensors (`kafka.server:type=Produce|Fetch,user=..,client-id=..`:
throttle-time, byte-rate) are kept per principal and client id while a quota of that kind is configured, as
Kafka records them only then.

Thread-safety: `record` may run on any thread with no lock (the recorder appends whole rows under the GIL and
the fold takes the queues in one swap); one fold at a time, under a lock; metrics are created under the
registry's lock and each has its own.
"""

from __future__ import annotations

import threading
from array import array
from collections import deque
from collections.abc import Callable
from time import monotonic_ns as _monotonic_ns
from typing import Any

from kafkapy.common.errors import ERRORS_BY_CODE
from kafkapy.common.time import SystemTime
from kafkapy.metrics.histogram import HistogramSet
from kafkapy.metrics.meter import Meter
from kafkapy.metrics.metric_name import metric_name, quote_tag_value
from kafkapy.metrics.recorders import Plan, RequestRecorder
from kafkapy.metrics.registry import ATTRIBUTES, HISTOGRAM, KafkaMetricsGroup, MetricsRegistry, Sample
from kafkapy.metrics.request_fold import COLUMNS, request_stats, scaled_rows
from kafkapy.protocol.api_keys import API_NAMES, ApiKey

MAX_PENDING = 100_000  # requests queued with no fold (tick thread stopped or never started): fold inline
_SCALES = (1e-6, 1e-6, 1e-6, 1e-6, 1.0, 1.0, 1e-6, 1.0)  # ns -> ms for the times; ThrottleTimeMs, bytes as they are


_QUOTA_TYPES: dict[int, str] = {ApiKey.PRODUCE: "Produce", ApiKey.FETCH: "Fetch"}


def error_name(code: int) -> str:
    if code == 0:
        return "NONE"
    cls = ERRORS_BY_CODE.get(code)
    return cls.name if cls is not None else "UNKNOWN_SERVER_ERROR"


class _Plan:
    """Where a response class keeps error codes: its `error_code` fields and arrays of structs to descend."""

    __slots__ = ("errors", "arrays", "leaf")

    def __init__(self, cls: Any, top: Any) -> None:
        self.errors: list[str] = []
        self.arrays: list[tuple[str, Any]] = []  # (field, struct class: nested classes live on the top class)
        for f in getattr(cls, "FIELDS", ()):
            if f.name == "error_code":
                self.errors.append(f.name)
            elif f.is_array and f.is_struct:
                elem_cls = getattr(top, f.elem, None)
                if elem_cls is not None and _has_errors(elem_cls, top, 0):
                    self.arrays.append((f.name, elem_cls))
        # The single array's element is a leaf (one error_code, no arrays): loop it inline.
        self.leaf: Any = None
        if len(self.arrays) == 1 and self.arrays[0][1] is not None:
            elem = _Plan(self.arrays[0][1], top)
            if not elem.arrays and len(elem.errors) == 1:
                self.leaf = elem


def _has_errors(cls: Any, top: Any, depth: int) -> bool:
    """Whether a struct holds an error_code anywhere below it (arrays without one are not walked)."""
    if depth > 8:
        return False
    for f in getattr(cls, "FIELDS", ()):
        if f.name == "error_code":
            return True
        if f.is_array and f.is_struct:
            elem = getattr(top, f.elem, None)
            if elem is not None and _has_errors(elem, top, depth + 1):
                return True
    return False


_plans: dict[tuple[Any, Any], _Plan] = {}


def _plan(cls: Any, top: Any) -> _Plan:
    plan = _plans.get((cls, top))
    if plan is None:
        plan = _plans[(cls, top)] = _Plan(cls, top)
    return plan


def error_counts(body: Any, top: Any = None, counts: dict[int, int] | None = None) -> dict[int, int]:
    """Kafka's AbstractResponse.errorCounts: every error code in the response (per partition, per topic,
    top level), NONE included."""
    if counts is None:
        counts = {}
    top = top or type(body)
    plan = _plan(type(body), top)
    for name in plan.errors:
        code = getattr(body, name, 0) or 0
        counts[code] = counts.get(code, 0) + 1
    for name, elem_cls in plan.arrays:
        items = getattr(body, name, None)
        if not items or elem_cls is None:
            continue
        elem_plan = _plan(elem_cls, top)
        if not elem_plan.arrays and len(elem_plan.errors) == 1:  # leaf structs: the common per-partition case
            for item in items:
                code = item.error_code or 0
                counts[code] = counts.get(code, 0) + 1
        elif not elem_plan.errors and len(elem_plan.arrays) == 1 and elem_plan.leaf is not None:
            inner = elem_plan.arrays[0][0]  # topics -> partitions (Produce, Fetch, ...): two plain loops
            for item in items:
                for part in getattr(item, inner) or ():
                    code = part.error_code or 0
                    counts[code] = counts.get(code, 0) + 1
        else:
            for item in items:
                error_counts(item, top, counts)
    return counts


def error_plan(cls: Any) -> Plan:
    """Where the recorder finds a response class's error codes (kafkapy/metrics/recorders.py's plan): top-level
    fields (kind 0), one level of items (1), topics -> partitions (2); None for other shapes (error_counts walks
    those)."""
    plan = _plan(cls, cls)
    parts: list[tuple[int, str, str]] = [(0, name, "") for name in plan.errors]
    for name, elem_cls in plan.arrays:
        elem = _plan(elem_cls, cls)
        if not elem.arrays and elem.errors:
            parts.append((1, name, ""))
        elif elem.leaf is not None:
            if elem.errors:
                parts.append((1, name, ""))
            parts.append((2, name, elem.arrays[0][0]))
        else:
            return None
    return tuple(parts)


class _ApiMetrics:
    __slots__ = ("name", "histograms", "requests_by_version", "errors", "group")

    def __init__(self, group: KafkaMetricsGroup, name: str) -> None:
        self.name = name
        self.group = group
        # The seven times and RequestBytes are updated together, once per request: one lock, one clock read.
        self.histograms = HistogramSet(len(COLUMNS), group.registry.time)
        for hist_name, hist in zip(COLUMNS, self.histograms.members, strict=True):
            group.registry.register(group.name(hist_name, request=name), HISTOGRAM, hist)
        self.requests_by_version: dict[int, Meter] = {}
        self.errors: dict[int, Meter] = {}

    def requests(self, version: int) -> Meter:
        meter = self.requests_by_version.get(version)
        if meter is None:
            meter = self.requests_by_version[version] = self.group.meter("RequestsPerSec", "requests",
                                                                          request=self.name, version=version)
        return meter

    def error(self, code: int) -> Meter:
        meter = self.errors.get(code)
        if meter is None:
            meter = self.errors[code] = self.group.meter("ErrorsPerSec", "requests", request=self.name,
                                                         error=error_name(code))
        return meter


class _QuotaSensor:
    __slots__ = ("throttle_sum", "throttle_n", "rate")

    def __init__(self, registry: MetricsRegistry) -> None:
        self.throttle_sum = 0.0
        self.throttle_n = 0
        self.rate = Meter("bytes", "SECONDS", registry.time)


class RequestMetrics:
    def __init__(self, registry: MetricsRegistry) -> None:
        self.registry = registry
        self.time = registry.time
        self._group = KafkaMetricsGroup(registry, "kafka.network", "RequestMetrics")
        self._apis: dict[str, _ApiMetrics] = {}
        self._lock = threading.Lock()
        self._quota: dict[tuple[str, str, str], _QuotaSensor] = {}
        self._targets_cache: dict[tuple[int, int, bool], tuple[tuple[_ApiMetrics, Meter], ...]] = {}
        self._errors: deque[tuple[int, dict[int, int]]] = deque()
        self._quota_pending: deque[tuple[int, str, str, int, int]] = deque()
        self._fold_lock = threading.Lock()
        self._clock = _monotonic_ns if type(registry.time) is SystemTime else registry.time.nanoseconds
        # Kafka keeps a client's quota sensors only while a quota of that kind is configured (set by BrokerMetrics).
        self.quota_enabled: Callable[[int], bool] = lambda api_key: True
        # One row of int64 per request, queued per request type, version and follower flag (api_key << 16 |
        # version << 1 | follower; kafkapy/metrics/recorders.py): compiled, `record` is one C call that reads the
        # context, counts the response's NONE codes and appends the row; no Python object is retained.
        self._recorder = RequestRecorder(MAX_PENDING, self.fold, error_plan, self._slow_errors, self._on_quota,
                                         None if type(registry.time) is SystemTime else registry.time.nanoseconds)
        self.record: Callable[[Any, Any, int, int], None] = self._recorder.record
        """record(ctx, body, send_start_ns, throttle_ms): one finished request; ctx is its RequestContext, body
        the response (None: acks=0). The clock is read once, for the end of the send; the other times are the
        request path's own. `fold` does the arithmetic for many requests at once."""
        registry.add_provider(self._quota_samples)
        registry.add_folder(self.fold)

    def api(self, name: str) -> _ApiMetrics:
        metrics = self._apis.get(name)
        if metrics is None:
            with self._lock:
                metrics = self._apis.get(name)
                if metrics is None:
                    metrics = self._apis[name] = _ApiMetrics(self._group, name)
        return metrics

    def _targets(self, api_key: int, version: int, follower: bool) -> tuple[tuple[_ApiMetrics, Meter], ...]:
        key = (api_key, version, follower)
        targets = self._targets_cache.get(key)
        if targets is None:
            names = [API_NAMES.get(api_key, str(api_key))]
            if api_key == ApiKey.FETCH:
                names.append("FetchFollower" if follower else "FetchConsumer")
            targets = self._targets_cache[key] = tuple((self.api(n), self.api(n).requests(version)) for n in names)
        return targets

    def _slow_errors(self, api_key: int, body: Any) -> int:
        """A response with error codes other than NONE (rare) or of an unusual shape: the general walk; the other
        codes wait in a deque for the fold. Returns the NONE count."""
        counts = error_counts(body)
        none = counts.pop(0, 0)
        if counts:
            self._errors.append((api_key, counts))
        return none

    def _on_quota(self, ctx: Any, throttle_ms: int) -> None:
        """A client's Produce or Fetch while a quota is configured: its facts for the quota sensors."""
        request, api_key = ctx.request, ctx.header.api_key
        self._quota_pending.append((api_key, request.principal.name, ctx.header.client_id or "", throttle_ms,
                                    len(request.frame) if api_key == ApiKey.PRODUCE else 0))

    def fold(self) -> None:
        """Move the queued requests into the meters and histograms (the registry runs it every second and before
        every snapshot)."""
        with self._fold_lock:
            self._recorder.quotas_on = self.quota_enabled(ApiKey.PRODUCE) or self.quota_enabled(ApiKey.FETCH)
            now = self._clock()
            for key, rows in self._recorder.drain().items():
                self._fold_group(key >> 16, key >> 1 & 0x7FFF, key & 1, array("q", rows), now)
            errors = self._errors
            for _ in range(len(errors)):
                api_key, counts = errors.popleft()
                m = self.api(API_NAMES.get(api_key, str(api_key)))
                for code, c in counts.items():
                    m.error(code).mark(c)
            quotas = self._quota_pending
            for _ in range(len(quotas)):
                api_key, user, client, throttle, size = quotas.popleft()
                self._record_quota(_QUOTA_TYPES[api_key], user, client, 1, throttle, size)

    def _fold_group(self, api_key: int, version: int, follower: int, rows: array[int], now: int) -> None:
        # Per-column min/max/sum/sum of squares in one loop over the rows (C when built: request_fold); the
        # reservoir reads only the rows it samples.
        count, none, stats = request_stats(rows)

        def picked_rows(picked: list[int]) -> list[tuple[float, ...]]:
            return scaled_rows(rows, picked, _SCALES)

        targets = self._targets(api_key, version, bool(follower))
        for m, requests in targets:
            requests.mark(count)
            m.histograms.update_summary(count, stats, now, _SCALES, picked_rows)
        if none:
            targets[0][0].error(0).mark(none)

    def _record_quota(self, quota_type: str, user: str, client_id: str, requests: int, throttle_ms: int,
                      size: int) -> None:
        key = (quota_type, user, client_id)
        sensor = self._quota.get(key)
        if sensor is None:
            with self._lock:
                sensor = self._quota.setdefault(key, _QuotaSensor(self.registry))
        sensor.throttle_sum += throttle_ms
        sensor.throttle_n += requests
        if size:
            sensor.rate.mark(size)

    def _quota_samples(self) -> list[Sample]:
        out = []
        for (quota_type, user, client), s in list(self._quota.items()):
            name = metric_name("kafka.server", quota_type, "", user=quote_tag_value(user),
                               **{"client-id": quote_tag_value(client)})
            avg = s.throttle_sum / s.throttle_n if s.throttle_n else 0.0
            out.append(Sample(name, ATTRIBUTES, {"throttle-time": avg, "byte-rate": s.rate.one_minute_rate}))
        return out
