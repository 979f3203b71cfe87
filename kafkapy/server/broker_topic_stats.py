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
The hot calls only queue their facts as int64 rows in `array('q')`s: appends (topic id, bytes, messages),
fetched partitions (topic id, bytes, error 0/1, follower 0/1); topic ids index a list of names. `fold`, run by
the registry every second and before each snapshot, sums them per topic and marks each meter once.
A BrokerTopicStats built without a registry records nothing (metrics off).

Thread-safety: each array extend is one atomic row; topic ids are assigned under a lock; one fold at a time;
each Meter has its own lock.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Mapping
from typing import Any

from kafkapy.metrics.meter import Meter
from kafkapy.metrics.registry import KafkaMetricsGroup, MetricsRegistry

MAX_PENDING = 100_000
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


class BrokerTopicStats:
    def __init__(self, registry: MetricsRegistry | None = None) -> None:
        self.enabled = registry is not None
        self._lock = threading.Lock()
        self._fold_lock = threading.Lock()
        self._topics: dict[str, TopicMeters] = {}
        # Appends as int64 rows (topic id, bytes, messages): nothing outlives on_append for the GC to track.
        self._appends = array("q")
        self._topic_ids: dict[str, int] = {}
        self._topic_names: list[str] = []
        self._fetches = array("q")  # (topic id, bytes, error 0/1, from follower 0/1) per fetched partition
        if registry is None:
            return
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
        """Drop a deleted topic's meters (Kafka's removeMetrics)."""
        with self._lock:
            if self._topics.pop(topic, None) is not None:
                self._group.registry.remove_where(lambda n: n.type == "BrokerTopicMetrics" and n.tag("topic") == topic)

    def on_append(self, topic: str, size: int, messages: int) -> None:
        if self.enabled:
            topic_id = self._topic_ids.get(topic)
            if topic_id is None:
                topic_id = self._topic_id(topic)
            self._appends.extend((topic_id, size, messages))
            if len(self._appends) > 3 * MAX_PENDING:  # nothing folding: stay bounded
                self.fold()

    def _topic_id(self, topic: str) -> int:
        with self._lock:
            topic_id = self._topic_ids.get(topic)
            if topic_id is None:
                topic_id = self._topic_ids[topic] = len(self._topic_names)
                self._topic_names.append(topic)
            return topic_id

    def fold(self) -> None:
        with self._fold_lock:
            appends, fetches = self._appends, self._fetches
            n = len(appends)  # whole rows: each extend is atomic
            rows = appends[:n]
            del appends[:n]
            ids, byte_counts, message_counts = rows[0::3], rows[1::3], rows[2::3]
            per_topic: dict[str, list[int]] = {}
            if ids and min(ids) == max(ids):  # one topic: C sums
                per_topic[self._topic_names[ids[0]]] = [len(ids), sum(byte_counts), sum(message_counts)]
            else:
                for topic_id, size, count in zip(ids, byte_counts, message_counts, strict=True):
                    acc = per_topic.setdefault(self._topic_names[topic_id], [0, 0, 0])
                    acc[0] += 1
                    acc[1] += size
                    acc[2] += count
            n = len(fetches)
            if n:
                rows = fetches[:n]
                del fetches[:n]
                self._fold_fetches(rows)
            a = self.all_topics
            for topic, (requests, size, messages) in per_topic.items():
                t = self.topic_stats(topic)
                t.total_produce.mark(requests)
                a.total_produce.mark(requests)
                t.bytes_in.mark(size)
                a.bytes_in.mark(size)
                t.messages_in.mark(messages)
                a.messages_in.mark(messages)

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
        """results: {TopicPartition: FetchPartitionData} as the Fetch handler answers them; one int64 row per
        partition (nothing retained for the garbage collector)."""
        if not self.enabled:
            return
        ids, rows = self._topic_ids, self._fetches
        follower = 1 if from_follower else 0
        for tp, data in results.items():
            topic_id = ids.get(tp.topic)
            if topic_id is None:
                topic_id = self._topic_id(tp.topic)
            records = data.records
            size = 0 if records is None else (records.length if hasattr(records, "length") else len(records))
            rows.extend((topic_id, size, 1 if data.error else 0, follower))
        if len(rows) > 4 * MAX_PENDING:
            self.fold()

    def _fold_fetches(self, rows: array[int]) -> None:
        ids, sizes, errors, followers = rows[0::4], rows[1::4], rows[2::4], rows[3::4]
        a = self.all_topics
        a.total_fetch.mark(len(ids))
        failed = sum(errors)
        if failed:
            a.failed_fetch.mark(failed)
        per_topic: dict[int, list[int]] = {}
        consumer_bytes = replication_bytes = 0
        for topic_id, size, error, follower in zip(ids, sizes, errors, followers, strict=True):
            acc = per_topic.setdefault(topic_id, [0, 0, 0])
            acc[0] += 1
            acc[1] += error
            if follower:
                replication_bytes += size
            else:
                acc[2] += size
                consumer_bytes += size
        if consumer_bytes:
            a.bytes_out.mark(consumer_bytes)
        if replication_bytes:
            self.replication_bytes_out.mark(replication_bytes)
        for topic_id, (requests, topic_failed, out) in per_topic.items():
            t = self.topic_stats(self._topic_names[topic_id])
            t.total_fetch.mark(requests)
            if topic_failed:
                t.failed_fetch.mark(topic_failed)
            if out:
                t.bytes_out.mark(out)

    def on_replication_in(self, size: int) -> None:
        if self.enabled and size:
            self.replication_bytes_in.mark(size)


DISABLED = BrokerTopicStats()
