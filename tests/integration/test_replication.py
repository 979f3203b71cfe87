"""Replication between in-process brokers, the test acting as the controller (LeaderAndIsr / UpdateMetadata /
StopReplica over the wire, ISR proposals answered by tests/integration/replication_harness.TestController):
followers catch up with byte-identical segments, the HW, acks=all with min.insync.replicas, ISR shrink and
expansion, truncation to the leader's epoch boundary through OffsetForLeaderEpoch after a leader change,
fencing of a stale controller, fetch from the leader only, and throttled catch-up. Produced with
confluent-kafka (librdkafka)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError as CKError
from confluent_kafka import Producer
from replication_harness import InProcessCluster, log_bytes_below

from kafkapy.client.connection import BrokerConnection
from kafkapy.cluster.partition import FetchIsolation
from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import FetchRequest, ProduceRequest
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.replica_fetcher_manager import fetcher_id_for

WAIT_S = 20.0


def wait_until(cond, timeout_s: float = WAIT_S, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def produce(bootstrap: str, topic: str, n: int, start: int = 0, acks: str = "all", partition: int = 0,
            **conf) -> list:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 5,
                         "message.timeout.ms": 15000, **conf})
    reports: list = []

    def on_delivery(err, msg) -> None:
        reports.append((err, msg.offset() if err is None else -1, msg.key()))

    for i in range(start, start + n):
        producer.produce(topic, key=b"k%d" % i, value=b"v%06d" % i, partition=partition, on_delivery=on_delivery)
        if i % 1000 == 999:
            producer.poll(0)
    assert producer.flush(30) == 0
    return reports


def values(server, tp: TopicPartition, start: int = 0, end: int | None = None) -> list[bytes]:
    partition = server.replica_manager.get_partition(tp)
    data = b""
    info = partition.read_records(start, 1 << 26, FetchIsolation.LOG_END, fetch_only_from_leader=False)
    if info.fetched_data.records is not None:
        data = info.fetched_data.records.read_bytes()
    out = [r.value for b in MemoryRecords(data).batches() for r in b.records()]
    return out if end is None else out[:end - start]


def caught_up(cluster: InProcessCluster, tp: TopicPartition, brokers, end: int) -> bool:
    for b in brokers:
        p = cluster.servers[b].replica_manager.get_partition(tp)
        if p is None or p.log_end_offset != end or p.high_watermark != end:
            return False
    return True


def assert_same_bytes(cluster: InProcessCluster, tp: TopicPartition, leader: int, followers, hw: int) -> None:
    expected = log_bytes_below(cluster.servers[leader], tp, hw)
    assert len(expected) > 0
    for f in followers:
        assert log_bytes_below(cluster.servers[f], tp, hw) == expected


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = InProcessCluster(str(tmp_path_factory.mktemp("replication")), 3, {"num.replica.fetchers": "2"})
    yield c
    c.close()


def test_followers_catch_up_byte_identical(cluster) -> None:
    ctl = cluster.controller
    ctl.create_topic("rep3", {0: [0, 1, 2], 1: [1, 2, 0], 2: [0, 1, 2], 3: [0, 1, 2]})
    reports = produce(cluster.bootstrap, "rep3", 3000)
    assert [e for e, _, _ in reports if e is not None] == []
    assert sorted(o for _, o, _ in reports) == list(range(3000))
    tp = TopicPartition("rep3", 0)
    wait_until(lambda: caught_up(cluster, tp, [0, 1, 2], 3000), what="followers at the leader's end and HW")
    assert_same_bytes(cluster, tp, 0, [1, 2], 3000)
    assert values(cluster.servers[2], tp)[:2] == [b"v000000", b"v000001"]
    # Leaders never asked for an ISR change: the followers were in sync all along.
    assert [p for p in ctl.proposals if p[0].topic == "rep3"] == []
    # num.replica.fetchers=2: broker 1 fetches the three partitions led by broker 0 on two threads, by
    # Kafka's abs(31 * topic.hashCode + partition) % 2.
    threads = cluster.servers[1].replica_manager.replica_fetcher_manager.fetcher_threads
    assert sorted(f.name for f in threads) == ["ReplicaFetcherThread-0-0", "ReplicaFetcherThread-1-0"]
    assert {p: fetcher_id_for(TopicPartition("rep3", p), 2) for p in (0, 2, 3)} == {0: 0, 2: 0, 3: 1}
    by_thread = {f.name: sorted(p for p in (0, 2, 3) if f.fetch_state(TopicPartition("rep3", p))) for f in threads}
    assert by_thread == {"ReplicaFetcherThread-0-0": [0, 2], "ReplicaFetcherThread-1-0": [3]}
    # replication-offset-checkpoint carries the followers' HW too.
    cluster.servers[2].replica_manager.checkpoint_high_watermarks()
    assert cluster.servers[2].log_manager.read_high_watermarks()[tp] == 3000


def test_fetch_from_leader_only_and_consumers_bounded_by_hw(cluster) -> None:
    ctl = cluster.controller
    ctl.create_topic("hwtopic", {0: [0, 1]})
    produce(cluster.bootstrap, "hwtopic", 10)
    tp = TopicPartition("hwtopic", 0)
    wait_until(lambda: caught_up(cluster, tp, [0, 1], 10))
    conn = BrokerConnection(1, "127.0.0.1", cluster.servers[1].bound_port())
    conn.connect()
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, session_epoch=-1, topics=[
        FetchRequest.FetchTopic(topic="hwtopic", partitions=[FetchRequest.FetchPartition(
            partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    answer = conn.request(request, 11).responses[0].partitions[0]
    assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    conn.close()

    # The follower stops fetching (StopReplica without delete) while still in the ISR: acks=1 appends move
    # the leader's log end but not the HW, and consumers read only up to the HW.
    assert ctl.stop_replica(1, "hwtopic", 0, delete=False).partition_errors[0].error_code == 0
    produce(cluster.bootstrap, "hwtopic", 5, start=10, acks="1")
    leader = cluster.servers[0].replica_manager.get_partition(tp)
    assert leader.log_end_offset == 15 and leader.high_watermark == 10
    conn = BrokerConnection(0, "127.0.0.1", cluster.servers[0].bound_port())
    conn.connect()
    answer = conn.request(request, 11).responses[0].partitions[0]
    assert answer.error_code == 0 and answer.high_watermark == 10
    got = [r.value for b in MemoryRecords(bytes(answer.records)).batches() for r in b.records()]
    assert got == [b"v%06d" % i for i in range(10)]
    conn.close()
    # The follower comes back (LeaderAndIsr again): it catches up and the HW reaches the log end.
    assert ctl.leader_and_isr("hwtopic", broker_ids=[1])[1].error_code == 0
    wait_until(lambda: caught_up(cluster, tp, [0, 1], 15))
    assert_same_bytes(cluster, tp, 0, [1], 15)


def test_stale_controller_epoch_is_fenced(cluster) -> None:
    ctl = cluster.controller
    ctl.create_topic("fenced", {0: [0, 1]})
    old = ctl.epoch - 1
    response = ctl.leader_and_isr("fenced", broker_ids=[1], epoch=old)[1]
    assert response.error_code == ErrorCode.STALE_CONTROLLER_EPOCH
    assert {p.error_code for t in response.topics for p in t.partition_errors} == {ErrorCode.STALE_CONTROLLER_EPOCH}
    response = ctl.leader_and_isr("fenced", broker_ids=[1], version=1, epoch=old)[1]
    assert response.error_code == ErrorCode.STALE_CONTROLLER_EPOCH
    assert [p.error_code for p in response.partition_errors] == [ErrorCode.STALE_CONTROLLER_EPOCH]
    saved, ctl.epoch = ctl.epoch, old
    try:
        assert ctl.stop_replica(1, "fenced", 0, delete=True).error_code == ErrorCode.STALE_CONTROLLER_EPOCH
        with pytest.raises(AssertionError):
            ctl.update_metadata([1])
    finally:
        ctl.epoch = saved
    assert cluster.servers[1].replica_manager.get_partition(TopicPartition("fenced", 0)) is not None
    # A leader epoch older than the partition's: that partition is refused, the request is not.
    a = ctl.topics["fenced"].partitions[0]
    a.leader_epoch = 3
    assert ctl.leader_and_isr("fenced", broker_ids=[1])[1].error_code == 0
    a.leader_epoch = 2
    response = ctl.leader_and_isr("fenced", broker_ids=[1])[1]
    assert response.error_code == 0
    assert response.topics[0].partition_errors[0].error_code == ErrorCode.STALE_CONTROLLER_EPOCH


def test_leader_change_truncates_a_rejoining_replica(cluster) -> None:
    ctl = cluster.controller
    tp = TopicPartition("trunc", 0)
    ctl.create_topic("trunc", {0: [0, 1]})
    produce(cluster.bootstrap, "trunc", 10)
    wait_until(lambda: caught_up(cluster, tp, [0, 1], 10))
    # The follower stops fetching; the leader appends 5 records (acks=1) nobody replicates.
    ctl.stop_replica(1, "trunc", 0, delete=False)
    produce(cluster.bootstrap, "trunc", 5, start=10, acks="1")
    old_leader = cluster.servers[0].replica_manager.get_partition(tp)
    assert old_leader.log_end_offset == 15 and old_leader.high_watermark == 10
    # Broker 0 goes away; broker 1 is elected (epoch 1) and takes 3 new records.
    cluster.stop(0)
    ctl.elect("trunc", 0, leader=1, isr=[1])
    produce(cluster.bootstrap, "trunc", 3, start=100, acks="1")
    new_leader = cluster.servers[1].replica_manager.get_partition(tp)
    assert new_leader.log_end_offset == 13 and new_leader.leader_epoch == 1
    # Broker 0 restarts and follows: it truncates its epoch-0 tail (offsets 10-14) to the leader's epoch
    # boundary (10), fetches 10-12, and rejoins the ISR.
    cluster.start(0)
    ctl.update_metadata()
    assert ctl.leader_and_isr("trunc", broker_ids=[0])[0].error_code == 0
    wait_until(lambda: caught_up(cluster, tp, [0, 1], 13), what="the restarted replica at the new leader's end")
    assert values(cluster.servers[0], tp) == [b"v%06d" % i for i in range(10)] + [b"v%06d" % i for i in (100, 101, 102)]
    assert_same_bytes(cluster, tp, 1, [0], 13)
    wait_until(lambda: ctl.isr("trunc") == [1, 0], what="the ISR expansion")
    epochs = cluster.servers[0].replica_manager.get_partition(tp).log.leader_epoch_cache.epoch_entries()
    assert [tuple(e) for e in epochs] == [(0, 0), (1, 10)]


@pytest.fixture
def small_cluster(tmp_path):
    c = InProcessCluster(str(tmp_path), 2, {"replica.lag.time.max.ms": "1000", "replication.quota.window.num": "2",
                                             "replica.fetch.max.bytes": "100000"})
    yield c
    c.close()


def _produce_raw(conn: BrokerConnection, topic: str, value: bytes, acks: int = -1, timeout_ms: int = 10000):
    builder = MemoryRecordsBuilder()
    builder.append(int(time.time() * 1000), b"k", value)
    request = ProduceRequest(acks=acks, timeout_ms=timeout_ms, topic_data=[ProduceRequest.TopicProduceData(
        name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=builder.build())])])
    return conn.send(request, 9, timeout_ms=timeout_ms + 5000)


def test_acks_all_min_isr_shrink_and_expand(small_cluster) -> None:
    cluster, ctl = small_cluster, small_cluster.controller
    tp = TopicPartition("minisr", 0)
    ctl.create_topic("minisr", {0: [0, 1]})
    for s in cluster.servers.values():
        s.replica_manager.update_topic_config("topics", "minisr", {"min.insync.replicas": "2"})
    reports = produce(cluster.bootstrap, "minisr", 200)
    assert {e for e, _, _ in reports} == {None}
    leader = cluster.servers[0].replica_manager.get_partition(tp)
    assert leader.high_watermark == 200

    # The follower stops; an acks=all produce appends and waits for it in the purgatory...
    ctl.stop_replica(1, "minisr", 0, delete=False)
    conn = BrokerConnection(0, "127.0.0.1", cluster.servers[0].bound_port())
    conn.connect()
    pending = _produce_raw(conn, "minisr", b"late")
    time.sleep(0.3)
    assert not pending.done() and leader.log_end_offset == 201 and leader.high_watermark == 200
    # ...until replica.lag.time.max.ms passes: the ISR shrinks to the leader, the HW moves, and the waiting
    # produce learns its record is below min.insync.replicas.
    answer = conn.wait(pending, 10000).responses[0].partition_responses[0]
    assert answer.error_code == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    assert ctl.isr("minisr") == [0] and leader.isr == (0,) and leader.high_watermark == 201
    answer = conn.wait(_produce_raw(conn, "minisr", b"refused")).responses[0].partition_responses[0]
    assert answer.error_code == ErrorCode.NOT_ENOUGH_REPLICAS and leader.log_end_offset == 201
    reports = produce(cluster.bootstrap, "minisr", 1, start=999, retries=0, **{"enable.idempotence": False})
    assert reports[0][0].code() == CKError.NOT_ENOUGH_REPLICAS

    # The follower returns, catches up, and is added back: acks=all works again.
    ctl.leader_and_isr("minisr", broker_ids=[1])
    wait_until(lambda: ctl.isr("minisr") == [0, 1], what="the ISR expansion")
    answer = conn.wait(_produce_raw(conn, "minisr", b"again")).responses[0].partition_responses[0]
    assert answer.error_code == 0 and answer.base_offset == 201
    conn.close()
    wait_until(lambda: caught_up(cluster, tp, [0, 1], 202))
    assert_same_bytes(cluster, tp, 0, [1], 202)


def test_leader_throttle_limits_catch_up(small_cluster) -> None:
    cluster, ctl = small_cluster, small_cluster.controller
    tp = TopicPartition("throttled", 0)
    ctl.create_topic("throttled", {0: [0]})
    payload = b"x" * 1000
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "1", "linger.ms": 20})
    for _ in range(1500):
        producer.produce("throttled", value=payload, partition=0)
    assert producer.flush(30) == 0
    leader = cluster.servers[0].replica_manager
    size = leader.get_partition(tp).log.size_in_bytes
    assert size > 1_000_000
    rate = 500_000
    # (The broker config first: a broker config change re-reads topic overrides from the broker's own store.)
    leader.update_topic_config("brokers", "0", {"leader.replication.throttled.rate": str(rate)})
    leader.update_topic_config("topics", "throttled", {"leader.replication.throttled.replicas": "0:0"})
    # Reassignment adds broker 1: it catches up through the leader's throttle.
    a = ctl.topics["throttled"].partitions[0]
    a.replicas = [0, 1]
    ctl.update_metadata()
    start = time.monotonic()
    ctl.leader_and_isr("throttled")
    wait_until(lambda: caught_up(cluster, tp, [1], 1500), timeout_s=30)
    elapsed = time.monotonic() - start
    # Two 1 s windows: at most rate * (elapsed + the windows) bytes, plus the fetch that crossed the bound.
    assert size <= rate * (elapsed + 2) + 100_000, (size, elapsed)
    assert elapsed >= 0.5 * size / rate, (size, elapsed)
    assert_same_bytes(cluster, tp, 0, [1], 1500)
    leader.update_topic_config("brokers", "0", {})
    assert not leader.leader_quota.is_enabled()


def test_follower_throttle_limits_catch_up(small_cluster) -> None:
    cluster, ctl = small_cluster, small_cluster.controller
    tp = TopicPartition("fthrottled", 0)
    ctl.create_topic("fthrottled", {0: [0]})
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "1", "linger.ms": 20})
    for _ in range(1500):
        producer.produce("fthrottled", value=b"y" * 1000, partition=0)
    assert producer.flush(30) == 0
    size = cluster.servers[0].replica_manager.get_partition(tp).log.size_in_bytes
    rate = 500_000
    follower = cluster.servers[1].replica_manager
    follower.update_topic_config("brokers", "1", {"follower.replication.throttled.rate": str(rate)})
    a = ctl.topics["fthrottled"].partitions[0]
    a.replicas = [0, 1]
    ctl.update_metadata()
    ctl.leader_and_isr("fthrottled")
    # The throttled-replicas config names broker 1's replica of partition 0 once the follower exists.
    follower.update_topic_config("topics", "fthrottled", {"follower.replication.throttled.replicas": "0:1"})
    start = time.monotonic()
    wait_until(lambda: caught_up(cluster, tp, [1], 1500), timeout_s=30)
    elapsed = time.monotonic() - start
    assert size <= rate * (elapsed + 2) + 100_000, (size, elapsed)
    assert elapsed >= 0.5 * size / rate, (size, elapsed)
    assert follower.follower_quota.rate() > 0
    assert_same_bytes(cluster, tp, 0, [1], 1500)
