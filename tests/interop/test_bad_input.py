"""Bad input never takes the broker down: garbage, oversized and negative-size frames and unknown api
keys close only that connection while a confluent-kafka producer on its own connection keeps working;
ApiVersions at an unknown version gets UNSUPPORTED_VERSION (35) with a v0 body; a Produce with a
corrupt batch gets CORRUPT_MESSAGE for that partition and appends nothing, while the good partition of
the same request is appended."""

from __future__ import annotations

import os
import struct

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Producer  # noqa: E402

from kafkapy.common.errors import ErrorCode  # noqa: E402
from kafkapy.common.topic_partition import TopicPartition  # noqa: E402
from kafkapy.protocol.messages import ProduceRequest  # noqa: E402
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder  # noqa: E402

TIMEOUT_S = 30


@pytest.fixture(scope="module")
def producer(kafkapy_broker):
    p = Producer({"bootstrap.servers": kafkapy_broker.bootstrap, "acks": "1", "linger.ms": 0})
    yield p
    p.flush(TIMEOUT_S)


def produce_ok(producer, topic: str, value: bytes) -> tuple[int, int]:
    out: list = []
    producer.produce(topic, value=value, on_delivery=lambda err, msg: out.append((err, msg.partition(), msg.offset())))
    assert producer.flush(TIMEOUT_S) == 0
    assert len(out) == 1 and out[0][0] is None, out
    return out[0][1], out[0][2]


@pytest.mark.parametrize("frame", [
    pytest.param(struct.pack(">i", 20) + os.urandom(20), id="garbage-body"),
    pytest.param(struct.pack(">i", 0x7FFFFFFF) + b"\x00" * 64, id="oversized"),
    pytest.param(struct.pack(">i", -5) + b"\x00" * 8, id="negative-size"),
    pytest.param(struct.pack(">i", 3) + b"\x00\x01\x02", id="shorter-than-header"),
    pytest.param(struct.pack(">ihhih", 10, 1000, 0, 7, -1), id="unknown-api-key"),
    pytest.param(struct.pack(">ihhih", 10, 0, 99, 7, -1), id="unknown-produce-version"),
    pytest.param(struct.pack(">ihhih", 12, 3, 1, 7, -1) + b"\xff\xff", id="truncated-metadata-body"),
])
def test_bad_frame_closes_only_that_connection(kafkapy_broker, wire_client, producer, frame: bytes) -> None:
    before = produce_ok(producer, "bad-input-alive", b"before")
    bad = wire_client(kafkapy_broker.port)
    bad.send_raw(frame)
    assert bad.is_closed(), "the broker should close a connection that sent a bad frame"
    after = produce_ok(producer, "bad-input-alive", b"after")
    assert after == (before[0], before[1] + 1)
    assert kafkapy_broker.server.is_started


def test_api_versions_unknown_version_gets_v0_error_body(kafkapy_broker, wire_client) -> None:
    client = wire_client(kafkapy_broker.port)
    # ApiVersions v99 with a v2 header (client id "x"), correlation id 0x01020304, arbitrary body.
    client.send_raw(struct.pack(">ihhih", 11 + 4, 18, 99, 0x01020304, 1) + b"x" + b"\x00\x01\x02\x03")
    frame = client.recv_frame()
    # Kafka (KIP-511) answers with the v0 body listing only ApiVersions' own range, so the client can retry.
    body = struct.pack(">hi", 35, 1) + struct.pack(">hhh", 18, 0, 4)
    assert frame == struct.pack(">i", 0x01020304) + body  # v0 response header + v0 body, nothing else
    # The connection stays usable: a supported ApiVersions now succeeds.
    from kafkapy.protocol.messages import ApiVersionsRequest

    resp = client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    assert resp.error_code == 0


def _batch(*values: bytes) -> bytearray:
    builder = MemoryRecordsBuilder()
    for v in values:
        builder.append(1_700_000_000_000, None, v)
    return bytearray(builder.build())


def test_corrupt_batch_gets_corrupt_message_and_appends_nothing(kafkapy_broker, wire_client, producer) -> None:
    topic = "bad-input-crc"
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": kafkapy_broker.bootstrap})
    for f in admin.create_topics([NewTopic(topic, 2, 1)]).values():
        f.result(TIMEOUT_S)
    rm = kafkapy_broker.server.replica_manager
    p0, p1 = rm.get_partition(TopicPartition(topic, 0)), rm.get_partition(TopicPartition(topic, 1))
    good = _batch(b"good-1", b"good-2")
    corrupt = _batch(b"bad-1", b"bad-2")
    corrupt[17] ^= 0xFF  # flip a CRC byte
    leo0, leo1 = p0.log_end_offset, p1.log_end_offset
    client = wire_client(kafkapy_broker.port)
    request = ProduceRequest(acks=1, timeout_ms=10_000, topic_data=[ProduceRequest.TopicProduceData(
        name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=bytes(corrupt)),
                                    ProduceRequest.PartitionProduceData(index=1, records=bytes(good))])])
    for version in (3, 9):
        resp = client.request(request, version)
        parts = {p.index: p for p in resp.responses[0].partition_responses}
        assert parts[0].error_code == ErrorCode.CORRUPT_MESSAGE and parts[0].base_offset == -1
        assert parts[1].error_code == 0 and parts[1].base_offset == leo1
        assert p0.log_end_offset == leo0  # nothing appended
        leo1 += 2
        assert p1.log_end_offset == leo1
    assert produce_ok(producer, topic, b"still fine")[1] >= 0
