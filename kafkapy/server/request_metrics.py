"""RequestMetrics: Kafka's `kafka.network:type=RequestMetrics` family, per request type, plus quota sensors.

Recorded once per request, when its response is handed to the network: `RequestContext.respond` /
`no_response` call `record(ctx, body, send_start_ns, throttle_ms)`, which packs one row of 8 int64 (arrival
ns, dequeue ns, handler ns, send start ns, end ns, request bytes, throttle ms, count of NONE error codes) onto
the `array('q')` of its request type, version and follower flag (one dict look-up by an int key; no Python
object outlives the call, so the garbage collector sees no growth: tuples kept until the fold made gen-0, then
full collections run); other error codes, rare, go to a deque. `fold`, run by the registry's tick thread every
second and before each snapshot, sums each array's rows per column (kafkapy/metrics/request_fold) and updates, per request type:
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

Thread-safety: `record` may run on any thread with no lock (a frombytes is atomic under the GIL, and fold
copies then deletes a prefix of whole rows, both atomic); one fold at a time, under a lock; metrics are
created under the registry's lock and each has its own.
"""

from __future__ import annotations

import threading
from array import array
from collections import Counter, deque
from collections.abc import Callable
from functools import partial
from operator import attrgetter
from struct import Struct
from time import monotonic_ns as _monotonic_ns
from typing import Any

from kafkapy.common.errors import ERRORS_BY_CODE
from kafkapy.common.time import SystemTime
from kafkapy.metrics.histogram import HistogramSet
from kafkapy.metrics.meter import Meter
from kafkapy.metrics.metric_name import metric_name, quote_tag_value
from kafkapy.metrics.registry import ATTRIBUTES, HISTOGRAM, KafkaMetricsGroup, MetricsRegistry, Sample
from kafkapy.metrics.request_fold import COLUMNS, request_stats, row_values
from kafkapy.protocol.api_keys import API_NAMES, ApiKey

MAX_PENDING = 100_000
_ROW = 8
_PENDING_INTS = MAX_PENDING * _ROW
_pack_row = Struct(f"={_ROW}q").pack
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


def _make_collector(cls: Any) -> Callable[[Any], list[Any]] | None:
    """A function listing a response's error codes for the usual shapes (top-level fields, one level of items,
    topics -> partitions), built once per response class; None for other shapes (error_counts walks those)."""
    plan = _plan(cls, cls)
    parts: list[tuple[str, str, str]] = [("top", name, "") for name in plan.errors]
    for name, elem_cls in plan.arrays:
        elem = _plan(elem_cls, cls)
        if not elem.arrays and elem.errors:
            parts.append(("one", name, ""))
        elif elem.leaf is not None:
            if elem.errors:
                parts.append(("one", name, ""))
            parts.append(("two", name, elem.arrays[0][0]))
        else:
            return None
    if len(parts) == 1 and parts[0][0] == "two":  # Produce, Fetch, ...: topics -> partitions
        outer, inner = attrgetter(parts[0][1]), attrgetter(parts[0][2])

        def collect_two(body: Any) -> list[Any]:
            topics = outer(body)
            if topics and len(topics) == 1:  # the usual request: one partition of one topic, no comprehension
                partitions = inner(topics[0])
                if partitions and len(partitions) == 1:
                    return [partitions[0].error_code]
            return [p.error_code for t in topics or () for p in inner(t) or ()]

        return collect_two

    def collect(body: Any) -> list[Any]:
        codes: list[Any] = []
        for kind, outer, inner in parts:
            if kind == "top":
                codes.append(getattr(body, outer))
            elif kind == "one":
                codes += [item.error_code for item in getattr(body, outer) or ()]
            else:
                codes += [p.error_code for t in getattr(body, outer) or () for p in getattr(t, inner) or ()]
        return codes

    return collect


_UNKNOWN = object()
_collectors: dict[Any, Any] = {}


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
        # Per request type, version and follower flag (api_key << 16 | version << 1 | follower): one row of
        # _ROW int64 per request (start, dequeue, handler, send start, end ns, request bytes, throttle ms, NONE
        # count), packed by one struct call and appended by one frombytes (both C; no Python object retained).
        self._pending: dict[int, array[int]] = {}
        self._errors: deque[tuple[int, dict[int, int]]] = deque()
        self._quota_pending: deque[tuple[int, str, str, int, int]] = deque()
        self._quotas_on = False
        self._fold_lock = threading.Lock()
        self._clock = _monotonic_ns if type(registry.time) is SystemTime else registry.time.nanoseconds
        # Kafka keeps a client's quota sensors only while a quota of that kind is configured (set by BrokerMetrics).
        self.quota_enabled: Callable[[int], bool] = lambda api_key: True
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

    def record(self, ctx: Any, body: Any, send_start_ns: int, throttle_ms: int) -> None:
        """One finished request: ctx is its RequestContext, body the response (None: acks=0). One row of ints is
        packed onto the array of its request type and version; its non-NONE error codes, rare, go to a deque;
        `fold` does the arithmetic for many requests at once. The clock is read once, for the end of the send;
        the other times are the request path's own."""
        request = ctx.request
        header = ctx.header
        none = 1
        if body is not None:
            collect = _collectors.get(body.__class__, _UNKNOWN)
            if collect is _UNKNOWN:
                collect = _collectors[body.__class__] = _make_collector(body.__class__)
            if collect is None:  # an unusual response shape: the general walk
                counts = error_counts(body)
                none = counts.pop(0, 0)
                if counts:
                    self._errors.append((header.api_key, counts))
            else:
                codes = collect(body)
                none = codes.count(0)
                if none != len(codes):
                    none += codes.count(None)
                    if none != len(codes):
                        self._errors.append((header.api_key, dict(Counter(c for c in codes if c))))
        key = header.api_key << 16 | header.api_version << 1 | ctx.quota_exempt
        rows = self._pending.get(key)
        if rows is None:
            rows = self._pending.setdefault(key, array("q"))
        rows.frombytes(_pack_row(request.start_ns, request.dequeue_ns, ctx.handler_ns, send_start_ns, self._clock(),
                                 len(request.frame), throttle_ms, none))
        if len(rows) > _PENDING_INTS:  # no tick thread folding (stopped, or never started)
            self.fold()
        if self._quotas_on and header.api_key in _QUOTA_TYPES and not ctx.quota_exempt:
            self._quota_pending.append((header.api_key, request.principal.name, header.client_id or "",
                                        throttle_ms, len(request.frame) if header.api_key == ApiKey.PRODUCE else 0))

    def fold(self) -> None:
        """Move the queued requests into the meters and histograms (the registry runs it every second and before
        every snapshot)."""
        with self._fold_lock:
            self._quotas_on = self.quota_enabled(ApiKey.PRODUCE) or self.quota_enabled(ApiKey.FETCH)
            now = self._clock()
            for key, rows in list(self._pending.items()):
                n = len(rows)  # each frombytes is atomic: the first n ints are whole rows, later ones wait
                if n:
                    chunk = rows[:n]
                    del rows[:n]
                    self._fold_group(key >> 16, key >> 1 & 0x7FFF, key & 1, chunk, now)
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
        targets = self._targets(api_key, version, bool(follower))
        for m, requests in targets:
            requests.mark(count)
            m.histograms.update_summary(count, stats, now, _SCALES, partial(row_values, rows))
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
