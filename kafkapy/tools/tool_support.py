"""Shared helpers of the online tools (topics, configs, get-offsets, log-dirs, ...): Kafka's Java facts
that several tools print or apply, kept in one place.

Owns:
- `admin_client(bootstrap, props, client_id)`: an AdminClient with Kafka's tool defaults;
- `IncludeList`: Kafka's topic regex filter (TopicFilter.IncludeList: commas mean `|`, spaces and
  surrounding quotes dropped, the whole name must match; internal topics from kafkapy.common.internal_topics);
- Java's HashMap iteration order (`java_hash_order`, `java_string_hash`, `topic_partition_hash`), because
  several of Kafka's tools print maps in that order (topic configs, log-dirs JSON, delete-records);
- `java_exception_name(err)` / `java_error_text(err)`: how a Java tool names a KafkaError
  (`org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset ...`).

No I/O except creating the client; stateless; thread-safe.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from kafkapy.common.errors import KafkaError
from kafkapy.common.internal_topics import is_internal_topic
from kafkapy.tools import ToolFailure

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient
    from kafkapy.client.admin_types import ListOffsetsResultInfo

T = TypeVar("T")

def admin_client(bootstrap: str, props: Mapping[str, str] | None = None, client_id: str | None = None
                 ) -> AdminClient:
    """An AdminClient for `bootstrap` with the --command-config properties on top of Kafka's defaults."""
    from kafkapy.client.admin import AdminClient

    configs: dict[str, Any] = dict(props or {})
    configs["bootstrap.servers"] = bootstrap
    if client_id is not None and "client.id" not in configs:
        configs["client.id"] = client_id
    try:
        return AdminClient(configs)
    except ValueError as e:  # a bad bootstrap address or config value
        raise ToolFailure(str(e)) from e


def listed_offset(info: ListOffsetsResultInfo | KafkaError | None) -> int | None:
    """The offset of one AdminClient.list_offsets answer (None: the partition has no such offset); a
    partition's error (only returned with raise_errors=False) is raised."""
    if isinstance(info, KafkaError):
        raise info
    return None if info is None else info.offset


class IncludeList:
    """Kafka's TopicFilter.IncludeList: a Java regex over topic names (full match)."""

    def __init__(self, raw_regex: str) -> None:
        regex = raw_regex.strip().replace(",", "|").replace(" ", "")
        regex = re.sub(r"""^["']+""", "", regex)
        regex = re.sub(r"""["']+$""", "", regex)
        self.regex = regex
        try:
            self.pattern = re.compile(regex)
        except re.error as e:
            raise ToolFailure(f"{regex} is an invalid regex.") from e

    def is_topic_allowed(self, topic: str, exclude_internal_topics: bool = False) -> bool:
        if exclude_internal_topics and is_internal_topic(topic):
            return False
        return self.pattern.fullmatch(topic) is not None

    def __str__(self) -> str:
        return self.regex


# --- Java's hashCode and HashMap iteration order ---------------------------------------------------


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def java_string_hash(s: str) -> int:
    """String.hashCode() over UTF-16 code units."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """TopicPartition.hashCode(): 31 * (31 + partition) + topic.hashCode()."""
    return _int32(31 * (31 + partition) + java_string_hash(topic))


def _table_size_for(n: int) -> int:
    cap = 1
    while cap < n:
        cap <<= 1
    return cap


def java_hash_order(items: Iterable[T], hash_of: Callable[[T], int], sizing: str = "default") -> list[T]:
    """The iteration order of a java.util.HashMap/HashSet holding `items` (inserted in the given order).

    `sizing` says how Java built the map: "default" (`new HashMap<>()`, capacity 16), "sized"
    (`new HashMap<>(n)`), "collection" (`new HashSet<>(collection)`, capacity for n / 0.75 + 1, at least
    16); each then doubles while more than 3/4 full. Within one bucket Java keeps insertion order
    (buckets treeify only past 8 entries, which these tools do not reach)."""
    seq = list(items)
    n = len(seq)
    if sizing == "sized":
        cap = _table_size_for(max(n, 1))
    elif sizing == "collection":
        cap = _table_size_for(max(int(n / 0.75) + 1, 16))
    else:
        cap = 16
    while n > int(cap * 0.75):
        cap <<= 1
    mask = cap - 1

    def bucket(item: T) -> int:
        h = hash_of(item) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & mask

    return [item for _, _, item in sorted(((bucket(it), i, it) for i, it in enumerate(seq)), key=lambda x: x[:2])]


# --- Java exception names and default messages ------------------------------------------------------

_JAVA_EXCEPTIONS = {
    "UNKNOWN_SERVER_ERROR": "UnknownServerException",
    "MESSAGE_TOO_LARGE": "RecordTooLargeException",
    "RECORD_LIST_TOO_LARGE": "RecordBatchTooLargeException",
    "REQUEST_TIMED_OUT": "TimeoutException",
    "TOPIC_ALREADY_EXISTS": "TopicExistsException",
    "INVALID_CONFIG": "InvalidConfigurationException",
    "KAFKA_STORAGE_ERROR": "KafkaStorageException",
    "NETWORK_EXCEPTION": "NetworkException",
    "CORRUPT_MESSAGE": "CorruptRecordException",
    "NOT_CONTROLLER": "NotControllerException",
    "INVALID_REQUEST": "InvalidRequestException",
    "UNSUPPORTED_VERSION": "UnsupportedVersionException",
    "LOG_DIR_NOT_FOUND": "LogDirNotFoundException",
}

# Kafka's Errors enum messages, used when a response carries a code but no message.
DEFAULT_MESSAGES = {
    "UNKNOWN_SERVER_ERROR": "The server experienced an unexpected error when processing the request.",
    "OFFSET_OUT_OF_RANGE": "The requested offset is not within the range of offsets maintained by the server.",
    "UNKNOWN_TOPIC_OR_PARTITION": "This server does not host this topic-partition.",
    "LEADER_NOT_AVAILABLE": "There is no leader for this topic-partition as we are in the middle of a "
    "leadership election.",
    "NOT_LEADER_OR_FOLLOWER": "For requests intended only for the leader, this error indicates that the broker "
    "is not the current leader. For requests intended for any replica, this error indicates that the broker is "
    "not a replica of the topic partition.",
    "REQUEST_TIMED_OUT": "The request timed out.",
    "TOPIC_AUTHORIZATION_FAILED": "Topic authorization failed.",
    "POLICY_VIOLATION": "Request parameters do not satisfy the configured policy.",
    "KAFKA_STORAGE_ERROR": "Disk error when trying to access log file on the disk.",
    "TOPIC_ALREADY_EXISTS": "Topic with this name already exists.",
    "INVALID_CONFIG": "Configuration is invalid.",
    "UNSUPPORTED_VERSION": "The version of API is not supported.",
    "LOG_DIR_NOT_FOUND": "The user-specified log directory is not found in the broker config.",
}


def java_exception_name(err: BaseException) -> str:
    """`org.apache.kafka.common.errors.<Name>Exception` for a KafkaError (Kafka's naming rule)."""
    if not isinstance(err, KafkaError):
        return type(err).__name__
    name = err.name
    simple = _JAVA_EXCEPTIONS.get(name)
    if simple is None:
        words = name.split("_")
        if words[-1] in ("ERROR", "EXCEPTION"):
            words = words[:-1]
        elif words[-1] == "FAILED":  # TOPIC_AUTHORIZATION_FAILED -> TopicAuthorizationException
            words = words[:-1]
        simple = "".join(w.capitalize() for w in words) + "Exception"
    return "org.apache.kafka.common.errors." + simple


def error_message(err: BaseException) -> str:
    """The message Java would show: the broker's text, else the error's default message."""
    name = None
    if isinstance(err, KafkaError):
        if err.message:
            return err.message
        name = err.name
        if name in DEFAULT_MESSAGES:
            return DEFAULT_MESSAGES[name]
    text = str(err)
    return text if text != name else (text or type(err).__name__)


def java_error_text(err: BaseException, default_message: bool = False) -> str:
    """Throwable.toString(): `<class name>: <message>` (what ExecutionException.getMessage() shows).
    `default_message=True` uses the error's Errors-enum message even if the client attached its own text
    (for responses that carry no message, e.g. DeleteRecords)."""
    if default_message and isinstance(err, KafkaError) and err.name in DEFAULT_MESSAGES:
        return f"{java_exception_name(err)}: {DEFAULT_MESSAGES[err.name]}"
    return f"{java_exception_name(err)}: {error_message(err)}"
