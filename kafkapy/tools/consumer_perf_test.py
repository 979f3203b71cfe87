"""kafka-consumer-perf-test logic (Kafka's ConsumerPerformance): consume N messages in a group and report
throughput, rebalance time and fetch time in Kafka's CSV-like format.

Owns:
- `SimpleDateFormat(pattern)`: java.text.SimpleDateFormat's letters (G y Y M L d D E u a H k K h m s S
  z Z X w W F, quoting with '') rendered in local time, for `--date-format`;
- `ConsumerPerfRebListener`: Kafka's join-time accounting (time from subscribe/revocation of everything
  to the next assignment counts as rebalance time, not fetch time);
- `consume(consumer, ...)`: Kafka's loop: poll(100 ms) until `--messages` were read or `--timeout` ms
  passed without a record (the check is per poll, so the last poll may overshoot, as in Kafka), with a
  progress line each reporting interval under `--show-detailed-stats`;
- `header_line(detailed)`, `total_line(...)`, `progress_line(...)`: Kafka's text, numbers via Java's
  `%.4f` rounding (`java_fixed`).

Formats:
  header `start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms,
  fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec` (detailed: `time, threadId, ...`), values
  `%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f`; progress `%s, %d, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f`.
Bytes counted are key + value lengths; MB = 1024*1024 bytes.

Thread-safety: one run per call on the caller's thread (the rebalance listener runs inside poll()).
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafkapy.tools import ToolFailure
from kafkapy.tools.producer_perf_test import MB, java_div, java_fixed

DEFAULT_DATE_FORMAT = "yyyy-MM-dd HH:mm:ss:SSS"
HEADER_TAIL = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"


def header_line(detailed: bool) -> str:
    if detailed:
        return "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + HEADER_TAIL
    return "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + HEADER_TAIL


def timeout_warning(timeout_ms: int) -> str:
    return (f"WARNING: Exiting before consuming the expected number of messages: timeout ({timeout_ms} ms) exceeded. "
            "You can use the --timeout option to increase the timeout.")


# --- java.text.SimpleDateFormat ---------------------------------------------------------------------

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_LETTERS = set("GyYMLdDEuaHkKhmsSzZXwWF")


class SimpleDateFormat:
    """A java.text.SimpleDateFormat pattern, compiled once; `format(epoch_ms)` in local time (or `tz`)."""

    def __init__(self, pattern: str, tz: _dt.tzinfo | None = None) -> None:
        self.pattern = pattern
        self.tz = tz
        self._parts: list[tuple[str, int] | str] = []
        i, n = 0, len(pattern)
        literal: list[str] = []
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    literal.append("'")
                    i += 2
                    continue
                j = pattern.find("'", i + 1)
                while j != -1 and j + 1 < n and pattern[j + 1] == "'":  # '' inside a quoted run
                    j = pattern.find("'", j + 2)
                if j == -1:
                    raise ToolFailure(f"Unterminated quote in date format {pattern!r}")
                literal.append(pattern[i + 1:j].replace("''", "'"))
                i = j + 1
                continue
            if ("a" <= c <= "z") or ("A" <= c <= "Z"):
                if c not in _LETTERS:
                    raise ToolFailure(f"Illegal pattern character '{c}'")
                j = i
                while j < n and pattern[j] == c:
                    j += 1
                if literal:
                    self._parts.append("".join(literal))
                    literal = []
                self._parts.append((c, j - i))
                i = j
                continue
            literal.append(c)
            i += 1
        if literal:
            self._parts.append("".join(literal))

    def format(self, epoch_ms: int) -> str:
        t = _dt.datetime.fromtimestamp(epoch_ms / 1000.0, tz=self.tz or _dt.UTC)
        if self.tz is None:
            t = t.astimezone()  # the JVM default time zone: local time
        ms = epoch_ms % 1000
        out = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(_field(t, ms, *part))
        return "".join(out)


def _num(v: int, count: int) -> str:
    return str(v).zfill(count)


def _text(full: str, count: int) -> str:
    return full if count >= 4 else full[:3]


def _field(t: _dt.datetime, ms: int, c: str, count: int) -> str:
    if c == "G":
        return "AD"
    if c in "yY":
        year = t.isocalendar()[0] if c == "Y" else t.year
        return _num(year % 100, 2) if count == 2 else _num(year, count)
    if c in "ML":
        return _text(_MONTHS[t.month - 1], count) if count >= 3 else _num(t.month, count)
    if c == "d":
        return _num(t.day, count)
    if c == "D":
        return _num(t.timetuple().tm_yday, count)
    if c == "E":
        return _text(_DAYS[t.weekday()], count)
    if c == "u":
        return _num(t.isoweekday(), count)
    if c == "a":
        return "AM" if t.hour < 12 else "PM"
    if c == "H":
        return _num(t.hour, count)
    if c == "k":
        return _num(t.hour or 24, count)
    if c == "K":
        return _num(t.hour % 12, count)
    if c == "h":
        return _num(t.hour % 12 or 12, count)
    if c == "m":
        return _num(t.minute, count)
    if c == "s":
        return _num(t.second, count)
    if c == "S":
        return _num(ms, count)
    if c == "w":
        return _num(t.isocalendar()[1], count)
    if c == "W":
        return _num((t.day + _dt.date(t.year, t.month, 1).weekday()) // 7 + 1, count)
    if c == "F":
        return _num((t.day - 1) // 7 + 1, count)
    offset = t.utcoffset() or _dt.timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    hh, mm = divmod(abs(minutes), 60)
    if c == "Z":
        return f"{sign}{hh:02d}{mm:02d}"
    if c == "X":
        if minutes == 0:
            return "Z"
        return f"{sign}{hh:02d}" if count == 1 else (f"{sign}{hh:02d}{mm:02d}" if count == 2 else f"{sign}{hh:02d}:{mm:02d}")
    # z: the zone's short name
    return t.tzname() or f"GMT{sign}{hh:02d}:{mm:02d}"


# --- rebalance accounting ---------------------------------------------------------------------------


class ConsumerPerfRebListener:
    """Kafka's ConsumerPerfRebListener: join time = from subscribe (or losing every partition) to the next
    assignment; `join_time_ms` over the run, `join_time_ms_in_single_round` since the last report."""

    def __init__(self, join_start_ms: int, clock: Callable[[], int]) -> None:
        self.join_start_ms = join_start_ms
        self.join_time_ms = 0
        self.join_time_ms_in_single_round = 0
        self.assigned: set[Any] = set()
        self._clock = clock

    def on_partitions_revoked(self, partitions: list[Any]) -> None:
        self.assigned.difference_update(partitions)
        if not self.assigned:
            self.join_start_ms = self._clock()

    def on_partitions_assigned(self, partitions: list[Any]) -> None:
        if not self.assigned:
            elapsed = self._clock() - self.join_start_ms
            self.join_time_ms += elapsed
            self.join_time_ms_in_single_round += elapsed
        self.assigned.update(partitions)

    def on_partitions_lost(self, partitions: list[Any]) -> None:
        self.on_partitions_revoked(partitions)


# --- report lines -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerPerfTotal:
    start_ms: int
    end_ms: int
    bytes: int
    messages: int
    rebalance_time_ms: int
    fetch_time_ms: int

    @property
    def mb(self) -> float:
        return self.bytes / MB

    @property
    def elapsed_sec(self) -> float:
        return (self.end_ms - self.start_ms) / 1000.0

    def values(self) -> tuple[float, float, float, float]:
        fetch_sec = self.fetch_time_ms / 1000.0
        return (java_div(self.mb, self.elapsed_sec), java_div(float(self.messages), self.elapsed_sec),
                java_div(self.mb, fetch_sec), java_div(float(self.messages), fetch_sec))

    def line(self, date_format: SimpleDateFormat) -> str:
        mb_sec, msg_sec, fetch_mb_sec, fetch_msg_sec = self.values()
        return (f"{date_format.format(self.start_ms)}, {date_format.format(self.end_ms)}, {java_fixed(self.mb, 4)}, "
                f"{java_fixed(mb_sec, 4)}, {self.messages}, {java_fixed(msg_sec, 4)}, {self.rebalance_time_ms}, "
                f"{self.fetch_time_ms}, {java_fixed(fetch_mb_sec, 4)}, {java_fixed(fetch_msg_sec, 4)}")

    def __json__(self) -> dict[str, Any]:
        mb_sec, msg_sec, fetch_mb_sec, fetch_msg_sec = self.values()
        clean = [None if v != v or v in (float("inf"), float("-inf")) else v
                 for v in (mb_sec, msg_sec, fetch_mb_sec, fetch_msg_sec)]
        return {"type": "total", "startTimeMs": self.start_ms, "endTimeMs": self.end_ms, "dataConsumedMB": self.mb,
                "mbPerSec": clean[0], "messages": self.messages, "messagesPerSec": clean[1],
                "rebalanceTimeMs": self.rebalance_time_ms, "fetchTimeMs": self.fetch_time_ms,
                "fetchMBPerSec": clean[2], "fetchMessagesPerSec": clean[3], "bytes": self.bytes}


@dataclass(frozen=True)
class ConsumerPerfProgress:
    """One --show-detailed-stats line (printConsumerProgress with thread id 0)."""

    end_ms: int
    bytes: int
    last_bytes: int
    messages: int
    last_messages: int
    start_ms: int
    join_time_ms_in_single_round: int

    def line(self, date_format: SimpleDateFormat) -> str:
        elapsed_ms = float(self.end_ms - self.start_ms)
        total_mb = self.bytes / MB
        interval_mb = (self.bytes - self.last_bytes) / MB
        interval_mb_sec = java_div(1000.0 * interval_mb, elapsed_ms)
        interval_msg_sec = java_div(float(self.messages - self.last_messages), elapsed_ms) * 1000.0
        fetch_ms = self.end_ms - self.start_ms - self.join_time_ms_in_single_round
        fetch_mb_sec = 0.0 if fetch_ms <= 0 else 1000.0 * interval_mb / fetch_ms
        fetch_msg_sec = 0.0 if fetch_ms <= 0 else 1000.0 * (self.messages - self.last_messages) / fetch_ms
        return (f"{date_format.format(self.end_ms)}, 0, {java_fixed(total_mb, 4)}, {java_fixed(interval_mb_sec, 4)}, "
                f"{self.messages}, {java_fixed(interval_msg_sec, 4)}, {self.join_time_ms_in_single_round}, {fetch_ms}, "
                f"{java_fixed(fetch_mb_sec, 4)}, {java_fixed(fetch_msg_sec, 4)}")

    def __json__(self) -> dict[str, Any]:
        return {"type": "progress", "timeMs": self.end_ms, "bytes": self.bytes, "messages": self.messages,
                "intervalBytes": self.bytes - self.last_bytes, "intervalMessages": self.messages - self.last_messages,
                "intervalMs": self.end_ms - self.start_ms, "rebalanceTimeMs": self.join_time_ms_in_single_round}


# --- the run ----------------------------------------------------------------------------------------


@dataclass
class ConsumerPerfResult:
    total: ConsumerPerfTotal
    timed_out: bool
    metrics: dict[str, Any] = field(default_factory=dict)


def _wall_ms() -> int:
    return int(time.time() * 1000)


def consume(
    consumer: Any,
    *,
    topic: str | None,
    include: str | None,
    num_messages: int,
    timeout_ms: int,
    reporting_interval_ms: int,
    show_detailed_stats: bool,
    on_progress: Callable[[ConsumerPerfProgress], None],
    advance: Callable[[int], None] | None = None,
    client_id: str = "perf-consumer-client",
    clock: Callable[[], int] = _wall_ms,
) -> ConsumerPerfResult:
    """Kafka's ConsumerPerformance main + consume(): subscribe, poll(100) until done, close the consumer."""
    start_ms = clock()
    listener = ConsumerPerfRebListener(start_ms, clock)
    if topic is not None:
        consumer.subscribe([topic], listener=listener)
    else:
        consumer.subscribe(pattern=include, listener=listener)
    messages = nbytes = last_messages = last_bytes = 0
    now = last_report = last_consumed = clock()
    poll = consumer.poll
    while messages < num_messages and now - last_consumed <= timeout_ms:
        records = poll(100)
        now = clock()
        if not records:
            continue
        last_consumed = now
        first = records[0]
        messages += 1
        nbytes += (len(first.key) if first.key is not None else 0) + (len(first.value) if first.value is not None else 0)
        if now - last_report >= reporting_interval_ms:
            # Kafka checks inside its per-record loop with one timestamp per poll: only the first record of
            # the poll can trigger the report, and the report counts just that record of the poll.
            if show_detailed_stats:
                on_progress(ConsumerPerfProgress(now, nbytes, last_bytes, messages, last_messages, last_report,
                                                 listener.join_time_ms_in_single_round))
            listener.join_time_ms_in_single_round = 0
            last_report, last_messages, last_bytes = now, messages, nbytes
        rest = len(records) - 1
        if rest:
            messages += rest
            nbytes += sum([len(r.value) for r in records[1:] if r.value is not None])
            nbytes += sum([len(r.key) for r in records[1:] if r.key is not None])
        if advance is not None:
            advance(len(records))
    end_ms = clock()
    metrics: dict[str, Any] = {}
    try:
        metrics.update(consumer.metrics() or {})
    except Exception:  # noqa: BLE001 - the client may not keep metrics
        pass
    consumer.close()
    elapsed_s = max(end_ms - start_ms, 1) / 1000.0
    tags = "{client-id=" + client_id + "}"
    metrics.setdefault(f"consumer-fetch-manager-metrics:records-consumed-total:{tags}", float(messages))
    metrics.setdefault(f"consumer-fetch-manager-metrics:bytes-consumed-total:{tags}", float(nbytes))
    metrics.setdefault(f"consumer-fetch-manager-metrics:records-consumed-rate:{tags}", messages / elapsed_s)
    metrics.setdefault(f"consumer-fetch-manager-metrics:bytes-consumed-rate:{tags}", nbytes / elapsed_s)
    fetch_time_ms = (end_ms - start_ms) - listener.join_time_ms
    total = ConsumerPerfTotal(start_ms, end_ms, nbytes, messages, listener.join_time_ms, fetch_time_ms)
    return ConsumerPerfResult(total, messages < num_messages, metrics)
