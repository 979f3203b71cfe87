"""`__consumer_offsets` is compacted: thousands of confluent-kafka offset commits for one group roll its
partition's segments, the cleaner keeps one record per (group, topic, partition) key, and after a
restart the group coordinator loads the cleaned log and returns the last committed offsets."""

from __future__ import annotations

import os
import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from kafkapy.common.topic_partition import TopicPartition as KTopicPartition  # noqa: E402
from kafkapy.storage.checkpoint_file import CLEANER_OFFSET_CHECKPOINT_FILE, OffsetCheckpointFile  # noqa: E402

TOPIC = "committed"
PARTITIONS = 50
COMMITS = 120
GROUP = "compaction-group-" + "g" * 200  # long keys: the offsets partition rolls sooner
OVERRIDES = {"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1",
             "offsets.topic.segment.bytes": "1048576", "log.cleaner.backoff.ms": "100"}


def test_consumer_offsets_is_compacted_and_reloads(broker_factory) -> None:
    broker = broker_factory(overrides=OVERRIDES)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)]).values():
        f.result(30)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    try:
        for i in range(COMMITS):
            consumer.commit(offsets=[TopicPartition(TOPIC, p, i * 10 + p) for p in range(PARTITIONS)],
                            asynchronous=False)
    finally:
        consumer.close()
    offsets_tp = KTopicPartition("__consumer_offsets", 0)
    lg = broker.server.log_manager.get_log(offsets_tp)
    assert lg.config.compact and len(lg.segments) >= 2
    checkpoint_file = os.path.join(broker.log_dir, CLEANER_OFFSET_CHECKPOINT_FILE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if os.path.exists(checkpoint_file) and OffsetCheckpointFile(checkpoint_file).read().get(offsets_tp, 0) > 0:
            break
        time.sleep(0.1)
    cleaned_to = OffsetCheckpointFile(checkpoint_file).read()[offsets_tp]
    assert cleaned_to > 0
    kept_below = sum(1 for s in lg.segments if s.base_offset < cleaned_to for _ in s.log.batches_from(0))
    assert kept_below <= PARTITIONS + 5  # about one batch per key (+ the group's metadata records)

    broker.restart()
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": GROUP, "enable.auto.commit": False})
    try:
        committed = consumer.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)], timeout=30)
    finally:
        consumer.close()
    assert [(tp.partition, tp.offset) for tp in committed] == [
        (p, (COMMITS - 1) * 10 + p) for p in range(PARTITIONS)]
