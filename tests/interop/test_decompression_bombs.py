"""Decompression bombs cannot grow the broker's memory: produce validation streams compressed batches.

A subprocess broker gets, over raw Produce v9 connections, batches of a few KB that decompress to
hundreds of MB: one record with a 400 MiB value of zeros (zstd, gzip), and 20 million identical small
records (zstd), sent again and again to a compacted topic and to a topic whose compression.type (lz4)
differs from the batch's, the two paths that used to decompress whole batches into a Python object per
record. Each is answered MESSAGE_TOO_LARGE (its decompressed records pass max.message.bytes) and the
log stays empty, while the broker's peak RSS (VmHWM in /proc/<pid>/status) stays within 300 MB of its
idle RSS and a bystander confluent-kafka producer on its own topic is served throughout. With
max.message.bytes raised to 512 MiB the same batches are walked to the end and the 400 MiB values stored
(re-encoded in lz4 on one topic) while RSS stays as bounded: records stream past, never held whole.
"""

from __future__ import annotations

import statistics
import threading
import time
import zlib

import pytest
import zstandard

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from memory_bound_support import produce_latencies_ms, status_kb  # noqa: E402

from kafkapy.common.errors import ErrorCode  # noqa: E402
from kafkapy.protocol.messages import ProduceRequest  # noqa: E402
from kafkapy.record.batch_header import BatchHeader, write_batch  # noqa: E402
from kafkapy.record.default_record import encode_record  # noqa: E402
from kafkapy.record.varint import encode_varint  # noqa: E402

MIB = 1 << 20
RSS_BUDGET = 300 * MIB
BOMB_S = 6.0
TS = 1_700_000_000_000
TOPICS = {"bomb-compacted": {"cleanup.policy": "compact"}, "bomb-recompressed": {"compression.type": "lz4"}}


def _compress_stream(codec: int, parts) -> bytes:
    c = zstandard.ZstdCompressor(level=3).compressobj() if codec == 4 else zlib.compressobj(6, zlib.DEFLATED, 31)
    return b"".join(c.compress(p) for p in parts) + c.flush()


def _batch(codec: int, count: int, payload: bytes) -> bytes:
    header = BatchHeader(0, 0, -1, 2, 0, codec, count - 1, TS, TS, -1, -1, -1, count)
    return write_batch(header, codec, TS, TS, count, payload)


def big_value_bomb(codec: int, value_size: int = 400 * MIB) -> bytes:
    """One record whose value is `value_size` zero bytes, compressed as a stream (never held whole)."""
    body_head = b"\x00" + encode_varint(0) + encode_varint(0) + encode_varint(3) + b"key" + encode_varint(value_size)
    length = len(body_head) + value_size + 1
    zeros = bytes(MIB)
    parts = [encode_varint(length) + body_head, *(zeros for _ in range(value_size // MIB)), b"\x00"]
    return _batch(codec, 1, _compress_stream(codec, parts))


def many_records_bomb(count: int = 20_000_000) -> bytes:
    """`count` identical 7-byte records (zstd): the 'one Python object per record' bomb."""
    record = encode_record(0, 0, b"k", b"")
    per_chunk = MIB // len(record)
    block = record * per_chunk
    parts = [block] * (count // per_chunk) + [record * (count % per_chunk)]
    return _batch(4, count, _compress_stream(4, parts))


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    out = {"zstd-400MiB-value": big_value_bomb(4), "gzip-400MiB-value": big_value_bomb(1),
           "zstd-20M-records": many_records_bomb()}
    assert all(len(b) < 500_000 for b in out.values()), {k: len(v) for k, v in out.items()}
    return out


def produce(wire, topic: str, records: bytes):
    request = ProduceRequest(acks=1, timeout_ms=30_000, topic_data=[ProduceRequest.TopicProduceData(
        name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=records)])])
    return wire.request(request, 9).responses[0].partition_responses[0]


def test_bombs_leave_rss_bounded_and_the_bystander_served(broker_process, wire_client, bombs) -> None:
    broker = broker_process()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    new = [NewTopic(t, 1, 1, config=c) for t, c in TOPICS.items()] + [NewTopic("bystander", 1, 1)]
    for f in admin.create_topics(new).values():
        f.result(30)
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap, "acks": "1", "linger.ms": 0})
    deadline = time.monotonic() + 60
    produce_latencies_ms(producer, "bystander", 20, deadline)  # warm up
    quiet = produce_latencies_ms(producer, "bystander", 40, deadline)
    idle_kb = status_kb(broker.pid, "VmRSS")

    answers: list[tuple[str, str, int, int]] = []
    stop = threading.Event()

    def bomber() -> None:
        wire = wire_client(broker.port, timeout_s=60)
        for _round in range(20):  # bounded: at most 20 rounds of 6 bombs
            for topic in TOPICS:
                for name, records in bombs.items():
                    if stop.is_set():
                        return
                    part = produce(wire, topic, records)
                    answers.append((topic, name, part.error_code, part.base_offset))

    thread = threading.Thread(target=bomber, daemon=True)
    thread.start()
    loud: list[float] = []
    end = time.monotonic() + BOMB_S
    while time.monotonic() < end:
        loud += produce_latencies_ms(producer, "bystander", 10, end)
    stop.set()
    thread.join(60)
    assert not thread.is_alive()
    peak_kb = status_kb(broker.pid, "VmHWM")
    quiet_p50, loud_p50 = statistics.median(quiet), statistics.median(loud)
    print(f"idle RSS {idle_kb // 1024} MiB, peak RSS {peak_kb // 1024} MiB after {len(answers)} bombs; bystander "
          f"produce p50 quiet {quiet_p50:.2f} ms, under bombs {loud_p50:.2f} ms ({len(loud)} samples)")
    assert len(answers) >= len(bombs) * len(TOPICS)
    assert {(code, base) for _t, _n, code, base in answers} == {(ErrorCode.MESSAGE_TOO_LARGE, -1)}
    assert (peak_kb - idle_kb) * 1024 < RSS_BUDGET
    assert loud and loud_p50 <= 2 * max(quiet_p50, 1.0)
    assert broker.proc.poll() is None
    consumer = ck.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "bomb-check"})
    try:
        for topic in TOPICS:
            assert consumer.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10) == (0, 0)
    finally:
        consumer.close()


LARGE = {"large-limit-recompressed": {"compression.type": "lz4", "max.message.bytes": str(512 * MIB)},
         "large-limit-compacted": {"cleanup.policy": "compact", "max.message.bytes": str(512 * MIB)}}


def test_valid_giant_batches_stream_through_with_bounded_rss(broker_process, wire_client, bombs) -> None:
    """With max.message.bytes raised to 512 MiB the same batches are valid and stored (re-encoded in lz4 on
    one topic): the 400 MiB value streams past the walk and the recompression, never held whole."""
    broker = broker_process()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(t, 1, 1, config=c) for t, c in LARGE.items()]).values():
        f.result(30)
    wire = wire_client(broker.port, timeout_s=60)
    produce(wire, "large-limit-compacted", _batch(0, 1, encode_record(0, 0, b"warm", b"up")))
    idle_kb = status_kb(broker.pid, "VmRSS")
    expected = dict.fromkeys(LARGE, 0)
    expected["large-limit-compacted"] = 1
    for topic in LARGE:
        for name, records in bombs.items():
            part = produce(wire, topic, records)
            if name == "zstd-20M-records":  # walked to the end, all 140 MB: every offset delta is 0
                assert (part.error_code, part.base_offset) == (ErrorCode.INVALID_RECORD, -1), (topic, name)
                continue
            assert (part.error_code, part.base_offset) == (0, expected[topic]), (topic, name)
            expected[topic] += 1
    peak_kb = status_kb(broker.pid, "VmHWM")
    print(f"idle RSS {idle_kb // 1024} MiB, peak RSS {peak_kb // 1024} MiB after storing 4 records of 400 MiB and "
          "walking 2 x 20M records")
    assert (peak_kb - idle_kb) * 1024 < RSS_BUDGET
    consumer = ck.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "bomb-check"})
    try:
        for topic in LARGE:
            assert consumer.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10) == (0, expected[topic])
    finally:
        consumer.close()
    from kafkapy.record.batch_header import read_batch_header

    seg = f"{broker.log_dir}/large-limit-recompressed-0/00000000000000000000.log"
    with open(seg, "rb") as f:
        first = read_batch_header(f.read(61))
    assert first.compression_codec == 3 and first.records_count == 1  # the 400 MiB value, now lz4
