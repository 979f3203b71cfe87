"""kafka-console-consumer logic (ConsoleConsumer, DefaultMessageFormatter) over manual assignment.

Formatting: `DefaultMessageFormatter(props)` writes exactly Kafka's bytes: optional
`CreateTime:<ts>` (or `LogAppendTime:`, `NO_TIMESTAMP`), `Partition:<p>`, `Offset:<o>`,
`Delivery:NONE`, `Epoch:<leader epoch>` (or `Epoch:NOT_PRESENT`), headers `k1:v1,k2:v2` (or
`NO_HEADERS`), key, value, each followed by key.separator
(TAB) when another field follows, and line.separator ("\\n") after the value; nulls print
null.literal ("null"); print.value defaults to true, the others to false. key/value/headers
deserializers (StringDeserializer, IntegerDeserializer, LongDeserializer, ...) are applied to the
bytes (to null.literal for null, as Kafka does) and printed with Java's toString.

Consuming: without a group Kafka subscribes with a throw-away group and auto.offset.reset (latest,
earliest with --from-beginning); kafkapy assigns every partition of the topic instead, which reads the
same records (and picks up partitions added later). --partition with --offset earliest|latest|N
assigns one partition and seeks. A group (--group or group.id) and --include subscribe through the
client's group membership (partitions assigned by the group, offsets committed to it).
`consume(...)` stops after max_messages, or when nothing arrives for timeout_ms, or on `stop`.

Thread-safety: one run per call; `stop` may be set from another thread.
"""

from __future__ import annotations

import random
import struct
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from kafkapy.tools import ToolFailure

EARLIEST = -2
LATEST = -1

DEFAULT_FORMATTERS = frozenset({"kafka.tools.DefaultMessageFormatter",
                                "org.apache.kafka.tools.consumer.DefaultMessageFormatter"})
NOOP_FORMATTERS = frozenset({"kafka.tools.NoOpMessageFormatter", "org.apache.kafka.tools.consumer.NoOpMessageFormatter"})
LOGGING_FORMATTERS = frozenset({"kafka.tools.LoggingMessageFormatter",
                                "org.apache.kafka.tools.consumer.LoggingMessageFormatter"})


class FormatterError(ToolFailure):
    """A bad formatter or deserializer setting (Kafka prints usage with the message)."""


# --- deserializers (Java's serialization classes, printed with toString) ---------------------------


def _java_float(v: float) -> str:
    from kafkapy.tools.configs import java_double

    return java_double(v)


def _fixed(fmt: str, size: int, name: str, render: Callable[[Any], str] = str) -> Callable[[bytes], str]:
    def des(data: bytes) -> str:
        if len(data) != size:
            raise FormatterError(f"Size of data received by {name} is not {size}")
        return render(struct.unpack(fmt, data)[0])

    return des


def _uuid(data: bytes) -> str:
    return str(uuid.UUID(data.decode("utf-8")))


def _string(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


_DESERIALIZERS: dict[str, Callable[[bytes], str] | None] = {
    "StringDeserializer": _string,
    "ByteArrayDeserializer": None,
    "BytesDeserializer": None,
    "ByteBufferDeserializer": None,
    "IntegerDeserializer": _fixed(">i", 4, "IntegerDeserializer"),
    "LongDeserializer": _fixed(">q", 8, "LongDeserializer"),
    "ShortDeserializer": _fixed(">h", 2, "ShortDeserializer"),
    "DoubleDeserializer": _fixed(">d", 8, "DoubleDeserializer", _java_float),
    "FloatDeserializer": _fixed(">f", 4, "FloatDeserializer", _java_float),
    "BooleanDeserializer": _fixed(">?", 1, "BooleanDeserializer", lambda b: "true" if b else "false"),
    "UUIDDeserializer": _uuid,
    "VoidDeserializer": lambda data: "null",
}


def deserializer_for(class_name: str | None) -> Callable[[bytes], bytes] | None:
    """The bytes -> printed bytes function for a Java deserializer class name (None: raw bytes)."""
    if not class_name:
        return None
    simple = class_name.strip().rsplit(".", 1)[-1]
    if simple not in _DESERIALIZERS:
        raise FormatterError(f"Unable to instantiate a deserializer from {class_name}")
    fn = _DESERIALIZERS[simple]
    if fn is None:
        return None
    return lambda data: fn(data).encode("utf-8")


# --- formatters ------------------------------------------------------------------------------------


def _true(v: str) -> bool:
    return v.strip().lower() == "true"


_TIMESTAMP_TYPES = {0: b"CreateTime", 1: b"LogAppendTime"}


class DefaultMessageFormatter:
    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        props = dict(props or {})
        self.print_timestamp = _true(props.get("print.timestamp", "false"))
        self.print_key = _true(props.get("print.key", "false"))
        self.print_value = _true(props.get("print.value", "true"))
        self.print_partition = _true(props.get("print.partition", "false"))
        self.print_offset = _true(props.get("print.offset", "false"))
        self.print_delivery = _true(props.get("print.delivery", "false"))
        self.print_epoch = _true(props.get("print.epoch", "false"))
        self.print_headers = _true(props.get("print.headers", "false"))
        self.key_separator = props.get("key.separator", "\t").encode("utf-8")
        self.line_separator = props.get("line.separator", "\n").encode("utf-8")
        self.headers_separator = props.get("headers.separator", ",").encode("utf-8")
        self.null_literal = props.get("null.literal", "null").encode("utf-8")
        self.key_deserializer = deserializer_for(props.get("key.deserializer"))
        self.value_deserializer = deserializer_for(props.get("value.deserializer"))
        self.headers_deserializer = deserializer_for(props.get("headers.deserializer"))

    def _bytes(self, data: bytes | None, des: Callable[[bytes], bytes] | None) -> bytes:
        raw = self.null_literal if data is None else bytes(data)
        return des(raw) if des is not None else raw

    def format(self, record: Any) -> bytes:
        """One record as Kafka's DefaultMessageFormatter.writeTo writes it: the enabled columns joined by
        key.separator, then line.separator (nothing at all when every column is off)."""
        cols: list[bytes] = []
        if self.print_timestamp:
            ts_type = _TIMESTAMP_TYPES.get(record.timestamp_type)
            cols.append(b"NO_TIMESTAMP" if ts_type is None else ts_type + b":" + str(record.timestamp).encode())
        if self.print_partition:
            cols.append(b"Partition:" + str(record.partition).encode())
        if self.print_offset:
            cols.append(b"Offset:" + str(record.offset).encode())
        if self.print_delivery:
            cols.append(b"Delivery:NONE")
        if self.print_epoch:
            epoch = record.leader_epoch
            cols.append(b"Epoch:" + (b"NOT_PRESENT" if epoch is None else str(epoch).encode()))
        if self.print_headers:
            if not record.headers:
                cols.append(b"NO_HEADERS")
            else:
                cols.append(self.headers_separator.join(
                    k.encode("utf-8") + b":" + self._bytes(v, self.headers_deserializer) for k, v in record.headers))
        if self.print_key:
            cols.append(self._bytes(record.key, self.key_deserializer))
        if self.print_value:
            cols.append(self._bytes(record.value, self.value_deserializer))
        return self.key_separator.join(cols) + self.line_separator if cols else b""


class NoOpMessageFormatter:
    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        pass

    def format(self, record: Any) -> bytes:
        return b""


def build_formatter(class_name: str, props: Mapping[str, str]) -> Any:
    if class_name in DEFAULT_FORMATTERS or class_name in LOGGING_FORMATTERS:
        return DefaultMessageFormatter(props)
    if class_name in NOOP_FORMATTERS:
        return NoOpMessageFormatter(props)
    from kafkapy.tools.coordinator_formatters import FORMATTERS

    if class_name in FORMATTERS:
        return FORMATTERS[class_name](props)
    raise FormatterError(f"{class_name} (kafkapy supports DefaultMessageFormatter, LoggingMessageFormatter, "
                         "NoOpMessageFormatter and the coordinators' Offsets/GroupMetadata/TransactionLog "
                         "MessageFormatters)")


# --- consumer properties ---------------------------------------------------------------------------


class OffsetResetConflict(ToolFailure):
    """--from-beginning with auto.offset.reset other than earliest."""


def consumer_props(
    file_props: Mapping[str, str],
    cli_props: Mapping[str, str],
    bootstrap: str,
    from_beginning: bool,
    isolation_level: str | None,
    group: str | None,
) -> tuple[dict[str, Any], bool]:
    """ConsoleConsumerOptions.buildConsumerProps(); returns (props, a group was given)."""
    props: dict[str, Any] = dict(file_props)
    props.update(cli_props)
    if "auto.offset.reset" in props:
        if from_beginning and props["auto.offset.reset"] != "earliest":
            raise OffsetResetConflict(
                f"Can't simultaneously specify --from-beginning and 'auto.offset.reset={props['auto.offset.reset']}', "
                "please remove one option")
    else:
        props["auto.offset.reset"] = "earliest" if from_beginning else "latest"
    props["bootstrap.servers"] = bootstrap
    props.setdefault("client.id", "console-consumer")
    if isolation_level is not None or "isolation.level" not in props:
        props["isolation.level"] = isolation_level or "read_uncommitted"
    for java_only in ("key.deserializer", "value.deserializer"):
        props.pop(java_only, None)  # the formatter prints bytes; deserializers are formatter properties
    has_group = group is not None or "group.id" in props
    if group is not None:
        props["group.id"] = group
    if not has_group:
        props["group.id"] = f"console-consumer-{random.randrange(100000)}"
        props.setdefault("enable.auto.commit", "false")
    return props, has_group


# --- consuming -------------------------------------------------------------------------------------


@dataclass
class ConsumeOptions:
    topic: str | None = None
    partition: int | None = None
    offset: int | None = None  # EARLIEST, LATEST or an offset (with --partition)
    include: str | None = None
    use_group: bool = False
    max_messages: int = -1
    timeout_ms: int | None = None  # None: wait forever
    poll_ms: int = 500
    refresh_partitions_ms: int = 5000


_INVALID_TOPIC = 17  # INVALID_TOPIC_EXCEPTION
_FATAL_TOPIC_ERRORS = (_INVALID_TOPIC, 29)  # + TOPIC_AUTHORIZATION_FAILED


class PartitionTracker:
    """Assigns every partition of a topic (what a throw-away group's subscription would get)."""

    def __init__(self, consumer: Any, topic: str) -> None:
        self.consumer = consumer
        self.topic = topic
        self.assigned: set[int] = set()

    def refresh(self, timeout_ms: float) -> bool:
        from kafkapy.common.errors import KafkaError
        from kafkapy.common.topic_partition import TopicPartition

        auto_create = bool(self.consumer.config["allow.auto.create.topics"])
        try:
            cluster = self.consumer.client.update_metadata([self.topic], max(1, timeout_ms), auto_create)
        except KafkaError:
            return bool(self.assigned)
        meta = cluster.topics.get(self.topic)
        if meta is not None and meta.error_code in _FATAL_TOPIC_ERRORS:
            # no retry makes these topics appear: fail as Kafka's consumer does (Metadata's invalid topics)
            from kafkapy.client.errors import error_from_code

            label = "Invalid topics" if meta.error_code == _INVALID_TOPIC else "Not authorized to access topics"
            raise error_from_code(meta.error_code, f"{label}: [{self.topic}]")
        parts = {p.partition for p in cluster.partitions_for_topic(self.topic)}
        if parts and parts != self.assigned:
            self.assigned = parts
            self.consumer.assign([TopicPartition(self.topic, p) for p in sorted(parts)])
        return bool(self.assigned)


def setup(consumer: Any, opts: ConsumeOptions, deadline: Callable[[], float]) -> PartitionTracker | None:
    """Assign (or subscribe) as ConsoleConsumer.ConsumerWrapper does; returns the topic tracker."""
    from kafkapy.common.topic_partition import TopicPartition

    if opts.include is not None:
        import re

        consumer.subscribe(pattern=re.compile(opts.include))
        return None
    topic = cast(str, opts.topic)  # the option checks require --topic without --include
    if opts.partition is not None:
        tp = TopicPartition(topic, opts.partition)
        consumer.assign([tp])
        offset = LATEST if opts.offset is None else opts.offset
        if offset == EARLIEST:
            consumer.seek_to_beginning([tp])
        elif offset == LATEST:
            consumer.seek_to_end([tp])
        else:
            consumer.seek(tp, offset)
        return None
    if opts.use_group:
        consumer.subscribe([topic])
        return None
    tracker = PartitionTracker(consumer, topic)
    backoff = 0.1
    while not tracker.refresh(max(1.0, min(deadline(), 5000.0))):
        if deadline() <= 0:
            break
        time.sleep(min(backoff, max(deadline(), 0) / 1000.0))
        backoff = min(backoff * 2, 1.0)
    return tracker


def consume(
    consumer: Any,
    opts: ConsumeOptions,
    sink: Callable[[Any], None],
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
    batch_done: Callable[[], None] | None = None,
) -> int:
    """Deliver records to `sink` until max_messages, the idle timeout or `stop`; returns the count.
    `batch_done` runs after each polled batch (the cli flushes stdout there)."""
    stop = stop or threading.Event()
    timeout_s = None if opts.timeout_ms is None else opts.timeout_ms / 1000.0
    start = clock()

    def remaining_ms() -> float:
        if timeout_s is None:
            return float("inf")
        return (timeout_s - (clock() - start)) * 1000.0

    tracker = setup(consumer, opts, remaining_ms)
    if tracker is not None and not tracker.assigned:
        return 0
    count = 0
    last_refresh = clock()
    idle_since = clock()
    while (opts.max_messages < 0 or count < opts.max_messages) and not stop.is_set():
        wait = opts.poll_ms if timeout_s is None else max(0.0, min(opts.poll_ms, (
            timeout_s - (clock() - idle_since)) * 1000.0))
        records = consumer.poll(wait)
        if records:
            for record in records:
                sink(record)
                count += 1
                if 0 <= opts.max_messages <= count:
                    break
            if batch_done is not None:
                batch_done()
            idle_since = clock()
        elif timeout_s is not None and clock() - idle_since >= timeout_s:
            break
        if tracker is not None and (clock() - last_refresh) * 1000.0 >= opts.refresh_partitions_ms:
            last_refresh = clock()
            tracker.refresh(1000)
    return count
