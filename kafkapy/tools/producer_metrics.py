"""producer-perf-test --print-metrics: the Java producer's whole metric list, named as kafka-clients 3.9 names it.

Kafka's tool prints every metric of its KafkaProducer (ToolsUtils.printMetrics): `group:name:{tags}` sorted,
with the client's LinkedHashMap tag text (`{client-id=perf-producer-client, node-id=node-0}`). The list is the
Java producer's: `producer-metrics` (Sender, RecordAccumulator, BufferPool, Selector and KafkaProducer
sensors), `producer-node-metrics` per node the client talked to (`node--1` for the bootstrap address,
`node-<id>` for brokers), `producer-topic-metrics` per topic, `app-info` and `kafka-metrics-count`.
Values come from what kafkapy's producer and the perf loop measure (`ProducerFacts`); a metric kafkapy does not
measure prints NaN (what Java prints for a sensor without samples) rather than a made-up number.

Pure functions; thread-safe.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

NAN = math.nan

# producer-metrics sensors, in no particular order (the output is sorted)
PRODUCER_METRICS = (
    "batch-size-avg", "batch-size-max", "batch-split-rate", "batch-split-total", "buffer-available-bytes",
    "buffer-exhausted-rate", "buffer-exhausted-total", "buffer-total-bytes", "bufferpool-wait-ratio",
    "bufferpool-wait-time-ns-total", "bufferpool-wait-time-total", "compression-rate-avg", "connection-close-rate",
    "connection-close-total", "connection-count", "connection-creation-rate", "connection-creation-total",
    "failed-authentication-rate", "failed-authentication-total", "failed-reauthentication-rate",
    "failed-reauthentication-total", "flush-time-ns-total", "incoming-byte-rate", "incoming-byte-total", "io-ratio",
    "io-time-ns-avg", "io-time-ns-total", "io-wait-ratio", "io-wait-time-ns-avg", "io-wait-time-ns-total",
    "io-waittime-total", "iotime-total", "metadata-age", "metadata-wait-time-ns-total", "network-io-rate",
    "network-io-total", "outgoing-byte-rate", "outgoing-byte-total", "produce-throttle-time-avg",
    "produce-throttle-time-max", "reauthentication-latency-avg", "reauthentication-latency-max", "record-error-rate",
    "record-error-total", "record-queue-time-avg", "record-queue-time-max", "record-retry-rate", "record-retry-total",
    "record-send-rate", "record-send-total", "record-size-avg", "record-size-max", "records-per-request-avg",
    "request-latency-avg", "request-latency-max", "request-rate", "request-size-avg", "request-size-max",
    "request-total", "requests-in-flight", "response-rate", "response-total", "select-rate", "select-total",
    "successful-authentication-no-reauth-total", "successful-authentication-rate", "successful-authentication-total",
    "successful-reauthentication-rate", "successful-reauthentication-total", "txn-abort-time-ns-total",
    "txn-begin-time-ns-total", "txn-commit-time-ns-total", "txn-init-time-ns-total", "txn-send-offsets-time-ns-total",
    "waiting-threads",
)
NODE_METRICS = (
    "incoming-byte-rate", "incoming-byte-total", "outgoing-byte-rate", "outgoing-byte-total", "request-latency-avg",
    "request-latency-max", "request-rate", "request-size-avg", "request-size-max", "request-total", "response-rate",
    "response-total",
)
TOPIC_METRICS = (
    "byte-rate", "byte-total", "compression-rate", "record-error-rate", "record-error-total", "record-retry-rate",
    "record-retry-total", "record-send-rate", "record-send-total",
)
# sensors whose value is exactly zero when kafkapy has nothing of the kind (no transactions in the perf loop,
# nobody blocked on buffer memory once the loop has flushed, nothing in flight after the flush)
_ZERO = ("txn-abort-time-ns-total", "txn-begin-time-ns-total", "txn-commit-time-ns-total", "txn-init-time-ns-total",
         "txn-send-offsets-time-ns-total", "waiting-threads", "requests-in-flight")


@dataclass
class ProducerFacts:
    """What kafkapy knows at the end of a perf run."""

    client_id: str
    topics: list[str]
    nodes: list[int]  # node ids the client connected to (-1 ... for bootstrap addresses)
    elapsed_s: float
    records: int = 0
    errors: int = 0
    record_bytes: int | None = None  # payload bytes sent
    flush_ns: int | None = None
    buffer_total_bytes: int | None = None
    start_time_ms: int | None = None
    version: str = "unknown"
    extra: dict[str, float] = field(default_factory=dict)  # producer-metrics name -> value measured elsewhere


def _tags(client_id: str, **more: str) -> str:
    pairs = [f"client-id={client_id}", *(f"{k.replace('_', '-')}={v}" for k, v in more.items())]
    return "{" + ", ".join(pairs) + "}"


def producer_metrics(facts: ProducerFacts) -> dict[str, Any]:
    """Every metric name of Kafka's producer, `group:name:{tags}` -> value (NaN where kafkapy does not measure it)."""
    rate = (lambda n: n / facts.elapsed_s) if facts.elapsed_s > 0 else (lambda n: 0.0)
    known: dict[str, float] = {name: 0.0 for name in _ZERO}
    known.update({"record-send-total": float(facts.records), "record-send-rate": rate(facts.records),
                  "record-error-total": float(facts.errors), "record-error-rate": rate(facts.errors)})
    if facts.flush_ns is not None:
        known["flush-time-ns-total"] = float(facts.flush_ns)
    if facts.buffer_total_bytes is not None:
        known["buffer-total-bytes"] = float(facts.buffer_total_bytes)
        known["buffer-available-bytes"] = float(facts.buffer_total_bytes)  # all of it is free after the flush
    known.update(facts.extra)
    tags = _tags(facts.client_id)
    out: dict[str, Any] = {f"producer-metrics:{n}:{tags}": known.get(n, NAN) for n in PRODUCER_METRICS}
    for node in facts.nodes:
        node_tags = _tags(facts.client_id, node_id=f"node-{node}")
        out.update({f"producer-node-metrics:{n}:{node_tags}": NAN for n in NODE_METRICS})
    for topic in facts.topics:
        topic_known = {"record-send-total": float(facts.records), "record-send-rate": rate(facts.records),
                       "record-error-total": float(facts.errors), "record-error-rate": rate(facts.errors)}
        if facts.record_bytes is not None:
            topic_known.update({"byte-total": float(facts.record_bytes), "byte-rate": rate(facts.record_bytes)})
        topic_tags = _tags(facts.client_id, topic=topic)
        out.update({f"producer-topic-metrics:{n}:{topic_tags}": topic_known.get(n, NAN) for n in TOPIC_METRICS})
    out[f"app-info:commit-id:{tags}"] = "unknown"
    out[f"app-info:start-time-ms:{tags}"] = facts.start_time_ms if facts.start_time_ms is not None else NAN
    out[f"app-info:version:{tags}"] = facts.version
    out[f"kafka-metrics-count:count:{tags}"] = float(len(out))  # the metrics registered besides this one
    return out


def connected_nodes(network_client: Any) -> list[int]:
    """The nodes a producer talks to, as the Java client counts them: the bootstrap address it connected to
    first (node -1) and the brokers it has learnt from metadata."""
    brokers: Iterable[int] = ()
    try:
        brokers = sorted(network_client.cluster.brokers)
    except (AttributeError, TypeError):
        pass
    return [-1, *brokers]


def merge(own: Mapping[str, Any], facts: ProducerFacts) -> dict[str, Any]:
    """The Java list, then any metric kafkapy's producer reports itself under a name of its own."""
    out = producer_metrics(facts)
    out.update({k: v for k, v in own.items() if k not in out})
    return out
