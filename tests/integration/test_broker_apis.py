"""Metadata, Produce, Fetch, ListOffsets and OffsetForLeaderEpoch over the wire against an in-process
broker, with the generated protocol classes: exact records bytes, error codes, version-specific shapes,
acks=0, topic ids, fetch sessions and long polls."""

from __future__ import annotations

import time
import uuid

import pytest

from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import (
    ApiVersionsRequest,
    FetchRequest,
    ListOffsetsRequest,
    MetadataRequest,
    OffsetForLeaderEpochRequest,
    ProduceRequest,
)
from kafkapy.protocol.types import ZERO_UUID
from kafkapy.record.batch_header import write_base_offset, write_partition_leader_epoch
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

MR = MetadataRequest
PR = ProduceRequest
FR = FetchRequest


def batch(*values: bytes, ts: int = 1_700_000_000_000) -> bytes:
    builder = MemoryRecordsBuilder()
    for v in values:
        builder.append(ts, b"k", v)
    return builder.build()


def metadata(client, names, version: int = 10, auto: bool = True, ops: bool = False):
    topics = None if names is None else [MR.MetadataRequestTopic(name=n) for n in names]
    return client.request(MR(topics=topics, allow_auto_topic_creation=auto,
                             include_topic_authorized_operations=ops), version)


def create(client, name: str, deadline_s: float = 10.0):
    """Auto-create through Metadata (first answer LEADER_NOT_AVAILABLE), then wait for the leader."""
    first = metadata(client, [name]).topics[0]
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        t = metadata(client, [name]).topics[0]
        if t.error_code == 0 and all(p.leader_id == 0 for p in t.partitions):
            return first, t
        time.sleep(0.02)
    raise AssertionError(f"topic {name} was not created")


def produce(client, topic: str, records: bytes, version: int = 9, acks: int = 1, partition: int = 0):
    req = PR(acks=acks, timeout_ms=5000, topic_data=[PR.TopicProduceData(
        name=topic, partition_data=[PR.PartitionProduceData(index=partition, records=records)])])
    if acks == 0:
        client.send(req, version)
        return None
    return client.request(req, version).responses[0].partition_responses[0]


def fetch(client, topic: str, offset: int, version: int = 11, max_wait_ms: int = 0, min_bytes: int = 1,
          topic_id=ZERO_UUID, session_epoch: int = -1, partition: int = 0):
    req = FR(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes, max_bytes=1 << 20, isolation_level=0,
             session_id=0, session_epoch=session_epoch, topics=[FR.FetchTopic(
                 topic=topic, topic_id=topic_id, partitions=[FR.FetchPartition(
                     partition=partition, fetch_offset=offset, partition_max_bytes=1 << 20)])])
    return client.request(req, version)


def stored(records: bytes, base_offset: int, leader_epoch: int = 0) -> bytes:
    buf = bytearray(records)
    write_base_offset(buf, 0, base_offset)
    write_partition_leader_epoch(buf, 0, leader_epoch)
    return bytes(buf)


def test_api_versions_advertises_the_data_path(kafkapy_broker, wire_client) -> None:
    client = wire_client(kafkapy_broker.port)
    resp = client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    ranges = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert ranges[0] == (0, 12) and ranges[1] == (4, 17) and ranges[2] == (0, 10)
    assert ranges[3] == (0, 13) and ranges[23] == (0, 4)


def test_metadata_brokers_cluster_and_auto_creation(kafkapy_broker, wire_client) -> None:
    client = wire_client(kafkapy_broker.port)
    server = kafkapy_broker.server
    first, created = create(client, "md-auto")
    assert first.error_code == ErrorCode.LEADER_NOT_AVAILABLE and first.partitions == []
    assert created.name == "md-auto" and len(created.partitions) == 1 and not created.is_internal
    p = created.partitions[0]
    assert (p.partition_index, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes, p.offline_replicas) == \
        (0, 0, 0, [0], [0], [])
    assert created.topic_id != ZERO_UUID and created.topic_id == server.metadata_cache.get_topic_id("md-auto")
    assert created.topic_authorized_operations == -2147483648
    resp = metadata(client, ["md-auto"], version=9)
    assert [(b.node_id, b.host, b.port, b.rack) for b in resp.brokers] == [(0, "127.0.0.1", kafkapy_broker.port, None)]
    assert resp.controller_id == 0 and resp.cluster_id == server.metadata_cache.get_cluster_id()
    assert len(resp.cluster_id) == 22


def test_metadata_errors_and_versions(kafkapy_broker, wire_client) -> None:
    client = wire_client(kafkapy_broker.port)
    create(client, "md-known")
    t = metadata(client, ["md-never"], auto=False).topics[0]
    assert (t.name, t.error_code) == ("md-never", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    assert "md-never" not in kafkapy_broker.server.metadata_cache.get_all_topics()
    t = metadata(client, ["bad name!"]).topics[0]
    assert t.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    all_v0 = {t.name for t in metadata(client, [], version=0).topics}
    all_v1 = {t.name for t in metadata(client, None, version=1).topics}
    assert "md-known" in all_v0 and all_v0 == all_v1
    assert metadata(client, [], version=1).topics == []
    t = metadata(client, ["md-known"], version=10, ops=True).topics[0]
    assert t.topic_authorized_operations == 3576  # every topic operation: no authorizer
    known_id = t.topic_id
    resp = client.request(MR(topics=[MR.MetadataRequestTopic(topic_id=known_id, name=None),
                                     MR.MetadataRequestTopic(topic_id=uuid.UUID(int=99), name=None)]), 12)
    by_error = {t.error_code: t for t in resp.topics}
    assert by_error[0].name == "md-known" and by_error[0].topic_id == known_id
    assert by_error[ErrorCode.UNKNOWN_TOPIC_ID].name is None
    assert metadata(client, ["md-known"], version=13).error_code == 0


def test_produce_fetch_exact_bytes_across_versions(kafkapy_broker, wire_client) -> None:
    client = wire_client(kafkapy_broker.port)
    create(client, "pf-exact")
    b1, b2 = batch(b"one", b"two"), batch(b"three")
    r = produce(client, "pf-exact", b1, version=3)
    assert (r.error_code, r.base_offset) == (0, 0)
    r = produce(client, "pf-exact", b2, version=9)
    assert (r.error_code, r.base_offset, r.log_start_offset, r.log_append_time_ms) == (0, 2, 0, -1)
    expected = stored(b1, 0) + stored(b2, 2)
    for version in (4, 7, 11, 12):
        resp = fetch(client, "pf-exact", 0, version=version)
        part = resp.responses[0].partitions[0]
        assert (part.error_code, part.high_watermark, bytes(part.records)) == (0, 3, expected)
        if version >= 4:
            assert part.last_stable_offset == 3
    resp = fetch(client, "pf-exact", 2)
    assert bytes(resp.responses[0].partitions[0].records) == stored(b2, 2)
    topic_id = kafkapy_broker.server.metadata_cache.get_topic_id("pf-exact")
    resp = fetch(client, "", 0, version=13, topic_id=topic_id)
    assert resp.responses[0].topic_id == topic_id and bytes(resp.responses[0].partitions[0].records) == expected
    resp = fetch(client, "", 0, version=13, topic_id=uuid.UUID(int=5))
    assert resp.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID
    resp = fetch(client, "pf-exact", 0, version=11, session_epoch=3)
    assert resp.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND and resp.responses == []
    resp = fetch(client, "pf-exact", 99)
    assert resp.responses[0].partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_acks_zero_and_invalid_acks(kafkapy_broker, wire_client) -> None:
    client = wire_client(kafkapy_broker.port)
    create(client, "pf-acks")
    assert produce(client, "pf-acks", batch(b"fire"), acks=0) is None
    r = produce(client, "pf-acks", batch(b"and"), acks=1)  # answered: no stray response for acks=0
    assert (r.error_code, r.base_offset) == (0, 1)
    r = produce(client, "pf-acks", batch(b"x"), acks=2)
    assert r.error_code == ErrorCode.INVALID_REQUIRED_ACKS
    bad = wire_client(kafkapy_broker.port)
    produce(bad, "pf-acks-missing", batch(b"lost"), acks=0)
    assert bad.is_closed()  # acks=0 with a failed partition: Kafka closes the connection


def test_long_poll_completes_on_produce_and_expires(kafkapy_broker, wire_client) -> None:
    waiter, producer = wire_client(kafkapy_broker.port), wire_client(kafkapy_broker.port)
    create(producer, "pf-poll")
    req = FR(replica_id=-1, max_wait_ms=10_000, min_bytes=1, max_bytes=1 << 20, session_epoch=-1,
             topics=[FR.FetchTopic(topic="pf-poll", partitions=[
                 FR.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    t0 = time.monotonic()
    correlation_id = waiter.send(req, 11)
    time.sleep(0.2)
    produce(producer, "pf-poll", batch(b"wake up"))
    from kafkapy.protocol.header import decode_response

    got, resp = decode_response(waiter.recv_frame(), 1, 11)
    assert got == correlation_id and time.monotonic() - t0 < 5
    assert bytes(resp.responses[0].partitions[0].records) == stored(batch(b"wake up"), 0)
    t0 = time.monotonic()
    resp = fetch(waiter, "pf-poll", 1, max_wait_ms=300)
    waited = time.monotonic() - t0
    assert 0.25 <= waited < 5 and resp.responses[0].partitions[0].records in (None, b"")


def test_list_offsets_and_offset_for_leader_epoch(kafkapy_broker, wire_client) -> None:
    client = wire_client(kafkapy_broker.port)
    create(client, "lo")
    produce(client, "lo", batch(b"a", b"b", ts=1000))
    produce(client, "lo", batch(b"c", ts=5000))
    produce(client, "lo", batch(b"d", ts=3000))

    def list_offsets(ts: int, version: int, epoch: int = -1):
        req = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[ListOffsetsRequest.ListOffsetsTopic(
            name="lo", partitions=[ListOffsetsRequest.ListOffsetsPartition(
                partition_index=0, current_leader_epoch=epoch, timestamp=ts, max_num_offsets=1)])])
        return client.request(req, version).topics[0].partitions[0]

    assert list_offsets(-1, 0).old_style_offsets == [4]
    assert list_offsets(-2, 0).old_style_offsets == [0]
    p = list_offsets(-1, 1)
    assert (p.error_code, p.timestamp, p.offset) == (0, -1, 4)
    p = list_offsets(-1, 4)
    assert (p.offset, p.leader_epoch) == (4, 0)
    p = list_offsets(2000, 6)
    assert (p.offset, p.timestamp) == (2, 5000)
    p = list_offsets(-3, 7)
    assert (p.offset, p.timestamp) == (2, 5000)
    assert list_offsets(10_000, 7).offset == -1
    assert list_offsets(-1, 9, epoch=3).error_code == ErrorCode.UNKNOWN_LEADER_EPOCH

    def epoch_end(epoch: int, version: int, current: int = -1):
        req = OffsetForLeaderEpochRequest(replica_id=-1, topics=[OffsetForLeaderEpochRequest.OffsetForLeaderTopic(
            topic="lo", partitions=[OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
                partition=0, current_leader_epoch=current, leader_epoch=epoch)])])
        return client.request(req, version).topics[0].partitions[0]

    p = epoch_end(0, 4, current=0)
    assert (p.error_code, p.leader_epoch, p.end_offset) == (0, 0, 4)
    p = epoch_end(0, 0)
    assert (p.error_code, p.end_offset) == (0, 4)
    p = epoch_end(5, 3)
    assert (p.leader_epoch, p.end_offset) == (-1, -1)
    rm = kafkapy_broker.server.replica_manager
    assert rm.delete_records(1000, {TopicPartition("lo", 0): 2}) == {TopicPartition("lo", 0): (2, 0)}
    assert list_offsets(-2, 5).offset == 2


@pytest.mark.parametrize("version,magic,codec", [(0, 0, 0), (1, 0, 1), (2, 1, 0), (2, 1, 3)])
def test_produce_v0_to_v2_up_converts_legacy_message_sets(kafkapy_broker, wire_client, version: int, magic: int,
                                                          codec: int) -> None:
    from kafkapy.record.legacy_record import LegacyRecordBatchBuilder
    from kafkapy.record.memory_records import MemoryRecords

    client = wire_client(kafkapy_broker.port)
    topic = f"pf-old-{version}-{magic}-{codec}"
    create(client, topic)
    legacy = LegacyRecordBatchBuilder(magic, compression=codec)
    legacy.append(1_600_000_000_000, b"k1", b"legacy one")
    legacy.append(1_600_000_000_001, None, None)
    legacy.append(1_600_000_000_002, b"k3", b"legacy three")
    r = produce(client, topic, legacy.build(), version=version)
    assert (r.error_code, r.base_offset) == (0, 0)
    part = fetch(client, topic, 0, version=11).responses[0].partitions[0]
    [batch_] = list(MemoryRecords(bytes(part.records)).batches())
    assert batch_.magic == 2 and batch_.compression == codec and part.high_watermark == 3
    got = [(r.offset, r.key, r.value) for r in batch_.records()]
    assert got == [(0, b"k1", b"legacy one"), (1, None, None), (2, b"k3", b"legacy three")]
    if magic == 1:
        assert [r.timestamp for r in batch_.records()] == [1_600_000_000_000, 1_600_000_000_001, 1_600_000_000_002]
    corrupt = bytearray(legacy.build())
    corrupt[-1] ^= 0xFF
    assert produce(client, topic, bytes(corrupt), version=version).error_code == ErrorCode.CORRUPT_MESSAGE
