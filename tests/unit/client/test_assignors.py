"""Assignors (range, roundrobin, sticky, cooperative-sticky) and the consumer protocol bytes."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkapy.client.assignors import RebalanceProtocol, assignor_for, assignors_for
from kafkapy.client.assignors.consumer_protocol import (
    Assignment,
    ConsumerProtocolError,
    Subscription,
    decode_sticky_user_data,
    deserialize_assignment,
    deserialize_subscription,
    encode_sticky_user_data,
    serialize_assignment,
    serialize_subscription,
)
from kafkapy.client.assignors.cooperative_sticky import CooperativeStickyAssignor
from kafkapy.client.assignors.range import RangeAssignor
from kafkapy.client.assignors.round_robin import RoundRobinAssignor
from kafkapy.client.assignors.sticky import StickyAssignor
from kafkapy.common.topic_partition import TopicPartition as TP


def subs(**members: list[str]) -> dict[str, Subscription]:
    return {m: Subscription(list(topics)) for m, topics in members.items()}


def result(assignments: dict[str, Assignment]) -> dict[str, list[str]]:
    return {m: sorted(str(tp) for tp in a.partitions) for m, a in assignments.items()}


def counts(assignments: dict[str, Assignment]) -> dict[str, int]:
    return {m: len(a.partitions) for m, a in assignments.items()}


def all_assigned(assignments: dict[str, Assignment]) -> list[TP]:
    return sorted(tp for a in assignments.values() for tp in a.partitions)


# --------------------------------------------------------------------------------------------------
# registry


@pytest.mark.parametrize("spec,name", [
    ("range", "range"), ("org.apache.kafka.clients.consumer.RangeAssignor", "range"),
    ("roundrobin", "roundrobin"), ("org.apache.kafka.clients.consumer.RoundRobinAssignor", "roundrobin"),
    ("sticky", "sticky"), ("org.apache.kafka.clients.consumer.StickyAssignor", "sticky"),
    ("cooperative-sticky", "cooperative-sticky"),
    ("org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "cooperative-sticky"),
])
def test_assignor_names(spec: str, name: str) -> None:
    assert assignor_for(spec).name == name


def test_assignor_registry_rejects_unknown_and_duplicates() -> None:
    with pytest.raises(ValueError, match="partition.assignment.strategy"):
        assignor_for("org.example.Nope")
    with pytest.raises(ValueError, match="more than one assignor"):
        assignors_for(["range", "org.apache.kafka.clients.consumer.RangeAssignor"])
    assert [a.name for a in assignors_for(["range", "cooperative-sticky"])] == ["range", "cooperative-sticky"]
    assert CooperativeStickyAssignor().supported_protocols()[0] is RebalanceProtocol.COOPERATIVE
    assert RangeAssignor().supported_protocols() == [RebalanceProtocol.EAGER]


# --------------------------------------------------------------------------------------------------
# range


def test_range_same_size_topics_favour_first_members() -> None:
    # Kafka's documented imbalance: each topic is split independently, the first member gets every extra.
    out = RangeAssignor().assign({"t0": 3, "t1": 3}, subs(c0=["t0", "t1"], c1=["t0", "t1"]))
    assert result(out) == {"c0": ["t0-0", "t0-1", "t1-0", "t1-1"], "c1": ["t0-2", "t1-2"]}


def test_range_uneven_topics_and_subscriptions() -> None:
    out = RangeAssignor().assign(
        {"a": 5, "b": 2, "c": 1},
        subs(m3=["a", "b"], m1=["a"], m2=["a", "b", "c", "missing"]),
    )
    # a: 5 over [m1, m2, m3] -> 2, 2, 1; b: 2 over [m2, m3] -> 1, 1; c: 1 over [m2].
    assert result(out) == {"m1": ["a-0", "a-1"], "m2": ["a-2", "a-3", "b-0", "c-0"], "m3": ["a-4", "b-1"]}


def test_range_more_members_than_partitions_and_static_members_first() -> None:
    s = subs(a=["t"], b=["t"], c=["t"])
    s["c"].group_instance_id = "instance-1"  # static members sort before dynamic ones
    out = RangeAssignor().assign({"t": 2}, s)
    assert result(out) == {"a": ["t-1"], "b": [], "c": ["t-0"]}


# --------------------------------------------------------------------------------------------------
# roundrobin


def test_round_robin_kafka_examples() -> None:
    out = RoundRobinAssignor().assign({"t0": 3, "t1": 3}, subs(C0=["t0", "t1"], C1=["t0", "t1"]))
    assert result(out) == {"C0": ["t0-0", "t0-2", "t1-1"], "C1": ["t0-1", "t1-0", "t1-2"]}
    out = RoundRobinAssignor().assign(
        {"t0": 1, "t1": 2, "t2": 3}, subs(C0=["t0"], C1=["t0", "t1"], C2=["t0", "t1", "t2"]))
    assert result(out) == {"C0": ["t0-0"], "C1": ["t1-0"], "C2": ["t1-1", "t2-0", "t2-1", "t2-2"]}


def test_round_robin_uneven_topics_balanced_within_one() -> None:
    out = RoundRobinAssignor().assign({"a": 7, "b": 2, "c": 4}, subs(x=["a", "b", "c"], y=["c", "a", "b"],
                                                                     z=["a", "b", "c"]))
    # Dealt in (topic, partition) order over x, y, z.
    assert result(out) == {"x": ["a-0", "a-3", "a-6", "c-0", "c-3"], "y": ["a-1", "a-4", "b-0", "c-1"],
                           "z": ["a-2", "a-5", "b-1", "c-2"]}


# --------------------------------------------------------------------------------------------------
# sticky


def test_sticky_initial_assignment_matches_kafka_doc() -> None:
    topics = ["t0", "t1", "t2", "t3"]
    out = StickyAssignor().assign({t: 2 for t in topics}, subs(C0=topics, C1=topics, C2=topics))
    assert result(out) == {"C0": ["t0-0", "t1-1", "t3-0"], "C1": ["t0-1", "t2-0", "t3-1"], "C2": ["t1-0", "t2-1"]}


def sticky_member(assignor: StickyAssignor, topics: list[str], owned: list[TP], generation: int) -> Subscription:
    assignor.on_assignment(Assignment(owned), generation)
    return Subscription(topics, user_data=assignor.subscription_user_data(set(topics)))


def test_sticky_keeps_partitions_when_a_member_leaves() -> None:
    topics = ["t0", "t1", "t2", "t3"]
    first = StickyAssignor().assign({t: 2 for t in topics}, subs(C0=topics, C1=topics, C2=topics))
    members = {m: sticky_member(StickyAssignor(), topics, first[m].partitions, 1) for m in ("C0", "C2")}
    out = StickyAssignor().assign({t: 2 for t in topics}, members)
    assert counts(out) == {"C0": 4, "C2": 4}
    for m in ("C0", "C2"):
        assert set(first[m].partitions) <= set(out[m].partitions)  # nobody lost a partition it had
    assert all_assigned(out) == sorted(TP(t, p) for t in topics for p in range(2))


def test_sticky_ignores_stale_generation_claims() -> None:
    members = {
        "a": sticky_member(StickyAssignor(), ["t"], [TP("t", 0), TP("t", 1)], 5),
        "b": sticky_member(StickyAssignor(), ["t"], [TP("t", 0), TP("t", 2), TP("t", 3)], 4),
    }
    out = StickyAssignor().assign({"t": 4}, members)
    assert result(out) == {"a": ["t-0", "t-1"], "b": ["t-2", "t-3"]}


def test_sticky_uneven_subscriptions_general_case() -> None:
    # c0 can only take t0; c1 and c2 also read t1 (6 partitions): balanced is 3/3/3 with t0 on c0.
    out = StickyAssignor().assign({"t0": 3, "t1": 6}, subs(c0=["t0"], c1=["t0", "t1"], c2=["t0", "t1"]))
    assert counts(out) == {"c0": 3, "c1": 3, "c2": 3}
    assert result(out)["c0"] == ["t0-0", "t0-1", "t0-2"]
    # Now c1 owned all of t1 and c2 nothing: the rebalance keeps c1's partitions where balance allows.
    a = StickyAssignor()
    members = {
        "c0": sticky_member(StickyAssignor(), ["t0"], [TP("t0", 0)], 3),
        "c1": sticky_member(StickyAssignor(), ["t0", "t1"], [TP("t1", p) for p in range(6)], 3),
        "c2": sticky_member(StickyAssignor(), ["t0", "t1"], [], 3),
    }
    out = a.assign({"t0": 3, "t1": 6}, members)
    assert counts(out) == {"c0": 3, "c1": 3, "c2": 3}
    assert TP("t0", 0) in out["c0"].partitions
    assert len(set(out["c1"].partitions) & {TP("t1", p) for p in range(6)}) == 3


def test_sticky_user_data_round_trip() -> None:
    data = encode_sticky_user_data([TP("b", 1), TP("a", 0), TP("a", 2)], 7)
    # [topic [partition]] generation, topics in order, partitions sorted
    assert data == (struct.pack(">i", 2) + struct.pack(">h", 1) + b"a" + struct.pack(">iii", 2, 0, 2)
                    + struct.pack(">h", 1) + b"b" + struct.pack(">ii", 1, 1) + struct.pack(">i", 7))
    assert decode_sticky_user_data(data) == ([TP("a", 0), TP("a", 2), TP("b", 1)], 7)
    assert decode_sticky_user_data(data[:-4]) == ([TP("a", 0), TP("a", 2), TP("b", 1)], None)
    with pytest.raises(ConsumerProtocolError):
        decode_sticky_user_data(b"\x00\x00\x00\x05\x00")


# --------------------------------------------------------------------------------------------------
# cooperative-sticky


def coop(topics: list[str], owned: list[TP], generation: int) -> Subscription:
    return Subscription(topics, owned_partitions=list(owned), generation_id=generation)


def test_cooperative_rebalance_revokes_only_moved_partitions() -> None:
    t = [TP("t", p) for p in range(6)]
    # Round 1 (generation 1): two members share six partitions.
    first = CooperativeStickyAssignor().assign({"t": 6}, {"a": coop(["t"], [], -1), "b": coop(["t"], [], -1)})
    owned = {m: list(first[m].partitions) for m in first}
    assert counts(first) == {"a": 3, "b": 3}
    # Round 2: c joins. Nobody gets a partition another member still owns.
    members = {m: coop(["t"], owned[m], 1) for m in ("a", "b")} | {"c": coop(["t"], [], -1)}
    second = CooperativeStickyAssignor().assign({"t": 6}, members)
    revoked = {m: set(owned[m]) - set(second[m].partitions) for m in ("a", "b")}
    assert second["c"].partitions == []
    assert counts(second) == {"a": 2, "b": 2, "c": 0}
    assert all(len(r) == 1 for r in revoked.values())  # each gives up exactly one partition
    for m in ("a", "b"):
        assert set(second[m].partitions) <= set(owned[m])  # nothing else moves
    # Round 3: a and b revoked, rejoin owning two each; c now receives exactly the revoked ones.
    members = {m: coop(["t"], second[m].partitions, 2) for m in ("a", "b")} | {"c": coop(["t"], [], 2)}
    third = CooperativeStickyAssignor().assign({"t": 6}, members)
    assert set(third["c"].partitions) == revoked["a"] | revoked["b"]
    for m in ("a", "b"):
        assert third[m].partitions == second[m].partitions
    assert all_assigned(third) == t


def test_cooperative_general_case_withholds_moving_partitions() -> None:
    # Different subscriptions -> general algorithm; x owned everything, y joins and may read t1 only.
    members = {
        "x": coop(["t0", "t1"], [TP("t0", 0), TP("t0", 1), TP("t1", 0), TP("t1", 1)], 3),
        "y": coop(["t1"], [], -1),
    }
    out = CooperativeStickyAssignor().assign({"t0": 2, "t1": 2}, members)
    # Balanced is x: t0, y: t1; t1 must first be revoked from x, so y gets nothing this round.
    assert out["y"].partitions == []
    assert result(out)["x"] == ["t0-0", "t0-1"]
    members = {"x": coop(["t0", "t1"], out["x"].partitions, 4), "y": coop(["t1"], [], 4)}
    assert result(CooperativeStickyAssignor().assign({"t0": 2, "t1": 2}, members)) == {
        "x": ["t0-0", "t0-1"], "y": ["t1-0", "t1-1"]}


def test_cooperative_user_data_is_generation() -> None:
    a = CooperativeStickyAssignor()
    assert a.subscription_user_data({"t"}) == struct.pack(">i", -1)
    a.on_assignment(Assignment([TP("t", 0)]), 9)
    assert a.subscription_user_data({"t"}) == struct.pack(">i", 9)
    # v0/v1 subscriptions carry the generation only in user data
    assert a.member_data(Subscription(["t"], struct.pack(">i", 4), [TP("t", 1)])) == ([TP("t", 1)], 4)


# --------------------------------------------------------------------------------------------------
# consumer protocol bytes


def test_subscription_bytes_v3_and_round_trip() -> None:
    sub = Subscription(["b", "a"], b"ud", [TP("b", 1), TP("a", 3), TP("a", 0)], 12, "rack1")
    data = serialize_subscription(sub)
    expected = (struct.pack(">h", 3)
                + struct.pack(">i", 2) + struct.pack(">h", 1) + b"a" + struct.pack(">h", 1) + b"b"
                + struct.pack(">i", 2) + b"ud"
                + struct.pack(">i", 2)
                + struct.pack(">h", 1) + b"a" + struct.pack(">iii", 2, 0, 3)
                + struct.pack(">h", 1) + b"b" + struct.pack(">ii", 1, 1)
                + struct.pack(">i", 12)
                + struct.pack(">h", 5) + b"rack1")
    assert data == expected
    back = deserialize_subscription(data)
    assert back.topics == ["a", "b"] and back.user_data == b"ud" and back.generation_id == 12
    assert back.owned_partitions == [TP("a", 0), TP("a", 3), TP("b", 1)] and back.rack_id == "rack1"
    v0 = serialize_subscription(sub, 0)
    assert v0 == struct.pack(">hi", 0, 2) + struct.pack(">h", 1) + b"a" + struct.pack(">h", 1) + b"b" \
        + struct.pack(">i", 2) + b"ud"
    assert deserialize_subscription(v0).owned_partitions == []
    # A newer version is read as ours (fields are only ever appended).
    assert deserialize_subscription(struct.pack(">h", 9) + data[2:] + b"extra").topics == ["a", "b"]
    with pytest.raises(ConsumerProtocolError):
        deserialize_subscription(b"\x00")


def test_assignment_bytes_and_round_trip() -> None:
    data = serialize_assignment(Assignment([TP("t", 2), TP("s", 0), TP("t", 0)]))
    assert data == (struct.pack(">hi", 3, 2) + struct.pack(">h", 1) + b"s" + struct.pack(">ii", 1, 0)
                    + struct.pack(">h", 1) + b"t" + struct.pack(">iii", 2, 0, 2) + struct.pack(">i", -1))
    assert deserialize_assignment(data).partitions == [TP("s", 0), TP("t", 0), TP("t", 2)]
    assert deserialize_assignment(b"").partitions == []
    assert deserialize_assignment(data[:2] + data[2:]).user_data is None


# --------------------------------------------------------------------------------------------------
# properties over random groups


@st.composite
def groups(draw):
    topics = {f"t{i}": draw(st.integers(1, 6)) for i in range(draw(st.integers(1, 4)))}
    names = sorted(topics)
    n = draw(st.integers(1, 5))
    members = {}
    all_tps = [TP(t, p) for t in names for p in range(topics[t])]
    for i in range(n):
        subscribed = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        owned = draw(st.lists(st.sampled_from(all_tps), unique=True, max_size=4))
        members[f"m{i}"] = (subscribed, owned)
    return topics, members


@settings(max_examples=150, deadline=None)
@given(groups(), st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky"]))
def test_every_assignor_gives_each_partition_to_one_subscriber(group, name) -> None:
    topics, members = group
    subs_ = {m: Subscription(t, owned_partitions=[tp for tp in o if tp.topic in t], generation_id=1)
             for m, (t, o) in members.items()}
    out = assignor_for(name).assign(topics, subs_)
    seen: list[TP] = []
    for m, a in out.items():
        for tp in a.partitions:
            assert tp.topic in subs_[m].topics
        seen += a.partitions
    assert len(seen) == len(set(seen))
    wanted = {TP(t, p) for t in {t for s in subs_.values() for t in s.topics} for p in range(topics[t])}
    if name != "cooperative-sticky":
        assert set(seen) == wanted
    else:  # withheld partitions are exactly those another member must revoke first
        owners = {tp: m for m, s in subs_.items() for tp in s.owned_partitions}
        for tp in wanted - set(seen):
            assert tp in owners and tp not in out[owners[tp]].partitions
    if name == "sticky":
        loads = {m: len(a.partitions) for m, a in out.items()}
        for m, a in out.items():  # no single move from a member to one holding two fewer
            for tp in a.partitions:
                assert all(loads[o] + 1 >= loads[m] for o in subs_ if tp.topic in subs_[o].topics)
        if len({frozenset(s.topics) for s in subs_.values()}) == 1:
            assert max(loads.values()) - min(loads.values()) <= 1
