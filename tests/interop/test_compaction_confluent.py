"""Log compaction seen by confluent-kafka (librdkafka): a compacted topic keeps exactly the latest value per
key at its original offset after the broker's cleaner threads ran, a consumer reading from the start while
the cleaner works sees a consistent view each time, tombstones vanish after delete.retention.ms, and
dump-log reads the cleaned segments."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from kafkapy.common.topic_partition import TopicPartition as KTopicPartition  # noqa: E402
from kafkapy.storage.checkpoint_file import CLEANER_OFFSET_CHECKPOINT_FILE, OffsetCheckpointFile  # noqa: E402

TOPIC = "compacted"
KEYS = 20
VALUE_SIZE = 1000
DEADLINE_S = 90

TOPIC_CONFIG = {"cleanup.policy": "compact", "segment.bytes": "1048576", "min.cleanable.dirty.ratio": "0.01",
                "delete.retention.ms": "1000", "compression.type": "producer"}


def key_of(k: int) -> bytes:
    return b"key-%03d" % k


def value_of(k: int, r: int) -> bytes:
    return (b"value-%03d-%05d-" % (k, r)).ljust(VALUE_SIZE, b"v")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from tests.conftest import BrokerHandle, _start_server

    log_dir = str(tmp_path_factory.mktemp("compaction"))
    overrides = {"log.cleaner.backoff.ms": "100", "log.cleaner.dedupe.buffer.size": "1048576"}
    handle = BrokerHandle(_start_server(log_dir, overrides), log_dir, overrides)
    try:
        yield handle
    finally:
        handle.stop()


def produce(bootstrap: str, items: list[tuple[bytes, bytes | None]], **conf) -> list[tuple[int, bytes, bytes | None]]:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    delivered: list[tuple[int, bytes, bytes | None]] = []
    errors: list[object] = []

    def on_delivery(err, msg) -> None:
        if err is not None:
            errors.append(err)
        else:
            delivered.append((msg.offset(), msg.key(), msg.value()))

    for k, v in items:
        while True:
            try:
                producer.produce(TOPIC, key=k, value=v, partition=0, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    assert producer.flush(30) == 0
    assert not errors
    return sorted(delivered)


def consume_all(bootstrap: str, group: str) -> list[tuple[int, bytes, bytes | None]]:
    """Everything from the beginning to the end offset seen at the start of the read."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "enable.partition.eof": True})
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=10)
        consumer.assign([TopicPartition(TOPIC, 0, confluent_kafka.OFFSET_BEGINNING)])
        out: list[tuple[int, bytes, bytes | None]] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == confluent_kafka.KafkaError._PARTITION_EOF and (
                        not out or msg.offset() >= high):
                    break
                continue
            out.append((msg.offset(), msg.key(), msg.value()))
            if msg.offset() >= high - 1:
                break
        return out
    finally:
        consumer.close()


def cleaner_checkpoint(broker) -> int:
    path = os.path.join(broker.log_dir, CLEANER_OFFSET_CHECKPOINT_FILE)
    if not os.path.exists(path):
        return -1
    return OffsetCheckpointFile(path).read().get(KTopicPartition(TOPIC, 0), -1)


def active_base(broker) -> int:
    return broker.server.log_manager.get_log(KTopicPartition(TOPIC, 0)).active_segment.base_offset


def wait_for(cond, what: str, timeout_s: float = DEADLINE_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def check_consistent(seen: list, produced: set, latest_below: dict[bytes, tuple[int, bytes | None]]) -> None:
    """Every record read is one that was produced, at its offset, offsets increase, and the latest value of
    every key produced so far is there."""
    assert set(seen) <= produced
    offsets = [o for o, _, _ in seen]
    assert offsets == sorted(set(offsets))
    last = {k: (o, v) for o, k, v in seen}
    for k, (o, v) in latest_below.items():
        if v is not None:
            assert last[k] == (o, v)


def test_compaction_keeps_latest_per_key_with_a_consistent_view(broker) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(TOPIC, 1, 1, config=TOPIC_CONFIG)]).values():
        f.result(30)
    rounds = 180  # 20 keys x 180 rounds x ~1 KB: 3.6 MB, four 1 MB segments
    items = [(key_of(k), value_of(k, r)) for r in range(rounds) for k in range(KEYS)]
    produced_list = produce(broker.bootstrap, items)
    produced = set(produced_list)
    latest = {k: (o, v) for o, k, v in produced_list}

    # A reader from the start while the cleaner threads run: each full read must be consistent.
    views: list[int] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        n = 0
        while not stop.is_set() and n < 20:
            try:
                check_consistent(consume_all(broker.bootstrap, f"reader-{n}"), produced, latest)
                views.append(n)
            except BaseException as exc:  # reported in the main thread
                failures.append(exc)
                return
            n += 1

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    wait_for(lambda: cleaner_checkpoint(broker) > 0, "the first cleaning pass")
    stop.set()
    t.join(60)
    assert not failures, failures[0]
    assert views

    # Let the cleaner finish everything cleanable (up to the active segment), so no pass races the read.
    wait_for(lambda: cleaner_checkpoint(broker) == active_base(broker), "cleaning up to the active segment")
    checkpoint = cleaner_checkpoint(broker)
    seen = consume_all(broker.bootstrap, "after-clean")
    check_consistent(seen, produced, latest)
    below = [k for o, k, _ in seen if o < checkpoint]
    assert len(below) == len(set(below))  # the cleaned part holds one record per key
    assert len(seen) < len(produced_list) // 2
    # Below the cleaner's checkpoint: exactly each key's last record there, at the offset the producer got.
    last_below = {k: (o, k, v) for o, k, v in produced_list if o < checkpoint}
    assert sorted(r for r in seen if r[0] < checkpoint) == sorted(last_below.values())

    # Tombstones for 5 keys, then enough data to roll the segment twice: the first pass keeps the
    # tombstones (setting their delete horizon), a pass after delete.retention.ms removes them.
    tomb = produce(broker.bootstrap, [(key_of(k), None) for k in range(5)])
    filler = [(key_of(k), value_of(k, 10_000 + r)) for r in range(80) for k in range(5, KEYS)]
    produced_list += tomb + produce(broker.bootstrap, filler)
    tomb_offsets = {o for o, _, _ in tomb}
    wait_for(lambda: cleaner_checkpoint(broker) > max(tomb_offsets), "a pass over the tombstones")
    time.sleep(1.2)  # delete.retention.ms
    produced_list += produce(broker.bootstrap, filler)
    first = cleaner_checkpoint(broker)
    wait_for(lambda: cleaner_checkpoint(broker) > first, "a pass after delete.retention.ms")
    seen = consume_all(broker.bootstrap, "after-tombstones")
    assert not [r for r in seen if r[0] in tomb_offsets]
    assert not [r for r in seen if r[1] in {key_of(k) for k in range(5)}]
    assert set(seen) <= set(produced_list)
    final_latest = {k: (o, v) for o, k, v in sorted(produced_list) if int(k[4:]) >= 5}
    assert {k: (o, v) for o, k, v in seen} == final_latest


def test_dump_log_reads_cleaned_segments(broker) -> None:
    part_dir = os.path.join(broker.log_dir, f"{TOPIC}-0")
    cleaned = [os.path.join(part_dir, n) for n in sorted(os.listdir(part_dir))
               if n.endswith(".log") and int(n[:20]) < cleaner_checkpoint(broker)]
    assert cleaned and sum(os.path.getsize(p) for p in cleaned) > 0
    out = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "dump-log", "--files", ",".join(cleaned),
                          "--print-data-log"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "baseOffset:" in out.stdout and "payload: value-" in out.stdout


def test_null_key_on_a_compacted_topic_gets_invalid_record(broker) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "retries": 0, "message.timeout.ms": 10_000})
    errors: list = []
    producer.produce(TOPIC, value=b"no key", partition=0, on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(30) == 0
    assert len(errors) == 1 and errors[0] is not None
    assert errors[0].code() == confluent_kafka.KafkaError.INVALID_RECORD
    # The partition still takes keyed records.
    assert produce(broker.bootstrap, [(b"keyed", b"fine")])


def test_null_key_produce_response_carries_kafkas_record_errors(broker, wire_client) -> None:
    from kafkapy.protocol.messages import ProduceRequest
    from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

    b = MemoryRecordsBuilder()
    b.append(1_700_000_000_000, b"k", b"v")
    b.append(1_700_000_000_001, None, b"no key")
    request = ProduceRequest(acks=1, timeout_ms=10_000, topic_data=[ProduceRequest.TopicProduceData(
        name=TOPIC, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=b.build())])])
    resp = wire_client(broker.port).request(request, 9)
    part = resp.responses[0].partition_responses[0]
    msg = f"Compacted topic cannot accept message without key in topic partition {TOPIC}-0"
    assert part.error_code == 87 and part.base_offset == -1
    assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [(1, msg)]
    assert part.error_message == ("One or more records have been rejected due to 1 record errors in total, and "
                                  f"only showing the first three errors at most: [RecordError(batchIndex=1, "
                                  f"message='{msg}')]")


def test_kafka_python_reads_the_same_compacted_log(broker) -> None:
    kafka = pytest.importorskip("kafka")
    expected = consume_all(broker.bootstrap, "confluent-view")
    consumer = kafka.KafkaConsumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                   enable_auto_commit=False, group_id=None, consumer_timeout_ms=5000)
    try:
        tp = kafka.TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        seen = []
        for msg in consumer:
            seen.append((msg.offset, msg.key, msg.value))
            if msg.offset >= expected[-1][0]:
                break
    finally:
        consumer.close()
    assert seen == expected
