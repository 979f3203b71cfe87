"""kafka-verifiable-producer logic (Kafka's VerifiableProducer): produce increasing integers and print one
JSON event per line, the machine-readable contract Kafka's system tests read.

Events (key order as Kafka's Jackson output; `timestamp` is the event's creation time in ms):
  {"timestamp":..,"name":"startup_complete"}
  {"timestamp":..,"name":"producer_send_success","key":null|"k","value":"v","topic":"t","partition":0,"offset":5}
  {"timestamp":..,"name":"producer_send_error","topic":"t","key":..,"value":..,"exception":"class org.apache.kafka
   .common.errors.XException","message":".."}
  {"timestamp":..,"name":"shutdown_complete"}
  {"timestamp":..,"name":"tool_data","sent":N,"acked":N,"target_throughput":-1,"avg_throughput":12.5}
Values are `N` or `<value-prefix>.N`; keys are null, or with --repeating-keys K the counter 0..K-1
again and again; with --message-create-time T each record's CreateTime is T, and T grows by the time
elapsed since start after every send (Kafka's accumulation, kept as is).

Also owns `java_double_str` (Double.toString) and `json_line(pairs)` (Jackson-compatible compact JSON
for ordered (key, value) pairs), shared with the verifiable consumer.

Thread-safety: send callbacks run on the producer's Sender thread; every event line is written under
one lock (Kafka synchronizes on System.out).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kafkapy.tools.producer_perf_test import ThroughputThrottler


def java_double_str(x: float) -> str:
    """Java's Double.toString: shortest round-trip digits; plain notation for 1e-3 <= |x| < 1e7 (always
    with a fractional digit, "20.0"), else computerized scientific notation ("1.0E7", "1.5E-4")."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign, digits_t, exponent = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    sci = len("".join(map(str, digits_t))) + exponent - 1  # exponent of the leading digit
    prefix = "-" if sign else ""
    if -3 <= sci < 7:
        if sci >= 0:
            int_part = digits[:sci + 1].ljust(sci + 1, "0")
            frac = digits[sci + 1:] or "0"
        else:
            int_part, frac = "0", "0" * (-sci - 1) + digits
        return f"{prefix}{int_part}.{frac}"
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{sci}"


def _json_value(v: Any) -> str:
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return '"' + java_double_str(v) + '"'  # Jackson's WRITE_NAN_AS_STRINGS
        return java_double_str(v)
    if isinstance(v, dict):
        return json_line(v.items())
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_json_value(x) for x in v) + "]"
    return json.dumps(str(v), ensure_ascii=False)


def json_line(pairs: Iterable[tuple[str, Any]]) -> str:
    """Compact JSON object in the given key order (Jackson's layout; doubles as Java prints them)."""
    return "{" + ",".join(json.dumps(k) + ":" + _json_value(v) for k, v in pairs) + "}"


def _wall_ms() -> int:
    return int(time.time() * 1000)


def exception_class(err: BaseException) -> str:
    """`exception.getClass().toString()`: `class org.apache.kafka.common.errors.TimeoutException`."""
    from kafkapy.tools.tool_support import java_exception_name

    name = java_exception_name(err)
    if "." not in name:  # not a KafkaError: name the Java exception Kafka's client would throw
        name = {"ValueError": "java.lang.IllegalArgumentException", "TypeError": "java.lang.IllegalArgumentException",
                }.get(name, "org.apache.kafka.common.KafkaException")
    return "class " + name


def exception_message(err: BaseException) -> str | None:
    from kafkapy.tools.tool_support import error_message

    text = error_message(err)
    return text or None


class EventPrinter:
    """Writes one JSON event per line under a lock; `timestamp` and `name` lead every event."""

    def __init__(self, write: Callable[[str], None], clock: Callable[[], int] = _wall_ms) -> None:
        self._write = write
        self._clock = clock
        self.lock = threading.RLock()

    def event(self, name: str, *fields: tuple[str, Any]) -> None:
        line = json_line((("timestamp", self._clock()), ("name", name), *fields))
        with self.lock:
            self._write(line)


@dataclass
class VerifiableProducerOptions:
    topic: str
    max_messages: int = -1
    throughput: int = -1
    value_prefix: int | None = None
    create_time: int | None = None
    repeating_keys: int | None = None


@dataclass
class VerifiableProducerSummary:
    sent: int
    acked: int
    errors: int
    target_throughput: int
    avg_throughput: float


class VerifiableProducer:
    def __init__(self, producer: Any, opts: VerifiableProducerOptions, printer: EventPrinter,
                 clock: Callable[[], int] = _wall_ms) -> None:
        self.producer = producer
        self.opts = opts
        self.printer = printer
        self.clock = clock
        self.num_sent = 0
        self.num_acked = 0
        self.num_errors = 0
        self.key_counter = 0
        self.create_time = opts.create_time
        self.start_time = clock()

    def value(self, i: int) -> str:
        return f"{self.opts.value_prefix}.{i}" if self.opts.value_prefix is not None else str(i)

    def key(self) -> str | None:
        if self.opts.repeating_keys is None:
            return None
        key = str(self.key_counter)
        self.key_counter += 1
        if self.key_counter == self.opts.repeating_keys:
            self.key_counter = 0
        return key

    def _failed(self, key: str | None, value: str, err: BaseException) -> None:
        self.num_errors += 1
        self.printer.event("producer_send_error", ("topic", self.opts.topic), ("key", key), ("value", value),
                           ("exception", exception_class(err)), ("message", exception_message(err)))

    def send(self, key: str | None, value: str) -> None:
        timestamp = None
        if self.create_time is not None:
            timestamp = self.create_time
            self.create_time += self.clock() - self.start_time
        self.num_sent += 1
        printer = self.printer

        def on_completion(metadata: Any, err: BaseException | None) -> None:
            with printer.lock:
                if err is None:
                    self.num_acked += 1
                    printer.event("producer_send_success", ("key", key), ("value", value),
                                  ("topic", metadata.topic), ("partition", metadata.partition),
                                  ("offset", metadata.offset))
                else:
                    self._failed(key, value, err)

        try:
            self.producer.send(self.opts.topic, value.encode(), key=None if key is None else key.encode(),
                               timestamp=timestamp, callback=on_completion)
        except Exception as e:  # noqa: BLE001 - Kafka reports any send() failure as an event
            with printer.lock:
                self._failed(key, value, e)

    def run(self, stop: threading.Event, start_ms: int) -> None:
        """Kafka's run(): startup_complete, then send until --max-messages or `stop`."""
        self.printer.event("startup_complete")
        throttler = ThroughputThrottler(self.opts.throughput, start_ms)
        limit = self.opts.max_messages if self.opts.max_messages >= 0 else 2**63 - 1
        i = 0
        while i < limit and not stop.is_set():
            send_start = self.clock()
            self.send(self.key(), self.value(i))
            if throttler.should_throttle(i, send_start):
                if self.opts.throughput == 0:
                    stop.wait()  # Kafka waits for a wakeup that only shutdown brings
                else:
                    throttler.throttle()
            i += 1

    def close(self, start_ms: int) -> VerifiableProducerSummary:
        """Flush and close the producer, then shutdown_complete and tool_data (Kafka's shutdown hook)."""
        self.producer.close()
        self.printer.event("shutdown_complete")
        stop_ms = self.clock()
        elapsed = float(stop_ms - start_ms)
        avg = (1000 * (self.num_acked / elapsed)) if elapsed else (math.nan if self.num_acked == 0 else math.inf)
        self.printer.event("tool_data", ("sent", self.num_sent), ("acked", self.num_acked),
                           ("target_throughput", self.opts.throughput), ("avg_throughput", float(avg)))
        return VerifiableProducerSummary(self.num_sent, self.num_acked, self.num_errors, self.opts.throughput, avg)
