"""Encodings checked against bytes computed by hand from Kafka's spec."""

from __future__ import annotations

import tempfile
import uuid

import pytest

from kafkapy.common.file_region import FileRegion
from kafkapy.protocol.header import RequestHeader, decode_request, encode_request, encode_response
from kafkapy.protocol.message import ProtocolDecodeError, ProtocolEncodeError
from kafkapy.protocol.messages import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    ConsumerGroupHeartbeatResponse,
    FetchResponse,
    ListOffsetsRequest,
    MetadataRequest,
    OffsetCommitRequest,
    ProduceRequest,
)

H = bytes.fromhex
TOPIC_ID = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")


def test_api_versions_request_v3_with_header() -> None:
    body = ApiVersionsRequest(client_software_name="kafkapy", client_software_version="0.1")
    assert body.encode(3) == H("08") + b"kafkapy" + H("04") + b"0.1" + H("00")
    req = encode_request(RequestHeader(18, 3, 7, "cli"), body)
    # size, api_key, api_version, correlation_id, client_id (int16 length even in header v2), tags
    expected_header = H("0012 0003 00000007 0003") + b"cli" + H("00")
    expected_body = H("08") + b"kafkapy" + H("04") + b"0.1" + H("00")
    assert req == H("0000001b") + expected_header + expected_body
    header, decoded = decode_request(memoryview(req)[4:])
    assert header == RequestHeader(18, 3, 7, "cli")
    assert decoded == body


def test_api_versions_request_v0_is_empty() -> None:
    assert ApiVersionsRequest().encode(0) == b""
    assert ApiVersionsRequest.decode(b"", 0) == ApiVersionsRequest()


def test_metadata_request_v0() -> None:
    msg = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="foo")])
    assert msg.encode(0) == H("00000001 0003") + b"foo"
    assert MetadataRequest.decode(H("00000001 0003") + b"foo", 0) == msg
    # null topics ("all topics") only exists from v1
    with pytest.raises(ProtocolEncodeError):
        MetadataRequest(topics=None).encode(0)
    assert MetadataRequest(topics=None).encode(1) == H("ffffffff")
    # allow_auto_topic_creation is v4+, not ignorable: a non-default value cannot be sent at v0
    with pytest.raises(ProtocolEncodeError):
        MetadataRequest(topics=[], allow_auto_topic_creation=False).encode(0)


def test_metadata_request_v12() -> None:
    msg = MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(topic_id=TOPIC_ID, name="foo")],
        allow_auto_topic_creation=True,
        include_topic_authorized_operations=False,
    )
    expected = H("02") + TOPIC_ID.bytes + H("04") + b"foo" + H("00") + H("01 00 00")
    assert msg.encode(12) == expected
    assert MetadataRequest.decode(expected, 12) == msg
    assert MetadataRequest(topics=None).encode(12) == H("00 01 00 00")
    assert MetadataRequest.decode(H("00 01 00 00"), 12).topics is None


def test_produce_request_v3_records_blob_and_zero_copy() -> None:
    records = b"\x00" * 12 + b"batch"
    msg = ProduceRequest(
        transactional_id=None, acks=-1, timeout_ms=30000,
        topic_data=[ProduceRequest.TopicProduceData(
            name="t", partition_data=[ProduceRequest.PartitionProduceData(index=2, records=records)])],
    )
    expected = (
        H("ffff ffff 00007530")  # null transactional_id, acks=-1, timeout
        + H("00000001 0001") + b"t"  # one topic "t"
        + H("00000001 00000002 00000011") + records  # one partition, index 2, 17 bytes of records
    )
    assert msg.encode(3) == expected
    decoded = ProduceRequest.decode(expected, 3)
    rec = decoded.topic_data[0].partition_data[0].records
    assert isinstance(rec, memoryview) and rec.obj is expected and rec == records
    assert decoded == msg


def test_produce_request_v9_flexible() -> None:
    msg = ProduceRequest(
        transactional_id="tx", acks=1, timeout_ms=5,
        topic_data=[ProduceRequest.TopicProduceData(
            name="t", partition_data=[ProduceRequest.PartitionProduceData(index=0, records=None)])],
    )
    expected = H("03") + b"tx" + H("0001 00000005 02 02") + b"t" + H("02 00000000 00 00 00 00")
    assert msg.encode(9) == expected
    assert ProduceRequest.decode(expected, 9) == msg


def test_api_versions_response_tagged_field_default_omitted_vs_set() -> None:
    keys = [ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=4)]
    default = ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0)
    base = H("0000 02 0012 0000 0004 00 00000000")
    assert default.encode(3) == base + H("00")
    with_epoch = ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0, finalized_features_epoch=5)
    assert with_epoch.encode(3) == base + H("01 01 08 0000000000000005")
    assert ApiVersionsResponse.decode(base + H("01 01 08 0000000000000005"), 3) == with_epoch
    # tags come out in ascending order
    both = ApiVersionsResponse(api_keys=keys, finalized_features_epoch=5, zk_migration_ready=True)
    assert both.encode(3) == base + H("02 01 08 0000000000000005 03 01 01")
    # v0 body (what a broker sends with UNSUPPORTED_VERSION): classic array
    assert ApiVersionsResponse(error_code=35, api_keys=keys).encode(0) == H("0023 00000001 0012 0000 0004")


def test_unknown_tagged_fields_are_kept_on_decode_and_dropped_on_encode() -> None:
    raw = H("08") + b"kafkapy" + H("04") + b"0.1" + H("01 09 02 abcd")
    msg = ApiVersionsRequest.decode(raw, 3)
    assert msg.client_software_name == "kafkapy"
    assert msg._unknown_tagged_fields == [(9, b"\xab\xcd")]
    assert msg.encode(3) == H("08") + b"kafkapy" + H("04") + b"0.1" + H("00")


def test_nullable_struct_field_int8_prefix() -> None:
    head = H("00000000 0000 00 02") + b"m" + H("00000005 00000bb8")
    none = ConsumerGroupHeartbeatResponse(member_id="m", member_epoch=5, heartbeat_interval_ms=3000)
    assert none.encode(0) == head + H("ff 00")
    assignment = ConsumerGroupHeartbeatResponse.Assignment(
        topic_partitions=[ConsumerGroupHeartbeatResponse.TopicPartitions(topic_id=TOPIC_ID, partitions=[0, 1])])
    some = ConsumerGroupHeartbeatResponse(
        member_id="m", member_epoch=5, heartbeat_interval_ms=3000, assignment=assignment)
    raw = head + H("01 02") + TOPIC_ID.bytes + H("03 00000000 00000001 00 00 00")
    assert some.encode(0) == raw
    assert ConsumerGroupHeartbeatResponse.decode(raw, 0) == some
    assert ConsumerGroupHeartbeatResponse.decode(head + H("ff 00"), 0).assignment is None


def test_legacy_versions_merged_in() -> None:
    # ListOffsets v0 (legacy only): MaxNumOffsets after Timestamp
    msg = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsRequest.ListOffsetsTopic(
        name="foo", partitions=[ListOffsetsRequest.ListOffsetsPartition(partition_index=0, timestamp=-1)])])
    expected = H("ffffffff 00000001 0003") + b"foo" + H("00000001 00000000 ffffffffffffffff 00000001")
    assert msg.encode(0) == expected
    # OffsetCommit v1 (legacy only) carries commit_timestamp
    oc = OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=1, member_id="m", topics=[
        OffsetCommitRequest.OffsetCommitRequestTopic(name="t", partitions=[
            OffsetCommitRequest.OffsetCommitRequestPartition(
                partition_index=0, committed_offset=10, commit_timestamp=99, committed_metadata="")])])
    raw = (H("0001") + b"g" + H("00000001 0001") + b"m" + H("00000001 0001") + b"t"
           + H("00000001 00000000 000000000000000a 0000000000000063 0000"))
    assert oc.encode(1) == raw
    assert OffsetCommitRequest.decode(raw, 1) == oc
    with pytest.raises(ProtocolEncodeError):  # not ignorable and gone from v2
        oc.encode(2)


def test_ignorable_absent_field_is_dropped_silently() -> None:
    # FetchResponse.PartitionData.log_start_offset is v5+ and ignorable
    p = FetchResponse.PartitionData(partition_index=1, high_watermark=3, log_start_offset=7, records=b"")
    msg = FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[p])])
    decoded = FetchResponse.decode(msg.encode(4), 4)
    assert decoded.responses[0].partitions[0].log_start_offset == -1


def test_records_file_region_chunks() -> None:
    with tempfile.TemporaryFile() as f:
        f.write(b"0123456789")
        f.flush()
        region = FileRegion(f, 2, 5)
        p = FetchResponse.PartitionData(partition_index=0, high_watermark=10, records=region)
        msg = FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[p])])
        chunks = msg.encode_chunks(12)
        assert len(chunks) == 3 and chunks[1] is region
        assert chunks[0].endswith(H("06"))  # compact length 5 + 1
        assert chunks[2] == H("00 00 00")  # partition, topic and top-level tag sections
        flat = msg.encode(12)
        assert flat == chunks[0] + b"23456" + chunks[2]
        assert FetchResponse.decode(flat, 12).responses[0].partitions[0].records == b"23456"
        # with the response header + size prefix, the region is still its own chunk
        framed = encode_response(1, 12, 42, msg)
        assert framed[1] is region
        total = len(framed[0]) + region.length + len(framed[2])
        assert int.from_bytes(framed[0][:4], "big") == total - 4
        assert framed[0][4:9] == H("0000002a 00")  # correlation id + response header v1 tags


def test_non_nullable_records_none_encodes_empty() -> None:
    p = FetchResponse.PartitionData(records=None)
    raw = FetchResponse(responses=[FetchResponse.FetchableTopicResponse(topic="t", partitions=[p])]).encode(4)
    assert raw.endswith(H("00000000"))
    assert FetchResponse.decode(raw, 4).responses[0].partitions[0].records == b""


def test_absurd_array_count_fails_without_allocating() -> None:
    with pytest.raises(ProtocolDecodeError):
        MetadataRequest.decode(H("7fffffff 0003") + b"foo", 0)
    with pytest.raises(ProtocolDecodeError):
        MetadataRequest.decode(H("ffffffff0f") + H("00"), 12)  # compact count 2^32-2
    with pytest.raises(ProtocolDecodeError):
        MetadataRequest.decode(H("ffffffffff"), 12)  # varint longer than 5 bytes


def test_malformed_inputs_raise_decode_error() -> None:
    with pytest.raises(ProtocolDecodeError):
        MetadataRequest.decode(H("00000001 0005") + b"fo", 0)  # string overruns
    with pytest.raises(ProtocolDecodeError):
        MetadataRequest.decode(H("00000001 0002") + b"\xff\xfe", 0)  # invalid utf-8
    with pytest.raises(ProtocolDecodeError):
        MetadataRequest.decode(H("00000001 ffff"), 0)  # null non-nullable name
    with pytest.raises(ProtocolDecodeError):
        ApiVersionsRequest.decode(b"", 99)  # unknown version


def test_repr_and_eq() -> None:
    a = MetadataRequest.MetadataRequestTopic(name="foo")
    assert repr(a) == ("MetadataRequest.MetadataRequestTopic(topic_id=UUID('00000000-0000-0000-0000-000000000000'), "
                       "name='foo')")
    assert a == MetadataRequest.MetadataRequestTopic(name="foo")
    assert a != MetadataRequest.MetadataRequestTopic(name="bar")
    with pytest.raises(TypeError):
        MetadataRequest(no_such_field=1)
    # mutable defaults are fresh per instance
    x, y = MetadataRequest(), MetadataRequest()
    x.topics.append(a)
    assert y.topics == []
