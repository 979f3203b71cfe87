"""Shared by the transaction interop tests: an in-process broker with small transaction/offsets topics, and
confluent-kafka helpers (create a topic, read a group's offset, consume to the end of each partition)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

TXN_OVERRIDES = {
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "transaction.state.log.num.partitions": "4",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",  # a group's first join does not wait Kafka's default 3 s
}


@dataclass
class TxnBroker:
    server: Any
    log_dir: str

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.server.bound_port()}"


def start_txn_broker(log_dir: str, time: Any = None, **overrides: str) -> TxnBroker:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    props = dict(TXN_OVERRIDES, **{"log.dirs": log_dir})
    props.update(overrides)
    config = KafkaConfig.from_properties(None, props)
    server = KafkaServer(config) if time is None else KafkaServer(config, time)
    server.startup()
    return TxnBroker(server, log_dir)


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    """Create a topic with confluent-kafka's AdminClient (replication factor 1)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(30)


def group_offset(bootstrap: str, group: str, topic: str) -> int:
    """The group's committed offset for topic partition 0 (negative: none), read with confluent-kafka."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0)])])
    return futures[group].result(10).topic_partitions[0].offset


def consume_all(bootstrap: str, topic: str, partitions: int, isolation: str, expected: int | None = None,
                timeout_s: float = 20.0) -> list[tuple[int, int, bytes]]:
    """(partition, offset, value) of every record up to each partition's end (librdkafka's EOF: the LSO for
    read_committed), with a confluent-kafka consumer; stops early once `expected` records arrived."""
    import confluent_kafka
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}-{isolation}-{time.monotonic_ns()}",
                  "isolation.level": isolation, "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[tuple[int, int, bytes]] = []
    eofs: set[int] = set()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == confluent_kafka.KafkaError._PARTITION_EOF:
                    eofs.add(m.partition())
                    if len(eofs) == partitions and (expected is None or len(out) >= expected):
                        break
                    continue
                raise KafkaException(m.error())
            out.append((m.partition(), m.offset(), m.value()))
            eofs.discard(m.partition())
    finally:
        c.close()
    return out
