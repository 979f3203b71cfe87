"""`kafkapy e2e-latency` logic (Kafka's EndToEndLatency, kafka-e2e-latency.sh).

Sends num_messages records one at a time (linger.ms=0, acks 1 or all, waiting for each ack), polls each back
with a consumer assigned to the topic's partitions at their end (fetch.max.wait.ms=0), checks it is the one
record sent, and times send + receive. As Kafka: the payload is message_size_bytes copies of one random
upper-case letter drawn with java.util.Random(0); progress every 1000 messages as `<i>\\t<elapsed ms>`; then
`Avg latency: %.4f ms` and `Percentiles: 50th = %d, 99th = %d, 99.9th = %d` over whole milliseconds; a missing
topic is created with 1 partition and replication factor 1. No byte format. Thread-safety: one run per call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkapy.tools import ToolFailure

POLL_TIMEOUT_MS = 60_000
USAGE = ("USAGE: java org.apache.kafka.tools.EndToEndLatency broker_list topic num_messages producer_acks "
         "message_size_bytes [optional] properties_file")


class JavaRandom:
    """java.util.Random's 48-bit LCG (Kafka's payload letters come from Random(0).nextInt(26))."""

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ 0x5DEECE66D) & ((1 << 48) - 1)

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * 0x5DEECE66D + 0xB) & ((1 << 48) - 1)
        value = self._seed >> (48 - bits)
        return value - (1 << 32) if value >= 1 << 31 else value  # Java's (int) cast

    def next_int(self, bound: int) -> int:
        if bound & -bound == bound:
            return (bound * self._next(31)) >> 31
        while True:
            bits = self._next(31)
            val = bits % bound
            if bits - val + (bound - 1) < (1 << 31):
                return val


@dataclass
class LatencyResult:
    num_messages: int
    avg_latency_ms: float
    p50: int
    p99: int
    p999: int
    latencies_ms: list[int] = field(default_factory=list)


def payloads(size: int, count: int) -> Iterator[bytes]:
    rnd = JavaRandom(0)
    for _ in range(count):
        yield bytes([rnd.next_int(26) + 65]) * size


def run_latency(brokers: str, topic: str, num_messages: int, acks: str, size: int, props: Mapping[str, str],
                progress: Callable[[str], None]) -> LatencyResult:
    from kafkapy.client.consumer import KafkaConsumer
    from kafkapy.client.producer import KafkaProducer
    from kafkapy.common.topic_partition import TopicPartition

    if acks not in ("1", "all"):
        raise ToolFailure("Latency testing requires synchronous acknowledgement. Please use 1 or all")
    base = dict(props)
    base["bootstrap.servers"] = brokers
    consumer = KafkaConsumer({**base, "group.id": f"test-group-{int(time.time() * 1000)}",
                              "enable.auto.commit": "false", "auto.offset.reset": "latest",
                              "fetch.max.wait.ms": "0"})
    producer = KafkaProducer({**base, "linger.ms": "0", "acks": acks})
    try:
        if topic not in consumer.list_topics():
            progress(f'Topic "{topic}" does not exist. Will create topic with 1 partition(s) and replication '
                     "factor = 1")
            _create_topic(base, topic)
        tps = [TopicPartition(topic, p.partition) for p in consumer.partitions_for_topic(topic)]
        consumer.assign(tps)
        consumer.seek_to_end(tps)
        for tp in tps:
            consumer.position(tp)
        total_ns = 0
        latencies: list[int] = []
        for i, message in enumerate(payloads(size, num_messages)):
            begin = time.perf_counter_ns()
            producer.send(topic, message).result(POLL_TIMEOUT_MS / 1000)
            records = _poll_one(consumer)
            elapsed = time.perf_counter_ns() - begin
            _validate(consumer, message, records)
            if i % 1000 == 0:
                progress(f"{i}\t{_java_double(elapsed / 1000.0 / 1000.0)}")
            total_ns += elapsed
            latencies.append(elapsed // 1000 // 1000)
        consumer.commit_sync()
    finally:
        producer.close()
        consumer.close()
    ordered = sorted(latencies)
    n = len(ordered)
    return LatencyResult(n, total_ns / n / 1e6 if n else 0.0, ordered[int(n * 0.5)] if n else 0,
                         ordered[int(n * 0.99)] if n else 0, ordered[int(n * 0.999)] if n else 0, latencies)


def _poll_one(consumer: Any) -> list[Any]:
    """One poll() of up to POLL_TIMEOUT_MS, as Kafka's (which returns as soon as records arrive)."""
    deadline = time.monotonic() + POLL_TIMEOUT_MS / 1000
    while True:
        remaining = deadline - time.monotonic()
        records = consumer.poll(timeout_ms=max(0.0, remaining * 1000))
        if records or remaining <= 0:
            return list(records)


def _validate(consumer: Any, message: bytes, records: list[Any]) -> None:
    if not records:
        consumer.commit_sync()
        raise ToolFailure(f"poll() timed out before finding a result (timeout:[{POLL_TIMEOUT_MS}])")
    read = records[0].value or b""
    if read != message:
        consumer.commit_sync()
        raise ToolFailure(f"The message read [{read.decode('utf-8', 'replace')}] did not match the message sent "
                          f"[{message.decode('utf-8', 'replace')}]")
    if len(records) != 1:
        consumer.commit_sync()
        raise ToolFailure(f"Only one result was expected during this test. We found [{len(records)}]")


def _create_topic(props: Mapping[str, str], topic: str) -> None:
    from kafkapy.client.admin_types import NewTopic
    from kafkapy.tools.tool_support import admin_client

    admin = admin_client(props["bootstrap.servers"], {k: v for k, v in props.items() if k != "bootstrap.servers"})
    try:
        admin.create_topics([NewTopic(topic, 1, 1)])
    except Exception as e:
        raise ToolFailure(f"Creation of topic {topic} failed: {e}") from e
    finally:
        admin.close()


def _java_double(value: float) -> str:
    text = repr(value)
    return text if "." in text or "e" in text else text + ".0"
