"""The records the group coordinator writes to __consumer_offsets, in Kafka's byte format.

Key = int16 record type + key struct (v0 layout): type 1 (0 legacy) OffsetCommitKey(group, topic,
partition); type 2 GroupMetadataKey(group). Value = int16 version + value struct: OffsetCommitValue v3
(v1 when an explicit expire timestamp exists, as Kafka writes them), GroupMetadataValue v3. A null
value is a tombstone (offset deleted / group deleted). Records of the new coordinator's other types
(3+) are recognised and skipped when loading.

Thread-safety: stateless functions.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group_metadata import (
    GroupMetadata,
    GroupState,
    MemberMetadata,
    OffsetAndMetadata,
)
from kafkapy.protocol.message import ProtocolDecodeError
from kafkapy.protocol.messages.group_coordinator import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
)

_INT16 = struct.Struct(">h")

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_EXPIRE = 1
GROUP_METADATA_VALUE_VERSION = 3


class UnknownRecordError(ValueError):
    """A key or value this coordinator cannot read."""


@dataclass(slots=True, frozen=True)
class OffsetKey:
    group: str
    topic_partition: TopicPartition


@dataclass(slots=True, frozen=True)
class GroupKey:
    group: str


@dataclass(slots=True, frozen=True)
class OtherKey:
    """A record type of the new group coordinator (consumer/share/streams groups): not ours."""

    record_type: int


def offset_commit_key(group: str, tp: TopicPartition) -> bytes:
    return _INT16.pack(OFFSET_COMMIT_KEY_VERSION) + OffsetCommitKey(
        group=group, topic=tp.topic, partition=tp.partition).encode(0)


def group_metadata_key(group: str) -> bytes:
    return _INT16.pack(GROUP_METADATA_KEY_VERSION) + GroupMetadataKey(group=group).encode(0)


def offset_commit_value(om: OffsetAndMetadata) -> bytes:
    if om.expire_timestamp is not None:
        version = OFFSET_COMMIT_VALUE_VERSION_EXPIRE
        value = OffsetCommitValue(offset=om.offset, metadata=om.metadata, commit_timestamp=om.commit_timestamp,
                                  expire_timestamp=om.expire_timestamp)
    else:
        version = OFFSET_COMMIT_VALUE_VERSION
        value = OffsetCommitValue(offset=om.offset, leader_epoch=om.leader_epoch, metadata=om.metadata,
                                  commit_timestamp=om.commit_timestamp)
    return _INT16.pack(version) + value.encode(version)


def group_metadata_value(group: GroupMetadata, assignment: dict[str, bytes]) -> bytes:
    """The group's current generation with `assignment` (member id -> bytes); no members when Empty."""
    members = []
    protocol = group.protocol_name
    for m in group.all_member_metadata():
        if protocol is None:
            raise RuntimeError("Attempted to write non-empty group metadata with no defined protocol")
        members.append(GroupMetadataValue.MemberMetadata(
            member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
            client_host=m.client_host, rebalance_timeout=m.rebalance_timeout_ms, session_timeout=m.session_timeout_ms,
            subscription=m.metadata(protocol), assignment=assignment[m.member_id]))
    value = GroupMetadataValue(protocol_type=group.protocol_type or "", generation=group.generation_id,
                               protocol=protocol, leader=group.leader_id,
                               current_state_timestamp=group.current_state_timestamp_or_default(), members=members)
    return _INT16.pack(GROUP_METADATA_VALUE_VERSION) + value.encode(GROUP_METADATA_VALUE_VERSION)


def read_key(key: bytes | memoryview | None) -> OffsetKey | GroupKey | OtherKey:
    if key is None or len(key) < 2:
        raise UnknownRecordError("A __consumer_offsets record must have a key")
    (version,) = _INT16.unpack_from(key, 0)
    try:
        if version in (0, 1):
            k = OffsetCommitKey.decode(memoryview(key)[2:], 0)
            return OffsetKey(k.group, TopicPartition(k.topic, k.partition))
        if version == 2:
            return GroupKey(GroupMetadataKey.decode(memoryview(key)[2:], 0).group)
    except ProtocolDecodeError as e:
        raise UnknownRecordError(f"Cannot read a record key of type {version}: {e}") from e
    if version > 2:
        return OtherKey(version)
    raise UnknownRecordError(f"Unknown record key version {version}")


def _value_version(value: bytes | memoryview, cls: Any) -> int:
    (version,) = _INT16.unpack_from(value, 0)
    lo, hi = cls.VALID_VERSIONS
    if version < lo or version > hi:
        raise UnknownRecordError(f"Unknown {cls.NAME} version {version}")
    return version


def read_offset_value(value: bytes | memoryview) -> OffsetAndMetadata:
    version = _value_version(value, OffsetCommitValue)
    try:
        v = OffsetCommitValue.decode(memoryview(value)[2:], version)
    except ProtocolDecodeError as e:
        raise UnknownRecordError(f"Cannot read an OffsetCommitValue v{version}: {e}") from e
    expire = v.expire_timestamp if version == 1 and v.expire_timestamp != -1 else None
    return OffsetAndMetadata(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, expire)


def read_group_value(group_id: str, value: bytes | memoryview, time: Time) -> GroupMetadata:
    """Rebuild a group (Empty without members, else Stable) from its GroupMetadataValue."""
    version = _value_version(value, GroupMetadataValue)
    try:
        v = GroupMetadataValue.decode(memoryview(value)[2:], version)
    except ProtocolDecodeError as e:
        raise UnknownRecordError(f"Cannot read a GroupMetadataValue v{version}: {e}") from e
    group = GroupMetadata(group_id, GroupState.STABLE if v.members else GroupState.EMPTY, time)
    group.generation_id = v.generation
    group.protocol_name = v.protocol
    group.leader_id = v.leader
    group.current_state_timestamp = None if v.current_state_timestamp == -1 else v.current_state_timestamp
    for m in v.members:
        member = MemberMetadata(
            m.member_id, m.group_instance_id, m.client_id, m.client_host,
            m.session_timeout if version == 0 else m.rebalance_timeout, m.session_timeout, v.protocol_type,
            [(v.protocol or "", bytes(m.subscription))], bytes(m.assignment))
        group.add(member)
    group.protocol_type = v.protocol_type or None
    group.subscribed_topics = group.compute_subscribed_topics()
    return group

