"""Fetcher: sends Fetch requests to partition leaders and turns responses into ConsumerRecords.

One Fetch in flight per leader (sessionless full fetches: session_id 0, epoch -1), carrying every
fetchable partition it leads with fetch.min.bytes / fetch.max.wait.ms / fetch.max.bytes /
max.partition.fetch.bytes / isolation.level. Fetch v13+ names topics by id (from Metadata v10+);
when a topic id is unknown the version is capped at 12. Responses are decoded with
record.MemoryRecords: control batches are skipped (the position moves past them), records before
the fetch position (inside a compressed batch) are dropped, a partial trailing batch is dropped by
MemoryRecords. OFFSET_OUT_OF_RANGE resets the position by auto.offset.reset (or raises when it is
`none`); leader errors request a metadata refresh. Offsets are looked up with ListOffsets routed
to each partition's leader (client/offset_fetcher.py: earliest -2, latest -1, max-timestamp -3, or a
timestamp).

Thread-safety: owned by the consumer's thread.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import NamedTuple

from kafkapy.client.errors import error_from_code
from kafkapy.client.metadata import ZERO_UUID
from kafkapy.client.network_client import NetworkClient
from kafkapy.client.offset_fetcher import OffsetAndTimestamp, list_offsets
from kafkapy.client.subscription_state import SubscriptionState
from kafkapy.common.errors import ErrorCode, KafkaError, OffsetOutOfRangeError
from kafkapy.common.file_region import FileRegion
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages.fetch import FetchRequest, FetchResponse
from kafkapy.record.control_record import ControlRecordType
from kafkapy.record.legacy_record import LegacyRecordBatch
from kafkapy.record.memory_records import DefaultRecordBatch, MemoryRecords

log = logging.getLogger(__name__)

FETCH_KEY = 1
_LEADER_ERRORS = {
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.FENCED_LEADER_EPOCH,
    ErrorCode.UNKNOWN_LEADER_EPOCH,
    ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.UNKNOWN_TOPIC_ID,
    ErrorCode.INCONSISTENT_TOPIC_ID,
    ErrorCode.REPLICA_NOT_AVAILABLE,
}


class ConsumerRecord(NamedTuple):
    """One fetched record (a NamedTuple: cheap to build per record)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int  # 0 CreateTime, 1 LogAppendTime (-1 none, magic 0)
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = []
    leader_epoch: int | None = None
    serialized_key_size: int = -1
    serialized_value_size: int = -1


@dataclass
class _PartitionRecords:
    """Parsed records of one partition not yet handed to the caller."""

    tp: TopicPartition
    records: list[ConsumerRecord]
    index: int = 0


@dataclass
class _CompletedFetch:
    tp: TopicPartition
    fetch_offset: int
    records: bytes | memoryview | None
    high_watermark: int
    aborted: list[FetchResponse.AbortedTransaction]  # read_committed only
    log_start_offset: int
    last_stable_offset: int


def fetched_batches(
    records: bytes | memoryview | None, position: int, aborted: list[FetchResponse.AbortedTransaction],
    read_committed: bool, check_crcs: bool, tp: TopicPartition
) -> Iterator[tuple[DefaultRecordBatch | LegacyRecordBatch, bool]]:
    """Each batch of a Fetch response's `records` that ends at or after `position`, CRC-checked, with
    whether it holds records for the application: False for control batches and, with read_committed,
    for batches of aborted transactions (Java's Fetcher: a producer is "aborted" from the first offset
    the response lists for it until its ABORT marker). Shared by the consumer and kafkapy.spark's reader."""
    pending_aborts = sorted((a.first_offset, a.producer_id) for a in aborted) if read_committed else []
    aborted_pids: set[int] = set()
    if records is None:  # a null records field: nothing fetched
        return
    for batch in MemoryRecords(records).batches():
        if batch.next_offset <= position:
            continue
        if check_crcs and not batch.is_valid():
            raise error_from_code(
                ErrorCode.CORRUPT_MESSAGE, f"Record batch for partition {tp} at offset {batch.base_offset} is invalid"
            )
        while pending_aborts and pending_aborts[0][0] <= batch.last_offset:
            aborted_pids.add(pending_aborts.pop(0)[1])
        if isinstance(batch, DefaultRecordBatch) and batch.is_control_batch:
            if aborted_pids and batch.control_record_type() == ControlRecordType.ABORT:
                aborted_pids.discard(batch.producer_id)
            yield batch, False
        elif aborted_pids and batch.is_transactional and batch.producer_id in aborted_pids:
            yield batch, False
        else:
            yield batch, True


class Fetcher:
    def __init__(
        self,
        client: NetworkClient,
        subscriptions: SubscriptionState,
        fetch_min_bytes: int = 1,
        fetch_max_bytes: int = 52428800,
        fetch_max_wait_ms: int = 500,
        max_partition_fetch_bytes: int = 1048576,
        isolation_level: int = 0,
        check_crcs: bool = True,
        client_rack: str = "",
        time: Time = SYSTEM,
    ) -> None:
        self.client = client
        self.subscriptions = subscriptions
        self.fetch_min_bytes = fetch_min_bytes
        self.fetch_max_bytes = fetch_max_bytes
        self.fetch_max_wait_ms = fetch_max_wait_ms
        self.max_partition_fetch_bytes = max_partition_fetch_bytes
        self.isolation_level = isolation_level
        self.check_crcs = check_crcs
        self.client_rack = client_rack
        self._time = time
        self._pending: dict[int, tuple[Future, dict[TopicPartition, int], int]] = {}
        self._completed: deque[_CompletedFetch] = deque()
        self._buffered: deque[_PartitionRecords] = deque()

    # ------------------------------------------------------------------------------------------
    # fetching

    def has_pending(self) -> bool:
        return bool(self._pending)

    def has_completed(self) -> bool:
        return bool(self._buffered) or bool(self._completed)

    def send_fetches(self) -> int:
        """Send a Fetch to each leader of fetchable partitions that has none in flight."""
        cluster = self.client.cluster
        by_node: dict[int, list[TopicPartition]] = {}
        buffered = {c.tp for c in self._completed} | {pr.tp for pr in self._buffered}
        in_flight = {tp for _, parts, _ in self._pending.values() for tp in parts}
        for tp in self.subscriptions.fetchable_partitions():
            if tp in buffered or tp in in_flight:
                continue
            leader = cluster.leader_for(tp)
            if leader is None:
                self.client.metadata.add_topics(tp.topic)
                self.client.metadata.request_update()
                continue
            if leader in self._pending:
                continue
            by_node.setdefault(leader, []).append(tp)
        sent = 0
        for node, tps in by_node.items():
            offsets = {tp: self.subscriptions.position(tp).offset for tp in tps}  # type: ignore[union-attr]
            use_ids = all(cluster.topic_id(tp.topic) != ZERO_UUID for tp in tps)
            try:
                future = self.client.send(
                    node, self._fetch_builder(offsets, use_ids), api_key=FETCH_KEY,
                    max_version=None if use_ids else 12,
                )
            except KafkaError as e:
                log.debug("Fetch to node %s not sent: %s", node, e)
                continue
            self._pending[node] = (future, offsets, 0)
            sent += 1
        return sent

    def _fetch_builder(self, offsets: dict[TopicPartition, int], use_ids: bool):
        cluster = self.client.cluster

        def build(version: int) -> FetchRequest:
            topics: dict[str, list] = {}
            for tp, off in offsets.items():
                st = self.subscriptions.state(tp)
                epoch = st.position.current_leader_epoch if st.position else None
                topics.setdefault(tp.topic, []).append(
                    FetchRequest.FetchPartition(
                        partition=tp.partition,
                        current_leader_epoch=-1 if epoch is None else epoch,
                        fetch_offset=off,
                        last_fetched_epoch=-1,
                        log_start_offset=-1,
                        partition_max_bytes=self.max_partition_fetch_bytes,
                    )
                )
            return FetchRequest(
                cluster_id=None,
                replica_id=-1,
                max_wait_ms=self.fetch_max_wait_ms,
                min_bytes=self.fetch_min_bytes,
                max_bytes=self.fetch_max_bytes,
                isolation_level=self.isolation_level,
                session_id=0,
                session_epoch=-1,
                topics=[
                    FetchRequest.FetchTopic(
                        topic=t, topic_id=cluster.topic_id(t) if version >= 13 else ZERO_UUID, partitions=p
                    )
                    for t, p in topics.items()
                ],
                forgotten_topics_data=[],
                rack_id=self.client_rack,
            )

        return build

    def poll_network(self, timeout_ms: float) -> None:
        """Wait up to timeout_ms for in-flight fetches; parse whatever completed."""
        if self._pending and not any(f.done() for f, _, _ in self._pending.values()):
            self.client.poll(timeout_ms, [n for n in self._pending])
        for node in list(self._pending):
            future, offsets, _ = self._pending[node]
            if not future.done():
                continue
            del self._pending[node]
            exc = future.exception()
            if exc is not None:
                log.debug("Fetch to node %s failed: %s", node, exc)
                self.client.metadata.request_update()
                continue
            self._handle_fetch_response(future.result(), offsets)

    def _handle_fetch_response(self, resp: FetchResponse, offsets: dict[TopicPartition, int]) -> None:
        if resp.error_code:
            log.debug("Fetch failed with top-level error %s", resp.error_code)
            self.client.metadata.request_update()
            return
        cluster = self.client.cluster
        for t in resp.responses:
            name = t.topic or cluster.topic_name(t.topic_id)
            if name is None:
                self.client.metadata.request_update()
                continue
            for p in t.partitions:
                tp = TopicPartition(name, p.partition_index)
                if tp not in offsets or not self.subscriptions.is_assigned(tp):
                    continue
                st = self.subscriptions.state(tp)
                if st.position is None or st.position.offset != offsets[tp]:
                    continue  # the user seeked while the fetch was in flight
                code = p.error_code
                if code == ErrorCode.NONE:
                    st.high_watermark = p.high_watermark
                    st.log_start_offset = p.log_start_offset
                    st.last_stable_offset = p.last_stable_offset
                    records = p.records
                    assert not isinstance(records, FileRegion)  # decoded: a memoryview of the response
                    self._completed.append(
                        _CompletedFetch(tp, offsets[tp], records, p.high_watermark, p.aborted_transactions or [],
                                        st.log_start_offset, st.last_stable_offset)
                    )
                elif code == ErrorCode.OFFSET_OUT_OF_RANGE:
                    if self.subscriptions.default_reset.value == "none":
                        raise OffsetOutOfRangeError(
                            f"Fetch position FetchPosition{{offset={offsets[tp]}}} is out of range for "
                            f"partition {tp}"
                        )
                    log.info("Fetch position %s is out of range for partition %s, resetting offset",
                             offsets[tp], tp)
                    self.subscriptions.request_offset_reset(tp)
                elif code in _LEADER_ERRORS:
                    self.client.metadata.request_update()
                elif code == ErrorCode.TOPIC_AUTHORIZATION_FAILED or code == ErrorCode.CORRUPT_MESSAGE:
                    raise error_from_code(code, f"partition {tp}")
                else:
                    log.warning("Unexpected error code %s while fetching %s", code, tp)

    # ------------------------------------------------------------------------------------------
    # records

    def fetched_records(self, max_records: int) -> list[ConsumerRecord]:
        out: list[ConsumerRecord] = []
        while len(out) < max_records:
            if self._buffered:
                pr = self._buffered[0]
                st = self.subscriptions.state(pr.tp) if self.subscriptions.is_assigned(pr.tp) else None
                if st is None or st.paused or st.position is None:
                    self._buffered.popleft()
                    continue
                take = pr.records[pr.index : pr.index + (max_records - len(out))]
                pr.index += len(take)
                if pr.index >= len(pr.records):
                    self._buffered.popleft()
                out.extend(take)
                last = take[-1]
                # Positions advance as records are handed out (the buffer may hold more).
                self.subscriptions.seek(pr.tp, last.offset + 1, last.leader_epoch)
                continue
            if not self._completed:
                break
            cf = self._completed.popleft()
            if not self.subscriptions.is_assigned(cf.tp):
                continue
            st = self.subscriptions.state(cf.tp)
            if st.position is None or st.position.offset != cf.fetch_offset or st.paused:
                continue
            recs = self._parse(cf)
            if recs:
                self._buffered.append(_PartitionRecords(cf.tp, recs))
        return out

    def _parse(self, cf: _CompletedFetch) -> list[ConsumerRecord]:
        if cf.records is None or len(cf.records) == 0:
            return []
        tp = cf.tp
        topic, partition = tp.topic, tp.partition
        position = cf.fetch_offset
        out: list[ConsumerRecord] = []
        next_offset = position
        for batch, is_data in fetched_batches(cf.records, position, cf.aborted, bool(self.isolation_level),
                                              self.check_crcs, tp):
            next_offset = batch.next_offset
            if not is_data:
                continue
            ts_type = batch.timestamp_type
            leader_epoch = batch.partition_leader_epoch
            epoch = None if leader_epoch < 0 else leader_epoch
            for r in batch.records():
                if r.offset < position:
                    continue
                out.append(ConsumerRecord(
                    topic, partition, r.offset, r.timestamp, ts_type, r.key, r.value,
                    r.headers, epoch,
                    -1 if r.key is None else len(r.key), -1 if r.value is None else len(r.value),
                ))
        if not out and next_offset > position:
            # Only control batches / already-consumed records: move past them so fetching progresses.
            # (A control batch after the last record is skipped the same way by the next fetch.)
            self.subscriptions.seek(tp, next_offset)
        return out

    def clear_buffered(self, tp: TopicPartition | None = None) -> None:
        if tp is None:
            self._buffered.clear()
            self._completed.clear()
            return
        self._buffered = deque(pr for pr in self._buffered if pr.tp != tp)
        self._completed = deque(c for c in self._completed if c.tp != tp)

    # ------------------------------------------------------------------------------------------
    # offsets

    def list_offsets(
        self, timestamps: dict[TopicPartition, int], timeout_ms: float, isolation_level: int | None = None
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        iso = self.isolation_level if isolation_level is None else isolation_level
        return list_offsets(self.client, timestamps, timeout_ms, iso)

    def reset_offsets_if_needed(self, timeout_ms: float) -> None:
        needing = self.subscriptions.partitions_needing_reset()
        if not needing:
            return
        found = self.list_offsets(needing, timeout_ms)
        for tp, ts in needing.items():
            if not self.subscriptions.is_assigned(tp):
                continue
            st = self.subscriptions.state(tp)
            if st.reset_timestamp != ts:
                continue
            oat = found.get(tp)
            if oat is None:
                # No record at/after that timestamp: Kafka resets to the log end.
                end = self.list_offsets({tp: -1}, timeout_ms).get(tp)
                self.subscriptions.seek(tp, end.offset if end else 0)
            else:
                self.subscriptions.seek(tp, oat.offset, oat.leader_epoch)
            log.info("Resetting offset for partition %s to position %s.", tp, st.position.offset if st.position else None)
