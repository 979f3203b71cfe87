"""Produce-time record validation (Kafka's LogValidator): poison batches with correct CRCs are refused.

Each case is a raw Produce v9 frame built from the generated classes whose one batch has a valid
header and CRC-32C but records a client cannot read: garbage, a record count of 2^31-1 holding one
record, gzip-flagged bytes that are not gzip, trailing bytes, a varint running past 5 bytes, a key
length of -5, an offset-delta gap. Each gets its error (and Kafka's record errors for null keys on a
compacted topic and out-of-range timestamps), nothing is appended, and good batches produced after
them are read back exactly by confluent-kafka and kafka-python.
"""

from __future__ import annotations

import pytest

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from kafkapy.common.errors import ErrorCode  # noqa: E402
from kafkapy.protocol.messages import ProduceRequest  # noqa: E402
from kafkapy.record.batch_header import BatchHeader, write_batch  # noqa: E402
from kafkapy.record.compression import CompressionType, compress  # noqa: E402
from kafkapy.record.default_record import encode_record  # noqa: E402

TIMEOUT_S = 30
TOPIC = "poison"
COMPACTED = "poison-compacted"
BOUNDED_TS = "poison-timestamps"
TS = 1_700_000_000_000
CORRUPT, INVALID, INVALID_TS = ErrorCode.CORRUPT_MESSAGE, ErrorCode.INVALID_RECORD, ErrorCode.INVALID_TIMESTAMP


def batch(records: bytes, count: int, last_offset_delta: int | None = None, codec: int = 0,
          base_ts: int = TS, max_ts: int | None = None) -> bytes:
    """A magic-2 batch with a correct CRC around `records` (already compressed when codec is set)."""
    lod = count - 1 if last_offset_delta is None else last_offset_delta
    header = BatchHeader(0, 0, -1, 2, 0, codec, lod, base_ts, base_ts if max_ts is None else max_ts, -1, -1, -1,
                         count)
    return write_batch(header, codec, header.base_timestamp, header.max_timestamp, count, records)


def recs(*items: tuple[int, int, bytes | None, bytes | None]) -> bytes:
    return b"".join(encode_record(od, tsd, k, v) for od, tsd, k, v in items)


def _flip(data: bytes, index: int) -> bytes:
    out = bytearray(data)
    out[index] ^= 0xFF
    return bytes(out)


ONE = recs((0, 0, b"k", b"v"))
POISON = {
    "garbage": (batch(b"\xfe\x01garbage-garbage-garbage", 1), INVALID),
    "count-2^31-1": (batch(ONE, 2**31 - 1), INVALID),
    "gzip-flag-not-gzip": (batch(ONE, 1, codec=CompressionType.GZIP), CORRUPT),
    "trailing-bytes": (batch(ONE + b"\x00\x00\x00", 1), INVALID),
    "varint-overflow": (batch(b"\xff\xff\xff\xff\xff\xff\x01" + ONE, 1), INVALID),
    "negative-key-length": (batch(b"\x0e\x00\x00\x00\x09\x02v\x00", 1), INVALID),
    "offset-delta-gap": (batch(recs((0, 0, b"a", b"1"), (2, 0, b"b", b"2")), 2), INVALID),
    "gzip-offset-delta-gap": (batch(compress(CompressionType.GZIP, recs((0, 0, b"a", b"1"), (5, 0, b"b", b"2"))),
                                    2, codec=CompressionType.GZIP), INVALID),
    "zstd-count-short": (batch(compress(CompressionType.ZSTD, ONE), 2, codec=CompressionType.ZSTD), INVALID),
    "zstd-truncated-frame": (batch(compress(CompressionType.ZSTD, ONE * 3)[:-2], 1, codec=CompressionType.ZSTD),
                             CORRUPT),
    "lz4-frame-without-end-mark": (batch(compress(CompressionType.LZ4, ONE)[:-4], 1, codec=CompressionType.LZ4),
                                   CORRUPT),
    "lz4-wrong-header-checksum": (batch(_flip(compress(CompressionType.LZ4, ONE), 6), 1, codec=CompressionType.LZ4),
                                  CORRUPT),
    "snappy-flag-not-snappy": (batch(b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01" + ONE, 1,
                                     codec=CompressionType.SNAPPY), CORRUPT),
}


@pytest.fixture(scope="module")
def topics(kafkapy_broker):
    admin = AdminClient({"bootstrap.servers": kafkapy_broker.bootstrap})
    new = [NewTopic(TOPIC, 1, 1), NewTopic("poison-legacy", 1, 1), NewTopic(COMPACTED, 1, 1, config={"cleanup.policy": "compact"}),
           NewTopic(BOUNDED_TS, 1, 1, config={"message.timestamp.before.max.ms": "3600000",
                                              "message.timestamp.after.max.ms": "3600000"})]
    for f in admin.create_topics(new).values():
        f.result(TIMEOUT_S)
    return kafkapy_broker


def produce(wire, topic: str, records: bytes, version: int = 9):
    request = ProduceRequest(acks=1, timeout_ms=10_000, topic_data=[ProduceRequest.TopicProduceData(
        name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=records)])])
    return wire.request(request, version).responses[0].partition_responses[0]


@pytest.mark.parametrize("case", list(POISON))
def test_poison_batch_is_refused_and_appends_nothing(topics, wire_client, case: str) -> None:
    records, code = POISON[case]
    wire = wire_client(topics.port)
    from kafkapy.common.topic_partition import TopicPartition

    partition = topics.server.replica_manager.get_partition(TopicPartition(TOPIC, 0))
    before = partition.log_end_offset
    part = produce(wire, TOPIC, records)
    assert (part.error_code, part.base_offset) == (code, -1), part
    assert part.record_errors == []
    if code == INVALID:
        assert part.error_message and f"{TOPIC}-0" in part.error_message
    assert partition.log_end_offset == before


def test_null_keys_on_a_compacted_topic_carry_record_errors(topics, wire_client) -> None:
    wire = wire_client(topics.port)
    part = produce(wire, COMPACTED, batch(compress(CompressionType.LZ4, recs(
        (0, 0, b"k", b"v"), (1, 0, None, b"x"), (2, 0, b"k2", None), (3, 0, None, b"y"))), 4,
        codec=CompressionType.LZ4))
    msg = f"Compacted topic cannot accept message without key in topic partition {COMPACTED}-0"
    assert part.error_code == INVALID and part.base_offset == -1
    assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [(1, msg), (3, msg)]
    assert part.error_message == (
        "One or more records have been rejected due to 2 record errors in total, and only showing the first "
        f"three errors at most: [RecordError(batchIndex=1, message='{msg}'), RecordError(batchIndex=3, "
        f"message='{msg}')]")


def test_out_of_range_timestamps_carry_record_errors(topics, wire_client) -> None:
    import time

    wire = wire_client(topics.port)
    now = int(time.time() * 1000)
    hour = 3_600_000
    # record 1 is two hours old, record 2 two hours ahead: only those two are named.
    records = recs((0, 0, b"a", b"1"), (1, -2 * hour, b"b", b"2"), (2, 2 * hour, b"c", b"3"))
    part = produce(wire, BOUNDED_TS, batch(records, 3, base_ts=now, max_ts=now + 2 * hour))
    assert part.error_code == INVALID_TS and part.base_offset == -1
    assert part.error_message == "One or more records have been rejected due to invalid timestamp"
    errors = [(e.batch_index, e.batch_index_error_message) for e in part.record_errors]
    assert [i for i, _ in errors] == [1, 2]
    assert errors[0][1].startswith(f"Timestamp {now - 2 * hour} of message with offset 1 is out of range. "
                                   "The timestamp should be within [")
    ok = produce(wire, BOUNDED_TS, batch(recs((0, 0, b"a", b"1"), (1, 5, b"b", b"2")), 2, base_ts=now,
                                         max_ts=now + 5))
    assert (ok.error_code, ok.base_offset) == (0, 0)


GOOD = [(b"g0", b"good-0"), (b"g1", b"good-1"), (b"g2", None), (None, b"good-3")]


def test_good_batches_after_poison_are_read_exactly(topics, wire_client) -> None:
    wire = wire_client(topics.port)
    for records, _code in POISON.values():  # poison again, interleaved with good batches
        assert produce(wire, TOPIC, records).error_code != 0
    plain = recs(*[(i, i, k, v) for i, (k, v) in enumerate(GOOD[:2])])
    zstd = compress(CompressionType.ZSTD, recs(*[(i, i, k, v) for i, (k, v) in enumerate(GOOD[2:])]))
    first = produce(wire, TOPIC, batch(plain, 2, max_ts=TS + 1))
    assert produce(wire, TOPIC, POISON["garbage"][0]).error_code == INVALID
    second = produce(wire, TOPIC, batch(zstd, 2, codec=CompressionType.ZSTD, max_ts=TS + 1))
    assert (first.error_code, second.error_code) == (0, 0)
    base = first.base_offset
    assert second.base_offset == base + 2
    expected = [(base + i, k, v) for i, (k, v) in enumerate(GOOD)]

    consumer = ck.Consumer({"bootstrap.servers": topics.bootstrap, "group.id": "poison-check",
                            "enable.auto.commit": False})
    seen: list = []
    try:
        consumer.assign([ck.TopicPartition(TOPIC, 0, base)])
        for _ in range(100):
            msg = consumer.poll(0.2)
            if msg is None:
                if len(seen) >= len(expected):
                    break
                continue
            assert msg.error() is None, msg.error()
            seen.append((msg.offset(), msg.key(), msg.value()))
    finally:
        consumer.close()
    assert seen == expected

    kafka = pytest.importorskip("kafka")
    kp = kafka.KafkaConsumer(bootstrap_servers=topics.bootstrap, enable_auto_commit=False, group_id=None,
                             consumer_timeout_ms=3000)
    try:
        tp = kafka.TopicPartition(TOPIC, 0)
        kp.assign([tp])
        kp.seek(tp, base)
        got = [(m.offset, m.key, m.value) for m in kp]
    finally:
        kp.close()
    assert got == expected


def test_legacy_produce_v2_wrapper_is_decompressed_within_message_max_bytes(topics, wire_client) -> None:
    from kafkapy.record.legacy_record import LegacyRecordBatchBuilder

    wire = wire_client(topics.port)
    bomb = LegacyRecordBatchBuilder(1, CompressionType.GZIP)
    bomb.append(TS, b"k", bytes(8 << 20))  # 8 MiB of zeros in an 8 KB gzip wrapper
    part = produce(wire, "poison-legacy", bomb.build(), version=2)
    assert (part.error_code, part.base_offset) == (CORRUPT, -1)
    small = LegacyRecordBatchBuilder(1, CompressionType.GZIP)
    small.append(TS, b"k", b"legacy value")
    ok = produce(wire, "poison-legacy", small.build(), version=2)
    assert (ok.error_code, ok.base_offset) == (0, 0)


@pytest.mark.parametrize("version", [3, 7, 8, 12])
def test_record_errors_only_where_the_version_has_them(topics, wire_client, version: int) -> None:
    wire = wire_client(topics.port)
    part = produce(wire, COMPACTED, batch(recs((0, 0, None, b"x")), 1), version=version)
    assert part.error_code == INVALID and part.base_offset == -1
    if version >= 8:
        assert [e.batch_index for e in part.record_errors] == [0] and part.error_message
    else:
        assert part.record_errors == [] and part.error_message is None
