"""Controller decisions with several registered brokers (the others only receive callbacks): broker failure
and return, AlterPartition, preferred / unclean elections, controlled shutdown."""

from __future__ import annotations

import pytest
from controller_harness import TIMEOUT, Harness

from kafkapy.cluster.broker import Broker
from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.common.errors import (
    ElectionNotNeededError,
    ErrorCode,
    FencedLeaderEpochError,
    IneligibleReplicaError,
    InvalidRequestError,
    InvalidUpdateVersionError,
    StaleBrokerEpochError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_events import AlterPartitionItem, ElectionType

T0, T1, T2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)


@pytest.fixture
def h(tmp_path):
    harness = Harness(str(tmp_path), broker_ids=(0, 1, 2))
    res = harness.create(("t", -1, -1, {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}, {}))
    assert res["t"].error is None
    yield harness
    harness.stop()


def sync(h: Harness) -> None:
    """Wait until every event queued so far (e.g. a BrokerChange from the store watch) is processed."""
    h.controller.elect_leaders([]).result(TIMEOUT)


def leadership(h: Harness, tp: TopicPartition) -> LeaderAndIsr:
    return h.store.get_partition_states(tp.topic)[tp.partition].leader_and_isr


def sent_to(h: Harness, broker_id: int) -> list[tuple]:
    return [(s.partition, s.leader, s.leader_epoch, s.isr) for b, _, states in h.rec.leader_and_isr
            if b == broker_id for s in states]


def test_new_topic_sent_to_every_replica(h: Harness) -> None:
    for b in (0, 1, 2):
        assert sorted(sent_to(h, b)) == [(0, 0, 0, (0, 1, 2)), (1, 1, 0, (1, 2, 0)), (2, 2, 0, (2, 0, 1))]


def test_broker_failure_moves_leaders_and_shrinks_isr(h: Harness) -> None:
    h.rec.leader_and_isr.clear()
    h.store.unregister_broker(1)
    sync(h)
    assert leadership(h, T1) == LeaderAndIsr(2, 1, (2, 0), partition_epoch=1)
    assert leadership(h, T0) == LeaderAndIsr(0, 1, (0, 2), partition_epoch=1)
    assert leadership(h, T2) == LeaderAndIsr(2, 1, (2, 0), partition_epoch=1)
    assert sent_to(h, 1) == []
    assert sorted(sent_to(h, 0)) == [(0, 0, 1, (0, 2)), (1, 2, 1, (2, 0)), (2, 2, 1, (2, 0))]
    assert [b.id for b in h.cache.get_alive_brokers()] == [0, 1, 2][::2]
    state = h.cache.get_partition_state(T1)
    assert (state.leader, state.leader_epoch, state.isr, state.offline_replicas) == (2, 1, (2, 0), (1,))
    [md] = h.cache.get_topic_metadata(["t"])
    assert md.partitions[1].error_code == ErrorCode.NONE  # all replicas listed (v1+), ISR is what it is

    # Broker 1 comes back: it is told the current leadership of its partitions; the ISR waits for leaders.
    h.rec.leader_and_isr.clear()
    h.store.register_broker(Broker.simple(1, "127.0.0.1", 9093), 2)
    sync(h)
    assert sorted(sent_to(h, 1)) == [(0, 0, 1, (0, 2)), (1, 2, 1, (2, 0)), (2, 2, 1, (2, 0))]
    assert [b.id for b in h.cache.get_alive_brokers()] == [0, 1, 2]
    assert h.cache.get_partition_state(T1).offline_replicas == ()


def test_alter_partition(h: Harness) -> None:
    epochs = {b.id: b.epoch for b in h.store.get_brokers().values()}
    cur = leadership(h, T0)
    shrink = AlterPartitionItem(T0, LeaderAndIsr(0, cur.leader_epoch, (0, 1), partition_epoch=cur.partition_epoch))
    res = h.controller.alter_partition(0, epochs[0], [shrink]).result(TIMEOUT)
    assert res[T0] == LeaderAndIsr(0, 0, (0, 1), partition_epoch=1)
    assert leadership(h, T0) == res[T0]
    assert h.cache.get_partition_state(T0).isr == (0, 1)
    # A retry of the same request is answered with the current state.
    assert h.controller.alter_partition(0, epochs[0], [shrink]).result(TIMEOUT)[T0] == res[T0]

    stale = AlterPartitionItem(T0, LeaderAndIsr(0, 0, (0,), partition_epoch=0))
    fenced = AlterPartitionItem(T1, LeaderAndIsr(1, -1, (1,), partition_epoch=0))
    outsider = AlterPartitionItem(T2, LeaderAndIsr(2, 0, (2, 0, 1, 7), partition_epoch=0))
    missing = AlterPartitionItem(TopicPartition("nope", 0), LeaderAndIsr(0, 0, (0,)))
    res = h.controller.alter_partition(0, epochs[0], [stale, fenced, outsider, missing]).result(TIMEOUT)
    assert isinstance(res[T0], InvalidUpdateVersionError)
    assert isinstance(res[T1], FencedLeaderEpochError)
    assert isinstance(res[T2], InvalidRequestError)  # broker 0 does not lead t-2
    assert isinstance(res[TopicPartition("nope", 0)], UnknownTopicOrPartitionError)
    res = h.controller.alter_partition(2, epochs[2], [outsider]).result(TIMEOUT)
    assert isinstance(res[T2], IneligibleReplicaError)
    with pytest.raises(StaleBrokerEpochError):
        h.controller.alter_partition(0, epochs[0] - 100, [shrink]).result(TIMEOUT)


def test_preferred_election_and_controlled_shutdown(h: Harness) -> None:
    res = h.controller.elect_leaders([T0, TopicPartition("t", 9)], ElectionType.PREFERRED).result(TIMEOUT)
    assert isinstance(res[T0], ElectionNotNeededError)
    assert isinstance(res[TopicPartition("t", 9)], UnknownTopicOrPartitionError)

    remaining = h.controller.controlled_shutdown(1).result(TIMEOUT)
    assert remaining == set()
    assert leadership(h, T1) == LeaderAndIsr(2, 1, (2, 0), partition_epoch=1)  # led by 1: moved to 2
    assert leadership(h, T0).isr == (0, 2) and leadership(h, T2).isr == (2, 0)
    assert {p.partition for b, _, parts in h.rec.stop_replica if b == 1 for p in parts} == {0, 2}

    # Broker 1 restarts (new registration, new epoch) and catches up; its leader adds it back to the ISR.
    h.store.register_broker(Broker.simple(1, "127.0.0.1", 9093), 3)
    sync(h)
    cur = leadership(h, T1)
    grow = AlterPartitionItem(T1, LeaderAndIsr(2, cur.leader_epoch, (2, 0, 1), partition_epoch=cur.partition_epoch))
    assert h.controller.alter_partition(2, -1, [grow]).result(TIMEOUT)[T1].isr == (2, 0, 1)
    res = h.controller.elect_leaders(None, ElectionType.PREFERRED).result(TIMEOUT)
    assert res[T1] is None
    assert leadership(h, T1).leader == 1 and leadership(h, T1).leader_epoch == 2


def test_offline_partition_and_unclean_election(tmp_path) -> None:
    h = Harness(str(tmp_path), broker_ids=(0, 1))
    try:
        h.create(("u", -1, -1, {0: [1, 0]}, {}))
        tp = TopicPartition("u", 0)
        cur = leadership(h, tp)
        item = AlterPartitionItem(tp, LeaderAndIsr(1, 0, (1,), partition_epoch=cur.partition_epoch))
        h.controller.alter_partition(1, -1, [item]).result(TIMEOUT)
        h.store.unregister_broker(1)
        sync(h)
        # No live replica in the ISR and unclean election disabled: leaderless, ISR keeps the last member.
        assert leadership(h, tp) == LeaderAndIsr(-1, 1, (1,), partition_epoch=2)
        [md] = h.cache.get_topic_metadata(["u"])
        assert (md.partitions[0].error_code, md.partitions[0].leader) == (ErrorCode.LEADER_NOT_AVAILABLE, -1)
        # Turning unclean election on for the topic elects the out-of-sync replica.
        h.controller.alter_topic_configs("u", {"unclean.leader.election.enable": "true"}).result(TIMEOUT)
        assert leadership(h, tp) == LeaderAndIsr(0, 2, (0,), partition_epoch=3)
        assert h.cache.get_partition_state(tp).leader == 0
    finally:
        h.stop()


def test_unclean_election_request(tmp_path) -> None:
    h = Harness(str(tmp_path), broker_ids=(0, 1))
    try:
        h.create(("u", -1, -1, {0: [1, 0]}, {}))
        tp = TopicPartition("u", 0)
        cur = leadership(h, tp)
        item = AlterPartitionItem(tp, LeaderAndIsr(1, 0, (1,), partition_epoch=cur.partition_epoch))
        h.controller.alter_partition(1, -1, [item]).result(TIMEOUT)
        res = h.controller.elect_leaders([tp], ElectionType.UNCLEAN).result(TIMEOUT)
        assert isinstance(res[tp], ElectionNotNeededError)
        h.store.unregister_broker(1)
        sync(h)
        res = h.controller.elect_leaders([tp], ElectionType.UNCLEAN).result(TIMEOUT)
        assert res[tp] is None and leadership(h, tp).leader == 0 and leadership(h, tp).isr == (0,)
    finally:
        h.stop()


def test_rack_aware_creation(tmp_path) -> None:
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    h = Harness(str(tmp_path), broker_ids=(0, 1, 2, 3), racks=racks)
    try:
        res = h.create(("r", 8, 2, None, {}))["r"]
        assert res.error is None
        for replicas in res.assignment.values():
            assert {racks[b] for b in replicas} == {"a", "b"}
    finally:
        h.stop()
