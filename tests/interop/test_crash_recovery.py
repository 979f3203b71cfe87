"""Crash safety: a subprocess broker is SIGKILLed while a confluent-kafka producer (acks=1) streams to
it; after a restart on the same log dir every acknowledged message is served at its acknowledged
offset, offsets are contiguous, only whole batches written by the producer are served (a torn tail
appended to the active segment after the kill is cut by recovery), and appends continue after the
recovered end."""

from __future__ import annotations

import glob
import os
import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

TOPIC = "crash"
PARTITIONS = 2
KILL_AFTER_ACKS = 5_000
DEADLINE_S = 60


def value_of(i: int) -> bytes:
    return b"crash-%08d-" % i + b"p" * (i % 300)


def test_sigkill_mid_stream_then_recover(broker_process) -> None:
    broker = broker_process()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)]).values():
        f.result(30)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "1", "linger.ms": 2,
                         "enable.idempotence": False, "message.timeout.ms": 3000, "retries": 0,
                         "reconnect.backoff.max.ms": 200})
    acked: dict[tuple[int, int], int] = {}

    def on_delivery(err, msg) -> None:
        if err is None:
            acked[(msg.partition(), msg.offset())] = int(msg.value()[6:14])

    killed_at = None
    deadline = time.monotonic() + DEADLINE_S
    i = 0
    while time.monotonic() < deadline:
        try:
            producer.produce(TOPIC, value=value_of(i), partition=i % PARTITIONS, on_delivery=on_delivery)
            i += 1
        except BufferError:
            pass
        producer.poll(0)
        if killed_at is None and len(acked) >= KILL_AFTER_ACKS:
            broker.kill()  # mid-stream: requests are in flight
            killed_at = i
        if killed_at is not None and i >= killed_at + 500:
            break
    assert killed_at is not None, f"only {len(acked)} acks before the deadline"
    producer.flush(10)
    acked_before_restart = dict(acked)
    assert len(acked_before_restart) >= KILL_AFTER_ACKS

    # Simulate a torn write at the tail of partition 0's active segment.
    segment = sorted(glob.glob(os.path.join(broker.log_dir, f"{TOPIC}-0", "*.log")))[-1]
    valid_size = os.path.getsize(segment)
    with open(segment, "ab") as f:
        f.write(b"\x00" * 8 + b"\x00\x00\x10\x00" + os.urandom(200))

    again = broker_process(log_dir=broker.log_dir)
    assert os.path.getsize(segment) == valid_size  # the torn tail was truncated by recovery
    consumer = Consumer({"bootstrap.servers": again.bootstrap, "group.id": "crash", "enable.auto.commit": False,
                         "check.crcs": True})
    ends = {p: consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=10) for p in range(PARTITIONS)}
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    served: dict[tuple[int, int], int] = {}
    total = sum(hi for _lo, hi in ends.values())
    deadline = time.monotonic() + DEADLINE_S
    while len(served) < total and time.monotonic() < deadline:
        for msg in consumer.consume(min(5000, total - len(served)), 1.0):  # returns once that many arrived
            assert msg.error() is None, msg.error()
            index = int(msg.value()[6:14])
            assert msg.value() == value_of(index)  # only whole, producer-written records
            served[(msg.partition(), msg.offset())] = index
    consumer.close()
    assert len(served) == total
    for p, (lo, hi) in ends.items():
        assert lo == 0
        offsets = sorted(o for (part, o) in served if part == p)
        assert offsets == list(range(hi))  # contiguous, no gap, no garbage
        indexes = [served[(p, o)] for o in offsets]
        assert indexes == sorted(indexes) and all(x % PARTITIONS == p for x in indexes)
    for pos, index in acked_before_restart.items():
        assert served.get(pos) == index, f"acknowledged message {index} at {pos} lost"

    producer2 = Producer({"bootstrap.servers": again.bootstrap, "acks": "1"})
    after: list[tuple[int, int]] = []
    producer2.produce(TOPIC, value=b"after", partition=0,
                      on_delivery=lambda err, msg: after.append((msg.partition(), msg.offset())))
    assert producer2.flush(10) == 0
    assert after == [(0, ends[0][1])]
    assert again.stop() == 0
    assert os.path.exists(os.path.join(broker.log_dir, ".kafka_cleanshutdown"))
