"""kafka-producer-perf-test logic (Kafka's ProducerPerformance): send N records as fast as allowed and
report throughput and send->ack latency exactly as Kafka prints them.

Owns:
- `ThroughputThrottler` (Kafka's: sleep off a deficit of 1/throughput seconds per record once the
  average rate since start exceeds the target; -1 = never throttle; 0 = block until woken up);
- `Stats` (Kafka's ProducerPerformance.Stats): per-record latency bookkeeping, a window line every
  reporting interval (5 s) and the final line with percentiles over at most 500,000 sampled latencies;
- `java_fixed(x, digits)` (Java's `%.Nf`: half-up rounding of Double.toString's digits, `NaN`,
  `Infinity`) and `format_metrics(...)` (ToolsUtils.printMetrics layout), shared with the other perf tools;
- `read_payload_file(path, delimiter)` (java.util.Scanner tokens, delimiter a regex) and
  `run_producer_perf(producer, options, ...)`, the send loop (with `transaction_duration_ms` > 0 it calls
  init_transactions first, begins a transaction before a record when none is open and commits it once it
  is that old, then commits the last one: ProducerPerformance's transactional mode).

Output lines (MB = 1024*1024 bytes):
  `%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.`
  `%d[ steady state] records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency,
   %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.`

Hot path: one payload bytes object is reused (--record-size), each record's send time is handed to the
producer as its CreateTime, and one shared completion callback derives the latency from the record's
metadata timestamp: no per-record object is created here beyond what the client itself allocates. On a
LogAppendTime topic the metadata timestamp is the broker's, so the caller then asks for per-record
callbacks (`latency_from_timestamp=False`), which capture the send time as Kafka's PerfCallback does.

Thread-safety: the send loop runs on the caller's thread; completions (Stats.record, window lines)
run on the producer's Sender thread. Stats is only touched by that thread until the producer is
closed or flushed.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal
from functools import partial
from typing import TYPE_CHECKING, Any

from kafkapy.tools import ToolFailure

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

MB = 1024.0 * 1024.0
_WIDE = Context(prec=400)  # room for any double printed in fixed notation
MAX_SAMPLED_LATENCIES = 500_000
DEFAULT_REPORTING_INTERVAL_MS = 5000


# --- Java number formatting ---------------------------------------------------------------------


def java_fixed(value: float, digits: int = 6) -> str:
    """Java's `String.format("%.<digits>f", value)`: Formatter rounds Double.toString's shortest digits
    half-up (so 0.125 -> "0.13", 1.005 -> "1.01", unlike Python's "%.2f"); NaN/Infinity spelled Java's way."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    quantum = Decimal(1).scaleb(-digits)
    exact = Decimal(repr(float(value)))  # Double.toString's digits, e.g. 1.005 (not 1.00499999...)
    return format(exact.quantize(quantum, rounding=ROUND_HALF_UP, context=_WIDE), "f")


def java_div(a: float, b: float) -> float:
    """Java's double division: x/0 is +-Infinity, 0/0 is NaN."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.inf if a > 0 else -math.inf
    return a / b


def format_metrics(metrics: Mapping[str, Any]) -> list[str]:
    """ToolsUtils.printMetrics: a blank line, a header, then `name : value` sorted by name (doubles `%.3f`).
    Names are `group:name:{tag=value, ...}`."""
    if not metrics:
        return []
    width = max(len(k) for k in metrics)
    lines = ["", f"{'Metric Name':<{width}}   Value"]
    for name in sorted(metrics):
        value = metrics[name]
        text = java_fixed(float(value), 3) if isinstance(value, float) else str(value)
        lines.append(f"{name:<{width}} : {text}")
    return lines


# --- ThroughputThrottler ------------------------------------------------------------------------

NS_PER_MS = 1_000_000
NS_PER_SEC = 1000 * NS_PER_MS
MIN_SLEEP_NS = 2 * NS_PER_MS


class ThroughputThrottler:
    """Kafka's ThroughputThrottler. Between sends: `if t.should_throttle(sent_so_far, send_start_ms): t.throttle()`."""

    def __init__(self, target_throughput: float, start_ms: int,
                 nano_time: Callable[[], int] = time.monotonic_ns) -> None:
        self.start_ms = start_ms
        self.target_throughput = target_throughput
        self.sleep_time_ns = int(NS_PER_SEC / target_throughput) if target_throughput > 0 else 2**63 - 1
        self.sleep_deficit_ns = 0
        self._nano_time = nano_time
        self._wakeup = threading.Event()

    def should_throttle(self, amount_so_far: int, send_start_ms: int) -> bool:
        if self.target_throughput < 0:
            return False
        elapsed_sec = (send_start_ms - self.start_ms) / 1000.0
        return elapsed_sec > 0 and (amount_so_far / elapsed_sec) > self.target_throughput

    def throttle(self) -> None:
        if self.target_throughput == 0:
            # Kafka blocks until wakeup(); waiting in slices keeps Ctrl-C responsive.
            while not self._wakeup.wait(0.5):
                pass
            return
        self.sleep_deficit_ns += self.sleep_time_ns
        if self.sleep_deficit_ns >= MIN_SLEEP_NS:
            start = self._nano_time()
            remaining = self.sleep_deficit_ns
            while not self._wakeup.is_set() and remaining > 0:
                self._wakeup.wait(remaining / NS_PER_SEC)
                remaining = self.sleep_deficit_ns - (self._nano_time() - start)
            self._wakeup.clear()
            self.sleep_deficit_ns = 0

    def wakeup(self) -> None:
        self._wakeup.set()


# --- Stats --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowReport:
    """One periodic line (records acknowledged in the last reporting interval)."""

    records: int
    records_per_sec: float
    mb_per_sec: float
    avg_latency_ms: float
    max_latency_ms: float
    in_steady_state: bool = False  # Kafka prints "In steady state." before the first steady window

    def text(self) -> str:
        return (f"{self.records} records sent, {java_fixed(self.records_per_sec, 1)} records/sec "
                f"({java_fixed(self.mb_per_sec, 2)} MB/sec), {java_fixed(self.avg_latency_ms, 1)} ms avg latency, "
                f"{java_fixed(self.max_latency_ms, 1)} ms max latency.")

    def __json__(self) -> dict[str, Any]:
        return {"type": "window", "records": self.records, "recordsPerSec": _num(self.records_per_sec),
                "mbPerSec": _num(self.mb_per_sec), "avgLatencyMs": _num(self.avg_latency_ms),
                "maxLatencyMs": _num(self.max_latency_ms), "steadyState": self.in_steady_state}


@dataclass(frozen=True)
class TotalReport:
    """The final line (with --warmup-records also a `steady state` one)."""

    records: int
    records_per_sec: float
    mb_per_sec: float
    avg_latency_ms: float
    max_latency_ms: float
    p50_ms: int
    p95_ms: int
    p99_ms: int
    p999_ms: int
    steady_state: bool = False
    bytes: int = 0
    elapsed_ms: int = 0

    def text(self) -> str:
        label = " steady state" if self.steady_state else ""
        return (f"{self.records}{label} records sent, {java_fixed(self.records_per_sec, 6)} records/sec "
                f"({java_fixed(self.mb_per_sec, 2)} MB/sec), {java_fixed(self.avg_latency_ms, 2)} ms avg latency, "
                f"{java_fixed(self.max_latency_ms, 2)} ms max latency, {self.p50_ms} ms 50th, {self.p95_ms} ms 95th, "
                f"{self.p99_ms} ms 99th, {self.p999_ms} ms 99.9th.")

    def __json__(self) -> dict[str, Any]:
        return {"type": "steadyStateTotal" if self.steady_state else "total", "records": self.records,
                "recordsPerSec": _num(self.records_per_sec), "mbPerSec": _num(self.mb_per_sec),
                "avgLatencyMs": _num(self.avg_latency_ms), "maxLatencyMs": _num(self.max_latency_ms),
                "p50Ms": self.p50_ms, "p95Ms": self.p95_ms, "p99Ms": self.p99_ms, "p999Ms": self.p999_ms,
                "bytes": self.bytes, "elapsedMs": self.elapsed_ms}


def _num(v: float) -> float | None:
    """JSON has no NaN/Infinity."""
    return None if math.isnan(v) or math.isinf(v) else v


def percentiles(latencies: list[int], count: int, *ps: float) -> list[int]:
    """Kafka's percentiles(): sort the first min(count, len) samples, take sample[(int)(p * size)];
    with no samples Kafka reads its zero-filled array, so 0."""
    size = min(count, len(latencies))
    ordered = sorted(latencies[:size])
    return [ordered[int(p * size)] if size else 0 for p in ps]


_time = time.time


def _wall_ms() -> int:
    """System.currentTimeMillis()."""
    return int(_time() * 1000)


class Stats:
    """Kafka's ProducerPerformance.Stats. `record(latency_ms, nbytes, now_ms)` per acknowledged record.

    Per record only the current window's counters move; totals are folded in when a window closes
    (same figures as Kafka's double bookkeeping, fewer attribute writes on the Sender thread)."""

    __slots__ = (
        "start", "window_start", "sampling", "reporting_interval", "iteration", "latencies",
        "closed_count", "closed_bytes", "closed_latency", "closed_max",
        "window_count", "window_bytes", "window_latency", "window_max",
        "is_steady_state", "suppress_print", "on_window", "clock", "windows_printed", "on_error", "fast_clock",
    )

    def __init__(self, num_records: int, is_steady_state: bool = False,
                 reporting_interval_ms: int = DEFAULT_REPORTING_INTERVAL_MS,
                 on_window: Callable[[WindowReport], None] | None = None,
                 clock: Callable[[], int] = _wall_ms) -> None:
        self.clock = clock
        self.fast_clock = clock is _wall_ms
        self.start = clock()
        self.window_start = self.start
        self.sampling = num_records // min(num_records, MAX_SAMPLED_LATENCIES) if num_records > 0 else 1
        self.reporting_interval = reporting_interval_ms
        self.iteration = 0
        self.latencies: list[int] = []
        self.closed_count = self.closed_bytes = self.closed_latency = self.closed_max = 0
        self.window_count = self.window_bytes = self.window_latency = self.window_max = 0
        self.is_steady_state = is_steady_state
        self.suppress_print = False
        self.on_window = on_window
        self.windows_printed = 0
        self.on_error: Callable[[BaseException], None] | None = None

    def record(self, latency: int, nbytes: int, now: int) -> None:
        self.window_count += 1
        self.window_bytes += nbytes
        self.window_latency += latency
        if latency > self.window_max:
            self.window_max = latency
        if self.sampling == 1 or self.iteration % self.sampling == 0:
            self.latencies.append(latency)
        self.iteration += 1
        if now - self.window_start >= self.reporting_interval:
            self._close_window()

    def on_completion(self, metadata: Any, exception: BaseException | None) -> None:
        """Shared producer callback: the record's CreateTime is its send time (timestamp mode). Failed
        records are not counted (Kafka: "otherwise the number of sent records may be magically printed")."""
        if exception is None:
            # Stats.record inlined: this runs once per record on the Sender thread.
            now = int(_time() * 1000) if self.fast_clock else self.clock()
            latency = now - metadata.timestamp
            self.window_count += 1
            self.window_bytes += metadata.serialized_value_size
            self.window_latency += latency
            if latency > self.window_max:
                self.window_max = latency
            if self.sampling == 1 or self.iteration % self.sampling == 0:
                self.latencies.append(latency)
            self.iteration += 1
            if now - self.window_start >= self.reporting_interval:
                self._close_window()
        elif self.on_error is not None:
            self.on_error(exception)

    def completion_since(self, send_ms: int, metadata: Any, exception: BaseException | None) -> None:
        """Per-record callback (bound with functools.partial): Kafka's PerfCallback."""
        if exception is None:
            now = self.clock()
            self.record(now - send_ms, metadata.serialized_value_size, now)
        elif self.on_error is not None:
            self.on_error(exception)

    def _close_window(self) -> None:
        if not self.suppress_print and self.on_window is not None:
            self.on_window(self.window_report())
            self.windows_printed += 1
        self.closed_count += self.window_count
        self.closed_bytes += self.window_bytes
        self.closed_latency += self.window_latency
        self.closed_max = max(self.closed_max, self.window_max)
        self.window_start = self.clock()
        self.window_count = self.window_bytes = self.window_latency = self.window_max = 0

    def window_report(self) -> WindowReport:
        elapsed = self.clock() - self.window_start
        return WindowReport(
            self.window_count,
            java_div(1000.0 * self.window_count, float(elapsed)),
            java_div(1000.0 * self.window_bytes, float(elapsed)) / MB,
            java_div(float(self.window_latency), float(self.window_count)),
            float(self.window_max),
            in_steady_state=self.is_steady_state and self.closed_count == 0,
        )

    @property
    def count(self) -> int:
        return self.closed_count + self.window_count

    @property
    def bytes(self) -> int:
        return self.closed_bytes + self.window_bytes

    def total_report(self) -> TotalReport:
        elapsed = self.clock() - self.start
        count = self.count
        p50, p95, p99, p999 = percentiles(self.latencies, len(self.latencies), 0.5, 0.95, 0.99, 0.999)
        return TotalReport(
            count,
            java_div(1000.0 * count, float(elapsed)),
            java_div(1000.0 * self.bytes, float(elapsed)) / MB,
            java_div(float(self.closed_latency + self.window_latency), float(count)),
            float(max(self.closed_max, self.window_max)),
            p50, p95, p99, p999,
            steady_state=self.is_steady_state,
            bytes=self.bytes,
            elapsed_ms=elapsed,
        )


class _BothStats:
    """Completion callback feeding the whole-run Stats and the steady-state Stats (after warm-up)."""

    __slots__ = ("a", "b")

    def __init__(self, a: Stats, b: Stats) -> None:
        self.a, self.b = a, b

    def on_completion(self, metadata: Any, exception: BaseException | None) -> None:
        self.a.on_completion(metadata, exception)
        if exception is None:
            self.b.on_completion(metadata, None)

    def completion_since(self, send_ms: int, metadata: Any, exception: BaseException | None) -> None:
        self.a.completion_since(send_ms, metadata, exception)
        if exception is None:
            self.b.completion_since(send_ms, metadata, None)


# --- payloads -----------------------------------------------------------------------------------


def java_scanner_tokens(text: str, delimiter: str) -> list[str]:
    """java.util.Scanner(text).useDelimiter(delimiter) tokens: one delimiter match is skipped before each
    token, so runs of a single-char delimiter yield empty tokens, and a trailing delimiter ends the input."""
    try:
        pattern = re.compile(delimiter)
    except re.error as e:
        raise ToolFailure(f"Invalid --payload-delimiter regex {delimiter!r}: {e}") from e
    tokens: list[str] = []
    pos, end = 0, len(text)
    while pos < end:
        m = pattern.match(text, pos)
        if m is not None and m.end() > pos:
            pos = m.end()
            if pos >= end:
                break
        nxt = pattern.search(text, pos)
        while nxt is not None and nxt.end() == nxt.start() and nxt.start() == pos and pos < end:
            nxt = pattern.search(text, pos + 1)  # an empty match cannot end a token at its own start
        stop = nxt.start() if nxt is not None else end
        tokens.append(text[pos:stop])
        pos = stop
    return tokens


def read_payload_file(path: str, delimiter: str = "\n") -> list[bytes]:
    """The payloads of --payload-file (UTF-8 text split with Scanner semantics); Kafka refuses a missing or
    empty file with "File does not exist or empty file provided."."""
    import os

    try:
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            raise ToolFailure("File does not exist or empty file provided.")
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise ToolFailure(f"{path} ({e.strerror or e})") from e
    return [t.encode("utf-8") for t in java_scanner_tokens(text, delimiter)]


def random_payload(size: int, seed: int = 0) -> bytes:
    """Kafka's payload: random uppercase A-Z bytes (built once and reused for every record)."""
    import random

    rnd = random.Random(seed)
    return bytes(rnd.choices(range(65, 91), k=size))


# --- the run ------------------------------------------------------------------------------------


@dataclass
class ProducerPerfOptions:
    topic: str
    num_records: int
    record_size: int | None = None
    payloads: list[bytes] | None = None  # --payload-file
    payload_monotonic: bool = False
    throughput: float = -1.0
    warmup_records: int = 0
    reporting_interval_ms: int = DEFAULT_REPORTING_INTERVAL_MS
    transaction_duration_ms: int = 0  # > 0: records go in transactions committed every that many ms


@dataclass
class ProducerPerfResult:
    total: TotalReport
    steady: TotalReport | None
    errors: int
    metrics: dict[str, Any]


_CHUNK = 4096  # records between progress updates (keeps the per-record loop free of bookkeeping)


def run_producer_perf(
    producer: Any,
    opts: ProducerPerfOptions,
    *,
    on_window: Callable[[WindowReport], None],
    on_error: Callable[[BaseException], None],
    on_warmup_done: Callable[[], None] | None = None,
    latency_from_timestamp: bool = True,
    flush_instead_of_close: bool = False,
    advance: Callable[[int], None] | None = None,
    client_id: str = "perf-producer-client",
    clock: Callable[[], int] = _wall_ms,
    start_time_ms: int | None = None,
) -> ProducerPerfResult:
    """Kafka's ProducerPerformance.start() loop. Closes the producer (or only flushes it, for
    --print-metrics) before the final report, as Kafka does."""
    n = opts.num_records
    warmup = opts.warmup_records if opts.warmup_records > 0 else -1
    if opts.payloads is not None:
        import random

        choices, pick = opts.payloads, random.Random(0).randrange
        count = len(choices)

        def next_payload(i: int) -> bytes:
            return choices[pick(count)]
    elif opts.payload_monotonic:
        def next_payload(i: int) -> bytes:
            return str(i).encode()
    elif opts.record_size is not None:
        next_payload = None  # type: ignore[assignment]
    else:
        raise ToolFailure("no payload File Path or record Size or payload-monotonic option provided")
    payload = random_payload(opts.record_size) if opts.record_size is not None else b""

    errors = [0]

    def failed(exc: BaseException) -> None:
        errors[0] += 1
        on_error(exc)

    txn_ms = opts.transaction_duration_ms
    txn_size = txn_start_ms = 0
    if txn_ms > 0:  # before the stats and the throttler start their clocks, as ProducerPerformance does
        producer.init_transactions()
    stats = Stats(n, reporting_interval_ms=opts.reporting_interval_ms, on_window=on_window, clock=clock)
    stats.on_error = failed
    steady: Stats | None = None
    callback: Any = stats.on_completion if latency_from_timestamp else stats.completion_since
    throttler = ThroughputThrottler(opts.throughput, clock())
    throttled = opts.throughput >= 0
    should_throttle, throttle = throttler.should_throttle, throttler.throttle
    send, topic = producer.send, opts.topic
    fast_clock, wall = clock is _wall_ms, _time
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        for i in range(start, stop):
            if next_payload is not None:
                payload = next_payload(i)
            send_ms = int(wall() * 1000) if fast_clock else clock()
            if i == warmup:
                steady = Stats(n - warmup, is_steady_state=True, reporting_interval_ms=opts.reporting_interval_ms,
                               on_window=on_window, clock=clock)
                stats.suppress_print = True
                both = _BothStats(stats, steady)
                callback = both.on_completion if latency_from_timestamp else both.completion_since
                if on_warmup_done is not None:
                    on_warmup_done()
            if txn_ms > 0 and txn_size == 0:
                producer.begin_transaction()
                txn_start_ms = send_ms
            if latency_from_timestamp:
                send(topic, payload, timestamp=send_ms, callback=callback)
            else:
                send(topic, payload, callback=partial(callback, send_ms))
            if txn_ms > 0:
                # ProducerPerformance: commit once the transaction is transaction-duration-ms old.
                txn_size += 1
                if txn_ms <= send_ms - txn_start_ms:
                    producer.commit_transaction()
                    txn_size = 0
            if throttled and should_throttle(i, send_ms):
                throttle()
        if advance is not None:
            advance(stop - start)

    if txn_size:
        producer.commit_transaction()
    flush_start = time.perf_counter_ns()
    if flush_instead_of_close:
        producer.flush()
    else:
        producer.close()
    flush_ns = time.perf_counter_ns() - flush_start
    total = stats.total_report()
    steady_total = steady.total_report() if steady is not None else None
    metrics = _final_metrics(producer, opts, total, errors[0], flush_ns, client_id, start_time_ms)
    return ProducerPerfResult(total, steady_total, errors[0], metrics)


def _final_metrics(producer: Any, opts: ProducerPerfOptions, total: Any, errors: int, flush_ns: int,
                   client_id: str, start_time_ms: int | None) -> dict[str, Any]:
    """Kafka's --print-metrics list (tools/producer_metrics) with what this run measured."""
    from kafkapy import __version__
    from kafkapy.tools.producer_metrics import ProducerFacts, connected_nodes, merge

    config = getattr(producer, "config", None)
    facts = ProducerFacts(
        client_id=client_id, topics=[opts.topic], nodes=connected_nodes(getattr(producer, "client", None)),
        elapsed_s=max(total.elapsed_ms, 1) / 1000.0, records=total.records, errors=errors,
        record_bytes=total.records * opts.record_size if opts.record_size is not None else None, flush_ns=flush_ns,
        buffer_total_bytes=int(config["buffer.memory"]) if config is not None else None,
        start_time_ms=start_time_ms, version=__version__)
    try:
        own = producer.metrics() or {}
    except Exception:  # noqa: BLE001 - metrics are best effort
        own = {}
    return merge(own, facts)


def topic_uses_create_time(admin: AdminClient, topic: str, timeout_ms: int = 2000) -> bool:
    """True when the topic's records keep the producer's timestamp (message.timestamp.type=CreateTime), so
    the shared timestamp-based callback measures send->ack latency. Any doubt (no such topic yet, no
    DescribeConfigs permission or support) answers False, which selects Kafka's per-record callbacks."""
    try:
        from kafkapy.client.admin_types import ConfigResource, ConfigResourceType

        resource = ConfigResource(ConfigResourceType.TOPIC, topic)
        # All of the topic's configs: some brokers (Tansu) cannot decode DescribeConfigs' key filter.
        config = admin.describe_configs([resource], timeout_ms=timeout_ms, raise_errors=False).get(resource)
        entry = config.get("message.timestamp.type") if config is not None and config.error is None else None
        return entry is not None and entry.value == "CreateTime"
    except Exception:  # noqa: BLE001 - fall back to the always-correct per-record callbacks
        return False
