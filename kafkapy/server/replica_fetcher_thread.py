"""ReplicaFetcherThread: one follower thread fetching a set of partitions from one leader broker (Kafka's
AbstractFetcherThread + ReplicaFetcherThread, the OffsetsForLeaderEpoch flavour of Kafka 2.x).

Each partition is Truncating or Fetching. Truncating: ask the leader (OffsetForLeaderEpoch, replica id =
this broker) for the end offset of this replica's latest leader epoch and truncate the local log to it
(a replica without epochs truncates to its HW); when the leader answers an epoch this replica does not
have, truncate to the end of the largest epoch below it and ask again (every round also drops the epoch-cache
entries at or past the log end, so the epoch asked about strictly decreases until the two agree). The
decision, the truncation and the next fetch offset are taken under the partition's lock, and an append or
truncation is fenced by the leader epoch the request was sent at: the answer of a leader this replica no
longer follows never lands (Kafka's partitionLeaderEpoch check). Fetching: one Fetch request
(replica_id = this broker, `replica.fetch.*` sizes and wait) for every ready partition, in an incremental
fetch session (KIP-227, fetch_session.FetchSessionHandler): after the first full fetch only partitions whose
fetch state changed are sent, and the leader answers only partitions with news; each answer's
batches are appended as they are, with the leader's offsets (Partition.append_records_to_follower), the
follower's HW becomes min(leader HW, its log end) and its log start follows the leader's.
OFFSET_OUT_OF_RANGE: if the leader's log end is below ours, truncate to it; else start over at the
leader's log start offset (ListOffsets). Other partition errors delay that partition by
`replica.fetch.backoff.ms`, a connection failure delays all of them (the controller's next LeaderAndIsr
re-points a partition at its new leader). An append that fails with an I/O error drops the partition from this
thread (Kafka's markPartitionFailed) and hands the error to `on_append_io_error`, which takes the log dir offline
(KIP-112) as a leader's failed append does. Throttled replicas that are not in sync are left out of the
fetch while the follower quota is exceeded, and their bytes are recorded against it.

Bytes: Kafka's Fetch / OffsetForLeaderEpoch / ListOffsets messages through the thread's BrokerBlockingSender
to the leader (it connects, times out and reconnects; shutdown closes it, failing a fetch blocked on a leader
that stopped answering); records go from the response frame to the log without being decoded.
Thread-safety: the partition map is guarded by one lock (Kafka's partitionMapLock), held while a
response is applied but never while waiting on the network; add/remove may be called from any thread and
a removed partition is never written to after remove_partitions returns.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kafkapy.cluster.broker import Node
from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import FetchRequest, ListOffsetsRequest, OffsetForLeaderEpochRequest
from kafkapy.server.broker_topic_stats import DISABLED as DISABLED_TOPIC_STATS
from kafkapy.server.broker_topic_stats import BrokerTopicStats
from kafkapy.server.fetch_session import FetchSessionHandler
from kafkapy.server.replication_quota_manager import (
    FOLLOWER_THROTTLED_REPLICAS,
    ReplicationQuotaManager,
    is_throttled_replica,
)

if TYPE_CHECKING:
    from kafkapy.cluster.partition import Partition
    from kafkapy.server.kafka_config import KafkaConfig

log = logging.getLogger("kafka.server.ReplicaFetcherThread")

MAX_FETCH_VERSION = 12  # topics by name (v13+ name them by id)
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2

PartitionProvider = Callable[[TopicPartition], "Partition | None"]
AppendIoErrorHandler = Callable[[TopicPartition, OSError], None]


class FetchState(enum.Enum):
    TRUNCATING = "Truncating"
    FETCHING = "Fetching"


@dataclass(frozen=True, slots=True)
class InitialFetchState:
    leader: Node
    current_leader_epoch: int
    init_offset: int


@dataclass(frozen=True, slots=True)
class PartitionFetchState:
    fetch_offset: int
    current_leader_epoch: int
    state: FetchState
    lag: int | None = None
    delayed_until_ms: int = 0

    @property
    def is_replica_in_sync(self) -> bool:
        return self.lag is not None and self.lag <= 0

    def is_ready_for_fetch(self, now_ms: int) -> bool:
        return self.state is FetchState.FETCHING and self.delayed_until_ms <= now_ms

    def is_truncating(self, now_ms: int) -> bool:
        return self.state is FetchState.TRUNCATING and self.delayed_until_ms <= now_ms


class ReplicaFetcherThread(threading.Thread):
    topic_stats: BrokerTopicStats = DISABLED_TOPIC_STATS  # ReplicationBytesInPerSec (set by the manager)

    def __init__(self, fetcher_id: int, source: Node, broker_id: int, config: KafkaConfig,
                 partitions: PartitionProvider, quota: ReplicationQuotaManager, time: Time = SYSTEM,
                 on_append_io_error: AppendIoErrorHandler | None = None) -> None:
        """on_append_io_error(tp, error): an append's I/O error (the replica manager takes the log dir offline)."""
        super().__init__(name=f"ReplicaFetcherThread-{fetcher_id}-{source.id}", daemon=True)
        self.fetcher_id = fetcher_id
        self.source = source
        self.broker_id = broker_id
        self._partitions = partitions
        self._on_append_io_error = on_append_io_error
        self._quota = quota
        self._time = time
        self._max_wait_ms = config.get_int("replica.fetch.wait.max.ms")
        self._min_bytes = config.get_int("replica.fetch.min.bytes")
        self._max_bytes = config.get_int("replica.fetch.response.max.bytes")
        self._partition_max_bytes = config.get_int("replica.fetch.max.bytes")
        self._backoff_ms = config.get_int("replica.fetch.backoff.ms")
        self._socket_timeout_ms = config.get_int("replica.socket.timeout.ms")
        # Imported here: only a follower needs the client stack (and its TLS / SASL); a single node never does.
        from kafkapy.server.broker_blocking_sender import BrokerBlockingSender, sender_config
        from kafkapy.server.network.inter_broker_security import inter_broker_client_security

        # Kafka's fetcher client: no reconnect backoff (a failed exchange delays its partitions by
        # replica.fetch.backoff.ms instead), replica.socket.receive.buffer.bytes, inter.broker.listener.name's TLS / SASL.
        self._sender = BrokerBlockingSender(
            lambda: source, sender_config(config, f"broker-{broker_id}-fetcher-{fetcher_id}", self._socket_timeout_ms,
                                          0, 0, config.get_int("replica.socket.receive.buffer.bytes")),
            inter_broker_client_security(config))
        self._lock = threading.Condition(threading.RLock())
        self._states: dict[TopicPartition, PartitionFetchState] = {}
        self._running = True
        self._session = FetchSessionHandler(source.id)

    # -- partitions (any thread) ---------------------------------------------------------------------------

    def add_partitions(self, initial: Mapping[TopicPartition, InitialFetchState]) -> None:
        """Start fetching these partitions (Truncating first, unless already fetching at the same epoch)."""
        with self._lock:
            for tp, init in initial.items():
                current = self._states.get(tp)
                if current is not None and current.current_leader_epoch == init.current_leader_epoch:
                    continue
                self._states[tp] = PartitionFetchState(init.init_offset, init.current_leader_epoch,
                                                       FetchState.TRUNCATING)
            self._lock.notify_all()

    def remove_partitions(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionFetchState]:
        with self._lock:
            return {tp: s for tp in tps if (s := self._states.pop(tp, None)) is not None}

    def partition_count(self) -> int:
        with self._lock:
            return len(self._states)

    def fetch_state(self, tp: TopicPartition) -> PartitionFetchState | None:
        with self._lock:
            return self._states.get(tp)

    def initiate_shutdown(self) -> None:
        with self._lock:
            self._running = False
            self._lock.notify_all()

    def shutdown(self, timeout_s: float = 30.0) -> None:
        self.initiate_shutdown()
        # A fetch may be waiting on a leader that stopped answering (frozen, partitioned): closing the
        # sender fails it at once instead of after replica.socket.timeout.ms.
        self._sender.close()
        if self.is_alive() and self is not threading.current_thread():
            self.join(timeout_s)

    # -- the loop -----------------------------------------------------------------------------------------

    def run(self) -> None:
        log.info("[%s] Starting (leader %d at %s:%d)", self.name, self.source.id, self.source.host, self.source.port)
        try:
            while self._running:
                try:
                    self.do_work()
                except Exception:
                    log.exception("[%s] Error in the fetch loop", self.name)
                    self._sender.disconnect()
                    self._wait(self._backoff_ms)
        finally:
            self._sender.close()
            log.info("[%s] Stopped", self.name)

    def do_work(self) -> None:
        self._maybe_truncate()
        request, fetched = self._build_fetch()
        if request is None:
            self._wait(self._backoff_ms)
            return
        self._process_fetch(request, fetched)

    def _wait(self, ms: int) -> None:
        with self._lock:
            if self._running:
                self._lock.wait(ms / 1000.0)

    def _send(self, request: Any, max_version: int | None = None) -> Any:
        """One exchange with the leader; a failure has closed the connection (the next one reconnects)."""
        return self._sender.send_and_receive(request, max_version=max_version,
                                             timeout_ms=self._socket_timeout_ms + self._max_wait_ms)

    def _delay(self, tps: Iterable[TopicPartition], expected: Mapping[TopicPartition, PartitionFetchState]) -> None:
        until = self._time.milliseconds() + self._backoff_ms
        with self._lock:
            for tp in tps:
                current = self._states.get(tp)
                if current is not None and current == expected.get(tp, current):
                    self._states[tp] = replace(current, delayed_until_ms=until)

    # -- truncation (OffsetForLeaderEpoch) -------------------------------------------------------------------

    def _maybe_truncate(self) -> None:
        now = self._time.milliseconds()
        with self._lock:
            truncating = {tp: s for tp, s in self._states.items() if s.is_truncating(now)}
        if not truncating:
            return
        with_epoch: dict[TopicPartition, tuple[PartitionFetchState, int]] = {}
        for tp, s in truncating.items():
            partition = self._partitions(tp)
            if partition is None or partition.log is None:
                self.remove_partitions([tp])
                continue
            latest = partition.log.latest_epoch()
            if latest is None:
                # No epochs recorded (an old-format or empty log): truncate to the HW, Kafka's fallback.
                with self._lock, partition.lock:
                    if self._states.get(tp) == s:
                        partition.truncate_to(partition.high_watermark, s.current_leader_epoch)
                        self._mark_fetching(tp, s, partition.log_end_offset)
            else:
                with_epoch[tp] = (s, latest)
        if not with_epoch:
            return
        by_topic: dict[str, list[Any]] = {}
        for tp, (s, epoch) in with_epoch.items():
            by_topic.setdefault(tp.topic, []).append(OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
                partition=tp.partition, current_leader_epoch=s.current_leader_epoch, leader_epoch=epoch))
        request = OffsetForLeaderEpochRequest(replica_id=self.broker_id, topics=[
            OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic=t, partitions=ps) for t, ps in by_topic.items()])
        try:
            response = self._send(request)
        except Exception as e:
            log.warning("[%s] OffsetForLeaderEpoch to broker %d failed: %r", self.name, self.source.id, e)
            self._delay(with_epoch, {tp: s for tp, (s, _) in with_epoch.items()})
            return
        with self._lock:
            if not self._running:
                return
            for t in response.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.topic, p.partition)
                    entry = with_epoch.get(tp)
                    if entry is None or self._states.get(tp) != entry[0]:
                        continue
                    if p.error_code != ErrorCode.NONE:
                        log.info("[%s] OffsetForLeaderEpoch of %s: error %d; retrying", self.name, tp, p.error_code)
                        self._states[tp] = replace(entry[0], delayed_until_ms=self._time.milliseconds()
                                                   + self._backoff_ms)
                        continue
                    self._truncate_to_epoch_end(tp, entry[0], p.leader_epoch, p.end_offset)

    def _truncate_to_epoch_end(self, tp: TopicPartition, s: PartitionFetchState, leader_epoch: int,
                               leader_end_offset: int) -> None:
        """Kafka's getOffsetTruncationState, then the truncation (under the partition map lock). The local
        end, the truncation and the next fetch offset are taken under the partition's lock, so no append can
        slip between them; the epoch cache is cut at the new log end every round (an entry there, left by an
        epoch this replica led without appending, would otherwise answer the next round again and again)."""
        partition = self._partitions(tp)
        if partition is None or partition.log is None:
            self._states.pop(tp, None)
            return
        with partition.lock:
            local = partition.log
            if local is None or partition.leader_epoch != s.current_leader_epoch:
                return  # the partition moved to another leader epoch: a new fetch state replaces this one
            end = local.log_end_offset
            completed = True
            if leader_end_offset == UNDEFINED_EPOCH_OFFSET:
                target = partition.high_watermark
            elif leader_epoch == UNDEFINED_EPOCH:
                target = min(leader_end_offset, end)
            else:
                follower_epoch, follower_end = local.end_offset_for_epoch(leader_epoch)
                if follower_epoch == UNDEFINED_EPOCH:
                    target = min(leader_end_offset, end)
                elif follower_epoch != leader_epoch:
                    # The leader's epoch is unknown here: cut to the end of our largest smaller epoch, ask again.
                    target, completed = min(follower_end, end), False
                else:
                    target = min(follower_end, leader_end_offset, end)
            if target < end:
                log.info("[%s] Truncating %s to offset %d (leader epoch %d ends at %d; local end %d)", self.name,
                         tp, target, leader_epoch, leader_end_offset, end)
            partition.truncate_to(target, s.current_leader_epoch)
            next_offset = partition.log_end_offset
        if completed:
            self._mark_fetching(tp, s, next_offset)
        else:
            self._states[tp] = replace(s, fetch_offset=next_offset)

    def _mark_fetching(self, tp: TopicPartition, s: PartitionFetchState, offset: int) -> None:
        self._states[tp] = PartitionFetchState(offset, s.current_leader_epoch, FetchState.FETCHING)

    # -- fetch --------------------------------------------------------------------------------------------

    def _follower_throttled(self, tp: TopicPartition, partition: Partition | None, s: PartitionFetchState) -> bool:
        if s.is_replica_in_sync or not self._quota.is_enabled() or partition is None or partition.log is None:
            return False
        return (is_throttled_replica(partition.log.config.get(FOLLOWER_THROTTLED_REPLICAS), tp.partition,
                                     self.broker_id) and self._quota.is_quota_exceeded())

    def _build_fetch(self) -> tuple[Any, dict[TopicPartition, PartitionFetchState]]:
        now = self._time.milliseconds()
        fetched: dict[TopicPartition, PartitionFetchState] = {}
        wanted: dict[TopicPartition, Any] = {}
        with self._lock:
            for tp, s in self._states.items():
                if not s.is_ready_for_fetch(now):
                    continue
                partition = self._partitions(tp)
                if self._follower_throttled(tp, partition, s):
                    continue
                log_start = partition.log_start_offset if partition is not None else -1
                wanted[tp] = FetchRequest.FetchPartition(
                    partition=tp.partition, current_leader_epoch=s.current_leader_epoch, fetch_offset=s.fetch_offset,
                    log_start_offset=log_start, partition_max_bytes=self._partition_max_bytes)
                fetched[tp] = s
        if not fetched:
            return None, fetched
        data = self._session.build(wanted)
        by_topic: dict[str, list[Any]] = {}
        for tp, p in data.to_send.items():
            by_topic.setdefault(tp.topic, []).append(p)
        forgotten: dict[str, list[int]] = {}
        for tp in data.to_forget:
            forgotten.setdefault(tp.topic, []).append(tp.partition)
        request = FetchRequest(replica_id=self.broker_id, max_wait_ms=self._max_wait_ms, min_bytes=self._min_bytes,
                               max_bytes=self._max_bytes, isolation_level=0, session_id=data.session_id,
                               session_epoch=data.epoch, topics=[
                                   FetchRequest.FetchTopic(topic=t, partitions=ps) for t, ps in by_topic.items()],
                               forgotten_topics_data=[FetchRequest.ForgottenTopic(topic=t, partitions=ps)
                                                      for t, ps in forgotten.items()])
        return request, fetched

    def _process_fetch(self, request: Any, fetched: dict[TopicPartition, PartitionFetchState]) -> None:
        try:
            response = self._send(request, MAX_FETCH_VERSION)
        except Exception as e:
            if self._running:
                log.warning("[%s] Error sending fetch request to broker %d: %r", self.name, self.source.id, e)
            self._session.handle_error()
            self._delay(fetched, fetched)
            return
        if not self._session.handle_response(response.error_code, response.session_id):
            log.info("[%s] Fetch session with broker %d: error %d; starting a new one", self.name, self.source.id,
                     response.error_code)
            return
        if response.error_code != ErrorCode.NONE:
            log.warning("[%s] Fetch from broker %d failed with error %d", self.name, self.source.id,
                        response.error_code)
            self._delay(fetched, fetched)
            return
        out_of_range: dict[TopicPartition, PartitionFetchState] = {}
        errors: list[TopicPartition] = []
        io_errors: list[tuple[TopicPartition, PartitionFetchState, OSError]] = []
        throttled_bytes = 0
        with self._lock:
            if not self._running:
                return  # shut down (or replaced by a thread on the leader's new address) while waiting
            for t in response.responses:
                for pd in t.partitions:
                    tp = TopicPartition(t.topic, pd.partition_index)
                    sent = fetched.get(tp)
                    if sent is None or self._states.get(tp) != sent:
                        continue  # removed or re-pointed meanwhile: this answer is stale
                    if pd.error_code == ErrorCode.NONE:
                        try:
                            throttled_bytes += self._apply_partition_data(tp, sent, pd)
                        except OSError as e:  # Kafka's KafkaStorageException: markPartitionFailed
                            self._states.pop(tp, None)
                            io_errors.append((tp, sent, e))
                    elif pd.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
                        out_of_range[tp] = sent
                    else:
                        if pd.error_code != ErrorCode.NOT_LEADER_OR_FOLLOWER:
                            log.info("[%s] Error fetching %s from broker %d: error %d", self.name, tp,
                                     self.source.id, pd.error_code)
                        errors.append(tp)
        if throttled_bytes:
            self._quota.record(throttled_bytes)
        for tp, sent, io_error in io_errors:  # outside the partition map lock: a dir going offline removes fetchers
            log.error("[%s] Error while processing data for partition %s at offset %d: %r", self.name, tp,
                      sent.fetch_offset, io_error)
            if self._on_append_io_error is not None:
                self._on_append_io_error(tp, io_error)
        if errors:
            self._delay(errors, fetched)
        for tp, sent in out_of_range.items():
            self._handle_out_of_range(tp, sent)

    def _apply_partition_data(self, tp: TopicPartition, sent: PartitionFetchState, pd: Any) -> int:
        """Append one partition's answer; returns its bytes if it counts against the follower quota."""
        partition = self._partitions(tp)
        if partition is None:
            self._states.pop(tp, None)
            return 0
        records = pd.records
        size = len(records) if records is not None else 0
        next_offset = sent.fetch_offset
        try:
            if size:
                self.topic_stats.on_replication_in(size)
                info = partition.append_records_to_follower(records, sent.current_leader_epoch)
                if info is None:
                    return 0  # fetched at an epoch the partition left: this state is about to be replaced
                if info.num_batches:
                    next_offset = info.last_offset + 1
            partition.update_follower_high_watermark(pd.high_watermark)
            if pd.log_start_offset >= 0:
                partition.update_follower_log_start_offset(pd.log_start_offset)
        except KafkaError as e:
            log.error("[%s] Could not append the data fetched for %s at offset %d: %r", self.name, tp,
                      sent.fetch_offset, e)
            self._states[tp] = replace(sent, delayed_until_ms=self._time.milliseconds() + self._backoff_ms)
            return 0
        lag = max(0, pd.high_watermark - next_offset)
        self._states[tp] = PartitionFetchState(next_offset, sent.current_leader_epoch, FetchState.FETCHING, lag)
        if size and self._quota.is_enabled() and partition.log is not None and is_throttled_replica(
                partition.log.config.get(FOLLOWER_THROTTLED_REPLICAS), tp.partition, self.broker_id):
            return size
        return 0

    def _leader_offset(self, tp: TopicPartition, s: PartitionFetchState, timestamp: int) -> int:
        request = ListOffsetsRequest(replica_id=self.broker_id, isolation_level=0, topics=[
            ListOffsetsRequest.ListOffsetsTopic(name=tp.topic, partitions=[ListOffsetsRequest.ListOffsetsPartition(
                partition_index=tp.partition, current_leader_epoch=s.current_leader_epoch, timestamp=timestamp)])])
        response = self._send(request)
        p = response.topics[0].partitions[0]
        if p.error_code != ErrorCode.NONE:
            raise KafkaError(f"ListOffsets of {tp} on broker {self.source.id}: error {p.error_code}")
        return p.offset if p.offset >= 0 else (p.old_style_offsets[0] if p.old_style_offsets else -1)

    def _handle_out_of_range(self, tp: TopicPartition, sent: PartitionFetchState) -> None:
        """Kafka's fetchOffsetAndTruncate."""
        partition = self._partitions(tp)
        try:
            leader_end = self._leader_offset(tp, sent, LATEST_TIMESTAMP)
            leader_start = self._leader_offset(tp, sent, EARLIEST_TIMESTAMP) if partition is not None else -1
        except Exception as e:
            log.warning("[%s] Could not read the offsets of %s from broker %d: %r", self.name, tp, self.source.id, e)
            self._delay([tp], {tp: sent})
            return
        with self._lock:
            if partition is None or partition.log is None or self._states.get(tp) != sent:
                return
            end = partition.log_end_offset
            if leader_end < end:
                log.warning("[%s] Truncating %s to the leader's log end %d (local end %d)", self.name, tp,
                            leader_end, end)
                partition.truncate_to(leader_end, sent.current_leader_epoch)
                offset = leader_end
            else:
                offset = max(leader_start, end)
                if leader_start > end:
                    log.warning("[%s] %s starts over at the leader's log start offset %d (local end %d)",
                                self.name, tp, leader_start, end)
                    partition.truncate_fully_and_start_at(leader_start)
            self._mark_fetching(tp, sent, offset)
