"""__consumer_offsets formats (exact bytes), group -> partition, offset commit/fetch/expiry/delete,
DeleteGroups tombstones, and loading a partition back after a restart."""

from __future__ import annotations

import struct

import pytest
from coordinator_harness import Harness

from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator import group_records as records
from kafkapy.coordinator.consumer_protocol import parse_subscription_topics
from kafkapy.coordinator.group_metadata import E, GroupMetadata, OffsetAndMetadata, S
from kafkapy.coordinator.group_metadata_manager import java_string_hashcode, partition_for
from kafkapy.protocol.messages.data import ConsumerProtocolSubscription

T0 = TopicPartition("t", 0)
T1 = TopicPartition("t", 1)


@pytest.fixture
def h():
    harness = Harness()
    yield harness
    harness.shutdown()


def om(offset: int, metadata: str = "", epoch: int = -1) -> OffsetAndMetadata:
    return OffsetAndMetadata(offset, epoch, metadata, 1_700_000_000_000)


def test_java_string_hashcode_and_partition() -> None:
    assert java_string_hashcode("") == 0
    assert java_string_hashcode("hello") == 99162322
    assert java_string_hashcode("polygenelubricants") == -2147483648  # Integer.MIN_VALUE: Utils.abs gives 0
    assert partition_for("polygenelubricants", 50) == 0
    assert java_string_hashcode("\U0001F600") == 0xD83D * 31 + 0xDE00  # UTF-16 surrogate pair
    assert java_string_hashcode("Aa") == java_string_hashcode("BB") == 2112
    # Values printed by a JVM (String.hashCode, (h & 0x7fffffff) % 50).
    assert java_string_hashcode("console-consumer-12345") == 158455506
    assert partition_for("console-consumer-12345", 50) == 6
    assert java_string_hashcode("zzzzzzzzzz") == -1580979136 and partition_for("zzzzzzzzzz", 50) == 12
    assert java_string_hashcode("groupé") == -1237460406 and partition_for("groupé", 50) == 42
    assert partition_for("\U0001F600", 50) == 49


def test_offset_commit_record_bytes() -> None:
    key = records.offset_commit_key("grp", T1)
    assert key == b"\x00\x01" + b"\x00\x03grp" + b"\x00\x01t" + b"\x00\x00\x00\x01"
    value = records.offset_commit_value(OffsetAndMetadata(42, 7, "meta", 1000))
    assert value == (b"\x00\x03" + struct.pack(">q", 42) + struct.pack(">i", 7) + b"\x00\x04meta"
                     + struct.pack(">q", 1000))
    expiring = records.offset_commit_value(OffsetAndMetadata(42, 7, "", 1000, 5000))
    assert expiring == b"\x00\x01" + struct.pack(">q", 42) + b"\x00\x00" + struct.pack(">qq", 1000, 5000)
    assert records.read_key(key) == records.OffsetKey("grp", T1)
    assert records.read_offset_value(value) == OffsetAndMetadata(42, 7, "meta", 1000, None)
    assert records.read_offset_value(expiring) == OffsetAndMetadata(42, -1, "", 1000, 5000)
    # Legacy key type 0 reads the same way; the new coordinator's record types are skipped.
    assert records.read_key(b"\x00\x00" + key[2:]) == records.OffsetKey("grp", T1)
    assert records.read_key(b"\x00\x03\x00\x01g") == records.OtherKey(3)


def test_group_metadata_record_bytes() -> None:
    time = MockTime(start_ms=5000)
    group = GroupMetadata("grp", E, time)
    from kafkapy.coordinator.group_metadata import MemberMetadata

    group.add(MemberMetadata("m-1", "inst", "cid", "/127.0.0.1", 30000, 10000, "consumer", [("range", b"S")]))
    group.transition_to(records.GroupState.PREPARING_REBALANCE)
    group.init_next_generation()
    assert records.group_metadata_key("grp") == b"\x00\x02\x00\x03grp"
    value = records.group_metadata_value(group, {"m-1": b"A"})
    expected = (b"\x00\x03" + b"\x00\x08consumer" + struct.pack(">i", 1) + b"\x00\x05range" + b"\x00\x03m-1"
                + struct.pack(">q", 5000) + struct.pack(">i", 1)
                + b"\x00\x03m-1" + b"\x00\x04inst" + b"\x00\x03cid" + b"\x00\x0a/127.0.0.1"
                + struct.pack(">ii", 30000, 10000) + b"\x00\x00\x00\x01S" + b"\x00\x00\x00\x01A")
    assert value == expected
    loaded = records.read_group_value("grp", value, time)
    assert loaded.state is S and loaded.generation_id == 1 and loaded.protocol_name == "range"
    assert loaded.leader_id == "m-1" and loaded.protocol_type == "consumer"
    member = loaded.get("m-1")
    assert (member.group_instance_id, member.client_id, member.rebalance_timeout_ms, member.session_timeout_ms,
            member.assignment, member.metadata("range")) == ("inst", "cid", 30000, 10000, b"A", b"S")
    assert loaded.static_members == {"inst": "m-1"}


def test_subscription_topics_parse() -> None:
    sub = ConsumerProtocolSubscription(topics=["a", "b"], user_data=None)
    assert parse_subscription_topics(b"\x00\x01" + sub.encode(1)) == ["a", "b"]
    # A version newer than we know is read at our newest (later versions only append fields).
    assert parse_subscription_topics(b"\x00\x09" + sub.encode(3)) == ["a", "b"]
    assert parse_subscription_topics(b"\x00") is None
    assert parse_subscription_topics(b"\x00\x00\xff") is None


def test_standalone_commit_and_fetch(h: Harness) -> None:
    assert h.commit("simple", {T0: om(10, "m"), T1: om(20, epoch=3)}) == {T0: 0, T1: 0}
    error, offsets = h.coordinator.handle_fetch_offsets("simple", False, [T0, T1, TopicPartition("t", 9)])
    assert error == 0
    assert [(o.offset, o.leader_epoch, o.metadata, o.error) for o in offsets.values()] == \
        [(10, -1, "m", 0), (20, 3, "", 0), (-1, -1, "", 0)]
    assert set(h.coordinator.handle_fetch_offsets("simple", False, None)[1]) == {T0, T1}
    # Unknown group: -1 for what was asked.
    assert h.coordinator.handle_fetch_offsets("other", False, [T0])[1][T0].offset == -1
    assert h.manager.get_group("simple").protocol_type is None


def test_commit_validation(h: Harness) -> None:
    m1, gen = h.stable_group("g")
    assert h.commit("g", {T0: om(5)}, m1, gen) == {T0: 0}
    assert h.commit("g", {T0: om(5)}, m1, gen + 1) == {T0: ErrorCode.ILLEGAL_GENERATION}
    assert h.commit("g", {T0: om(5)}, "ghost", gen) == {T0: ErrorCode.UNKNOWN_MEMBER_ID}
    # Non-empty group: a commit without member id/generation is refused.
    assert h.commit("g", {T0: om(5)}) == {T0: ErrorCode.UNKNOWN_MEMBER_ID}
    # Unknown group with a generation: a commit from an older generation.
    assert h.commit("nogroup", {T0: om(5)}, "m", 3) == {T0: ErrorCode.ILLEGAL_GENERATION}
    assert h.commit("g", {T0: om(5, "x" * 4097)}, m1, gen) == {T0: ErrorCode.OFFSET_METADATA_TOO_LARGE}
    h.join("g", client_id="c2")  # PreparingRebalance: commits still allowed
    assert h.commit("g", {T1: om(6)}, m1, gen) == {T1: 0}
    h.rm.append_error = ErrorCode.NOT_ENOUGH_REPLICAS
    assert h.commit("g", {T1: om(7)}, m1, gen) == {T1: ErrorCode.COORDINATOR_NOT_AVAILABLE}
    assert h.coordinator.handle_fetch_offsets("g", True, [T1])[1][T1].offset == 6


def test_restart_loads_groups_and_offsets() -> None:
    h = Harness()
    m1, gen = h.stable_group("g", "c1")
    h.commit("g", {T0: om(100, "first")}, m1, gen)
    h.commit("g", {T0: om(150, "second"), T1: om(7)}, m1, gen)
    h.commit("standalone", {T1: om(3)})
    h.commit("gone", {T1: om(4)})
    assert h.coordinator.handle_delete_groups(["gone"]) == {"gone": 0}
    h.shutdown()
    # A new coordinator over the same log (a restarted broker).
    h2 = Harness(time=h.time, replica_manager=h.rm)
    try:
        _, offsets = h2.coordinator.handle_fetch_offsets("g", False, None)
        assert {tp: (o.offset, o.metadata) for tp, o in offsets.items()} == {T0: (150, "second"), T1: (7, "")}
        assert h2.coordinator.handle_fetch_offsets("standalone", False, None)[1][T1].offset == 3
        assert h2.coordinator.handle_fetch_offsets("gone", False, None)[1] == {}
        error, summary = h2.coordinator.handle_describe_group("g")
        assert error == 0 and summary.state == "Stable" and [m.member_id for m in summary.members] == [m1]
        assert summary.members[0].assignment == b"assignment-c1"
        # The loaded member is on its session timer and can keep heartbeating.
        assert h2.heartbeat_("g", m1, gen) == 0
        h2.tick(10_001)
        assert h2.manager.get_group("g").state is not S
    finally:
        h2.shutdown()


def test_delete_groups(h: Harness) -> None:
    m1, gen = h.stable_group("busy")
    h.commit("idle", {T0: om(1)})
    errors = h.coordinator.handle_delete_groups(["busy", "idle", "missing"])
    assert errors == {"busy": ErrorCode.NON_EMPTY_GROUP, "idle": 0, "missing": ErrorCode.GROUP_ID_NOT_FOUND}
    assert h.manager.get_group("idle") is None
    tombstones = [r for r in h.rm.get_partition(("__consumer_offsets", 0)).log.records() if r.value is None]
    assert [r.key for r in tombstones] == [records.offset_commit_key("idle", T0)]


def test_delete_group_with_generation_writes_group_tombstone(h: Harness) -> None:
    m1, gen = h.stable_group("g")
    h.coordinator.handle_leave_group("g", [(m1, None, None)])
    assert h.manager.get_group("g").state is E
    assert h.coordinator.handle_delete_groups(["g"]) == {"g": 0}
    last = h.rm.get_partition(("__consumer_offsets", 0)).log.records()[-1]
    assert last.key == records.group_metadata_key("g") and last.value is None


def test_offset_delete(h: Harness) -> None:
    sub = b"\x00\x01" + ConsumerProtocolSubscription(topics=["t"]).encode(1)
    joined = h.join("g", protocols=[("range", sub)])
    m1 = joined[0].member_id
    h.sync("g", m1, 1, {m1: b""})
    other = TopicPartition("u", 0)
    h.commit("g", {T0: om(1), other: om(2)}, m1, 1)
    error, results = h.coordinator.handle_delete_offsets("g", [T0, other])
    assert error == 0 and results == {T0: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, other: 0}
    assert set(h.coordinator.handle_fetch_offsets("g", False, None)[1]) == {T0}
    assert h.coordinator.handle_delete_offsets("missing", [T0]) == (ErrorCode.GROUP_ID_NOT_FOUND, {})


def test_offsets_expire_for_empty_groups(h: Harness) -> None:
    h.commit("simple", {T0: om(1)})
    h.tick(7 * 24 * 3600 * 1000 - 1)
    assert h.manager.cleanup_expired_offsets() == 0
    h.tick(1)
    # om() stamps commits with a fixed past time; the standalone group expires by commit time.
    assert h.manager.cleanup_expired_offsets() == 1
    assert h.manager.get_group("simple") is None


def test_list_and_describe(h: Harness) -> None:
    h.stable_group("stable-g")
    h.commit("empty-g", {T0: om(1)})
    error, overviews = h.coordinator.handle_list_groups()
    assert error == 0 and sorted((o.group_id, o.protocol_type, o.state) for o in overviews) == \
        [("empty-g", "", "Empty"), ("stable-g", "consumer", "Stable")]
    assert [o.group_id for o in h.coordinator.handle_list_groups({"stable"})[1]] == ["stable-g"]
    assert h.coordinator.handle_describe_group("nope") == (0, None)
    error, summary = h.coordinator.handle_describe_group("stable-g")
    assert summary.protocol == "range" and summary.members[0].client_host == "/127.0.0.1"


def test_load_overtaken_by_resignation_publishes_nothing() -> None:
    h = Harness(load_now=False)
    try:
        part = h.rm.get_partition(("__consumer_offsets", 0))
        h.loads.pop()()  # the startup load
        assert h.commit("g", {T0: om(9)}) == {T0: 0}
        part.is_leader = False
        h.coordinator.refresh_ownership()
        assert h.manager.get_group("g") is None and not h.manager.is_partition_owned(0)
        part.is_leader, part.leader_epoch = True, 1
        h.coordinator.refresh_ownership()
        stale_load = h.loads.pop()
        part.is_leader = False
        h.coordinator.refresh_ownership()  # resigned before the load ran
        stale_load()
        assert h.manager.get_group("g") is None and not h.manager.is_partition_owned(0)
        part.is_leader, part.leader_epoch = True, 2
        h.coordinator.refresh_ownership()
        assert h.coordinator.handle_fetch_offsets("g", False, None) == (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, {})
        h.loads.pop()()
        assert h.coordinator.handle_fetch_offsets("g", False, None)[1][T0].offset == 9
    finally:
        h.shutdown()
