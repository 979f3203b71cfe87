"""Followers replicate through incremental fetch sessions (KIP-227): three in-process brokers (the test acting
as the controller), one busy partition beside 200 idle ones, RF 3, all led by broker 0. Each follower keeps
one privileged session on the leader across acks=all produces (same id, epochs moving on); while the busy
partition takes records, the leader reads no idle partition for the followers; replicas end byte-identical."""

from __future__ import annotations

import threading
import time

import pytest
from replication_harness import InProcessCluster, log_bytes_below

from kafkapy.common.topic_partition import TopicPartition

IDLE = 200
BUSY = TopicPartition("busy", 0)


def wait_until(cond, timeout_s: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = InProcessCluster(str(tmp_path_factory.mktemp("sessions")), 3)
    yield c
    c.close()


def follower_sessions(cluster: InProcessCluster) -> list:
    cache = cluster.servers[0].replica_manager.fetch_session_cache
    return [s for sid in list(cache._sessions) if (s := cache.get(sid)) is not None and s.privileged]


def test_followers_replicate_through_sessions_reading_only_what_changed(cluster) -> None:
    from confluent_kafka import Producer

    ctl = cluster.controller
    ctl.create_topic("idle", {p: [0, 1, 2] for p in range(IDLE)})
    ctl.create_topic("busy", {0: [0, 1, 2]})
    leader_rm = cluster.servers[0].replica_manager
    wait_until(lambda: len(follower_sessions(cluster)) == 2
               and all(s.size == IDLE + 1 for s in follower_sessions(cluster)), what="both followers' sessions")
    sessions = {s.id: s for s in follower_sessions(cluster)}
    # Settled: each session's first incremental fetches have read what its creation touched.
    start_epochs = {sid: s.epoch for sid, s in sessions.items()}
    wait_until(lambda: all(not s.touched() and s.epoch > start_epochs[sid] + 3 for sid, s in sessions.items()),
               what="the sessions to settle")
    epochs = {sid: s.epoch for sid, s in sessions.items()}
    leader_rm.fetch_manager.sweep_interval_ms = 10**9  # no periodic sweep inside this test's window

    reads: list[tuple[int, TopicPartition]] = []
    lock = threading.Lock()
    original = leader_rm._read_partition

    def counting(tp, info, params, max_bytes, min_one_message):
        if params.is_from_follower:
            with lock:
                reads.append((params.replica_id, tp))
        return original(tp, info, params, max_bytes, min_one_message)

    leader_rm._read_partition = counting
    try:
        producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0})
        offsets: list[int] = []
        for i in range(50):
            producer.produce("busy", value=b"r%03d" % i, partition=0,
                             on_delivery=lambda err, msg: offsets.append(-1 if err else msg.offset()))
            assert producer.flush(10) == 0
    finally:
        leader_rm._read_partition = original
    assert offsets == list(range(50))

    # Same sessions, moved on; every follower read was of the busy partition.
    assert {s.id for s in follower_sessions(cluster)} == set(sessions)
    assert all(sessions[sid].epoch > epochs[sid] + 10 for sid in sessions)
    assert reads and {tp for _, tp in reads} == {BUSY} and {r for r, _ in reads} == {1, 2}

    for b in (0, 1, 2):
        wait_until(lambda b=b: cluster.servers[b].replica_manager.get_partition(BUSY).high_watermark == 50,
                   what=f"broker {b}'s HW")
    expected = log_bytes_below(cluster.servers[0], BUSY, 50)
    assert log_bytes_below(cluster.servers[1], BUSY, 50) == expected == log_bytes_below(cluster.servers[2], BUSY, 50)
    # Idle partitions stayed in every ISR.
    for p in (0, IDLE // 2, IDLE - 1):
        assert leader_rm.get_partition(TopicPartition("idle", p)).isr == (0, 1, 2) or \
            sorted(leader_rm.get_partition(TopicPartition("idle", p)).isr) == [0, 1, 2]


def test_followers_open_new_sessions_after_theirs_are_lost(cluster) -> None:
    """A session gone from the leader's cache (evicted, or the leader restarted): the follower's next incremental
    fetch gets FETCH_SESSION_ID_NOT_FOUND, it starts over with a full fetch and keeps replicating."""
    from confluent_kafka import Producer

    cache = cluster.servers[0].replica_manager.fetch_session_cache
    wait_until(lambda: len(follower_sessions(cluster)) == 2, what="both followers' sessions")
    old = {s.id for s in follower_sessions(cluster)}
    for sid in old:
        cache.remove(sid)
    wait_until(lambda: len(follower_sessions(cluster)) == 2 and not old & {s.id for s in follower_sessions(cluster)},
               what="new sessions")
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0})
    offsets: list[int] = []
    for i in range(5):
        producer.produce("busy", value=b"after-%d" % i, partition=0,
                         on_delivery=lambda err, msg: offsets.append(-1 if err else msg.offset()))
    assert producer.flush(10) == 0
    assert offsets == list(range(50, 55))
    for b in (1, 2):
        wait_until(lambda b=b: cluster.servers[b].replica_manager.get_partition(BUSY).log_end_offset == 55,
                   what=f"broker {b} to replicate")
