"""RequestMetrics: Kafka's `kafka.network:type=RequestMetrics` family, per request type, plus quota sensors.

Recorded once per request, when its response is handed to the network (`RequestContext.respond` /
`no_response` call `record(ctx, body, send_start_ns)`): RequestsPerSec{request,version} (Meter), the
Histograms TotalTimeMs, RequestQueueTimeMs, LocalTimeMs, RemoteTimeMs, ThrottleTimeMs, ResponseQueueTimeMs,
ResponseSendTimeMs and RequestBytes {request}, and ErrorsPerSec{request,error} counted over every error
code the response carries (Kafka's errorCounts; NONE included). Request names are Kafka's (`Produce`,
`Metadata`, ...), Fetch is split as `FetchConsumer` / `FetchFollower` and counted as `Fetch` too.
Times, as Kafka's RequestChannel computes them: queue = dequeue - arrival; local = the handler's own time;
remote = the wait in a purgatory (respond - handler end); response queue + send = the hand-off to the
network (the responding thread usually writes the response itself, so the queue time is ~0 and the send
time is the write). Quota sensors (`kafka.server:type=Produce|Fetch|Request,user=..,client-id=..` with
throttle-time and byte-rate / request-time) are kept per principal and client id.

Thread-safety: metrics are created on first use under the registry's lock; recording uses each metric's lock.
"""

from __future__ import annotations

import threading
from typing import Any

from kafkapy.common.errors import ERRORS_BY_CODE
from kafkapy.metrics.histogram import Histogram
from kafkapy.metrics.meter import Meter
from kafkapy.metrics.metric_name import metric_name, quote_tag_value
from kafkapy.metrics.registry import ATTRIBUTES, KafkaMetricsGroup, MetricsRegistry, Sample
from kafkapy.protocol.api_keys import API_NAMES, ApiKey

_TIMES = ("TotalTimeMs", "RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ThrottleTimeMs",
          "ResponseQueueTimeMs", "ResponseSendTimeMs")
_QUOTA_TYPES = {ApiKey.PRODUCE: "Produce", ApiKey.FETCH: "Fetch"}


def error_name(code: int) -> str:
    if code == 0:
        return "NONE"
    cls = ERRORS_BY_CODE.get(code)
    return cls.name if cls is not None else "UNKNOWN_SERVER_ERROR"


class _Plan:
    """Where a response class keeps error codes: its `error_code` fields and arrays of structs to descend."""

    __slots__ = ("errors", "arrays")

    def __init__(self, cls: Any, top: Any) -> None:
        self.errors: list[str] = []
        self.arrays: list[tuple[str, Any]] = []  # (field, struct class: nested classes live on the top class)
        for f in getattr(cls, "FIELDS", ()):
            if f.name == "error_code":
                self.errors.append(f.name)
            elif f.is_array and f.is_struct:
                self.arrays.append((f.name, getattr(top, f.elem, None)))


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
        else:
            for item in items:
                error_counts(item, top, counts)
    return counts


class _ApiMetrics:
    __slots__ = ("name", "times", "request_bytes", "requests_by_version", "errors", "group")

    def __init__(self, group: KafkaMetricsGroup, name: str) -> None:
        self.name = name
        self.group = group
        self.times: list[Histogram] = [group.histogram(t, request=name) for t in _TIMES]
        self.request_bytes = group.histogram("RequestBytes", request=name)
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
        registry.add_provider(self._quota_samples)

    def api(self, name: str) -> _ApiMetrics:
        metrics = self._apis.get(name)
        if metrics is None:
            with self._lock:
                metrics = self._apis.get(name)
                if metrics is None:
                    metrics = self._apis[name] = _ApiMetrics(self._group, name)
        return metrics

    def record(self, ctx: Any, body: Any, send_start_ns: int, throttle_ms: int) -> None:
        """One finished request: ctx is its RequestContext, body the response (None: acks=0)."""
        request = ctx.request
        header = ctx.header
        now = self.time.nanoseconds()
        start, dequeue = request.start_ns, request.dequeue_ns or request.start_ns
        local_done = dequeue + ctx.handler_ns
        name = API_NAMES.get(header.api_key, str(header.api_key))
        names = [name]
        if header.api_key == ApiKey.FETCH:
            names.append("FetchFollower" if ctx.quota_exempt else "FetchConsumer")
        counts = error_counts(body) if body is not None else {0: 1}
        values = ((now - start) / 1e6, max(0, dequeue - start) / 1e6, ctx.handler_ns / 1e6,
                  max(0, send_start_ns - local_done) / 1e6, float(throttle_ms), 0.0, max(0, now - send_start_ns) / 1e6)
        size = len(request.frame)
        for n in names:
            m = self.api(n)
            m.requests(header.api_version).mark()
            for hist, value in zip(m.times, values, strict=True):
                hist.update(value)
            m.request_bytes.update(size)
            if n == name:
                for code, count in counts.items():
                    m.error(code).mark(count)
        quota_type = _QUOTA_TYPES.get(header.api_key)
        if quota_type is not None and not ctx.quota_exempt:
            self._record_quota(quota_type, ctx, throttle_ms, size if header.api_key == ApiKey.PRODUCE else 0)

    def _record_quota(self, quota_type: str, ctx: Any, throttle_ms: int, size: int) -> None:
        key = (quota_type, quote_tag_value(ctx.principal.name), quote_tag_value(ctx.client_id))
        sensor = self._quota.get(key)
        if sensor is None:
            with self._lock:
                sensor = self._quota.setdefault(key, _QuotaSensor(self.registry))
        sensor.throttle_sum += throttle_ms
        sensor.throttle_n += 1
        if size:
            sensor.rate.mark(size)

    def _quota_samples(self) -> list[Sample]:
        out = []
        for (quota_type, user, client), s in list(self._quota.items()):
            name = metric_name("kafka.server", quota_type, "", user=user, **{"client-id": client})
            avg = s.throttle_sum / s.throttle_n if s.throttle_n else 0.0
            out.append(Sample(name, ATTRIBUTES, {"throttle-time": avg, "byte-rate": s.rate.one_minute_rate}))
        return out
