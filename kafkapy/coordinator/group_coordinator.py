"""GroupCoordinator: Kafka's classic consumer group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup),
OffsetCommit/OffsetFetch/OffsetDelete, DescribeGroups, ListGroups and DeleteGroups, for the groups whose
__consumer_offsets partition this broker leads.

This class owns the lifecycle, the ownership of __consumer_offsets partitions (read from the ReplicaManager
once at start-up, then followed only through Kafka's onLeadershipChange callback: `on_leader_and_isr` loads
on election and unloads on resignation, `on_resignation` for StopReplica), the offset expiry task, and the
checks every request passes first (Kafka's validateGroupStatus: valid group id, active, partition owned and
loaded).
It then hands each request to the collaborator that owns its concept:
- GroupMembershipManager (group_membership.py): JoinGroup and the rebalance, SyncGroup, Heartbeat,
  LeaveGroup, session expiry;
- OffsetMetadataManager (offset_metadata_manager.py): OffsetCommit, OffsetFetch, OffsetDelete;
- GroupMetadataManager (group_metadata_manager.py): the group cache and the __consumer_offsets reads and
  writes, shared by both.
DescribeGroups, ListGroups and DeleteGroups are answered here from the group cache. The broker builds
the coordinator (kafka_server.py) and injects the purgatories and the DelayedOperation wrapper
(`operation_factory(delay_ms, lock, logic)`): this layer may not import server/.

Answers go through callbacks, from the thread that completes the operation (a request handler, a
purgatory reaper, the appender). No byte format (see group_records.py).
Thread-safety: all group state under the group's RLock; `is_active` is a flag read without a lock.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.internal_topics import GROUP_METADATA_TOPIC_NAME
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group_membership import GroupConfig, GroupMembershipManager, OperationFactory
from kafkapy.coordinator.group_metadata import (
    D,
    E,
    GroupMetadata,
    GroupOverview,
    GroupSummary,
    JoinCallback,
    JoinGroupResult,
    OffsetAndMetadata,
    SyncCallback,
    SyncGroupResult,
)
from kafkapy.coordinator.group_metadata_manager import (
    GroupMetadataManager,
    OffsetConfig,
    OffsetFetchPartition,
)
from kafkapy.coordinator.offset_metadata_manager import CommitCallback, OffsetMetadataManager

log = logging.getLogger("kafka.coordinator.group.GroupCoordinator")

EMPTY_GROUP = GroupSummary("", "", "", [])


class GroupCoordinator:
    def __init__(self, broker_id: int, group_config: GroupConfig, offset_config: OffsetConfig,
                 group_manager: GroupMetadataManager, time: Time, heartbeat_purgatory: Any, rebalance_purgatory: Any,
                 operation_factory: OperationFactory) -> None:
        self.broker_id = broker_id
        self.offset_config = offset_config
        self.group_manager = group_manager
        self.time = time
        self.heartbeat_purgatory = heartbeat_purgatory
        self.rebalance_purgatory = rebalance_purgatory
        self.membership = GroupMembershipManager(group_config, group_manager, heartbeat_purgatory,
                                                 rebalance_purgatory, operation_factory)
        self.offsets = OffsetMetadataManager(group_manager, time, self.membership)
        self.is_active = False
        self._stop = threading.Event()
        self._scheduler: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------------

    def startup(self, enable_scheduler: bool = True) -> None:
        """Start answering; load the partitions this broker leads now (later changes arrive through
        on_leader_and_isr). The scheduler thread expires offsets (offsets.retention.check.interval.ms)."""
        log.info("Starting up.")
        self.is_active = True
        self.refresh_ownership()
        if enable_scheduler:
            self._scheduler = threading.Thread(target=self._scheduler_loop, daemon=True,
                                               name=f"group-coordinator-scheduler-{self.broker_id}")
            self._scheduler.start()
        log.info("Startup complete.")

    def shutdown(self) -> None:
        log.info("Shutting down.")
        self.is_active = False
        self._stop.set()
        if self._scheduler is not None and self._scheduler is not threading.current_thread():
            self._scheduler.join(timeout=5)
        self.group_manager.shutdown()
        self.heartbeat_purgatory.shutdown()
        self.rebalance_purgatory.shutdown()
        log.info("Shutdown complete.")

    def _scheduler_loop(self) -> None:
        interval = self.offset_config.offsets_retention_check_interval_ms
        next_cleanup = self.time.milliseconds() + interval
        # The clock is read at least once a second, so a MockTime moved forward is seen.
        while not self._stop.wait(min(1.0, max(0.0, (next_cleanup - self.time.milliseconds()) / 1000.0))):
            try:
                if self.time.milliseconds() >= next_cleanup:
                    next_cleanup = self.time.milliseconds() + interval
                    self.group_manager.cleanup_expired_offsets()
            except Exception:
                log.exception("Group coordinator background task failed; continuing")

    def partition_for(self, group_id: str) -> int:
        return self.group_manager.partition_for(group_id)

    def on_election(self, partition: int, epoch: int) -> None:
        """This broker leads __consumer_offsets-`partition`: load its groups and offsets."""
        self.group_manager.schedule_load_group_and_offsets(partition, epoch, self.membership.on_group_loaded)

    def on_resignation(self, partition: int, epoch: int | None = None) -> None:
        self.group_manager.remove_groups_for_partition(partition, epoch, self.membership.on_group_unloaded)

    def on_leader_and_isr(self, broker_id: int, states: Any) -> None:
        """The controller's LeaderAndIsr decisions (after the ReplicaManager applied them): start loading
        the __consumer_offsets partitions this broker now leads, unload those it no longer leads."""
        for state in states:
            if state.topic != GROUP_METADATA_TOPIC_NAME:
                continue
            if state.leader == broker_id:
                self.on_election(state.partition, state.leader_epoch)
            else:
                self.on_resignation(state.partition, state.leader_epoch)

    def _refresh_partition(self, partition: int) -> None:
        """Follow this broker's leadership of __consumer_offsets-`partition` (load on gain, unload on loss)."""
        replica_manager = self.group_manager.replica_manager
        part = replica_manager.get_partition(TopicPartition(GROUP_METADATA_TOPIC_NAME, partition))
        manager = self.group_manager
        known = manager.is_partition_owned(partition) or manager.is_partition_loading(partition)
        if part is not None and part.is_leader:
            if not known:
                self.on_election(partition, part.leader_epoch)
        elif known:
            self.on_resignation(partition, None)

    def refresh_ownership(self) -> None:
        """Start-up: check every __consumer_offsets partition this broker hosts, plus those it holds groups for
        (leadership applied before the coordinator existed reached no callback)."""
        replica_manager = self.group_manager.replica_manager
        hosted = {tp.partition for tp in replica_manager.partitions if tp.topic == GROUP_METADATA_TOPIC_NAME}
        for partition in sorted(hosted | self.group_manager.owned_partitions()):
            self._refresh_partition(partition)

    def validate_group_status(self, group_id: str | None, allow_empty_id: bool = False) -> int:
        """0, or the error Kafka answers before touching the group (Kafka's validateGroupStatus)."""
        if group_id is None or (not allow_empty_id and group_id == ""):
            return ErrorCode.INVALID_GROUP_ID
        if not self.is_active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        partition = self.partition_for(group_id)
        if self.group_manager.is_partition_loading(partition):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if not self.group_manager.is_partition_owned(partition):
            return ErrorCode.NOT_COORDINATOR
        return 0

    # -- the group protocol: checked here, then the membership manager ---------------------------------

    def handle_join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                          require_known_member_id: bool, support_skipping_assignment: bool, client_id: str,
                          client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                          protocols: list[tuple[str, bytes]], callback: JoinCallback, reason: str | None = None) -> None:
        error = self.validate_group_status(group_id)
        if error:
            callback(JoinGroupResult(member_id, error))
            return
        self.membership.join_group(group_id, member_id, group_instance_id, require_known_member_id,
                                   support_skipping_assignment, client_id, client_host, rebalance_timeout_ms,
                                   session_timeout_ms, protocol_type, protocols, callback, reason)

    def handle_sync_group(self, group_id: str, generation: int, member_id: str, protocol_type: str | None,
                          protocol_name: str | None, group_instance_id: str | None, assignment: dict[str, bytes],
                          callback: SyncCallback) -> None:
        error = self.validate_group_status(group_id)
        if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            # The rebalance state was lost with the old coordinator: rejoin without rediscovery (older
            # clients do not expect COORDINATOR_LOAD_IN_PROGRESS here).
            callback(SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
            return
        if error:
            callback(SyncGroupResult(error))
            return
        self.membership.sync_group(group_id, generation, member_id, protocol_type, protocol_name, group_instance_id,
                                   assignment, callback)

    def handle_heartbeat(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int) -> int:
        error = self.validate_group_status(group_id)
        if error:
            # A loading group answers blindly: its members learn of any rebalance at their next heartbeat.
            return 0 if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS else error
        return self.membership.heartbeat(group_id, member_id, group_instance_id, generation_id)

    def handle_leave_group(self, group_id: str, leaving: list[tuple[str, str | None, str | None]]
                           ) -> tuple[int, list[tuple[str, str | None, int]]]:
        """leaving: (member id, group instance id, reason). Returns (group error, [(member id, instance id, error)])."""
        error = self.validate_group_status(group_id)
        if error:
            return error, []
        return self.membership.leave_group(group_id, leaving)

    # -- offsets: checked here, then the offset manager -------------------------------------------------

    def handle_commit_offsets(self, group_id: str, member_id: str, group_instance_id: str | None,
                              generation_id: int, offsets: dict[TopicPartition, OffsetAndMetadata],
                              callback: CommitCallback) -> None:
        error = self.validate_group_status(group_id, allow_empty_id=True)
        if error:
            callback({tp: error for tp in offsets})
            return
        self.offsets.commit_offsets(group_id, member_id, group_instance_id, generation_id, offsets, callback)

    def handle_txn_commit_offsets(self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
                                  group_instance_id: str | None, generation_id: int,
                                  offsets: dict[TopicPartition, OffsetAndMetadata], callback: CommitCallback) -> None:
        error = self.validate_group_status(group_id)
        if error:
            callback({tp: error for tp in offsets})
            return
        self.offsets.commit_transactional_offsets(group_id, producer_id, producer_epoch, member_id, group_instance_id,
                                                  generation_id, offsets, callback)

    def on_transaction_completed(self, producer_id: int, offsets_partitions: set[int], commit: bool) -> None:
        """A COMMIT/ABORT marker was written to these __consumer_offsets partitions (WriteTxnMarkers)."""
        self.offsets.complete_transaction(producer_id, offsets_partitions, commit)

    def handle_fetch_offsets(self, group_id: str, require_stable: bool, partitions: list[TopicPartition] | None
                             ) -> tuple[int, dict[TopicPartition, OffsetFetchPartition]]:
        """(error, offsets); `partitions` None = every committed offset of the group."""
        error = self.validate_group_status(group_id, allow_empty_id=True)
        if error:
            return error, {}
        return 0, self.offsets.fetch_offsets(group_id, require_stable, partitions)

    def handle_delete_offsets(self, group_id: str, partitions: list[TopicPartition]
                              ) -> tuple[int, dict[TopicPartition, int]]:
        error = self.validate_group_status(group_id)
        if error:
            return error, {}
        return self.offsets.delete_offsets(group_id, partitions)

    # -- DescribeGroups / ListGroups / DeleteGroups -------------------------------------------------

    def handle_describe_group(self, group_id: str) -> tuple[int, GroupSummary | None]:
        """(error, summary); summary None when no such group (Kafka's Dead summary)."""
        error = self.validate_group_status(group_id, allow_empty_id=True)
        if error:
            return error, EMPTY_GROUP
        group = self.group_manager.get_group(group_id)
        if group is None:
            return 0, None
        with group.lock:
            if group.is_state(D):
                return 0, None
            return 0, group.summary()

    def handle_list_groups(self, states: set[str] | None = None) -> tuple[int, list[GroupOverview]]:
        """Groups of every owned partition, filtered by state names (case-insensitive; empty = all)."""
        if not self.is_active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        wanted = {s.lower() for s in states} if states else None
        overviews = []
        for group in self.group_manager.current_groups():
            with group.lock:
                if group.is_state(D):
                    continue
                overview = group.overview()
            if wanted is None or overview.state.lower() in wanted:
                overviews.append(overview)
        error = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS if self.group_manager.is_loading() else 0
        return error, overviews

    def handle_deleted_partitions(self, partitions: list[TopicPartition]) -> None:
        """Kafka's handleDeletedPartitions: a deleted topic's committed offsets leave every group this
        coordinator owns (tombstoned), so a topic re-created with the same name starts from the reset policy."""
        if not self.is_active:
            return
        removed = self.group_manager.cleanup_group_metadata(self.group_manager.current_groups(),
                                                            lambda group: group.remove_offsets(partitions))
        log.info("Removed %d offsets associated with deleted partitions: %s.", removed,
                 ", ".join(str(tp) for tp in partitions))

    def handle_delete_groups(self, group_ids: list[str]) -> dict[str, int]:
        errors: dict[str, int] = {}
        eligible: list[GroupMetadata] = []
        for group_id in group_ids:
            error = self.validate_group_status(group_id, allow_empty_id=True)
            if error:
                errors[group_id] = error
                continue
            group = self.group_manager.get_group(group_id)
            if group is None:
                errors[group_id] = self.group_manager.missing_group_error(group_id)
                continue
            with group.lock:
                if group.is_state(D):
                    errors[group_id] = self.group_manager.missing_group_error(group_id)
                elif group.is_state(E):
                    group.transition_to(D)
                    eligible.append(group)
                else:
                    errors[group_id] = ErrorCode.NON_EMPTY_GROUP
        if eligible:
            removed = self.group_manager.cleanup_group_metadata(eligible, lambda g: g.remove_all_offsets())
            for group in eligible:
                errors[group.group_id] = 0
            log.info("The following groups were deleted: %s. A total of %d offsets were removed.",
                     ", ".join(g.group_id for g in eligible), removed)
        return errors
