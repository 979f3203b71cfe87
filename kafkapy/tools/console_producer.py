"""kafka-console-producer logic (ConsoleProducer + LineMessageReader): read lines, produce records.

`LineMessageReader(props)` parses each input line exactly as Kafka's default reader: with
parse.headers the text up to headers.delimiter (default TAB) is `h1:v1,h2:v2` (headers.separator is a
regex, default ","; headers.key.separator default ":"), then with parse.key the text up to
key.separator (default TAB) is the key, the rest is the value; any key, value or header value equal to
null.marker becomes null (a header key equal to it is an error). Missing separators are errors
("No key separator found on line number N: '...'") unless ignore.error=true. Lines end at \\n, \\r\\n
or \\r and are decoded as UTF-8 (malformed bytes become U+FFFD, as Java's reader does).

`producer_props(...)` merges --producer.config, --producer-property and ConsoleProducer's flag defaults
(linger.ms 1000, acks -1, request.timeout.ms 1500, retries 3, ...) with Kafka's precedence: a flag
given on the command line wins; a flag's default applies only when the properties lack the key.
`produce_lines(...)` sends the records (each synchronously with --sync) and returns a summary; send
failures in async mode are reported through `on_error` like Kafka's ErrorLoggingCallback.

Thread-safety: one run per call; the producer's callbacks run on its sender thread and only append
to lists guarded by a lock.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkapy.tools import ToolFailure

READER_CLASSES = frozenset({
    "kafka.tools.LineMessageReader", "org.apache.kafka.tools.LineMessageReader",
    "kafka.tools.ConsoleProducer$LineMessageReader", "kafka.common.MessageReader",
})

# (producer config key, flag dest, default) in ConsoleProducerConfig.producerProps() order.
FLAG_CONFIGS: tuple[tuple[str, str, Any], ...] = (
    ("linger.ms", "timeout", 1000),
    ("acks", "request_required_acks", "-1"),
    ("request.timeout.ms", "request_timeout_ms", 1500),
    ("retries", "message_send_max_retries", 3),
    ("retry.backoff.ms", "retry_backoff_ms", 100),
    ("send.buffer.bytes", "socket_buffer_size", 102400),
    ("buffer.memory", "max_memory_bytes", 32 * 1024 * 1024),
    ("batch.size", "batch_size", 16 * 1024),
    ("batch.size", "max_partition_memory_bytes", 16 * 1024),
    ("metadata.max.age.ms", "metadata_expiry_ms", 5 * 60 * 1000),
    ("max.block.ms", "max_block_ms", 60 * 1000),
)


class LineReaderError(ToolFailure):
    """Kafka's KafkaException from LineMessageReader."""


@dataclass(frozen=True)
class LineRecord:
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


def _true(v: Any) -> bool:
    return str(v).strip().lower() == "true"


def _java_split(pattern: re.Pattern[str], text: str) -> list[str]:
    """Pattern.split: a leading empty piece from a zero-width match is dropped, trailing empties too."""
    parts = pattern.split(text)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


class LineMessageReader:
    def __init__(self, props: Mapping[str, str]) -> None:
        self.parse_key = _true(props.get("parse.key", "false"))
        self.key_separator = props.get("key.separator", "\t")
        self.parse_headers = _true(props.get("parse.headers", "false"))
        self.headers_delimiter = props.get("headers.delimiter", "\t")
        self.headers_separator = props.get("headers.separator", ",")
        self.headers_key_separator = props.get("headers.key.separator", ":")
        self.ignore_error = _true(props.get("ignore.error", "false"))
        self.null_marker = props.get("null.marker")
        try:
            self._headers_split = re.compile(self.headers_separator)
        except re.error as e:
            raise LineReaderError(f"Invalid headers.separator regex {self.headers_separator!r}: {e}") from e
        checks = (
            (self.headers_delimiter, self.headers_separator, "headers.delimiter and headers.separator"),
            (self.headers_delimiter, self.headers_key_separator, "headers.delimiter and headers.key.separator"),
            (self.headers_separator, self.headers_key_separator, "headers.separator and headers.key.separator"),
        )
        for a, b, what in checks:
            if a == b:
                raise LineReaderError(f"{what} may not be equal")
        if self.null_marker is not None:
            for other, name in ((self.key_separator, "key.separator"), (self.headers_separator, "headers.separator"),
                                (self.headers_delimiter, "headers.delimiter"),
                                (self.headers_key_separator, "headers.key.separator")):
                if other == self.null_marker:
                    raise LineReaderError(f"null.marker and {name} may not be equal")
        self.line_number = 0

    def _parse(self, enabled: bool, line: str, start: int, sep: str, what: str) -> str | None:
        if not enabled:
            return None
        index = line.find(sep, start)
        if index == -1:
            if self.ignore_error:
                return None
            raise LineReaderError(f"No {what} found on line number {self.line_number}: '{line}'")
        return line[start:index]

    def _bytes(self, text: str | None) -> bytes | None:
        if text is None or text == self.null_marker:
            return None
        return text.encode("utf-8")

    def _split_headers(self, headers: str) -> list[tuple[str, bytes | None]]:
        out: list[tuple[str, bytes | None]] = []
        for pair in _java_split(self._headers_split, headers):
            i = pair.find(self.headers_key_separator)
            if i == -1:
                if self.ignore_error:
                    out.append((pair, None))
                    continue
                raise LineReaderError(f"No header key separator found in pair '{pair}' on line number {self.line_number}")
            key = pair[:i]
            if key == self.null_marker:
                raise LineReaderError(
                    f"Header keys should not be equal to the null marker '{self.null_marker}' as they can't be null")
            out.append((key, self._bytes(pair[i + len(self.headers_key_separator):])))
        return out

    def parse_line(self, line: str) -> LineRecord:
        self.line_number += 1
        headers = self._parse(self.parse_headers, line, 0, self.headers_delimiter, "headers delimiter")
        header_offset = 0 if headers is None else len(headers) + len(self.headers_delimiter)
        key = self._parse(self.parse_key, line, header_offset, self.key_separator, "key separator")
        key_offset = 0 if key is None else len(key) + len(self.key_separator)
        value = line[header_offset + key_offset:]
        hdrs = self._split_headers(headers) if headers is not None and headers != self.null_marker else []
        return LineRecord(self._bytes(key), self._bytes(value), hdrs)

    def read_records(self, lines: Iterable[str]) -> Iterator[LineRecord]:
        for line in lines:
            yield self.parse_line(line)


def read_lines(stream: Any) -> Iterator[str]:
    """Lines of a text or binary stream, split at \\n, \\r\\n or \\r (Java's BufferedReader.readLine)."""
    import io

    binary = getattr(stream, "buffer", None)
    if binary is None and isinstance(stream, (io.RawIOBase, io.BufferedIOBase)):
        binary = stream
    if binary is None:
        yield from _split_text(stream)
        return
    text = io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline=None)
    try:
        yield from _split_text(text)
    finally:
        text.detach()  # do not let the wrapper close the caller's stdin when it is collected


def _split_text(text: Any) -> Iterator[str]:
    # Only \n, \r\n and \r end a line (str.splitlines would also split at \f, \x1c, \x85, ...).
    for chunk in text:
        parts = chunk.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if parts[-1] == "":
            parts.pop()
        yield from parts


def producer_props(
    file_props: Mapping[str, str],
    cli_props: Mapping[str, str],
    bootstrap: str,
    compression: str,
    flags: Mapping[str, Any],
) -> dict[str, Any]:
    """ConsoleProducerConfig.producerProps(): `flags` maps flag dests to values (None = not given)."""
    props: dict[str, Any] = dict(file_props)
    props.update(cli_props)
    props["bootstrap.servers"] = bootstrap
    props["compression.type"] = compression
    props.setdefault("client.id", "console-producer")
    for key, dest, default in FLAG_CONFIGS:
        given = flags.get(dest)
        if given is not None or key not in props:
            props[key] = str(default if given is None else given)
    for java_only in ("key.serializer", "value.serializer"):
        props.pop(java_only, None)  # kafkapy's producer takes bytes as given (ByteArraySerializer)
    return props


@dataclass
class SendResult:
    topic: str
    partition: int | None
    offset: int | None
    timestamp: int | None
    error: str | None = None


@dataclass
class ProduceSummary:
    sent: int
    failed: int
    results: list[SendResult]


def error_logging_text(topic: str, record: LineRecord, err: BaseException) -> str:
    """ErrorLoggingCallback's line (keys and values logged as sizes)."""
    from kafkapy.tools.tool_support import java_error_text

    def size(b: bytes | None) -> str:
        return "null" if b is None else f"{len(b)} bytes"

    return (f"ERROR Error when sending message to topic {topic} with key: {size(record.key)}, "
            f"value: {size(record.value)} with error: {java_error_text(err)}")


def produce_lines(
    producer: Any,
    topic: str,
    records: Iterable[LineRecord],
    sync: bool = False,
    on_error: Callable[[str], None] | None = None,
    keep_results: bool = False,
) -> ProduceSummary:
    """Send every record; stops at the first reader error (after flushing what was sent)."""
    from kafkapy.common.errors import KafkaError

    lock = threading.Lock()
    failed = [0]
    futures: list[Any] = []
    sent = 0

    def report(record: LineRecord, err: BaseException) -> None:
        with lock:
            failed[0] += 1
        if on_error is not None:
            on_error(error_logging_text(topic, record, err))

    try:
        for record in records:
            sent += 1
            try:
                if sync:
                    fut = producer.send(topic, record.value, record.key, record.headers or None)
                    fut.result()
                else:
                    fut = producer.send(
                        topic, record.value, record.key, record.headers or None,
                        callback=lambda md, exc, r=record: report(r, exc) if exc is not None else None,
                    )
            except KafkaError as e:
                if sync:
                    raise
                report(record, e)
                fut = None
            if keep_results:
                futures.append(fut)
    finally:
        producer.flush()
    results: list[SendResult] = []
    for fut in futures:
        if fut is None:
            results.append(SendResult(topic, None, None, None, "not sent"))
            continue
        exc = fut.exception()
        if exc is not None:
            results.append(SendResult(topic, None, None, None, str(exc)))
        else:
            md = fut.result()
            results.append(SendResult(md.topic, md.partition, md.offset, md.timestamp))
    return ProduceSummary(sent, failed[0], results)
