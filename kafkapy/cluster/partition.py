"""Partition: one topic partition hosted by this broker, as leader or follower, over its Log (Kafka's
cluster.Partition): leader epoch, replicas, ISR, high watermark (HW = smallest log end offset over the
ISR), appends as leader with acks / min.insync.replicas, reads bounded by HW (consumers) or the log end
(followers), follower fetch tracking, ISR expansion and shrink proposed through AlterPartition.

ISR changes are proposals (KIP-497): while one is in flight the committed ISR stays in force for the
min.insync.replicas check of a new append, and the "maximal" ISR (committed plus any replica being added;
for a shrink, the committed ISR itself) holds the HW back and decides acks=all completion. A proposal stays
in flight until the controller answers it: a committed LeaderAndIsr is adopted; OPERATION_NOT_ATTEMPTED and
INELIGIBLE_REPLICA (the controller saying it did not apply it) restore the committed state; FENCED_LEADER_EPOCH,
INVALID_UPDATE_VERSION and the unknown-partition errors leave it in flight until a LeaderAndIsr with a newer
epoch supersedes it (the controller may have applied an earlier copy); any other error resends it at the next
ISR check. The effective ISR therefore never shrinks without the controller's confirmation.
Thread-safety: one RLock (Kafka's leaderIsrUpdateLock) guards leadership, ISR and follower state, and
serialises appends; reads check leadership under the lock, then read the log without it (the Log allows
lock-free readers). AlterPartition answers are applied under the lock from whatever thread completes them.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from enum import IntEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from kafkapy.cluster.alter_isr_manager import AlterIsrManager
from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderAndIsrPartitionState, LeaderRecoveryState
from kafkapy.cluster.replica import Replica
from kafkapy.common.errors import (
    FencedLeaderEpochError,
    IneligibleReplicaError,
    InvalidRequestError,
    InvalidUpdateVersionError,
    KafkaError,
    NewLeaderElectedError,
    NotEnoughReplicasAfterAppendError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    OffsetNotAvailableError,
    OperationNotAttemptedError,
    UnknownLeaderEpochError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.log_segment import TimestampAndOffset

if TYPE_CHECKING:
    from kafkapy.storage.log import Log, LogAppendInfo
    from kafkapy.storage.log_segment import FetchDataInfo

log = logging.getLogger("kafka.cluster.Partition")

LogProvider = Callable[[TopicPartition, "uuid.UUID | None"], "Log"]

DEFAULT_REPLICA_LAG_TIME_MAX_MS = 30_000
# AlterPartition answers meaning "not applied, the committed state stands" (Kafka's handleAlterPartitionError).
_RESET_TO_COMMITTED = (OperationNotAttemptedError, IneligibleReplicaError)
# Answers after which only a newer LeaderAndIsr tells the truth: the proposal stays in flight until then.
_AWAIT_METADATA = (FencedLeaderEpochError, InvalidUpdateVersionError, UnknownTopicOrPartitionError,
                   UnknownTopicIdError, InvalidRequestError, NewLeaderElectedError)
LATEST_TIMESTAMP = -1  # ListOffsets special timestamps
EARLIEST_TIMESTAMP = -2
EARLIEST_LOCAL_TIMESTAMP = -4
READ_UNCOMMITTED = 0
READ_COMMITTED = 1


class FetchIsolation(IntEnum):
    LOG_END = 0  # followers: everything written
    HIGH_WATERMARK = 1  # consumers, read_uncommitted
    TXN_COMMITTED = 2  # consumers, read_committed: below the last stable offset


class LogReadInfo(NamedTuple):
    fetched_data: FetchDataInfo
    high_watermark: int
    log_start_offset: int
    last_stable_offset: int
    # read_committed: the aborted transactions overlapping the data, [(producer_id, first_offset)]; else None
    aborted_transactions: list[tuple[int, int]] | None = None


class Partition:
    def __init__(self, topic_partition: TopicPartition, topic_id: uuid.UUID | None, log_provider: LogProvider,
                 local_broker_id: int, time: Time = SYSTEM,
                 replica_lag_time_max_ms: int = DEFAULT_REPLICA_LAG_TIME_MAX_MS,
                 alter_isr_manager: AlterIsrManager | None = None,
                 on_high_watermark_moved: Callable[[TopicPartition], None] | None = None) -> None:
        self.topic_partition = topic_partition
        self.topic_id = topic_id
        self._log_provider = log_provider
        self.local_broker_id = local_broker_id
        self.time = time
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self._alter_isr_manager = alter_isr_manager
        # Called (outside the lock) when an ISR change moved the HW: waiting acks=-1 produces can complete.
        self._on_high_watermark_moved = on_high_watermark_moved
        self.lock = threading.RLock()
        self.log: Log | None = None
        self.leader_replica_id: int | None = None
        self.leader_epoch = -1
        self.leader_epoch_start_offset: int | None = None
        self.partition_epoch = -1
        self.controller_epoch = -1
        self.leader_recovery_state = LeaderRecoveryState.RECOVERED
        self.replicas: tuple[int, ...] = ()
        self._isr: tuple[int, ...] = ()
        self._maximal_isr: tuple[int, ...] = ()
        self._pending_isr: LeaderAndIsr | None = None  # the AlterPartition proposal in flight
        self._resend_pending_isr = False  # its last answer asked for a retry
        # The proposal whose failure was logged at WARNING: its resends (one per follower fetch while the
        # controller keeps failing them) log at DEBUG, so a stuck proposal is one line, not one per fetch.
        self._failure_logged_for: LeaderAndIsr | None = None
        self._remote: dict[int, Replica] = {}

    # -- facts -------------------------------------------------------------------------------------------

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    @property
    def partition_id(self) -> int:
        return self.topic_partition.partition

    @property
    def is_leader(self) -> bool:
        return self.leader_replica_id == self.local_broker_id

    @property
    def isr(self) -> tuple[int, ...]:
        """The committed ISR (what min.insync.replicas is checked against)."""
        return self._isr

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """The committed ISR plus replicas whose addition is in flight (what the HW waits for)."""
        return self._maximal_isr

    @property
    def isr_change_pending(self) -> bool:
        return self._pending_isr is not None

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark if self.log is not None else 0

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset if self.log is not None else 0

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset if self.log is not None else 0

    @property
    def last_stable_offset(self) -> int:
        return self.log.last_stable_offset if self.log is not None else 0

    def remote_replica(self, broker_id: int) -> Replica | None:
        return self._remote.get(broker_id)

    def is_under_min_isr(self) -> bool:
        with self.lock:
            return self.is_leader and self.log is not None and len(self._isr) < self.log.config.min_in_sync_replicas

    # -- leadership (applied from the controller's LeaderAndIsr) -----------------------------------------

    def create_log_if_not_exists(self) -> Log:
        with self.lock:
            if self.log is None:
                self.log = self._log_provider(self.topic_partition, self.topic_id)
            return self.log

    def make_leader(self, state: LeaderAndIsrPartitionState) -> bool:
        """Become (or stay) leader. Returns True when this is a new leadership (leader epoch moved)."""
        with self.lock:
            if state.leader_epoch < self.leader_epoch:
                log.info("Ignoring stale leadership of %s at epoch %d (current %d)", self.topic_partition,
                         state.leader_epoch, self.leader_epoch)
                return False
            if self._is_stale_partition_epoch(state):
                return False
            self.controller_epoch = state.controller_epoch
            if state.topic_id is not None:
                self.topic_id = state.topic_id
            leader_log = self.create_log_if_not_exists()
            is_new_leader_epoch = state.leader_epoch > self.leader_epoch
            was_leader = self.is_leader
            now = self.time.milliseconds()
            self._update_assignment_and_isr(state.replicas, state.isr)
            leader_end = leader_log.log_end_offset
            if is_new_leader_epoch:
                # The first offset of this epoch: followers truncate to it (OffsetsForLeaderEpoch). No record of
                # the epoch exists yet, so its checkpoint write may wait: the Log writes it before appending or
                # answering OffsetsForLeaderEpoch, the ReplicaManager has many leaders' entries written in a batch.
                self.leader_epoch_start_offset = leader_end
                leader_log.maybe_assign_epoch_start_offset(state.leader_epoch, leader_end, flush=False)
            for replica in self._remote.values():
                replica.reset(now, leader_end, is_new_leader_epoch, replica.broker_id in self._isr)
            self.leader_replica_id = self.local_broker_id
            self.leader_epoch = state.leader_epoch
            self.partition_epoch = state.partition_epoch
            self.leader_recovery_state = state.leader_recovery_state
            # Pin the HW the log has (from its checkpoint, or its end) before the ISR starts moving it.
            leader_log.update_high_watermark(leader_log.high_watermark)
            self.maybe_increment_high_watermark(now)
            return is_new_leader_epoch or not was_leader

    def make_follower(self, state: LeaderAndIsrPartitionState) -> bool:
        """Follow state.leader. Returns True when the leader or its epoch changed (the fetcher must restart)."""
        with self.lock:
            if state.leader_epoch < self.leader_epoch or self._is_stale_partition_epoch(state):
                return False
            self.controller_epoch = state.controller_epoch
            if state.topic_id is not None:
                self.topic_id = state.topic_id
            self.create_log_if_not_exists()
            changed = state.leader != self.leader_replica_id or state.leader_epoch > self.leader_epoch
            self._update_assignment_and_isr(state.replicas, state.isr)
            self._remote.clear()  # only leaders track followers
            self.leader_replica_id = state.leader if state.leader >= 0 else None
            self.leader_epoch = state.leader_epoch
            self.leader_epoch_start_offset = None
            self.partition_epoch = state.partition_epoch
            self.leader_recovery_state = state.leader_recovery_state
            return changed

    def _is_stale_partition_epoch(self, state: LeaderAndIsrPartitionState) -> bool:
        """A LeaderAndIsr at this leader epoch older than the state an AlterPartition answer already gave."""
        if state.leader_epoch == self.leader_epoch and 0 <= state.partition_epoch < self.partition_epoch:
            log.info("Skipped the state change of %s to partition epoch %d: already at partition epoch %d",
                     self.topic_partition, state.partition_epoch, self.partition_epoch)
            return True
        return False

    def _update_assignment_and_isr(self, replicas: tuple[int, ...], isr: tuple[int, ...]) -> None:
        """The controller's LeaderAndIsr: the committed state, superseding any proposal in flight."""
        self.replicas = tuple(replicas)
        self._remote = {r: self._remote.get(r) or Replica(r) for r in self.replicas if r != self.local_broker_id}
        self._isr = tuple(isr)
        self._maximal_isr = tuple(isr)
        self._pending_isr = None
        self._resend_pending_isr = False

    def append_records_to_follower(self, records: bytes | bytearray | memoryview,
                                   fetch_leader_epoch: int | None = None) -> LogAppendInfo | None:
        """Append the leader's batches as they are (its offsets and epochs). NOT_LEADER_OR_FOLLOWER once
        this broker leads the partition. None (nothing appended) when fetch_leader_epoch, the leader epoch
        the fetch was sent at, is no longer this partition's: the answer of a leader this replica stopped
        following, which must not land after the new leader's truncation point was chosen."""
        with self.lock:
            follower_log = self.log
            if follower_log is None or self.is_leader:
                raise NotLeaderOrFollowerError(
                    f"Replica {self.local_broker_id} is not a follower of {self.topic_partition}")
            if fetch_leader_epoch is not None and fetch_leader_epoch != self.leader_epoch:
                log.info("Skipping the append to %s: fetched at leader epoch %d, the partition is at %d",
                         self.topic_partition, fetch_leader_epoch, self.leader_epoch)
                return None
            return follower_log.append_as_follower(records)

    def truncate_to(self, offset: int, fetch_leader_epoch: int | None = None) -> bool:
        """Follower truncation (to an epoch boundary or the HW): drop every batch at or after offset. The
        leader-epoch cache is cut at the resulting log end even when no batch goes: an entry at the log end
        (an epoch this replica led without appending) must not answer for data it never had. Nothing happens
        when fetch_leader_epoch is given and stale (see append_records_to_follower)."""
        with self.lock:
            local_log = self.log
            if local_log is None or (fetch_leader_epoch is not None and fetch_leader_epoch != self.leader_epoch):
                return False
            truncated = local_log.truncate_to(min(offset, local_log.log_end_offset))
            local_log.leader_epoch_cache.truncate_from_end(local_log.log_end_offset)
            return truncated

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """The follower fell below the leader's log start: start over, empty, at the leader's start."""
        with self.lock:
            if self.log is not None:
                self.log.truncate_fully_and_start_at(offset)

    def update_follower_log_start_offset(self, leader_log_start_offset: int) -> None:
        """Follow the leader's log start offset (DeleteRecords / retention there), up to this replica's HW."""
        with self.lock:
            follower_log = self.log
            if follower_log is not None and follower_log.log_start_offset < leader_log_start_offset:
                follower_log.maybe_increment_log_start_offset(
                    min(leader_log_start_offset, follower_log.high_watermark), "leader_offset_increment")

    def update_follower_high_watermark(self, leader_high_watermark: int) -> int:
        """A follower learns the leader's HW from its fetch response (bounded by its own log end)."""
        with self.lock:
            if self.log is None:
                return 0
            return self.log.update_high_watermark(min(leader_high_watermark, self.log.log_end_offset))

    # -- produce -----------------------------------------------------------------------------------------

    def append_records_to_leader(self, records: bytes | bytearray | memoryview, required_acks: int,
                                 min_isr: int | None = None, origin: str = "client") -> LogAppendInfo:
        """Append as leader. acks=-1 needs len(ISR) >= min.insync.replicas (the topic's unless min_isr)."""
        with self.lock:
            leader_log = self.log
            if self.leader_replica_id != self.local_broker_id or leader_log is None:
                raise NotLeaderOrFollowerError(
                    f"Leader not local for partition {self.topic_partition} on broker {self.local_broker_id}")
            if required_acks == -1:
                needed = leader_log.config.min_in_sync_replicas if min_isr is None else min_isr
                if len(self._isr) < needed:
                    raise NotEnoughReplicasError(
                        f"The size of the current ISR {set(self._isr)} is insufficient to satisfy the min.isr "
                        f"requirement of {needed} for partition {self.topic_partition}")
            now = self.time.milliseconds()
            info = leader_log.append_as_leader(records, self.leader_epoch, now, origin)
            if self._remote:
                self.maybe_increment_high_watermark(now)
            else:
                # No followers: the HW is the log end offset (maybe_increment_high_watermark's answer, cheaply).
                end = leader_log.log_end_offset
                if end > leader_log.high_watermark:
                    leader_log.update_high_watermark(end)
            return info

    def check_enough_replicas_reach_offset(self, required_offset: int,
                                           min_isr: int | None = None) -> tuple[bool, type[KafkaError] | None]:
        """For acks=-1 produce waiting in purgatory: (done, error). Done once the HW reaches required_offset
        (the append's last offset + 1); NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below min.isr."""
        with self.lock:
            if not self.is_leader or self.log is None:
                return False, NotLeaderOrFollowerError
            if self.log.high_watermark >= required_offset:
                needed = self.log.config.min_in_sync_replicas if min_isr is None else min_isr
                # The maximal ISR, as Kafka: a shrink in flight has not removed anyone yet.
                if len(self._maximal_isr) >= needed:
                    return True, None
                return True, NotEnoughReplicasAfterAppendError
            return False, None

    # -- fetch ---------------------------------------------------------------------------------------------

    def _check_leader_epoch(self, current_leader_epoch: int, fetch_only_from_leader: bool) -> Log:
        if current_leader_epoch >= 0:
            if current_leader_epoch < self.leader_epoch:
                raise FencedLeaderEpochError(
                    f"The leader epoch in the request {current_leader_epoch} is older than the current "
                    f"leader epoch {self.leader_epoch} of {self.topic_partition}")
            if current_leader_epoch > self.leader_epoch:
                raise UnknownLeaderEpochError(
                    f"The leader epoch in the request {current_leader_epoch} is newer than the current "
                    f"leader epoch {self.leader_epoch} of {self.topic_partition}")
        if self.log is None or (fetch_only_from_leader and not self.is_leader):
            raise NotLeaderOrFollowerError(
                f"Leader not local for partition {self.topic_partition} on broker {self.local_broker_id}")
        return self.log

    def read_records(self, fetch_offset: int, max_bytes: int,
                     isolation: FetchIsolation = FetchIsolation.HIGH_WATERMARK, min_one_message: bool = True,
                     current_leader_epoch: int = -1, fetch_only_from_leader: bool = True) -> LogReadInfo:
        """Read whole batches from fetch_offset; consumers stop at the HW (or LSO), followers at the log end.
        The offsets returned are those seen before the read, as Kafka reports them."""
        with self.lock:
            local_log = self._check_leader_epoch(current_leader_epoch, fetch_only_from_leader)
            hw = local_log.high_watermark
            log_start = local_log.log_start_offset
            lso = local_log.last_stable_offset
        if isolation == FetchIsolation.LOG_END:
            max_offset = None
        elif isolation == FetchIsolation.TXN_COMMITTED:
            max_offset = lso
        else:
            max_offset = hw
        data = local_log.read(fetch_offset, max_bytes, max_offset, min_one_message)
        if isolation != FetchIsolation.TXN_COMMITTED:
            return LogReadInfo(data, hw, log_start, lso)
        aborted: list[tuple[int, int]] = []
        if data.records is not None:
            aborted = [(t.producer_id, t.first_offset)
                       for t in local_log.collect_aborted_transactions(fetch_offset, lso)]
        return LogReadInfo(data, hw, log_start, lso, aborted)

    def fetch_offset_for_timestamp(self, timestamp: int, isolation_level: int | None = READ_UNCOMMITTED,
                                   current_leader_epoch: int = -1,
                                   fetch_only_from_leader: bool = True) -> TimestampAndOffset | None:
        """ListOffsets. Clients (isolation_level 0/1) never see offsets at or past the HW / LSO; a replica
        (isolation_level None) may read to the log end. OFFSET_NOT_AVAILABLE while a new leader's HW is still
        below its epoch start offset. None when no offset matches."""
        with self.lock:
            local_log = self._check_leader_epoch(current_leader_epoch, fetch_only_from_leader)
            hw = local_log.high_watermark
            if isolation_level is None:
                last_fetchable = local_log.log_end_offset
            else:
                last_fetchable = hw if isolation_level == READ_UNCOMMITTED else self.last_stable_offset
            epoch_start = self.leader_epoch_start_offset
            offsets_error = None
            if isolation_level is not None and epoch_start is not None and epoch_start > hw:
                offsets_error = OffsetNotAvailableError(
                    f"Failed to fetch offsets for partition {self.topic_partition} with leader epoch "
                    f"{self.leader_epoch} as this partition's high watermark ({hw}) is lagging behind the start "
                    f"offset from the beginning of this epoch ({epoch_start}).")
            leader_epoch = self.leader_epoch
        if timestamp == LATEST_TIMESTAMP:
            if offsets_error is not None:
                raise offsets_error
            return TimestampAndOffset(last_fetchable, -1, leader_epoch)
        found = local_log.fetch_offset_by_timestamp(timestamp)
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return found
        if found is not None and found.offset < last_fetchable:
            return found
        if offsets_error is not None:
            raise offsets_error
        return None

    # -- followers, ISR and HW (leader side) --------------------------------------------------------------

    def update_follower_fetch_state(self, replica_id: int, fetch_offset: int, follower_start_offset: int = -1,
                                    now_ms: int | None = None, leader_end_offset: int | None = None) -> bool:
        """Record a follower's fetch; may propose adding it to the ISR. Returns True if the HW moved
        (the caller then completes delayed produce / fetch operations)."""
        with self.lock:
            replica = self._remote.get(replica_id)
            if replica is None or not self.is_leader or self.log is None:
                return False
            now = self.time.milliseconds() if now_ms is None else now_ms
            prev_end = replica.state.log_end_offset
            end = self.log.log_end_offset if leader_end_offset is None else leader_end_offset
            replica.update_fetch_state(fetch_offset, follower_start_offset, now, end)
            self._maybe_expand_isr(replica)
            if prev_end != replica.state.log_end_offset:
                return self.maybe_increment_high_watermark(now)
            return False

    def _maybe_expand_isr(self, replica: Replica) -> None:
        if self._pending_isr is not None:
            self._maybe_resend_pending_isr()
            return
        if replica.broker_id in self._isr or replica.broker_id not in self.replicas:
            return
        assert self.log is not None
        end = replica.state.log_end_offset
        epoch_start = self.leader_epoch_start_offset or 0
        if end >= self.log.high_watermark and end >= epoch_start:
            self._propose_isr(self._isr + (replica.broker_id,), expanding=replica.broker_id)

    def maybe_shrink_isr(self, now_ms: int | None = None) -> bool:
        """Propose dropping followers not caught up within replica.lag.time.max.ms. True if proposed."""
        with self.lock:
            if not self.is_leader or self.log is None:
                return False
            if self._pending_isr is not None:
                self._maybe_resend_pending_isr()
                return False
            now = self.time.milliseconds() if now_ms is None else now_ms
            end = self.log.log_end_offset
            out_of_sync = [r for r in self._isr if r != self.local_broker_id and (
                r not in self._remote or not self._remote[r].state.is_caught_up(end, now,
                                                                                 self.replica_lag_time_max_ms))]
            if not out_of_sync:
                return False
            log.info("Shrinking ISR of %s from %s: %s out of sync", self.topic_partition, self._isr, out_of_sync)
            return self._propose_isr(tuple(r for r in self._isr if r not in out_of_sync))

    def _propose_isr(self, isr: tuple[int, ...], expanding: int | None = None) -> bool:
        if self._alter_isr_manager is None:
            return False
        proposed = LeaderAndIsr(self.local_broker_id, self.leader_epoch, isr, self.leader_recovery_state,
                                self.partition_epoch)
        self._pending_isr = proposed
        # Expanding: the HW waits for the new member too. Shrinking: it keeps waiting for the leaving ones.
        self._maximal_isr = self._isr + (expanding,) if expanding is not None else self._isr
        self._submit_pending_isr(proposed)
        return True

    def _maybe_resend_pending_isr(self) -> None:
        proposed = self._pending_isr
        if self._resend_pending_isr and proposed is not None:
            log.debug("Retrying AlterPartition of %s to ISR %s", self.topic_partition, list(proposed.isr))
            self._submit_pending_isr(proposed)

    def _submit_pending_isr(self, proposed: LeaderAndIsr) -> None:
        assert self._alter_isr_manager is not None
        self._resend_pending_isr = False
        future = self._alter_isr_manager.submit(self.topic_partition, proposed, self.controller_epoch)
        future.add_done_callback(lambda f: self._on_alter_partition_done(proposed, f))

    def _on_alter_partition_done(self, proposed: LeaderAndIsr, future: Future[Any]) -> None:
        if self._apply_alter_partition_result(proposed, future) and self._on_high_watermark_moved is not None:
            self._on_high_watermark_moved(self.topic_partition)

    def _apply_alter_partition_result(self, proposed: LeaderAndIsr, future: Future[Any]) -> bool:
        """Kafka's handleAlterPartitionUpdate / handleAlterPartitionError; True if the HW moved."""
        with self.lock:
            if self._pending_isr is not proposed or not self.is_leader:
                return False  # superseded by a LeaderAndIsr (or a newer proposal): this answer is out of date
            result: Any
            try:
                result = future.result()
            except Exception as e:  # noqa: BLE001 - the manager could not deliver it: try again
                result = e
            if isinstance(result, dict):
                result = result.get(self.topic_partition)
            if isinstance(result, LeaderAndIsr):
                return self._adopt_committed_isr(result)
            if isinstance(result, _RESET_TO_COMMITTED):
                log.info("AlterPartition of %s to ISR %s not applied (%r); back to the committed ISR %s",
                         self.topic_partition, list(proposed.isr), result, list(self._isr))
                self._pending_isr = None
                self._maximal_isr = self._isr
            elif isinstance(result, _AWAIT_METADATA):
                log.info("AlterPartition of %s to ISR %s refused (%r); the proposal stays in flight until a "
                         "newer LeaderAndIsr", self.topic_partition, list(proposed.isr), result)
            else:
                level = logging.DEBUG if self._failure_logged_for is proposed else logging.WARNING
                self._failure_logged_for = proposed
                log.log(level, "AlterPartition of %s to ISR %s failed (%r); it will be sent again",
                        self.topic_partition, list(proposed.isr), result)
                self._resend_pending_isr = True
            return False

    def _adopt_committed_isr(self, result: LeaderAndIsr) -> bool:
        if result.leader_epoch != self.leader_epoch or result.partition_epoch < self.partition_epoch:
            log.info("Ignoring the AlterPartition answer %r for %s at leader epoch %d, partition epoch %d",
                     result, self.topic_partition, self.leader_epoch, self.partition_epoch)
            return False
        log.info("ISR of %s updated to %s (partition epoch %d)", self.topic_partition, list(result.isr),
                 result.partition_epoch)
        self._isr = tuple(result.isr)
        self._maximal_isr = self._isr
        self._pending_isr = None
        self._resend_pending_isr = False
        self.partition_epoch = result.partition_epoch
        self.leader_recovery_state = result.leader_recovery_state
        return self.maybe_increment_high_watermark()

    def maybe_increment_high_watermark(self, now_ms: int | None = None) -> bool:
        """HW = smallest log end offset among the leader and the followers the HW must wait for (the maximal
        ISR, and caught-up followers about to join it). Never moves back. True if it moved."""
        with self.lock:
            leader_log = self.log
            if leader_log is None or not self.is_leader:
                return False
            now = self.time.milliseconds() if now_ms is None else now_ms
            end = leader_log.log_end_offset
            new_hw = end
            for replica in self._remote.values():
                s = replica.state
                waits = replica.broker_id in self._maximal_isr or s.is_caught_up(end, now, self.replica_lag_time_max_ms)
                if waits and s.log_end_offset < new_hw:
                    new_hw = s.log_end_offset
            old_hw = leader_log.high_watermark
            if new_hw > old_hw:
                leader_log.update_high_watermark(new_hw)
                return True
            return False

    def __repr__(self) -> str:
        return (f"Partition({self.topic_partition}, leader={self.leader_replica_id}, epoch={self.leader_epoch}, "
                f"isr={self._isr}, hw={self.high_watermark}, leo={self.log_end_offset})")
