"""ReplicaManager leadership and ISR under MockTime (no network, no sleeping): follower fetches move the HW,
an acks=all produce waits for the ISR, replica.lag.time.max.ms without a fetch shrinks the ISR (through
the AlterIsrManager) so the waiting produce gets NOT_ENOUGH_REPLICAS_AFTER_APPEND and new ones
NOT_ENOUGH_REPLICAS (min.insync.replicas=2), a caught-up follower is added back; LeaderAndIsr / StopReplica
controller-epoch fencing; a follower partition is never read by consumers."""

from __future__ import annotations

import uuid
from concurrent.futures import Future

import pytest

from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderAndIsrPartitionState, StopReplicaPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.errors import ErrorCode, StaleControllerEpochError
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.replica_manager import FetchParams, FetchPartitionInfo, ReplicaManager
from kafkapy.storage.log_manager import LogManager

TP = TopicPartition("isr", 0)
TOPIC_ID = uuid.UUID(int=0x5150)
LAG_MS = 10_000


def batch(*values: bytes) -> bytes:
    builder = MemoryRecordsBuilder()
    for v in values:
        builder.append(1_700_000_000_000, None, v)
    return builder.build()


class Proposals:
    """An AlterIsrManager whose answers the test gives (as the controller would, later)."""

    def __init__(self) -> None:
        self.pending: list[tuple[LeaderAndIsr, Future]] = []

    def submit(self, tp: TopicPartition, proposed: LeaderAndIsr, controller_epoch: int) -> Future:
        fut: Future = Future()
        self.pending.append((proposed, fut))
        return fut

    def accept(self) -> LeaderAndIsr:
        proposed, fut = self.pending.pop(0)
        committed = proposed.with_partition_epoch(proposed.partition_epoch + 1)
        fut.set_result(committed)
        return committed


@pytest.fixture
def env(tmp_path):
    time = MockTime()
    config = KafkaConfig({"log.dirs": str(tmp_path), "listeners": "PLAINTEXT://127.0.0.1:0",
                          "replica.lag.time.max.ms": str(LAG_MS), "min.insync.replicas": "2"})
    log_manager = LogManager([str(tmp_path)], {"min.insync.replicas": "2"}, time, topic_configs=lambda t: {})
    log_manager.startup()
    proposals = Proposals()
    rm = ReplicaManager(config, time, log_manager, MetadataCache(0), 0, alter_isr_manager=proposals,
                        reaper_enabled=False)
    rm.startup()
    yield time, rm, proposals
    rm.shutdown()
    log_manager.shutdown()


def state(leader: int, leader_epoch: int, isr, partition_epoch: int = 0, controller_epoch: int = 3):
    return LeaderAndIsrPartitionState(TP.topic, TP.partition, TOPIC_ID, controller_epoch, leader, leader_epoch,
                                      tuple(isr), partition_epoch, (0, 1))


def produce(rm: ReplicaManager, value: bytes, acks: int = -1) -> list:
    out: list = []
    rm.append_records(30_000, acks, {TP: batch(value)}, out.append)
    return out


def follower_fetch(rm: ReplicaManager, offset: int, leader_epoch: int = 0) -> None:
    out: list = []
    rm.fetch_messages(FetchParams(1, 0, 1, 1 << 20, 0, {TP: FetchPartitionInfo(offset, 1 << 20, 0, leader_epoch)}),
                      out.append)
    assert out and out[0][TP].error == 0


def test_isr_shrink_and_expand_with_acks_all(env) -> None:
    time, rm, proposals = env
    assert rm.become_leader_or_follower(0, 3, [state(0, 0, (0, 1))]) == {TP: 0}
    assert produce(rm, b"a") == []  # waits for follower 1
    follower_fetch(rm, 1)
    partition = rm.get_partition(TP)
    assert partition.high_watermark == 1
    pending = produce(rm, b"b")
    assert pending == []
    # Follower 1 stops fetching: after replica.lag.time.max.ms the leader proposes ISR [0].
    time.advance(LAG_MS + 1)
    rm.maybe_shrink_isr()
    assert [p.isr for p, _ in proposals.pending] == [(0,)]
    assert pending == [] and partition.isr == (0, 1)  # committed ISR unchanged until the answer
    proposals.accept()
    assert partition.isr == (0,) and partition.high_watermark == 2
    assert pending[0][TP].error == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    refused = produce(rm, b"c")
    assert refused[0][TP].error == ErrorCode.NOT_ENOUGH_REPLICAS and partition.log_end_offset == 2
    assert produce(rm, b"c", acks=1)[0][TP].error == 0
    # The follower comes back and reaches the HW: the leader proposes adding it; acks=all works again.
    follower_fetch(rm, 2)
    assert proposals.pending == []  # below the HW (3): not in sync yet
    follower_fetch(rm, 3)
    assert [p.isr for p, _ in proposals.pending] == [(0, 1)]
    proposals.accept()
    assert partition.isr == (0, 1) and partition.partition_epoch == 2
    waiting = produce(rm, b"d")
    assert waiting == []
    follower_fetch(rm, 4)
    assert waiting[0][TP].error == 0 and waiting[0][TP].base_offset == 3


def test_controller_epoch_fencing_and_follower_reads(env) -> None:
    _time, rm, _proposals = env
    assert rm.become_leader_or_follower(0, 3, [state(1, 2, (0, 1), controller_epoch=3)]) == {TP: 0}
    assert rm.controller_epoch == 3
    with pytest.raises(StaleControllerEpochError):
        rm.become_leader_or_follower(0, 2, [state(0, 3, (0, 1))])
    with pytest.raises(StaleControllerEpochError):
        rm.stop_replicas(0, 2, [StopReplicaPartitionState(TP.topic, TP.partition, None, 2, False)])
    # An older leader epoch from the current controller: refused for that partition only.
    assert rm.become_leader_or_follower(0, 3, [state(0, 1, (0, 1))]) == {TP: ErrorCode.STALE_CONTROLLER_EPOCH}
    assert rm.stop_replicas(0, 3, [StopReplicaPartitionState(TP.topic, TP.partition, None, 1, False)]) == {
        TP: ErrorCode.FENCED_LEADER_EPOCH}
    # A follower never serves consumers (fetch from the leader only), nor an acks=1 produce.
    out: list = []
    rm.fetch_messages(FetchParams(-1, 0, 1, 1 << 20, 0, {TP: FetchPartitionInfo(0, 1 << 20)}), out.append)
    assert out[0][TP].error == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert produce(rm, b"x", acks=1)[0][TP].error == ErrorCode.NOT_LEADER_OR_FOLLOWER
    # A broker outside the replicas is told so.
    foreign = LeaderAndIsrPartitionState(TP.topic, 1, TOPIC_ID, 3, 1, 0, (1, 2), 0, (1, 2))
    assert rm.become_leader_or_follower(0, 3, [foreign]) == {
        TopicPartition(TP.topic, 1): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert rm.stop_replicas(0, 4, [StopReplicaPartitionState(TP.topic, TP.partition, None, -2, True)]) == {TP: 0}
    assert rm.get_partition(TP) is None and rm.controller_epoch == 4


def test_no_checkpointed_hw_means_the_log_start(env) -> None:
    time, rm, proposals = env
    rm.become_leader_or_follower(0, 3, [state(0, 0, (0,))])
    assert produce(rm, b"a", acks=1)[0][TP].error == 0 and produce(rm, b"b", acks=1)[0][TP].error == 0
    assert rm.get_partition(TP).high_watermark == 2
    # A new ReplicaManager over the same logs with no replication-offset-checkpoint entry (a crash before the
    # first checkpoint): the replica's HW starts at the log start, not its log end (records it never saw
    # committed stay uncommitted), and as the leader of an ISR with a follower it moves with that follower.
    rm2 = ReplicaManager(rm.config, time, rm.log_manager, MetadataCache(0), 0, alter_isr_manager=proposals,
                         reaper_enabled=False)
    rm.stop_replicas(0, 3, [StopReplicaPartitionState(TP.topic, TP.partition, None, -1, False)])
    rm.log_manager.get_log(TP)._high_watermark = None  # as reloaded after a restart without a checkpoint
    assert rm2.become_leader_or_follower(0, 3, [state(0, 1, (0, 1))]) == {TP: 0}
    partition = rm2.get_partition(TP)
    assert partition.log_end_offset == 2 and partition.high_watermark == 0
    follower_fetch(rm2, 2, leader_epoch=1)
    assert partition.high_watermark == 2
    rm2.shutdown()
