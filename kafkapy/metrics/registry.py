"""MetricsRegistry: one broker's metrics, keyed by Kafka's MBean names.

What Kafka keeps in its default Yammer registry (KafkaYammerMetrics) and, for quota sensors, in its Kafka
`Metrics` JMX reporter, kafkapy keeps here, one registry per broker (several brokers may share a process
in tests). Four kinds of entries:
- Meters, Histograms and Timers (`meter`, `histogram`, `timer`: get-or-create, so a recording site can ask
  for its metric once and keep it);
- Gauges (`gauge(name, fn)`): `fn()` is called at scrape time only;
- providers (`add_provider(fn)`): `fn()` yields `(MetricName, kind, attributes)` at scrape time, for metric
  families whose members come and go with the broker's state (a Log's Size per partition, consumer lag per
  group partition, quota throttle time per user/client): nothing is stored or recorded on the hot path.
`snapshot()` reads everything as `Sample(name, kind, attributes)` with the JMX attribute names of Yammer's
MBeans (Count, MeanRate, OneMinuteRate, 99thPercentile, Value, ...).

No byte format. Thread-safety: registration and snapshots take the registry's lock; recording goes to the
metric itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from kafkapy.common.time import SYSTEM, Time
from kafkapy.metrics.histogram import Histogram, Timer
from kafkapy.metrics.meter import TICK_NS, Meter
from kafkapy.metrics.metric_name import MetricName, metric_name

log = logging.getLogger(__name__)

METER = "meter"
HISTOGRAM = "histogram"
TIMER = "timer"
GAUGE = "gauge"
FOLD_INTERVAL_S = 1.0
ATTRIBUTES = "attributes"  # a Kafka-metrics MBean: named attributes (quota sensors' throttle-time, byte-rate)

Attributes = dict[str, Any]


class Sample(NamedTuple):
    name: MetricName
    kind: str
    attributes: Attributes


Provider = Callable[[], Iterable[Sample]]


class Gauge:
    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn

    def attributes(self) -> Attributes:
        return {"Value": self.fn()}


class MetricsRegistry:
    def __init__(self, time: Time = SYSTEM) -> None:
        self.time = time
        self._lock = threading.Lock()
        self._metrics: dict[MetricName, tuple[str, Any]] = {}
        self._providers: list[Provider] = []
        self._ticker: threading.Thread | None = None
        self._folders: list[Callable[[], None]] = []
        self._ticker_stop = threading.Event()

    def _get_or_add(self, name: MetricName, kind: str, factory: Callable[[], Any]) -> Any:
        entry = self._metrics.get(name)
        if entry is None:
            with self._lock:
                entry = self._metrics.get(name)
                if entry is None:
                    entry = self._metrics[name] = (kind, factory())
        if entry[0] != kind:
            raise ValueError(f"{name} is a {entry[0]}, not a {kind}")
        return entry[1]

    def meter(self, name: MetricName, event_type: str, rate_unit: str = "SECONDS") -> Meter:
        meter: Meter = self._get_or_add(name, METER, lambda: Meter(event_type, rate_unit, self.time))
        return meter

    def histogram(self, name: MetricName) -> Histogram:
        hist: Histogram = self._get_or_add(name, HISTOGRAM, lambda: Histogram(self.time))
        return hist

    def timer(self, name: MetricName) -> Timer:
        timer: Timer = self._get_or_add(name, TIMER, lambda: Timer(self.time))
        return timer

    def register(self, name: MetricName, kind: str, metric: Any) -> Any:
        """Add a metric built elsewhere (a HistogramSet's members); the one already there wins."""
        with self._lock:
            entry = self._metrics.setdefault(name, (kind, metric))
        return entry[1]

    def start_ticker(self) -> None:
        """Yammer's meter tick thread: every 5 s, the due ticks of every Meter (and Timer) are run, so rates
        follow the events even when nothing reads them."""
        with self._lock:
            if self._ticker is not None:
                return
            self._ticker_stop.clear()
            self._ticker = threading.Thread(target=self._tick_loop, name="metrics-meter-tick-thread", daemon=True)
            self._ticker.start()

    def stop_ticker(self) -> None:
        with self._lock:
            ticker, self._ticker = self._ticker, None
        self._ticker_stop.set()
        if ticker is not None:
            ticker.join(5)

    def _tick_loop(self) -> None:
        n = 0
        while not self._ticker_stop.wait(FOLD_INTERVAL_S):
            self.fold()
            n += 1
            if n % round(TICK_NS / 1e9 / FOLD_INTERVAL_S):
                continue
            with self._lock:
                meters = [m if kind == METER else m.meter for kind, m in self._metrics.values()
                          if kind in (METER, TIMER)]
            for meter in meters:
                meter.tick()

    def add_folder(self, fold: Callable[[], None]) -> None:
        """`fold()` moves what recorders queued on the hot path into the metrics: the tick thread runs it every
        second, and every snapshot runs it first."""
        with self._lock:
            self._folders.append(fold)

    def fold(self) -> None:
        for fold in list(self._folders):
            try:
                fold()
            except Exception:
                log.exception("Metrics fold %r failed", fold)

    def gauge(self, name: MetricName, fn: Callable[[], Any]) -> None:
        with self._lock:
            self._metrics[name] = (GAUGE, Gauge(fn))

    def add_provider(self, provider: Provider) -> None:
        with self._lock:
            self._providers.append(provider)

    def remove(self, name: MetricName) -> None:
        with self._lock:
            self._metrics.pop(name, None)

    def remove_where(self, predicate: Callable[[MetricName], bool]) -> None:
        with self._lock:
            for name in [n for n in self._metrics if predicate(n)]:
                del self._metrics[name]

    def get(self, name: MetricName) -> Any:
        entry = self._metrics.get(name)
        return None if entry is None else entry[1]

    def names(self) -> list[MetricName]:
        with self._lock:
            return list(self._metrics)

    def snapshot(self) -> list[Sample]:
        """Every metric's current attributes; a gauge or provider that raises is left out (and logged)."""
        self.fold()
        with self._lock:
            entries = list(self._metrics.items())
            providers = list(self._providers)
        out: list[Sample] = []
        for name, (kind, metric) in entries:
            try:
                out.append(Sample(name, kind, metric.attributes()))
            except Exception as e:  # a gauge over a component being shut down
                log.debug("Metric %s could not be read: %s", name, e)
        for provider in providers:
            try:
                out.extend(provider())
            except Exception as e:
                log.debug("Metrics provider %r failed: %s", provider, e)
        return out


class KafkaMetricsGroup:
    """Kafka's KafkaMetricsGroup: the metrics of one `<group>:type=<type>` family, named by name and tags."""

    def __init__(self, registry: MetricsRegistry, group: str, type_: str) -> None:
        self.registry = registry
        self.group = group
        self.type = type_

    def name(self, name: str, /, **tags: object) -> MetricName:
        return metric_name(self.group, self.type, name, **tags)

    def meter(self, name: str, event_type: str, rate_unit: str = "SECONDS", /, **tags: object) -> Meter:
        return self.registry.meter(self.name(name, **tags), event_type, rate_unit)

    def histogram(self, name: str, /, **tags: object) -> Histogram:
        return self.registry.histogram(self.name(name, **tags))

    def timer(self, name: str, /, **tags: object) -> Timer:
        return self.registry.timer(self.name(name, **tags))

    def gauge(self, name: str, fn: Callable[[], Any], /, **tags: object) -> None:
        self.registry.gauge(self.name(name, **tags), fn)
