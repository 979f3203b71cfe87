"""GroupCoordinator state machine under MockTime: join -> sync -> stable, rebalances, session expiry,
static membership, protocol votes and Kafka's error codes."""

from __future__ import annotations

import uuid

import pytest
from coordinator_harness import Harness

from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState
from kafkapy.common.errors import ErrorCode
from kafkapy.coordinator.group_metadata import CR, PR, E, S


@pytest.fixture
def h():
    harness = Harness()
    yield harness
    harness.shutdown()


def state(h: Harness, group: str):
    return h.manager.get_group(group).state


def test_join_sync_stable_single_member(h: Harness) -> None:
    joined = h.join("g", client_id="c1", protocols=[("range", b"sub-1")])
    assert len(joined) == 1
    r = joined[0]
    assert r.error == 0 and r.generation_id == 1 and r.member_id.startswith("c1-")
    assert r.leader_id == r.member_id and r.protocol_name == "range" and r.protocol_type == "consumer"
    assert r.members == [(r.member_id, None, b"sub-1")]
    assert state(h, "g") is CR
    synced = h.sync("g", r.member_id, 1, {r.member_id: b"assign-1"})
    assert [(s.error, s.assignment, s.protocol_type, s.protocol_name) for s in synced] == \
        [(0, b"assign-1", "consumer", "range")]
    assert state(h, "g") is S
    assert h.heartbeat_("g", r.member_id, 1) == 0
    # The generation was written to __consumer_offsets as a GroupMetadata record (key version 2).
    recs = h.rm.get_partition(("__consumer_offsets", 0)).log.records()
    assert recs[-1].key == b"\x00\x02\x00\x01g"
    assert recs[-1].value[:2] == b"\x00\x03"


def test_member_id_required_then_join(h: Harness) -> None:
    first = h.join("g", require_known=True, client_id="c1")
    assert first[0].error == ErrorCode.MEMBER_ID_REQUIRED and first[0].member_id.startswith("c1-")
    assert h.manager.get_group("g").is_pending_member(first[0].member_id)
    second = h.join("g", member_id=first[0].member_id, require_known=True, client_id="c1")
    assert second[0].error == 0 and second[0].member_id == first[0].member_id and second[0].generation_id == 1


def test_pending_member_expires_after_session_timeout(h: Harness) -> None:
    first = h.join("g", require_known=True, session_ms=6000)
    h.tick(6000)
    assert not h.manager.get_group("g").is_pending_member(first[0].member_id)
    # The group's join does not wait for it any more.
    assert h.join("g", member_id=first[0].member_id)[0].error == ErrorCode.UNKNOWN_MEMBER_ID


def test_second_member_triggers_rebalance_and_leader_assigns(h: Harness) -> None:
    m1, gen1 = h.stable_group("g", "c1")
    pending = h.join("g", client_id="c2", protocols=[("range", b"sub-2")])
    assert pending == [] and state(h, "g") is PR
    assert h.heartbeat_("g", m1, gen1) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoin = h.join("g", member_id=m1, client_id="c1", protocols=[("range", b"sub-1")])
    assert len(rejoin) == 1 and len(pending) == 1
    leader, follower = rejoin[0], pending[0]
    assert leader.generation_id == follower.generation_id == gen1 + 1
    assert leader.leader_id == follower.leader_id == m1
    m2 = follower.member_id
    assert sorted(leader.members) == sorted([(m1, None, b"sub-1"), (m2, None, b"sub-2")])
    assert follower.members == []
    gen2 = leader.generation_id
    follower_sync = h.sync("g", m2, gen2)
    assert follower_sync == [] and state(h, "g") is CR
    leader_sync = h.sync("g", m1, gen2, {m1: b"p0,p1", m2: b"p2,p3"})
    assert [s.assignment for s in leader_sync] == [b"p0,p1"]
    assert [s.assignment for s in follower_sync] == [b"p2,p3"]
    assert state(h, "g") is S
    # A follower rejoining with unchanged metadata in Stable just gets the current generation.
    again = h.join("g", member_id=m2, client_id="c2", protocols=[("range", b"sub-2")])
    assert again[0].error == 0 and again[0].generation_id == gen2 and again[0].members == []
    assert state(h, "g") is S


def test_session_expiry_removes_member_and_rebalances(h: Harness) -> None:
    joined1 = h.join("g", client_id="c1", session_ms=10_000)
    m1 = joined1[0].member_id
    h.sync("g", m1, 1, {m1: b"a"})
    pending = h.join("g", client_id="c2", session_ms=10_000)
    h.join("g", member_id=m1, client_id="c1", session_ms=10_000)
    m2 = pending[0].member_id
    gen = pending[0].generation_id
    h.sync("g", m2, gen)
    h.sync("g", m1, gen, {m1: b"a", m2: b"b"})
    assert state(h, "g") is S
    # m1 keeps heartbeating, m2 goes silent.
    for _ in range(4):
        h.tick(3000)
        assert h.heartbeat_("g", m1, gen) in (0, ErrorCode.REBALANCE_IN_PROGRESS)
    group = h.manager.get_group("g")
    assert not group.has(m2) and group.has(m1)
    assert state(h, "g") is PR
    assert h.heartbeat_("g", m2, gen) == ErrorCode.UNKNOWN_MEMBER_ID
    rejoin = h.join("g", member_id=m1, client_id="c1", session_ms=10_000)
    assert rejoin[0].generation_id == gen + 1 and [m for m, _, _ in rejoin[0].members] == [m1]


def test_last_member_expiry_leaves_group_empty(h: Harness) -> None:
    m1, gen = h.stable_group("g", session_ms=6000)
    h.tick(6001)
    assert state(h, "g") is E
    assert h.manager.get_group("g").generation_id == gen + 1
    # Empty generation written with no members.
    last = h.rm.get_partition(("__consumer_offsets", 0)).log.records()[-1]
    assert last.key == b"\x00\x02\x00\x01g"


def test_rebalance_timeout_removes_member_that_did_not_rejoin(h: Harness) -> None:
    m1, gen = h.stable_group("g", "c1", session_ms=60_000)
    pending = h.join("g", client_id="c2", session_ms=60_000, rebalance_ms=5000)
    assert pending == []
    # m1 heartbeats (REBALANCE_IN_PROGRESS) but never rejoins within the rebalance timeout (30 s).
    for _ in range(10):
        h.tick(3000)
        h.heartbeat_("g", m1, gen)
    h.tick(1000)
    assert len(pending) == 1 and pending[0].error == 0
    group = h.manager.get_group("g")
    assert not group.has(m1) and group.leader_id == pending[0].member_id
    assert pending[0].members == [(pending[0].member_id, None, b"meta-c2")]


def test_pending_sync_expiry_removes_member(h: Harness) -> None:
    m1, gen = h.stable_group("g", "c1", session_ms=60_000)
    pending = h.join("g", client_id="c2", session_ms=60_000, rebalance_ms=30_000)
    h.join("g", member_id=m1, client_id="c1", session_ms=60_000, rebalance_ms=30_000)
    gen2 = pending[0].generation_id
    m2 = pending[0].member_id
    h.sync("g", m1, gen2, {m1: b"x", m2: b"y"})
    assert state(h, "g") is S
    h.tick(30_000)
    group = h.manager.get_group("g")
    assert not group.has(m2) and state(h, "g") is PR


def test_initial_rebalance_delay_collects_members() -> None:
    h = Harness(initial_delay_ms=3000)
    try:
        a = h.join("g", client_id="c1")
        h.tick(1000)
        b = h.join("g", client_id="c2")
        assert a == [] and b == []
        h.tick(2000)
        # The new member extended the wait by another delay.
        assert a == [] and b == []
        h.tick(3000)
        assert len(a) == len(b) == 1 and a[0].generation_id == b[0].generation_id == 1
        assert {m for m, _, _ in (a[0].members or b[0].members)} == {a[0].member_id, b[0].member_id}
    finally:
        h.shutdown()


def test_static_member_rejoin_keeps_generation_and_fences_old_id(h: Harness) -> None:
    first = h.join("g", instance_id="inst-1", client_id="c1")
    old = first[0].member_id
    assert old.startswith("inst-1-")
    h.sync("g", old, 1, {old: b"assigned"}, instance_id="inst-1")
    assert state(h, "g") is S
    # The same instance restarts without its member id: it replaces the old one, no rebalance.
    again = h.join("g", instance_id="inst-1", client_id="c1")
    new = again[0].member_id
    assert again[0].error == 0 and new != old and again[0].generation_id == 1
    assert again[0].leader_id == old and again[0].members == []  # the old leader id: no reassignment
    assert state(h, "g") is S
    assert h.sync("g", new, 1, instance_id="inst-1")[0].assignment == b"assigned"
    assert h.heartbeat_("g", old, 1, instance_id="inst-1") == ErrorCode.FENCED_INSTANCE_ID
    assert h.heartbeat_("g", new, 1, instance_id="inst-1") == 0
    assert h.join("g", member_id=old, instance_id="inst-1")[0].error == ErrorCode.FENCED_INSTANCE_ID


def test_static_leader_rejoin_v9_skips_assignment(h: Harness) -> None:
    first = h.join("g", instance_id="inst-1")
    h.sync("g", first[0].member_id, 1, {first[0].member_id: b"a"}, instance_id="inst-1")
    again = h.join("g", instance_id="inst-1", skip_assignment=True)
    assert again[0].skip_assignment and again[0].leader_id == again[0].member_id
    assert [m for m, _, _ in again[0].members] == [again[0].member_id]


def test_static_member_leave_by_instance_id(h: Harness) -> None:
    first = h.join("g", instance_id="inst-1")
    member = first[0].member_id
    error, results = h.coordinator.handle_leave_group("g", [("", "inst-1", "admin"), ("", "nope", None)])
    assert error == 0 and results == [("", "inst-1", 0), ("", "nope", ErrorCode.UNKNOWN_MEMBER_ID)]
    assert not h.manager.get_group("g").has(member) and state(h, "g") is E


def test_leave_group_triggers_rebalance(h: Harness) -> None:
    m1, gen = h.stable_group("g", "c1")
    pending = h.join("g", client_id="c2")
    h.join("g", member_id=m1, client_id="c1")
    m2, gen2 = pending[0].member_id, pending[0].generation_id
    h.sync("g", m2, gen2)
    h.sync("g", m1, gen2, {m1: b"a", m2: b"b"})
    error, results = h.coordinator.handle_leave_group("g", [(m2, None, "bye"), ("ghost", None, None)])
    assert error == 0 and results == [(m2, None, 0), ("ghost", None, ErrorCode.UNKNOWN_MEMBER_ID)]
    assert state(h, "g") is PR
    rejoin = h.join("g", member_id=m1, client_id="c1")
    assert rejoin[0].generation_id == gen2 + 1 and len(rejoin[0].members) == 1


def test_protocol_selection_by_vote(h: Harness) -> None:
    h.join("g", client_id="c1", protocols=[("range", b"1"), ("roundrobin", b"1")])
    m1 = h.manager.get_group("g").all_members()[0]
    h.sync("g", m1, 1, {m1: b""})
    p2 = h.join("g", client_id="c2", protocols=[("roundrobin", b"2"), ("range", b"2")])
    p3 = h.join("g", client_id="c3", protocols=[("roundrobin", b"3"), ("range", b"3")])
    r1 = h.join("g", member_id=m1, client_id="c1", protocols=[("range", b"1"), ("roundrobin", b"1")])
    assert {r.protocol_name for r in p2 + p3 + r1} == {"roundrobin"}
    # Leader's member metadata is that of the chosen protocol.
    assert (m1, None, b"1") in r1[0].members


def test_protocol_supported_by_all_members_only(h: Harness) -> None:
    h.join("g", client_id="c1", protocols=[("range", b"1"), ("sticky", b"1")])
    m1 = h.manager.get_group("g").all_members()[0]
    h.sync("g", m1, 1, {m1: b""})
    assert h.join("g", client_id="c2", protocols=[("roundrobin", b"2")])[0].error == \
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.join("g", client_id="c3", protocol_type="connect", protocols=[("range", b"3")])[0].error == \
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    p = h.join("g", client_id="c2", protocols=[("sticky", b"2")])
    r = h.join("g", member_id=m1, client_id="c1", protocols=[("range", b"1"), ("sticky", b"1")])
    assert p[0].protocol_name == r[0].protocol_name == "sticky"


def test_join_errors(h: Harness) -> None:
    assert h.join("g", session_ms=5999)[0].error == ErrorCode.INVALID_SESSION_TIMEOUT
    assert h.join("g", session_ms=1_800_001)[0].error == ErrorCode.INVALID_SESSION_TIMEOUT
    assert h.join("", client_id="c")[0].error == ErrorCode.INVALID_GROUP_ID
    assert h.join("nogroup", member_id="someone")[0].error == ErrorCode.UNKNOWN_MEMBER_ID
    m1, _ = h.stable_group("g")
    assert h.join("g", member_id="unknown-member")[0].error == ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_and_heartbeat_errors(h: Harness) -> None:
    m1, gen = h.stable_group("g")
    assert h.sync("g", m1, gen + 1)[0].error == ErrorCode.ILLEGAL_GENERATION
    assert h.sync("g", "ghost", gen)[0].error == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.sync("g", m1, gen, protocol_type="connect")[0].error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync("g", m1, gen, protocol_type="consumer", protocol_name="roundrobin")[0].error == \
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.sync("nogroup", m1, gen)[0].error == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat_("g", m1, gen + 5) == ErrorCode.ILLEGAL_GENERATION
    assert h.heartbeat_("g", "ghost", gen) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat_("g", m1, gen, instance_id="not-registered") == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat_("nogroup", m1, gen) == ErrorCode.UNKNOWN_MEMBER_ID
    # SyncGroup during a rebalance.
    h.join("g", client_id="c2")
    assert h.sync("g", m1, gen)[0].error == ErrorCode.REBALANCE_IN_PROGRESS


def test_not_coordinator_and_load_in_progress() -> None:
    h = Harness(num_partitions=2, load_now=False)
    try:
        group = "g"  # partition_for("g", 2) == 103 % 2 == 1
        assert h.manager.partition_for(group) == 1
        assert h.join(group)[0].error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert h.heartbeat_(group, "m", 1) == 0  # answered blindly while loading
        assert h.sync(group, "m", 1)[0].error == ErrorCode.REBALANCE_IN_PROGRESS
        for load in h.loads:
            load()
        assert h.join(group)[0].error == 0
        h.rm.get_partition(("__consumer_offsets", 1)).is_leader = False
        assert h.coordinator.validate_group_status(group) == 0  # no poll: leadership comes only from the callback
        # Kafka's onLeadershipChange: broker 1 now leads __consumer_offsets-1.
        h.coordinator.on_leader_and_isr(0, [LeaderAndIsrPartitionState(
            "__consumer_offsets", 1, uuid.UUID(int=7), 1, 1, 1, (1, 0), 1, (1, 0))])
        assert h.join(group)[0].error == ErrorCode.NOT_COORDINATOR
        assert h.manager.get_group(group) is None  # unloaded on resignation
    finally:
        h.shutdown()


def test_unload_answers_waiting_joins_not_coordinator() -> None:
    h = Harness(initial_delay_ms=3000)
    try:
        waiting = h.join("g")
        h.rm.get_partition(("__consumer_offsets", 0)).is_leader = False
        h.coordinator.refresh_ownership()
        assert [r.error for r in waiting] == [ErrorCode.NOT_COORDINATOR]
    finally:
        h.shutdown()


def test_group_max_size() -> None:
    h = Harness(group_max_size=1)
    try:
        h.stable_group("g")
        assert h.join("g", client_id="c2")[0].error == ErrorCode.GROUP_MAX_SIZE_REACHED
    finally:
        h.shutdown()


def test_store_group_failure_propagates_to_sync(h: Harness) -> None:
    joined = h.join("g")
    m1 = joined[0].member_id
    h.rm.append_error = ErrorCode.NOT_LEADER_OR_FOLLOWER
    synced = h.sync("g", m1, 1, {m1: b"a"})
    assert synced[0].error == ErrorCode.NOT_COORDINATOR and synced[0].assignment == b""
    assert state(h, "g") is PR
