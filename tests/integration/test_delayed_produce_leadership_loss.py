"""A leader made a follower while an acks=all produce waits for its ISR answers that produce
NOT_LEADER_OR_FOLLOWER, and the appended record stays in its log until truncation against the new leader
decides (Kafka 3.9: ReplicaManager.makeFollowers -> completeDelayedFetchOrProduceRequests ->
DelayedProduce.tryComplete -> Partition.checkEnoughReplicasReachOffset answers NOT_LEADER_OR_FOLLOWER when
no leader log is local). This is the broker half of the one duplicate tests/cluster/test_fault_injection
allows a non-idempotent producer: librdkafka reads that error as 'not persisted' and sends the record again
to the new leader, which may already hold the first copy fetched from the deposed one. ReplicaManager over
a real LogManager under MockTime, no network (the new leader's endpoint is unknown, so no fetcher runs)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.errors import ErrorCode
from kafkapy.common.file_region import FileRegion
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.replica_manager import FetchParams, FetchPartitionInfo, ReplicaManager
from kafkapy.storage.log_manager import LogManager

TP = TopicPartition("deposed", 0)
TOPIC_ID = uuid.UUID(int=0xD0D0)


@pytest.fixture
def rm(tmp_path: object) -> Iterator[ReplicaManager]:
    time = MockTime()
    config = KafkaConfig({"log.dirs": str(tmp_path), "listeners": "PLAINTEXT://127.0.0.1:0",
                          "min.insync.replicas": "2"})
    log_manager = LogManager([str(tmp_path)], {"min.insync.replicas": "2"}, time, topic_configs=lambda t: {})
    log_manager.startup()
    manager = ReplicaManager(config, time, log_manager, MetadataCache(0), 0, reaper_enabled=False)
    manager.startup()
    yield manager
    manager.shutdown()
    log_manager.shutdown()


def state(leader: int, leader_epoch: int) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(TP.topic, TP.partition, TOPIC_ID, 1, leader, leader_epoch, (0, 1), 0, (0, 1))


def as_bytes(records: FileRegion | bytes | bytearray | memoryview) -> bytes:
    return records.read_bytes() if isinstance(records, FileRegion) else bytes(records)


def produce(rm: ReplicaManager, value: bytes) -> list:
    builder = MemoryRecordsBuilder()
    builder.append(1_700_000_000_000, None, value)
    out: list = []
    rm.append_records(30_000, -1, {TP: builder.build()}, out.append)
    return out


def test_waiting_acks_all_produce_answers_not_leader_when_the_leader_becomes_follower(rm: ReplicaManager) -> None:
    assert rm.become_leader_or_follower(0, 1, [state(0, 0)]) == {TP: 0}
    first = produce(rm, b"acked")
    assert first == []  # waits for follower 1
    out: list = []
    rm.fetch_messages(FetchParams(1, 0, 1, 1 << 20, 0, {TP: FetchPartitionInfo(1, 1 << 20, 0, 0)}), out.append)
    assert out[0][TP].error == 0 and first[0][TP].error == 0 and first[0][TP].base_offset == 0
    waiting = produce(rm, b"appended, not replicated")
    assert waiting == []  # appended at offset 1; follower 1 has not fetched it
    partition = rm.get_partition(TP)
    assert partition is not None and partition.log_end_offset == 2 and partition.high_watermark == 1

    # The controller elects broker 1 (epoch 1): the waiting produce is answered, as Kafka answers it.
    assert rm.become_leader_or_follower(0, 1, [state(1, 1)]) == {TP: 0}
    assert len(waiting) == 1 and waiting[0][TP].error == ErrorCode.NOT_LEADER_OR_FOLLOWER
    # The record is still at offset 1: only truncation against the new leader may remove it.
    assert partition.log_end_offset == 2
    assert partition.log is not None
    read = partition.log.read(1, 1 << 20, None, True)
    assert read.records is not None
    assert [(r.offset, r.value) for b in MemoryRecords(as_bytes(read.records)).batches() for r in b.records()] == [
        (1, b"appended, not replicated")]
