"""console-consumer's internal-topic formatters: __consumer_offsets and __transaction_state records, as Kafka 3.9.

Owns the six formatter class names Kafka 3.9's ConsoleConsumer accepts for the coordinators' topics:

- the 3.x tools' JSON formatters (`org.apache.kafka.tools.consumer.OffsetsMessageFormatter`,
  `GroupMetadataMessageFormatter`, `TransactionLogMessageFormatter`, Kafka's ApiMessageFormatter): one
  `{"key":{"version":V,"data":{..}},"value":{"version":V,"data":{..}}}` document per record, written with no
  line separator (exactly as 3.9 writes it); `"data":"unknown"` for a version the schema does not know;
  `null` for a null key or value; a record of the other kind (a group's metadata in the offsets formatter and
  the reverse) prints nothing;
- the deprecated Scala formatters (`kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter`,
  `...$GroupMetadataMessageFormatter`, `kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter`):
  one text line per record, `<key>::<value's Scala toString>` (`[group,topic,partition]::OffsetAndMetadata(..)`,
  `group::GroupMetadata(..)`, `txnId::TransactionMetadata(..)`, `NULL` for a tombstone). ConsoleConsumer prints
  their deprecation WARNING on stderr first (`deprecation_warning`).

Bytes read (Kafka's coordinator record format): key = int16 version + the key struct (0/1 OffsetCommitKey,
2 GroupMetadataKey; 0 TransactionLogKey), value = int16 version + the value struct (OffsetCommitValue 0-4,
GroupMetadataValue 0-4, TransactionLogValue 0-1), decoded with the generated classes of
kafkapy.protocol.messages.group_coordinator / transaction_coordinator and rendered as Kafka's generated
JsonConverters do (tools/dump_log_decoders.message_to_json). The Scala collections print in Scala 2.13's
mutable HashMap/HashSet iteration order (`scala_hash_order`).

Formatters keep no state between records; thread-safe.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from kafkapy.tools import ToolFailure

T = TypeVar("T")

_INT16 = struct.Struct(">h")

# Kafka 3.9's schema version ranges (the generated classes carry the newer specs' ranges)
OFFSET_KEY_VERSIONS = (0, 1)
GROUP_METADATA_KEY_VERSION = 2
OFFSET_VALUE_VERSIONS = (0, 4)
GROUP_METADATA_VALUE_VERSIONS = (0, 4)
TXN_KEY_VERSIONS = (0, 0)
TXN_VALUE_VERSIONS = (0, 1)

_TOOLS = "org.apache.kafka.tools.consumer."
OFFSETS_SCALA = "kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter"
GROUP_METADATA_SCALA = "kafka.coordinator.group.GroupMetadataManager$GroupMetadataMessageFormatter"
TXN_LOG_SCALA = "kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter"

_TXN_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
               "PrepareEpochFence")

# ConsoleConsumerOptions.convertDeprecatedClass: the old name -> its replacement
_DEPRECATED = {
    "kafka.tools.DefaultMessageFormatter": _TOOLS + "DefaultMessageFormatter",
    "kafka.tools.LoggingMessageFormatter": _TOOLS + "LoggingMessageFormatter",
    "kafka.tools.NoOpMessageFormatter": _TOOLS + "NoOpMessageFormatter",
    TXN_LOG_SCALA: _TOOLS + "TransactionLogMessageFormatter",
    OFFSETS_SCALA: _TOOLS + "OffsetsMessageFormatter",
    GROUP_METADATA_SCALA: _TOOLS + "GroupMetadataMessageFormatter",
}


def deprecation_warning(class_name: str) -> str | None:
    """The WARNING line Kafka 3.9's ConsoleConsumer prints on stderr for a deprecated formatter name."""
    new = _DEPRECATED.get(class_name)
    if new is None:
        return None
    return (f"WARNING: {class_name} is deprecated and will be removed in the next major release. "
            f"Please use {new} instead")


# --- decoding --------------------------------------------------------------------------------------


def _messages(kind: str) -> Any:
    import importlib

    return importlib.import_module(f"kafkapy.protocol.messages.{kind}_coordinator")


def _version(data: bytes) -> int:
    return int(_INT16.unpack_from(data, 0)[0])


def _decode(cls: Any, data: bytes, version: int) -> Any:
    lo, hi = cls.VALID_VERSIONS
    return cls.decode(memoryview(data)[2:], max(lo, min(version, hi)))


def _group_key(data: bytes) -> tuple[str, Any] | None:
    """('offset' | 'group', decoded key) for a __consumer_offsets key, None for an unknown version."""
    g = _messages("group")
    version = _version(data)
    if OFFSET_KEY_VERSIONS[0] <= version <= OFFSET_KEY_VERSIONS[1]:
        return "offset", _decode(g.OffsetCommitKey, data, 0)
    if version == GROUP_METADATA_KEY_VERSION:
        return "group", _decode(g.GroupMetadataKey, data, 0)
    return None


def _in(versions: tuple[int, int], v: int) -> bool:
    return versions[0] <= v <= versions[1]


# --- the 3.x JSON formatters (ApiMessageFormatter) -------------------------------------------------

_UNKNOWN = "unknown"


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class _ApiMessageFormatter:
    """Kafka's ApiMessageFormatter: `key_json` returning None skips the record (the other record kind)."""

    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        pass

    def key_json(self, data: bytes, version: int) -> Any:
        raise NotImplementedError

    def value_json(self, data: bytes, version: int) -> Any:
        raise NotImplementedError

    def format(self, record: Any) -> bytes:
        doc: dict[str, Any] = {}
        if record.key is not None:
            key = bytes(record.key)
            version = _version(key)
            data = self.key_json(key, version)
            if data is None:
                return b""
            doc["key"] = {"version": version, "data": data}
        else:
            doc["key"] = None
        if record.value is not None:
            value = bytes(record.value)
            version = _version(value)
            doc["value"] = {"version": version, "data": self.value_json(value, version)}
        else:
            doc["value"] = None
        return _dumps(doc)


def _message_json(msg: Any, version: int) -> dict[str, Any]:
    from kafkapy.tools.dump_log_decoders import message_to_json

    return message_to_json(msg, version)


class _GroupRecordFormatter(_ApiMessageFormatter):
    """A __consumer_offsets JSON formatter for one record kind ('offset' or 'group')."""

    KIND = ""
    VALUE_CLASS = ""
    VALUE_VERSIONS = (0, 0)

    def key_json(self, data: bytes, version: int) -> Any:
        key = _group_key(data)
        if key is None:
            return _UNKNOWN
        kind, msg = key
        return _message_json(msg, 0) if kind == self.KIND else None

    def value_json(self, data: bytes, version: int) -> Any:
        if not _in(self.VALUE_VERSIONS, version):
            return _UNKNOWN
        return _message_json(_decode(getattr(_messages("group"), self.VALUE_CLASS), data, version), version)


class OffsetsMessageFormatter(_GroupRecordFormatter):
    KIND, VALUE_CLASS, VALUE_VERSIONS = "offset", "OffsetCommitValue", OFFSET_VALUE_VERSIONS


class GroupMetadataMessageFormatter(_GroupRecordFormatter):
    KIND, VALUE_CLASS, VALUE_VERSIONS = "group", "GroupMetadataValue", GROUP_METADATA_VALUE_VERSIONS


class TransactionLogMessageFormatter(_ApiMessageFormatter):
    def key_json(self, data: bytes, version: int) -> Any:
        if not _in(TXN_KEY_VERSIONS, version):
            return _UNKNOWN
        return _message_json(_decode(_messages("transaction").TransactionLogKey, data, 0), 0)

    def value_json(self, data: bytes, version: int) -> Any:
        if not _in(TXN_VALUE_VERSIONS, version):
            return _UNKNOWN
        return _message_json(_decode(_messages("transaction").TransactionLogValue, data, version), version)


# --- the deprecated Scala formatters ---------------------------------------------------------------


def scala_hash_order(items: Iterable[T], hash_of: Callable[[T], int]) -> list[T]:
    """Scala 2.13 mutable.HashMap/HashSet iteration order for items inserted in this order: buckets by
    (h ^ h >>> 16) & (size - 1) (size 16, doubled when the count reaches 3/4 of it), each bucket ascending by
    the improved hash."""
    entries = []
    for i, item in enumerate(items):
        h = hash_of(item) & 0xFFFFFFFF
        improved = h ^ (h >> 16)
        signed = improved - (1 << 32) if improved & 0x80000000 else improved
        entries.append((signed, i, item))
    size = 16
    while len(entries) >= size * 3 // 4:
        size *= 2
    entries.sort(key=lambda e: ((e[0] & 0xFFFFFFFF) & (size - 1), e[0], e[1]))
    return [e[2] for e in entries]


def _value_struct(value: bytes, kind: str, class_name: str, versions: tuple[int, int],
                  unknown: str) -> tuple[Any, int]:
    """The decoded value struct and its version; Kafka's IllegalStateException text for another version."""
    version = _version(value)
    if not _in(versions, version):
        raise ToolFailure(unknown.format(version))
    return _decode(getattr(_messages(kind), class_name), value, version), version


def _scala_option(value: Any) -> str:
    return "None" if value is None else f"Some({value})"


def _java_optional(value: Any) -> str:
    return "Optional.empty" if value is None else f"Optional[{value}]"


class _ScalaTextFormatter:
    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        pass

    def text(self, key: bytes, value: bytes | None) -> str | None:
        raise NotImplementedError

    def format(self, record: Any) -> bytes:
        if record.key is None:
            return b""
        text = self.text(bytes(record.key), None if record.value is None else bytes(record.value))
        return b"" if text is None else (text + "\n").encode("utf-8")


class ScalaOffsetsMessageFormatter(_ScalaTextFormatter):
    """GroupMetadataManager$OffsetsMessageFormatter: `[group,topic,partition]::OffsetAndMetadata(...)`."""

    def text(self, key: bytes, value: bytes | None) -> str | None:
        parsed = _group_key(key)
        if parsed is None or parsed[0] != "offset":
            return None
        k = parsed[1]
        return f"[{k.group},{k.topic},{k.partition}]::{offset_and_metadata_text(value)}"


def offset_and_metadata_text(value: bytes | None) -> str:
    if value is None:
        return "NULL"
    v, _ = _value_struct(value, "group", "OffsetCommitValue", OFFSET_VALUE_VERSIONS,
                         "Unknown offset message version: {}")
    epoch, expire = v.leader_epoch, v.expire_timestamp  # -1 (their default) in the versions that lack them
    return (f"OffsetAndMetadata(offset={v.offset}, leaderEpoch={_java_optional(None if epoch == -1 else epoch)}, "
            f"metadata={v.metadata}, commitTimestamp={v.commit_timestamp}, "
            f"expireTimestamp={_scala_option(None if expire == -1 else expire)})")


class ScalaGroupMetadataMessageFormatter(_ScalaTextFormatter):
    """GroupMetadataManager$GroupMetadataMessageFormatter: `group::GroupMetadata(...)`."""

    def text(self, key: bytes, value: bytes | None) -> str | None:
        parsed = _group_key(key)
        if parsed is None or parsed[0] != "group":
            return None
        group = parsed[1].group
        return f"{group}::{group_metadata_text(group, value)}"


def group_metadata_text(group: str, value: bytes | None) -> str:
    from kafkapy.tools.tool_support import java_string_hash

    if value is None:
        return "NULL"
    v, version = _value_struct(value, "group", "GroupMetadataValue", GROUP_METADATA_VALUE_VERSIONS,
                               "Unknown group metadata message version: {}")
    members = []
    for m in v.members:
        session = m.session_timeout
        rebalance = session if version == 0 else m.rebalance_timeout
        members.append((m.member_id, (
            f"MemberMetadata(memberId={m.member_id}, groupInstanceId={_scala_option(m.group_instance_id)}, "
            f"clientId={m.client_id}, clientHost={m.client_host}, sessionTimeoutMs={session}, "
            f"rebalanceTimeoutMs={rebalance}, supportedProtocols=List({v.protocol}))")))
    by_id = dict(members)  # a HashMap keeps the last member of an id
    ordered = scala_hash_order(list(by_id), java_string_hash)
    members_text = ", ".join(f"{mid} -> {by_id[mid]}" for mid in ordered)
    protocol_type = _scala_option(v.protocol_type or None)
    state = "Stable" if by_id else "Empty"
    return (f"GroupMetadata(groupId={group}, generation={v.generation}, protocolType={protocol_type}, "
            f"currentState={state}, members=HashMap({members_text}))")


class ScalaTransactionLogMessageFormatter(_ScalaTextFormatter):
    """TransactionLog$TransactionLogMessageFormatter: `txnId::TransactionMetadata(...)`, `unknown::version=N`."""

    def text(self, key: bytes, value: bytes | None) -> str | None:
        version = _version(key)
        if not _in(TXN_KEY_VERSIONS, version):
            return f"unknown::version={version}"
        tid = _decode(_messages("transaction").TransactionLogKey, key, 0).transactional_id
        return f"{tid}::{transaction_metadata_text(tid, value)}"


def transaction_metadata_text(tid: str, value: bytes | None) -> str:
    from kafkapy.tools.tool_support import topic_partition_hash

    if value is None:
        return "NULL"
    v, _ = _value_struct(value, "transaction", "TransactionLogValue", TXN_VALUE_VERSIONS,
                         "Unknown version {} from the transaction log message value")
    status = v.transaction_status
    if not 0 <= status < len(_TXN_STATES):
        raise ToolFailure(f"Unknown transaction state id {status} from the transaction status message")
    state = _TXN_STATES[status]
    parts: list[tuple[str, int]] = []
    if state != "Empty":
        for entry in v.transaction_partitions or []:
            for p in entry.partition_ids:
                if (entry.topic, p) not in parts:
                    parts.append((entry.topic, p))
    ordered = scala_hash_order(parts, lambda tp: topic_partition_hash(tp[0], tp[1]))
    tps = ", ".join(f"{t}-{p}" for t, p in ordered)
    return (f"TransactionMetadata(transactionalId={tid}, producerId={v.producer_id}, "
            f"producerEpoch={v.producer_epoch}, txnTimeoutMs={v.transaction_timeout_ms}, state={state}, "
            f"pendingState=None, topicPartitions=HashSet({tps}), txnStartTimestamp={v.transaction_start_timestamp_ms}, "
            f"txnLastUpdateTimestamp={v.transaction_last_update_timestamp_ms})")


FORMATTERS: dict[str, Callable[[Mapping[str, str]], Any]] = {
    _TOOLS + "OffsetsMessageFormatter": OffsetsMessageFormatter,
    _TOOLS + "GroupMetadataMessageFormatter": GroupMetadataMessageFormatter,
    _TOOLS + "TransactionLogMessageFormatter": TransactionLogMessageFormatter,
    OFFSETS_SCALA: ScalaOffsetsMessageFormatter,
    GROUP_METADATA_SCALA: ScalaGroupMetadataMessageFormatter,
    TXN_LOG_SCALA: ScalaTransactionLogMessageFormatter,
}
