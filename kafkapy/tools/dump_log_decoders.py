"""dump-log's --offsets-decoder / --transaction-log-decoder: coordinator records as Kafka's JSON.

Byte format read (Kafka's CoordinatorRecordSerde): record key = int16 record type + the key struct
(version 0); record value = int16 version + the value struct at that version, or null (tombstone).
Classes come from the generated kafkapy.protocol.messages.group_coordinator / transaction_coordinator
modules (KEY_CLASSES_BY_RECORD_TYPE, VALUE_CLASSES_BY_RECORD_TYPE), whose `FIELDS` facts drive the
JSON: Kafka's generated JsonConverters write each field present in the version under its camelCase
name (tagged fields only when not default), int64 as numbers, bytes as base64, uuids in Kafka's
base64url form. Output, as DumpLogSegments prints it:
  key:     {"type":"<record type>","data":{...}}
  payload: {"version":"<value version>","data":{...}}   or <DELETE> for a tombstone
For a consumer group's GroupMetadataValue the members' subscription/assignment bytes are replaced by
the decoded ConsumerProtocolSubscription/Assignment JSON (left as base64 when they do not decode).
Undecodable records give key "Error at offset N, skipping. <why>" or
"Unknown record type N at offset M, skipping." and no payload.
Pure functions; thread-safe.
"""

from __future__ import annotations

import base64
import json
import struct
import uuid
from collections.abc import Callable
from typing import Any

from kafkapy.tools import ToolFailure

_INT16 = struct.Struct(">h")
_MAX_VERSION = 0x7FFF


def _in(r: tuple[int, int] | None, v: int) -> bool:
    return r is not None and r[0] <= v <= r[1]


def _camel(name: str) -> str:
    return name[:1].lower() + name[1:]


def _scalar(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")
    return value


def message_to_json(msg: Any, version: int) -> dict[str, Any]:
    """Kafka's generated JsonConverter.write(message, version) for any generated message/struct."""
    out: dict[str, Any] = {}
    for f in type(msg).FIELDS:
        tagged = _in(f.tagged, version)
        if not tagged and not _in(f.versions, version):
            continue
        value = getattr(msg, f.name)
        if tagged and value == f.immutable_default() and not f.mutable_default():
            continue
        out[_camel(f.json_name)] = _value_to_json(value, version)
    return out


def _value_to_json(value: Any, version: int) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return [_value_to_json(v, version) for v in value]
    if hasattr(type(value), "FIELDS"):
        return message_to_json(value, version)
    return _scalar(value)


def _load(kind: str):
    module_name = "transaction_coordinator" if kind == "transaction" else "group_coordinator"
    try:
        import importlib

        return importlib.import_module(f"kafkapy.protocol.messages.{module_name}")
    except ModuleNotFoundError as e:
        raise ToolFailure(
            f"the {kind} coordinator record decoder needs kafkapy.protocol.messages.{module_name} "
            "(run `make gen-protocol`)"
        ) from e


def _consumer_protocol_json(data: bytes, class_name: str) -> Any:
    from kafkapy.protocol.messages import data as data_messages

    cls = getattr(data_messages, class_name)
    version = _INT16.unpack_from(data, 0)[0]
    lo, _hi = cls.VALID_VERSIONS
    # Kafka reads newer consumer protocol versions with its newest schema (forward compatible)
    msg = cls.decode(memoryview(data)[2:], max(lo, min(version, cls.VALID_VERSIONS[1])))
    return message_to_json(msg, version)


def _group_metadata_json(msg: Any, version: int) -> dict[str, Any]:
    out = message_to_json(msg, version)
    if out.get("protocolType") != "consumer":
        return out
    for member, member_json in zip(msg.members, out.get("members") or [], strict=False):
        for fname, class_name in (("subscription", "ConsumerProtocolSubscription"),
                                  ("assignment", "ConsumerProtocolAssignment")):  # fmt: skip
            raw = getattr(member, fname, None)
            if not raw:
                continue
            try:
                member_json[fname] = _consumer_protocol_json(bytes(raw), class_name)
            except Exception:  # noqa: BLE001 - Kafka keeps the original bytes when they do not decode
                pass
    return out


def coordinator_parser(kind: str) -> Callable[[Any], tuple[str | None, str | None]]:
    """A (record) -> (key text, payload text) parser for __consumer_offsets or __transaction_state."""
    module = _load(kind)
    keys = module.KEY_CLASSES_BY_RECORD_TYPE
    values = module.VALUE_CLASSES_BY_RECORD_TYPE

    def dumps(obj: Any) -> str:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)

    def parse(record) -> tuple[str | None, str | None]:
        if record.key is None:
            raise ToolFailure(f"Failed to decode message at offset {record.offset} using the specified decoder "
                              "(message had a missing key)")  # fmt: skip
        try:
            key_bytes = bytes(record.key)
            record_type = _INT16.unpack_from(key_bytes, 0)[0]
            key_cls = keys.get(record_type)
            if key_cls is None:
                return f"Unknown record type {record_type} at offset {record.offset}, skipping.", None
            key_msg = key_cls.decode(memoryview(key_bytes)[2:], 0)
            key_text = dumps({"type": str(record_type), "data": message_to_json(key_msg, 0)})
            if record.value is None:
                return key_text, "<DELETE>"
            value_bytes = bytes(record.value)
            version = _INT16.unpack_from(value_bytes, 0)[0]
            value_cls = values[record_type]
            lo, hi = value_cls.VALID_VERSIONS
            if not lo <= version <= hi:
                raise ValueError(f"Unknown version {version} of {value_cls.NAME} (valid: {lo}-{hi})")
            value_msg = value_cls.decode(memoryview(value_bytes)[2:], version)
            if value_cls.NAME == "GroupMetadataValue":
                data = _group_metadata_json(value_msg, version)
            else:
                data = message_to_json(value_msg, version)
            return key_text, dumps({"version": str(version), "data": data})
        except ToolFailure:
            raise
        except Exception as e:  # noqa: BLE001 - Kafka reports the record and carries on
            return f"Error at offset {record.offset}, skipping. {e}", None

    return parse
