"""kafkapy's client keeps working when its sockets' descriptors are above 1023 (select's FD_SETSIZE).

The test process first opens enough descriptors that every socket created afterwards (the client's
connections, and the in-process broker's accepted connections) gets a number above 1023, then an
AdminClient creates a topic, a KafkaProducer sends (sender thread waits on its connections) and a
KafkaConsumer reads the records back (NetworkClient.poll / BrokerConnection reads): exact offsets
and values.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator

import pytest

from kafkapy.client.admin import AdminClient, NewTopic
from kafkapy.client.consumer import KafkaConsumer
from kafkapy.client.producer import KafkaProducer
from kafkapy.common.topic_partition import TopicPartition

HIGH = 1100


@pytest.fixture
def descriptors_above_1023() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = HIGH + 200
    if soft < needed:
        # Raising the soft limit up to the hard one needs no privilege.
        assert hard == resource.RLIM_INFINITY or hard >= needed, f"RLIMIT_NOFILE hard limit {hard} < {needed}"
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    fillers = []
    while True:
        fd = os.open(os.devnull, os.O_RDONLY)
        fillers.append(fd)
        if fd >= HIGH:
            break
    try:
        yield
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_client_with_descriptors_above_1023(kafkapy_broker, descriptors_above_1023) -> None:
    bootstrap = kafkapy_broker.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.create_topics([NewTopic("high-fd", 1, 1)])
    finally:
        admin.close()
    producer = KafkaProducer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    try:
        probe = os.open(os.devnull, os.O_RDONLY)
        os.close(probe)
        assert probe > 1023  # what the client's sockets get too
        futures = [producer.send("high-fd", b"value-%d" % i) for i in range(50)]
        producer.flush(30)
        assert [f.result(0).offset for f in futures] == list(range(50))
    finally:
        producer.close(10)
    consumer = KafkaConsumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition("high-fd", 0)])
        got: list = []
        deadline = time.monotonic() + 30
        while len(got) < 50 and time.monotonic() < deadline:
            got.extend(consumer.poll(500))
        assert [(r.offset, r.value) for r in got] == [(i, b"value-%d" % i) for i in range(50)]
    finally:
        consumer.close()
