"""MetadataCache: snapshot replacement, lookups, Metadata answers with Kafka's per-partition errors."""

from __future__ import annotations

import uuid

from kafkapy.cluster.broker import Broker, EndPoint, Node
from kafkapy.cluster.leader_and_isr import LEADER_DURING_DELETE, UpdateMetadataPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition

B0 = Broker(0, (EndPoint("PLAINTEXT", "h0", 9092), EndPoint("INTERNAL", "i0", 9093)), "r0", 5)
B1 = Broker(1, (EndPoint("PLAINTEXT", "h1", 9092),), None, 6)
TID = uuid.UUID("12345678-1234-4234-8234-123456789abc")


def ps(topic: str, p: int, leader: int, replicas=(0, 1), isr=(0, 1), epoch=3) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(topic, p, 1, leader, epoch, tuple(isr), 7, tuple(replicas), ())


def cache_with_topic() -> MetadataCache:
    cache = MetadataCache(0, "cid")
    cache.update_metadata(0, 1, [B1, B0], [ps("t", 0, 0), ps("t", 1, 1, isr=(1,)), ps("__consumer_offsets", 0, 0)],
                          {"t": TID, "__consumer_offsets": uuid.UUID(int=5)})
    return cache


def test_lookups() -> None:
    cache = cache_with_topic()
    assert cache.get_cluster_id() == "cid" and cache.get_controller_id() == 0
    assert [b.id for b in cache.get_alive_brokers()] == [0, 1]
    assert cache.get_alive_broker_nodes() == [Node(0, "h0", 9092, "r0"), Node(1, "h1", 9092, None)]
    assert cache.get_alive_broker_nodes("INTERNAL") == [Node(0, "i0", 9093, "r0")]
    assert cache.get_alive_broker_node(1) == Node(1, "h1", 9092, None)
    assert cache.has_alive_broker(1) and not cache.has_alive_broker(2)
    assert cache.get_all_topics() == {"t", "__consumer_offsets"}
    assert cache.contains_topic("t") and cache.contains(TopicPartition("t", 1)) and not cache.contains(TopicPartition("t", 2))
    assert cache.get_topic_id("t") == TID and cache.get_topic_name(TID) == "t"
    assert cache.num_partitions("t") == 2 and cache.num_partitions("x") is None
    state = cache.get_partition_state(TopicPartition("t", 1))
    assert (state.leader, state.leader_epoch, state.replicas, state.isr, state.partition_epoch) == (1, 3, (0, 1), (1,), 7)
    assert cache.get_partition_leader_endpoint(TopicPartition("t", 1)) == Node(1, "h1", 9092, None)
    assert cache.get_partition_leader_endpoint(TopicPartition("t", 1), "INTERNAL") is None


def test_topic_metadata_all_and_named() -> None:
    cache = cache_with_topic()
    all_md = cache.get_topic_metadata(None)
    assert [(m.name, m.is_internal) for m in all_md] == [("__consumer_offsets", True), ("t", False)]
    [md] = cache.get_topic_metadata(["t", "missing", "t"])
    assert md.topic_id == TID and md.error_code == ErrorCode.NONE
    assert [(p.partition, p.leader, p.leader_epoch, p.replicas, p.isr, p.error_code) for p in md.partitions] == [
        (0, 0, 3, [0, 1], [0, 1], ErrorCode.NONE), (1, 1, 3, [0, 1], [1], ErrorCode.NONE)]


def test_topic_metadata_errors() -> None:
    cache = MetadataCache(0)
    cache.update_metadata(0, 1, [B0], [ps("t", 0, 1), ps("t", 1, 0, replicas=(0, 1), isr=(0, 1))], {"t": TID})
    [md] = cache.get_topic_metadata(["t"])
    p0, p1 = md.partitions
    assert (p0.error_code, p0.leader, p0.leader_epoch) == (ErrorCode.LEADER_NOT_AVAILABLE, -1, 3)
    assert (p1.error_code, p1.replicas, p1.isr) == (ErrorCode.NONE, [0, 1], [0, 1])
    # Metadata v0 drops unavailable replicas and reports REPLICA_NOT_AVAILABLE.
    [md0] = cache.get_topic_metadata(["t"], error_unavailable_endpoints=True)
    assert (md0.partitions[1].error_code, md0.partitions[1].replicas) == (ErrorCode.REPLICA_NOT_AVAILABLE, [0])
    # The leader is alive but lacks the listener.
    cache.update_metadata(0, 1, [B0, B1], [], None)
    [mdl] = cache.get_topic_metadata(["t"], "INTERNAL", error_unavailable_listeners=True)
    assert mdl.partitions[0].error_code == ErrorCode.LISTENER_NOT_FOUND
    [mdl] = cache.get_topic_metadata(["t"], "INTERNAL")
    assert mdl.partitions[0].error_code == ErrorCode.LEADER_NOT_AVAILABLE


def test_snapshots_are_immutable_and_deletion_removes_topic() -> None:
    cache = cache_with_topic()
    before = cache.snapshot()
    deleted = cache.update_metadata(0, 2, None, [ps("t", 0, LEADER_DURING_DELETE), ps("t", 1, LEADER_DURING_DELETE)])
    assert deleted == [TopicPartition("t", 0), TopicPartition("t", 1)]
    assert not cache.contains_topic("t") and cache.get_topic_id("t") is None and cache.get_topic_name(TID) is None
    assert [b.id for b in cache.get_alive_brokers()] == [0, 1]  # None keeps the broker list
    # A reader holding the old snapshot still sees a consistent old world.
    assert "t" in before.partition_states and before.topic_ids["t"] == TID and before.controller_epoch == 1
    assert cache.snapshot().controller_epoch == 2


def test_partial_update_keeps_other_partitions() -> None:
    cache = cache_with_topic()
    cache.update_metadata(0, 1, None, [ps("t", 1, 0, isr=(0,), epoch=4)])
    assert cache.get_partition_state(TopicPartition("t", 0)).leader == 0
    assert cache.get_partition_state(TopicPartition("t", 1)).leader_epoch == 4
    assert cache.get_topic_id("t") == TID


def test_readers_never_see_half_applied_updates() -> None:
    import threading

    cache = MetadataCache(0)
    stop = threading.Event()
    problems: list[str] = []

    def reader() -> None:
        for _ in range(20_000):
            if stop.is_set():
                return
            snap = cache.snapshot()
            for name, parts in snap.partition_states.items():
                if snap.topic_ids.get(name) is None or len(parts) != 3:
                    problems.append(name)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(300):
        name = f"t{i}"
        cache.update_metadata(0, 1, [B0], [ps(name, p, 0) for p in range(3)], {name: uuid.uuid4()})
        if i % 2:
            cache.update_metadata(0, 1, None, [ps(name, p, LEADER_DURING_DELETE) for p in range(3)])
    stop.set()
    for t in threads:
        t.join(10)
    assert problems == []
    assert len(cache.get_all_topics()) == 150
