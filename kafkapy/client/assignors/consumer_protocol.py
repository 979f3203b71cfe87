"""The "consumer" embedded protocol: JoinGroup member metadata (Subscription) and SyncGroup member
assignments (Assignment), as Kafka's ConsumerProtocol writes them.

Bytes: an int16 version, then the ConsumerProtocolSubscription / ConsumerProtocolAssignment struct of
that version (generated classes in kafkapy.protocol.messages.data). We write version 3 (Kafka's
highest, as the Java client does), topics sorted, owned partitions grouped by topic in (topic,
partition) order. A version above the highest we know is read as the highest (Kafka's forward
compatibility rule: newer versions only append fields); below 0 is an error.

Also here: StickyAssignor's user data (StickyAssignorUserData v0/v1: `[topic [partition]]
generation`) and CooperativeStickyAssignor's (a bare int32 generation), both plain Kafka protocol
encoding without a version header.

Stateless; thread-safe.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.message import ProtocolDecodeError
from kafkapy.protocol.messages import ConsumerProtocolAssignment, ConsumerProtocolSubscription

PROTOCOL_TYPE = "consumer"
LATEST_VERSION = 3
DEFAULT_GENERATION = -1

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class ConsumerProtocolError(ValueError):
    """Member metadata or an assignment that cannot be parsed."""


@dataclass
class Subscription:
    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: list[TopicPartition] = field(default_factory=list)
    generation_id: int = DEFAULT_GENERATION
    rack_id: str | None = None
    group_instance_id: str | None = None  # from the JoinGroup member, not the bytes


@dataclass
class Assignment:
    partitions: list[TopicPartition]
    user_data: bytes | None = None


def _sorted_tps(tps: Iterable[TopicPartition]) -> list[TopicPartition]:
    return sorted((TopicPartition(tp[0], tp[1]) for tp in tps), key=lambda tp: (tp.topic, tp.partition))


def _group_by_topic(tps: Iterable[TopicPartition]) -> list[tuple[str, list[int]]]:
    grouped: dict[str, list[int]] = {}
    for tp in _sorted_tps(tps):
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return list(grouped.items())


def _check_version(version: int) -> int:
    if version < 0:
        raise ConsumerProtocolError(f"Unsupported consumer protocol version: {version}")
    return min(version, LATEST_VERSION)


def serialize_subscription(sub: Subscription, version: int = LATEST_VERSION) -> bytes:
    version = _check_version(version)
    S = ConsumerProtocolSubscription
    msg = S(
        topics=sorted(sub.topics),
        user_data=sub.user_data,
        owned_partitions=[S.TopicPartition(topic=t, partitions=ps) for t, ps in _group_by_topic(sub.owned_partitions)]
        if version >= 1 else [],
        generation_id=sub.generation_id if version >= 2 else DEFAULT_GENERATION,
        rack_id=sub.rack_id if version >= 3 else None,
    )
    return _I16.pack(version) + msg.encode(version)


def deserialize_subscription(data: bytes | memoryview | None) -> Subscription:
    buf = bytes(data or b"")
    if len(buf) < 2:
        raise ConsumerProtocolError("Buffer underflow while parsing consumer protocol's header")
    version = _check_version(_I16.unpack_from(buf, 0)[0])
    try:
        msg = ConsumerProtocolSubscription.decode(buf[2:], version)
    except ProtocolDecodeError as e:
        raise ConsumerProtocolError(f"Invalid consumer protocol subscription: {e}") from e
    owned = [TopicPartition(tp.topic, p) for tp in (msg.owned_partitions or []) for p in tp.partitions]
    return Subscription(
        topics=list(msg.topics or []),
        user_data=None if msg.user_data is None else bytes(msg.user_data),
        owned_partitions=owned,
        generation_id=msg.generation_id if version >= 2 else DEFAULT_GENERATION,
        rack_id=msg.rack_id if version >= 3 else None,
    )


def serialize_assignment(assignment: Assignment, version: int = LATEST_VERSION) -> bytes:
    version = _check_version(version)
    A = ConsumerProtocolAssignment
    msg = A(
        assigned_partitions=[A.TopicPartition(topic=t, partitions=ps) for t, ps in _group_by_topic(assignment.partitions)],
        user_data=assignment.user_data,
    )
    return _I16.pack(version) + msg.encode(version)


def deserialize_assignment(data: bytes | memoryview | None) -> Assignment:
    """An empty buffer is an empty assignment (what a leader sends a member it gives nothing)."""
    buf = bytes(data or b"")
    if not buf:
        return Assignment([])
    if len(buf) < 2:
        raise ConsumerProtocolError("Buffer underflow while parsing consumer protocol's header")
    version = _check_version(_I16.unpack_from(buf, 0)[0])
    try:
        msg = ConsumerProtocolAssignment.decode(buf[2:], version)
    except ProtocolDecodeError as e:
        raise ConsumerProtocolError(f"Invalid consumer protocol assignment: {e}") from e
    parts = [TopicPartition(tp.topic, p) for tp in (msg.assigned_partitions or []) for p in tp.partitions]
    return Assignment(parts, None if msg.user_data is None else bytes(msg.user_data))


# ---------------------------------------------------------------------------------------------------
# Assignor user data (no version header; Kafka's old Struct encoding)


def encode_sticky_user_data(partitions: Iterable[TopicPartition], generation: int | None) -> bytes:
    """StickyAssignorUserData v1 (v0 when generation is None)."""
    grouped = _group_by_topic(partitions)
    out = bytearray(_I32.pack(len(grouped)))
    for topic, parts in grouped:
        raw = topic.encode("utf-8")
        out += _I16.pack(len(raw)) + raw + _I32.pack(len(parts))
        for p in parts:
            out += _I32.pack(p)
    if generation is not None:
        out += _I32.pack(generation)
    return bytes(out)


def decode_sticky_user_data(data: bytes) -> tuple[list[TopicPartition], int | None]:
    """(previous assignment, generation or None for v0); raises ConsumerProtocolError."""
    try:
        pos = 0
        (n,) = _I32.unpack_from(data, pos)
        pos += 4
        if n < 0 or n > len(data):
            raise ConsumerProtocolError("invalid sticky assignor user data")
        tps: list[TopicPartition] = []
        for _ in range(n):
            (length,) = _I16.unpack_from(data, pos)
            pos += 2
            if length < 0 or pos + length > len(data):
                raise ConsumerProtocolError("invalid sticky assignor user data")
            topic = data[pos : pos + length].decode("utf-8")
            pos += length
            (count,) = _I32.unpack_from(data, pos)
            pos += 4
            if count < 0 or pos + 4 * count > len(data):
                raise ConsumerProtocolError("invalid sticky assignor user data")
            for _ in range(count):
                tps.append(TopicPartition(topic, _I32.unpack_from(data, pos)[0]))
                pos += 4
        generation = _I32.unpack_from(data, pos)[0] if pos + 4 <= len(data) else None
        return tps, generation
    except (struct.error, UnicodeDecodeError) as e:
        raise ConsumerProtocolError(f"invalid sticky assignor user data: {e}") from e


def encode_generation_user_data(generation: int) -> bytes:
    """CooperativeStickyAssignor's user data: the member's generation as an int32."""
    return _I32.pack(generation)
