"""BrokerTopicStats: Kafka's `kafka.server:type=BrokerTopicMetrics` meters, all topics and per topic.

Recording sites (one call each, per partition of a request, never per record):
- `ReplicaManager.append_records`: `on_append(topic, bytes, messages)` after a leader append (BytesInPerSec,
  MessagesInPerSec, TotalProduceRequestsPerSec), `on_append_failed(topic, bytes, error_code)` otherwise
  (FailedProduceRequestsPerSec, or BytesRejectedPerSec for a record/batch too large, as Kafka's Log does);
- the Fetch handler's response: `on_fetch_response(results, from_follower)` (BytesOutPerSec for consumers,
  ReplicationBytesOutPerSec for followers, TotalFetchRequestsPerSec, FailedFetchRequestsPerSec);
- the replica fetcher: `on_replication_in(bytes)` (ReplicationBytesInPerSec).
Per-topic meters carry a `topic` tag and are created on a topic's first use; the all-topics ones carry none
(Kafka's KafkaMetricsGroup drops the empty tag). Replication meters exist for all topics only, as in Kafka.
The hot calls only queue their facts: one row of int64 per partition-batch onto the topic's queue
(kafkapy/metrics/recorders.py's RowQueues; `on_append` is its compiled `append` itself: one C call, one dict
look-up by the topic name, whose hash Python caches; no Python object is retained, so the garbage collector
sees no growth): appends (bytes, messages), fetched partitions (bytes, error 0/1, follower 0/1). `fold`, run
by the registry every second and before each snapshot, drains the queues, sums each topic's columns with C
loops and marks each meter once. A BrokerTopicStats built without a registry records nothing (metrics off).

Thread-safety: no lock on the hot calls (a row is appended whole under the GIL; a drain takes all queues in
one swap); one fold at a time; each Meter has its own lock.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Mapping
from typing import Any

from kafkapy.metrics.meter import Meter
from kafkapy.metrics.recorders import RowQueues
from kafkapy.metrics.registry import KafkaMetricsGroup, MetricsRegistry

MAX_PENDING = 100_000  # rows queued with no fold (no tick thread): fold inline
_REJECTED = (10, 18)  # MESSAGE_TOO_LARGE (RecordTooLarge), RECORD_LIST_TOO_LARGE (RecordBatchTooLarge)
_NOT_FAILED = (3, 6, 2, 56)  # unknown partition, not leader, corrupt, storage: Kafka does not count these


class TopicMeters:
    __slots__ = ("messages_in", "bytes_in", "bytes_out", "bytes_rejected", "failed_produce", "failed_fetch",
                 "total_produce", "total_fetch")

    def __init__(self, group: KafkaMetricsGroup, topic: str) -> None:
        self.messages_in = group.meter("MessagesInPerSec", "messages", topic=topic)
        self.bytes_in = group.meter("BytesInPerSec", "bytes", topic=topic)
        self.bytes_out = group.meter("BytesOutPerSec", "bytes", topic=topic)
        self.bytes_rejected = group.meter("BytesRejectedPerSec", "bytes", topic=topic)
        self.failed_produce = group.meter("FailedProduceRequestsPerSec", "requests", topic=topic)
        self.failed_fetch = group.meter("FailedFetchRequestsPerSec", "requests", topic=topic)
        self.total_produce = group.meter("TotalProduceRequestsPerSec", "requests", topic=topic)
        self.total_fetch = group.meter("TotalFetchRequestsPerSec", "requests", topic=topic)


def _not_recorded(topic: str, size: int, messages: int) -> None:
    """on_append with metrics off."""


class BrokerTopicStats:
    on_append: Callable[[str, int, int], None]
    """on_append(topic, bytes, messages): a leader append of one partition's batches (per batch set, never per
    record)."""

    def __init__(self, registry: MetricsRegistry | None = None) -> None:
        self.enabled = registry is not None
        self._lock = threading.Lock()
        self._fold_lock = threading.Lock()
        self._topics: dict[str, TopicMeters] = {}
        self._appends = RowQueues(2, MAX_PENDING, self.fold)  # topic -> (bytes, messages) per appended batch
        self._fetches = RowQueues(3, MAX_PENDING, self.fold)  # topic -> (bytes, error, follower) per partition
        if registry is None:
            self.on_append = _not_recorded
            return
        self.on_append = self._appends.append
        registry.add_folder(self.fold)
        self._group = KafkaMetricsGroup(registry, "kafka.server", "BrokerTopicMetrics")
        self.all_topics = TopicMeters(self._group, "")
        self.replication_bytes_in: Meter = self._group.meter("ReplicationBytesInPerSec", "bytes")
        self.replication_bytes_out: Meter = self._group.meter("ReplicationBytesOutPerSec", "bytes")

    def topic_stats(self, topic: str) -> TopicMeters:
        meters = self._topics.get(topic)
        if meters is None:
            with self._lock:
                meters = self._topics.get(topic)
                if meters is None:
                    meters = self._topics[topic] = TopicMeters(self._group, topic)
        return meters

    def remove_topic(self, topic: str) -> None:
        """Drop a deleted topic's meters (Kafka's removeMetrics) and what it still had queued."""
        with self._fold_lock:
            self._fold(topic)
            with self._lock:
                if self._topics.pop(topic, None) is not None:
                    self._group.registry.remove_where(
                        lambda n: n.type == "BrokerTopicMetrics" and n.tag("topic") == topic)

    def fold(self) -> None:
        with self._fold_lock:
            self._fold(None)

    def _fold(self, dropped: str | None) -> None:
        """Mark the meters with what was queued, except a dropped topic's rows (the caller holds the fold lock)."""
        a = self.all_topics
        for topic, queue in self._appends.drain().items():
            if topic == dropped:
                continue
            rows = array("q", queue)
            size, count, n = sum(rows[0::2]), sum(rows[1::2]), len(rows) // 2
            t = self.topic_stats(topic)
            t.total_produce.mark(n)
            a.total_produce.mark(n)
            t.bytes_in.mark(size)
            a.bytes_in.mark(size)
            t.messages_in.mark(count)
            a.messages_in.mark(count)
        for topic, queue in self._fetches.drain().items():
            if topic != dropped:
                self._fold_fetches(topic, array("q", queue).tolist())

    def on_append_failed(self, topic: str, size: int, error_code: int) -> None:
        if not self.enabled:
            return
        t, a = self.topic_stats(topic), self.all_topics
        t.total_produce.mark()
        a.total_produce.mark()
        if error_code in _REJECTED:
            t.bytes_rejected.mark(size)
            a.bytes_rejected.mark(size)
        elif error_code not in _NOT_FAILED:
            t.failed_produce.mark()
            a.failed_produce.mark()

    def on_fetch_response(self, results: Mapping[Any, Any], from_follower: bool) -> None:
        """results: {TopicPartition: FetchPartitionData} as the Fetch handler answers them; one row of ints per
        partition, appended to its topic's queue."""
        if not self.enabled:
            return
        append = self._fetches.append
        follower = 1 if from_follower else 0
        for tp, data in results.items():
            records = data.records
            size = 0 if records is None else (records.length if hasattr(records, "length") else len(records))
            append(tp.topic, size, 1 if data.error else 0, follower)

    def _fold_fetches(self, topic: str, flat: list[int]) -> None:
        sizes, errors, followers = flat[0::3], flat[1::3], flat[2::3]
        n = len(sizes)
        failed = sum(errors)
        replicated = sum(followers)
        if not replicated:
            out, replication = sum(sizes), 0
        elif replicated == n:
            out, replication = 0, sum(sizes)
        else:
            replication = sum(size for size, follower in zip(sizes, followers, strict=True) if follower)
            out = sum(sizes) - replication
        a, t = self.all_topics, self.topic_stats(topic)
        a.total_fetch.mark(n)
        t.total_fetch.mark(n)
        if failed:
            a.failed_fetch.mark(failed)
            t.failed_fetch.mark(failed)
        if out:
            a.bytes_out.mark(out)
            t.bytes_out.mark(out)
        if replication:
            self.replication_bytes_out.mark(replication)

    def on_replication_in(self, size: int) -> None:
        if self.enabled and size:
            self.replication_bytes_in.mark(size)


DISABLED = BrokerTopicStats()
