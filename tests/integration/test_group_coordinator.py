"""The group coordinator in an in-process broker, spoken to with raw protocol classes: FindCoordinator
(and the auto-created __consumer_offsets), JoinGroup/SyncGroup/Heartbeat/LeaveGroup across versions,
offsets, DescribeGroups/ListGroups/DeleteGroups/OffsetDelete, and a restart on the same log dir."""

from __future__ import annotations

import os
import threading
import time

import pytest

from kafkapy.common.errors import ErrorCode
from kafkapy.coordinator.group_metadata_manager import partition_for
from kafkapy.protocol.messages import (
    CreateTopicsRequest,
    DeleteGroupsRequest,
    DescribeConfigsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    MetadataRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from kafkapy.protocol.messages.data import ConsumerProtocolSubscription
from kafkapy.record.memory_records import MemoryRecords

OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3",
             "offsets.topic.replication.factor": "1", "group.min.session.timeout.ms": "1000"}
SUB = b"\x00\x01" + ConsumerProtocolSubscription(topics=["t"]).encode(1)


def wait_for_coordinator(client, group: str, version: int = 3, timeout_s: float = 15.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        r = client.request(FindCoordinatorRequest(key=group, key_type=0), version)
        if r.error_code == 0:
            return r
        assert r.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
        time.sleep(0.05)
    raise AssertionError("no coordinator")


def until_loaded(send, loading=lambda r: r.error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                 timeout_s: float = 15.0):
    """Repeat `send()` while the coordinator answers that it is still loading the group's partition."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        r = send()
        if not loading(r):
            return r
        time.sleep(0.05)
    raise AssertionError("coordinator still loading")


def join_until_loaded(client, request, version: int):
    return until_loaded(lambda: client.request(request, version))


def create_topic(client, name: str, partitions: int) -> None:
    req = CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=1)], timeout_ms=10_000)
    assert client.request(req, 5).topics[0].error_code == 0


@pytest.fixture
def broker(broker_factory):
    return broker_factory(overrides=OVERRIDES)


def test_find_coordinator_creates_internal_topic(broker, wire_client) -> None:
    c = wire_client(broker.port)
    first = c.request(FindCoordinatorRequest(key="g1", key_type=0), 0)
    assert first.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE and first.node_id == -1
    found = wait_for_coordinator(c, "g1", 2)
    assert (found.node_id, found.host, found.port, found.error_message) == (0, "127.0.0.1", broker.port, "NONE")
    md = c.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="__consumer_offsets")]), 9)
    topic = md.topics[0]
    assert topic.is_internal and len(topic.partitions) == 3 and topic.error_code == 0
    configs = c.request(DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=2, resource_name="__consumer_offsets", configuration_keys=["cleanup.policy"])]), 1)
    assert [(e.name, e.value) for e in configs.results[0].configs] == [("cleanup.policy", "compact")]
    batched = c.request(FindCoordinatorRequest(key_type=0, coordinator_keys=["a", "b"]), 4)
    assert [(x.key, x.node_id, x.port, x.error_code) for x in batched.coordinators] == \
        [("a", 0, broker.port, 0), ("b", 0, broker.port, 0)]
    bad = c.request(FindCoordinatorRequest(key_type=5, coordinator_keys=["x"]), 4)
    assert bad.coordinators[0].error_code == ErrorCode.INVALID_REQUEST


def test_group_lifecycle_over_the_wire(broker, wire_client) -> None:
    c1 = wire_client(broker.port, client_id="member-one")
    create_topic(c1, "t", 2)
    wait_for_coordinator(c1, "grp")
    join = JoinGroupRequest(group_id="grp", session_timeout_ms=10_000, rebalance_timeout_ms=10_000, member_id="",
                            protocol_type="consumer",
                            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=SUB)])
    required = join_until_loaded(c1, join, 5)
    assert required.error_code == ErrorCode.MEMBER_ID_REQUIRED and required.member_id.startswith("member-one-")
    join.member_id = required.member_id
    joined = c1.request(join, 5)
    member = joined.member_id
    assert (joined.error_code, joined.generation_id, joined.leader, joined.protocol_name) == (0, 1, member, "range")
    assert [(m.member_id, bytes(m.metadata)) for m in joined.members] == [(member, SUB)]
    sync = SyncGroupRequest(group_id="grp", generation_id=1, member_id=member, protocol_type="consumer",
                            protocol_name="range",
                            assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=member,
                                                                                     assignment=b"ASSIGN")])
    synced = c1.request(sync, 5)
    assert (synced.error_code, bytes(synced.assignment), synced.protocol_type, synced.protocol_name) == \
        (0, b"ASSIGN", "consumer", "range")
    assert c1.request(HeartbeatRequest(group_id="grp", generation_id=1, member_id=member), 4).error_code == 0
    assert c1.request(HeartbeatRequest(group_id="grp", generation_id=7, member_id=member), 0).error_code == \
        ErrorCode.ILLEGAL_GENERATION

    commit = OffsetCommitRequest(group_id="grp", generation_id_or_member_epoch=1, member_id=member, topics=[
        OffsetCommitRequest.OffsetCommitRequestTopic(name="t", partitions=[
            OffsetCommitRequest.OffsetCommitRequestPartition(partition_index=0, committed_offset=11,
                                                             committed_leader_epoch=0, committed_metadata="m0"),
            OffsetCommitRequest.OffsetCommitRequestPartition(partition_index=7, committed_offset=1)]),
        OffsetCommitRequest.OffsetCommitRequestTopic(name="missing", partitions=[
            OffsetCommitRequest.OffsetCommitRequestPartition(partition_index=0, committed_offset=1)])])
    committed = c1.request(commit, 8)
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in committed.topics] == \
        [("t", [(0, 0), (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
         ("missing", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)])]

    v7 = c1.request(OffsetFetchRequest(group_id="grp", topics=[OffsetFetchRequest.OffsetFetchRequestTopic(
        name="t", partition_indexes=[0, 1])], require_stable=True), 7)
    assert v7.error_code == 0
    assert [(p.partition_index, p.committed_offset, p.committed_leader_epoch, p.metadata, p.error_code)
            for p in v7.topics[0].partitions] == [(0, 11, 0, "m0", 0), (1, -1, -1, "", 0)]
    wait_for_coordinator(c1, "nobody")
    v8 = until_loaded(lambda: c1.request(OffsetFetchRequest(groups=[
        OffsetFetchRequest.OffsetFetchRequestGroup(group_id="grp", topics=None),
        OffsetFetchRequest.OffsetFetchRequestGroup(group_id="nobody", topics=[
            OffsetFetchRequest.OffsetFetchRequestTopics(name="t", partition_indexes=[1])])]), 8),
        lambda r: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS in {g.error_code for g in r.groups})
    assert [(g.group_id, g.error_code, [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions])
                                        for t in g.topics]) for g in v8.groups] == \
        [("grp", 0, [("t", [(0, 11)])]), ("nobody", 0, [("t", [(1, -1)])])]

    described = c1.request(DescribeGroupsRequest(groups=["grp", "nope"], include_authorized_operations=True), 5)
    g, missing = described.groups
    assert (g.error_code, g.group_state, g.protocol_type, g.protocol_data, g.authorized_operations) == \
        (0, "Stable", "consumer", "range", (1 << 3) | (1 << 6) | (1 << 8))
    assert [(m.member_id, m.client_id, m.client_host, bytes(m.member_metadata), bytes(m.member_assignment))
            for m in g.members] == [(member, "member-one", "/127.0.0.1", SUB, b"ASSIGN")]
    assert (missing.error_code, missing.group_state) == (0, "Dead")
    v6 = c1.request(DescribeGroupsRequest(groups=["nope"]), 6).groups[0]
    assert (v6.error_code, v6.error_message, v6.group_state) == \
        (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.", "Dead")

    listed = c1.request(ListGroupsRequest(states_filter=["Stable"]), 4)
    assert [(x.group_id, x.protocol_type, x.group_state) for x in listed.groups] == [("grp", "consumer", "Stable")]
    assert c1.request(ListGroupsRequest(states_filter=["Empty"]), 4).groups == []
    v5 = c1.request(ListGroupsRequest(types_filter=["classic"]), 5)
    assert [(x.group_id, x.group_type) for x in v5.groups] == [("grp", "classic")]

    deleted = c1.request(DeleteGroupsRequest(groups_names=["grp", "nope"]), 2)
    assert [(r.group_id, r.error_code) for r in deleted.results] == \
        [("grp", ErrorCode.NON_EMPTY_GROUP), ("nope", ErrorCode.GROUP_ID_NOT_FOUND)]
    offset_delete = c1.request(OffsetDeleteRequest(group_id="grp", topics=[OffsetDeleteRequest.OffsetDeleteRequestTopic(
        name="t", partitions=[OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=0)])]), 0)
    assert offset_delete.error_code == 0
    assert offset_delete.topics[0].partitions[0].error_code == ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC

    left = c1.request(LeaveGroupRequest(group_id="grp", members=[
        LeaveGroupRequest.MemberIdentity(member_id=member, reason="done")]), 5)
    assert left.error_code == 0 and [(m.member_id, m.error_code) for m in left.members] == [(member, 0)]
    assert c1.request(LeaveGroupRequest(group_id="grp", member_id=member), 1).error_code == \
        ErrorCode.UNKNOWN_MEMBER_ID
    assert c1.request(DescribeGroupsRequest(groups=["grp"]), 1).groups[0].group_state == "Empty"
    deleted = c1.request(DeleteGroupsRequest(groups_names=["grp"]), 0)
    assert [(r.group_id, r.error_code) for r in deleted.results] == [("grp", 0)]
    after = c1.request(OffsetFetchRequest(group_id="grp", topics=None), 6)
    assert after.error_code == 0 and after.topics == []


def test_two_members_rebalance_and_leader_assignment(broker, wire_client) -> None:
    c1 = wire_client(broker.port, client_id="c1")
    c2 = wire_client(broker.port, client_id="c2")
    wait_for_coordinator(c1, "pair")

    def join_request(member_id: str, name: str) -> JoinGroupRequest:
        return JoinGroupRequest(group_id="pair", session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                                member_id=member_id, protocol_type="consumer",
                                protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range",
                                                                                     metadata=name.encode())])

    first = join_until_loaded(c1, join_request("", "one"), 3)  # v3: no MEMBER_ID_REQUIRED
    m1 = first.member_id
    c1.request(SyncGroupRequest(group_id="pair", generation_id=1, member_id=m1, assignments=[
        SyncGroupRequest.SyncGroupRequestAssignment(member_id=m1, assignment=b"all")]), 3)
    # The second JoinGroup waits in the purgatory until the first member rejoins.
    c2.send(join_request("", "two"), 3)
    time.sleep(0.2)
    hb = c1.request(HeartbeatRequest(group_id="pair", generation_id=1, member_id=m1), 3)
    assert hb.error_code == ErrorCode.REBALANCE_IN_PROGRESS
    leader = c1.request(join_request(m1, "one"), 3)
    from kafkapy.protocol.header import decode_response

    _, follower = decode_response(c2.recv_frame(), 11, 3)
    assert leader.generation_id == follower.generation_id == 2 and leader.leader == follower.leader == m1
    m2 = follower.member_id
    assert sorted((m.member_id, bytes(m.metadata)) for m in leader.members) == sorted([(m1, b"one"), (m2, b"two")])
    assert follower.members == []
    # The follower's SyncGroup waits for the leader's assignment.
    c2.send(SyncGroupRequest(group_id="pair", generation_id=2, member_id=m2), 3)
    results: dict[str, bytes] = {}

    def read_follower() -> None:
        _, r = decode_response(c2.recv_frame(), 14, 3)
        results["follower"] = bytes(r.assignment)

    t = threading.Thread(target=read_follower)
    t.start()
    leader_sync = c1.request(SyncGroupRequest(group_id="pair", generation_id=2, member_id=m1, assignments=[
        SyncGroupRequest.SyncGroupRequestAssignment(member_id=m1, assignment=b"p0"),
        SyncGroupRequest.SyncGroupRequestAssignment(member_id=m2, assignment=b"p1")]), 3)
    t.join(10)
    assert bytes(leader_sync.assignment) == b"p0" and results == {"follower": b"p1"}


def test_offsets_and_groups_survive_restart(broker, wire_client) -> None:
    c = wire_client(broker.port)
    create_topic(c, "t", 2)
    groups = ["alpha", "beta", "gamma", "delta"]
    for group in groups:
        wait_for_coordinator(c, group)
    for i, group in enumerate(groups):
        commit = OffsetCommitRequest(group_id=group, topics=[OffsetCommitRequest.OffsetCommitRequestTopic(
            name="t", partitions=[OffsetCommitRequest.OffsetCommitRequestPartition(
                partition_index=p, committed_offset=100 * i + p, committed_metadata=f"{group}-{p}")
                for p in range(2)])])
        deadline = time.monotonic() + 10
        while True:
            r = c.request(commit, 2)
            codes = {p.error_code for p in r.topics[0].partitions}
            if codes != {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS} or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert codes == {0}
    wait_for_coordinator(c, "alpha-live")
    joined = join_until_loaded(c, JoinGroupRequest(
        group_id="alpha-live", session_timeout_ms=30_000, rebalance_timeout_ms=30_000, member_id="",
        protocol_type="consumer", protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=SUB)]),
        3)
    c.request(SyncGroupRequest(group_id="alpha-live", generation_id=1, member_id=joined.member_id, assignments=[
        SyncGroupRequest.SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"A")]), 3)
    c.close()

    # The records on disk are Kafka's: key version 1 (offset commit) and 2 (group metadata).
    keys = set()
    for p in range(3):
        d = os.path.join(broker.log_dir, f"__consumer_offsets-{p}")
        for name in sorted(os.listdir(d)):
            if name.endswith(".log"):
                with open(os.path.join(d, name), "rb") as f:
                    keys.update(bytes(r.key[:2]) for r in MemoryRecords(f.read()).records())
    assert keys == {b"\x00\x01", b"\x00\x02"}

    broker.restart()
    c2 = wire_client(broker.port)
    wait_for_coordinator(c2, "alpha")
    for i, group in enumerate(groups):
        deadline = time.monotonic() + 10
        while True:
            r = c2.request(OffsetFetchRequest(group_id=group, topics=None), 6)
            if r.error_code != ErrorCode.COORDINATOR_LOAD_IN_PROGRESS or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert r.error_code == 0
        assert [(p.partition_index, p.committed_offset, p.metadata) for p in r.topics[0].partitions] == \
            [(0, 100 * i, f"{group}-0"), (1, 100 * i + 1, f"{group}-1")]
    described = c2.request(DescribeGroupsRequest(groups=["alpha-live"]), 4).groups[0]
    assert described.group_state == "Stable" and [m.member_id for m in described.members] == [joined.member_id]
    assert bytes(described.members[0].member_assignment) == b"A"
    listed = {g.group_id for g in c2.request(ListGroupsRequest(), 3).groups}
    assert listed == set(groups) | {"alpha-live"}
    # Java's String.hashCode spreads these groups over all three partitions, so all three were loaded.
    assert {partition_for(g, 3) for g in groups} == {0, 1, 2}
