"""KafkaConsumer: Kafka's consumer API with manual assignment (group membership comes later).

`assign([TopicPartition])`, `seek`, `seek_to_beginning/end`, `position`, `offsets_for_times`,
`beginning_offsets`, `end_offsets`, `pause/resume`, `poll(timeout_ms) -> list[ConsumerRecord]`,
`close()`. Positions of newly assigned partitions come from auto.offset.reset (there is no group
to hold committed offsets yet). The Fetcher keeps one Fetch in flight per leader and pipelines the
next fetch while the caller processes records.

Group membership (group.id set) lives in kafkapy.client.consumer_coordinator: `subscribe(topics |
pattern, listener)`, `commit_sync`, `commit_async`, `committed` and `unsubscribe` delegate to the
ConsumerCoordinator, poll() drives it through `_coordinator_poll`, and committed offsets initialise
the positions of partitions that have none.

Thread-safety: not thread-safe (like Java's KafkaConsumer); use it from one thread, except
`wakeup()`/`close()`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from kafkapy.client.abstract_coordinator import DEFAULT_CLOSE_TIMEOUT_MS
from kafkapy.client.config import ConsumerConfig
from kafkapy.client.errors import KafkaTimeoutError
from kafkapy.client.fetcher import ConsumerRecord, Fetcher, OffsetAndTimestamp
from kafkapy.client.metadata import PartitionInfo
from kafkapy.client.network_client import NetworkClient
from kafkapy.client.subscription_state import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    OffsetResetStrategy,
    SubscriptionState,
    SubscriptionType,
)
from kafkapy.common.errors import KafkaError
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition

log = logging.getLogger(__name__)

__all__ = ["KafkaConsumer", "Consumer", "ConsumerRecord", "OffsetAndTimestamp", "TopicPartition"]

_ids = iter(range(1, 1 << 62))
_ids_lock = threading.Lock()


class KafkaConsumer:
    def __init__(self, configs: Mapping[str, Any] | None = None, time: Time = SYSTEM, **overrides: Any) -> None:
        self.config = ConsumerConfig(configs, **overrides)
        cfg = self.config
        if not cfg["client.id"]:
            with _ids_lock:
                n = next(_ids)
            cfg._values["client.id"] = f"consumer-{cfg['group.id'] or ''}-{n}" if cfg["group.id"] else f"consumer-{n}"
        self._time = time
        self.client = NetworkClient(cfg, time)
        self.subscriptions = SubscriptionState(OffsetResetStrategy(cfg["auto.offset.reset"]))
        self.fetcher = Fetcher(
            self.client,
            self.subscriptions,
            fetch_min_bytes=int(cfg["fetch.min.bytes"]),
            fetch_max_bytes=int(cfg["fetch.max.bytes"]),
            fetch_max_wait_ms=int(cfg["fetch.max.wait.ms"]),
            max_partition_fetch_bytes=int(cfg["max.partition.fetch.bytes"]),
            isolation_level=1 if cfg["isolation.level"] == "read_committed" else 0,
            check_crcs=bool(cfg["check.crcs"]),
            client_rack=cfg["client.rack"] or "",
            time=time,
        )
        self.default_api_timeout_ms = int(cfg["default.api.timeout.ms"])
        self.max_poll_records = int(cfg["max.poll.records"])
        self._key_deserializer = cfg["key.deserializer"] if callable(cfg["key.deserializer"]) else None
        self._value_deserializer = cfg["value.deserializer"] if callable(cfg["value.deserializer"]) else None
        self._closed = False
        self._wakeup = threading.Event()
        # group membership (kafkapy.client.consumer_coordinator); None without a group.id
        self._coordinator = None
        if cfg["group.id"]:
            from kafkapy.client.consumer_coordinator import ConsumerCoordinator

            self._coordinator = ConsumerCoordinator(self.client, self.subscriptions, self.fetcher, cfg, time)

    # ------------------------------------------------------------------------------------------
    # assignment

    def assign(self, partitions: Iterable[TopicPartition | tuple[str, int]]) -> None:
        tps = [TopicPartition(tp[0], tp[1]) for tp in partitions]
        for tp in self.subscriptions.assigned_partitions():
            if tp not in tps:
                self.fetcher.clear_buffered(tp)
        self.subscriptions.assign(tps)
        self.client.metadata.set_topics({tp.topic for tp in tps})

    def assignment(self) -> set[TopicPartition]:
        return set(self.subscriptions.assigned_partitions())

    def subscribe(self, topics: Iterable[str] = (), pattern: Any = None, listener: Any = None) -> None:
        """Join the group for `topics` (or every topic matching the regex `pattern`)."""
        if isinstance(topics, str):
            topics = [topics]
        topics = list(topics)
        if not topics and pattern is None:
            self.unsubscribe()
            return
        self._group_coordinator().subscribe(topics, pattern, listener)

    def unsubscribe(self) -> None:
        self.fetcher.clear_buffered()
        if self._coordinator is not None:
            self._coordinator.unsubscribe()
        self.subscriptions.unsubscribe()

    # ------------------------------------------------------------------------------------------
    # group offsets (kafkapy.client.consumer_coordinator)

    def _group_coordinator(self):
        if self._coordinator is None:
            from kafkapy.common.errors import InvalidGroupIdError

            raise InvalidGroupIdError("To use the group management or offset commit APIs, you must provide a valid "
                                      "group.id in the consumer configuration.")
        return self._coordinator

    def commit_sync(self, offsets: Mapping[TopicPartition, Any] | None = None, timeout_ms: float | None = None) -> None:
        self._group_coordinator().offsets.commit_sync(offsets, timeout_ms)

    def commit_async(self, offsets: Mapping[TopicPartition, Any] | None = None, callback: Any = None) -> None:
        self._group_coordinator().offsets.commit_async(offsets, callback)

    def committed(self, partitions: Iterable[TopicPartition], timeout_ms: float | None = None) -> dict[TopicPartition, Any]:
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        return self._group_coordinator().offsets.fetch_committed_offsets(partitions, timeout_ms)

    def subscription(self) -> set[str]:
        return set(self.subscriptions.subscription)

    # ------------------------------------------------------------------------------------------
    # positions

    def seek(self, partition: TopicPartition, offset: int, leader_epoch: int | None = None) -> None:
        if offset < 0:
            raise ValueError(f"seek offset must not be a negative number: {offset}")
        tp = TopicPartition(*partition)
        self.fetcher.clear_buffered(tp)
        self.subscriptions.seek(tp, offset, leader_epoch)

    def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        for tp in self._partitions_or_all(partitions):
            self.fetcher.clear_buffered(tp)
            self.subscriptions.request_offset_reset(tp, EARLIEST_TIMESTAMP)

    def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        for tp in self._partitions_or_all(partitions):
            self.fetcher.clear_buffered(tp)
            self.subscriptions.request_offset_reset(tp, LATEST_TIMESTAMP)

    def _partitions_or_all(self, partitions: Iterable[TopicPartition] | None) -> list[TopicPartition]:
        if partitions is None:
            return self.subscriptions.assigned_partitions()
        return [TopicPartition(*tp) for tp in partitions]

    def position(self, partition: TopicPartition, timeout_ms: float | None = None) -> int:
        """The offset of the next record that will be fetched (resolving a pending reset)."""
        tp = TopicPartition(*partition)
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        if not self.subscriptions.state(tp).has_valid_position():
            self._update_fetch_positions(timeout_ms)
        pos = self.subscriptions.position(tp)
        if pos is None:
            raise KafkaTimeoutError(f"Timeout of {timeout_ms}ms expired before the position for partition {tp} could be determined")
        return pos.offset

    def _update_fetch_positions(self, timeout_ms: float) -> None:
        if self._coordinator is not None:
            self._coordinator.offsets.refresh_committed_offsets_if_needed(timeout_ms)
        for tp in self.subscriptions.missing_positions():
            if self.subscriptions.default_reset is OffsetResetStrategy.NONE:
                from kafkapy.common.errors import OffsetOutOfRangeError

                raise OffsetOutOfRangeError(f"Undefined offset with no reset policy for partitions: [{tp}]")
            self.subscriptions.request_offset_reset(tp)
        self.fetcher.reset_offsets_if_needed(timeout_ms)

    def beginning_offsets(self, partitions: Iterable[TopicPartition], timeout_ms: float | None = None) -> dict[TopicPartition, int]:
        return self._offsets(partitions, EARLIEST_TIMESTAMP, timeout_ms)

    def end_offsets(self, partitions: Iterable[TopicPartition], timeout_ms: float | None = None) -> dict[TopicPartition, int]:
        return self._offsets(partitions, LATEST_TIMESTAMP, timeout_ms)

    def _offsets(self, partitions: Iterable[TopicPartition], ts: int, timeout_ms: float | None) -> dict[TopicPartition, int]:
        tps = [TopicPartition(*tp) for tp in partitions]
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        found = self.fetcher.list_offsets(dict.fromkeys(tps, ts), timeout_ms)
        return {tp: (o.offset if (o := found.get(tp)) else -1) for tp in tps}

    def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int], timeout_ms: float | None = None
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        for tp, ts in timestamps.items():
            if ts < 0:
                raise ValueError(f"The target time for partition {tp} is {ts}. The target time cannot be negative.")
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        return self.fetcher.list_offsets({TopicPartition(*tp): ts for tp, ts in timestamps.items()}, timeout_ms)

    def partitions_for_topic(self, topic: str, timeout_ms: float | None = None) -> list[PartitionInfo]:
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        cluster = self.client.update_metadata(sorted(self.client.metadata.topics | {topic}), timeout_ms)
        return cluster.partitions_for_topic(topic)

    def list_topics(self, timeout_ms: float | None = None) -> dict[str, list[PartitionInfo]]:
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        resp = self.client.fetch_metadata(None, timeout_ms)
        from kafkapy.client.metadata import Cluster

        cluster = Cluster.from_response(resp)
        return {name: cluster.partitions_for_topic(name) for name in cluster.topics}

    # ------------------------------------------------------------------------------------------
    # pause

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.subscriptions.pause(TopicPartition(*tp))

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.subscriptions.resume(TopicPartition(*tp))

    def paused(self) -> set[TopicPartition]:
        return self.subscriptions.paused_partitions()

    # ------------------------------------------------------------------------------------------
    # poll

    def poll(self, timeout_ms: float = 0, max_records: int | None = None) -> list[ConsumerRecord]:
        """Records fetched since the last poll (waiting up to timeout_ms for some to arrive)."""
        if self._closed:
            raise KafkaError("This consumer has already been closed.")
        if self.subscriptions.subscription_type is SubscriptionType.NONE:
            raise ValueError("Consumer is not subscribed to any topics or assigned any partitions")
        max_records = self.max_poll_records if max_records is None else max_records
        deadline = self._time.milliseconds() + timeout_ms
        self._wakeup.clear()
        while True:
            self._coordinator_poll(deadline)
            remaining = max(0, deadline - self._time.milliseconds())
            self.client.maybe_update_metadata(max(remaining, 1000))
            # Invalid or unauthorized subscribed/assigned topics never resolve: raise, as Java's poll() does.
            self.client.metadata.maybe_throw_any_exception()
            if not self.subscriptions.has_all_fetch_positions():
                try:
                    self._update_fetch_positions(max(remaining, 1000))
                except KafkaError as e:
                    if not e.retriable:
                        raise
                    log.debug("offset reset failed: %s", e)
            records = self.fetcher.fetched_records(max_records)
            if records:
                self.fetcher.send_fetches()  # pipeline the next fetch while the caller works
                return self._deserialize(records)
            self.fetcher.send_fetches()
            remaining = deadline - self._time.milliseconds()
            if remaining <= 0 or self._wakeup.is_set():
                # Read whatever already arrived without waiting, so poll(0) loops make progress.
                self.fetcher.poll_network(0)
                records = self.fetcher.fetched_records(max_records)
                if records:
                    self.fetcher.send_fetches()
                    return self._deserialize(records)
                return []
            self.fetcher.poll_network(min(remaining, self.fetcher.fetch_max_wait_ms + 100))
            if not self.fetcher.has_pending() and not self.fetcher.has_completed():
                # Nothing could be sent (no leader / connection backoff): avoid a busy loop.
                self._time.sleep(min(max(deadline - self._time.milliseconds(), 0), self.client.retry_backoff_ms))

    def _coordinator_poll(self, deadline: float) -> None:
        """Group membership: heartbeats, rebalances, auto-commit (kafkapy.client.consumer_coordinator)."""
        if self._coordinator is not None:
            self._coordinator.poll(deadline)

    def _deserialize(self, records: list[ConsumerRecord]) -> list[ConsumerRecord]:
        kd, vd = self._key_deserializer, self._value_deserializer
        if kd is None and vd is None:
            return records
        out = []
        for r in records:
            key = kd(r.topic, r.key) if kd and r.key is not None else r.key
            value = vd(r.topic, r.value) if vd and r.value is not None else r.value
            out.append(ConsumerRecord(r.topic, r.partition, r.offset, r.timestamp, r.timestamp_type, key, value,
                                      r.headers, r.leader_epoch, r.serialized_key_size, r.serialized_value_size))
        return out

    def __iter__(self):
        while not self._closed:
            yield from self.poll(1000)

    def wakeup(self) -> None:
        self._wakeup.set()

    def close(self, timeout_ms: float | None = None) -> None:
        """Commit (auto commit), leave the group and close the connections within timeout_ms
        (default 30 s, Java's DEFAULT_CLOSE_TIMEOUT_MS): one deadline for the whole close."""
        if timeout_ms is None:
            timeout_ms = DEFAULT_CLOSE_TIMEOUT_MS
        if timeout_ms < 0:
            raise ValueError("The timeout cannot be negative.")
        if self._closed:
            return
        self._closed = True
        try:
            if self._coordinator is not None:
                self._coordinator.close(timeout_ms)
        finally:
            self.client.close()  # closes sockets only: no wait

    def __enter__(self) -> KafkaConsumer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


Consumer = KafkaConsumer
