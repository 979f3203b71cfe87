"""OffsetMetadataManager: the offsets side of the group coordinator: OffsetCommit, OffsetFetch and
OffsetDelete for the groups this broker coordinates (Kafka's handleCommitOffsets / handleFetchOffsets /
handleDeleteOffsets).

A collaborator of GroupCoordinator (group_coordinator.py), which checks the group's status before
calling in. It gets the GroupMetadataManager (the offsets cache and the __consumer_offsets writes) and
the GroupMembershipManager (a member's commit is a sign of life, and commits are validated against the
member's generation). TxnOffsetCommit writes the offsets as a transactional batch and keeps them pending per
producer (GroupMetadata.pending_transactional_offset_commits): OffsetFetch does not see them (require_stable
answers UNSTABLE_OFFSET_COMMIT) until the producer's COMMIT marker reaches __consumer_offsets
(`complete_transaction`); an ABORT drops them. Commits are answered after their records are appended to __consumer_offsets; a
commit with generation -1 and no member id from a group Kafka does not manage (a standalone consumer)
is accepted while the group is Empty. OffsetDelete writes tombstones and refuses topics a consumer
group subscribes to.

No byte format (see group_records.py). Thread-safety: group state under each group's lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group_membership import GroupMembershipManager
from kafkapy.coordinator.group_metadata import (
    CR,
    PR,
    CommitRecordMetadataAndOffset,
    D,
    E,
    GroupMetadata,
    OffsetAndMetadata,
    S,
)
from kafkapy.coordinator.group_metadata_manager import (
    GroupMetadataManager,
    OffsetFetchPartition,
    append_error_to_commit_error,
)

log = logging.getLogger("kafka.coordinator.group.GroupCoordinator")

CommitCallback = Callable[[dict[TopicPartition, int]], None]


class OffsetMetadataManager:
    def __init__(self, group_manager: GroupMetadataManager, time: Time, membership: GroupMembershipManager) -> None:
        self.group_manager = group_manager
        self.time = time
        self.membership = membership

    # -- OffsetCommit -------------------------------------------------------------------------------

    def commit_offsets(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int,
                       offsets: dict[TopicPartition, OffsetAndMetadata], callback: CommitCallback) -> None:
        group = self.group_manager.get_group(group_id)
        if group is None:
            if generation_id < 0:
                # Not managed by Kafka's group membership: offsets storage only.
                group = self.group_manager.add_group(GroupMetadata(group_id, E, self.time))
            else:
                # Or a commit from an older generation: reject it either way.
                callback({tp: ErrorCode.ILLEGAL_GENERATION for tp in offsets})
                return
        self._do_commit_offsets(group, member_id, group_instance_id, generation_id, offsets, callback)

    def _do_commit_offsets(self, group: GroupMetadata, member_id: str, group_instance_id: str | None,
                           generation_id: int, offsets: dict[TopicPartition, OffsetAndMetadata],
                           callback: CommitCallback) -> None:
        with group.lock:
            error = self._validate_offset_commit(group, generation_id, member_id, group_instance_id)
            if error:
                callback({tp: error for tp in offsets})
            elif group.is_state(E):
                self.group_manager.store_offsets(group, member_id, offsets, callback)
            elif group.state in (S, PR):
                # Commits during PreparingRebalance are allowed: the member learns of the rebalance
                # from its next heartbeat.
                if group.has(member_id):
                    self.membership.complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
                self.group_manager.store_offsets(group, member_id, offsets, callback)
            elif group.is_state(CR):
                # The member has the new generation but not yet its assignment.
                callback({tp: ErrorCode.REBALANCE_IN_PROGRESS for tp in offsets})
            else:
                callback({tp: ErrorCode.COORDINATOR_NOT_AVAILABLE for tp in offsets})

    def _validate_offset_commit(self, group: GroupMetadata, generation_id: int, member_id: str,
                                group_instance_id: str | None) -> int:
        if group.is_state(D):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id >= 0 or member_id != "" or group_instance_id is not None:
            error = self.membership.validate_current_member(group, member_id, group_instance_id)
            if error:
                return error
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
            return 0
        if not group.is_state(E):
            # Only members may commit for a group with members.
            return ErrorCode.UNKNOWN_MEMBER_ID
        return 0

    # -- TxnOffsetCommit -----------------------------------------------------------------------------

    def commit_transactional_offsets(self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
                                     group_instance_id: str | None, generation_id: int,
                                     offsets: dict[TopicPartition, OffsetAndMetadata], callback: CommitCallback) -> None:
        group = self.group_manager.get_group(group_id)
        if group is None:
            if generation_id >= 0:
                callback({tp: ErrorCode.ILLEGAL_GENERATION for tp in offsets})
                return
            group = self.group_manager.add_group(GroupMetadata(group_id, E, self.time))
        manager = self.group_manager
        with group.lock:
            if group.is_state(D):
                error = ErrorCode.COORDINATOR_NOT_AVAILABLE
            elif member_id != "" and not group.has(member_id):
                error = ErrorCode.UNKNOWN_MEMBER_ID
            elif generation_id >= 0 and generation_id != group.generation_id:
                error = ErrorCode.ILLEGAL_GENERATION
            else:
                error = ErrorCode.NONE
            if error:
                callback({tp: error for tp in offsets})
                return
            valid = {tp: om for tp, om in offsets.items() if manager.validate_offset_metadata_length(om.metadata)}
            staged = {tp: CommitRecordMetadataAndOffset(None, om) for tp, om in valid.items()}
            group.pending_transactional_offset_commits.setdefault(producer_id, {}).update(staged)

        def final(code: int) -> dict[TopicPartition, int]:
            return {tp: code if tp in valid else ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in offsets}

        if not valid:
            callback(final(0))
            return

        def done(code: int, base_offset: int) -> None:
            with group.lock:
                pending = group.pending_transactional_offset_commits.get(producer_id, {})
                for tp, entry in staged.items():
                    if pending.get(tp) is not entry:
                        continue  # replaced by a later commit, or completed meanwhile
                    if code:
                        del pending[tp]
                    else:
                        entry.appended_batch_offset = base_offset
                if not pending:
                    group.pending_transactional_offset_commits.pop(producer_id, None)
            callback(final(append_error_to_commit_error(code) if code else 0))

        manager.append_txn_offsets(group_id, producer_id, producer_epoch, valid, done)

    def complete_transaction(self, producer_id: int, offsets_partitions: set[int], commit: bool) -> None:
        """The producer's marker is in these __consumer_offsets partitions: a COMMIT makes its pending offsets
        the committed ones (unless a newer commit is already there), an ABORT drops them."""
        manager = self.group_manager
        for group in manager.current_groups():
            if manager.partition_for(group.group_id) not in offsets_partitions:
                continue
            with group.lock:
                pending = group.pending_transactional_offset_commits.pop(producer_id, None)
                if not pending or not commit:
                    continue
                for tp, committed in pending.items():
                    if committed.appended_batch_offset is None:
                        continue  # its write failed or is still in flight: Kafka never marks those
                    current = group.offsets.get(tp)
                    if current is None or current.older_than(committed):
                        group.offsets[tp] = committed

    # -- OffsetFetch / OffsetDelete -----------------------------------------------------------------

    def fetch_offsets(self, group_id: str, require_stable: bool, partitions: list[TopicPartition] | None
                      ) -> dict[TopicPartition, OffsetFetchPartition]:
        """`partitions` None = every committed offset of the group."""
        # Answered whatever the group state: the group may use Kafka only to store offsets.
        return self.group_manager.get_offsets(group_id, require_stable, partitions)

    def delete_offsets(self, group_id: str, partitions: list[TopicPartition]) -> tuple[int, dict[TopicPartition, int]]:
        group = self.group_manager.get_group(group_id)
        if group is None:
            return self.group_manager.missing_group_error(group_id), {}
        partition_errors: dict[TopicPartition, int] = {}
        with group.lock:
            state = group.state
            if state is D:
                return self.group_manager.missing_group_error(group_id), {}
            if state is E:
                eligible = list(partitions)
            elif group.protocol_type == "consumer":
                eligible = []
                for tp in partitions:
                    if group.is_subscribed_to_topic(tp.topic):
                        partition_errors[tp] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
                    else:
                        eligible.append(tp)
            else:
                return ErrorCode.NON_EMPTY_GROUP, {}
        if eligible:
            removed = self.group_manager.cleanup_group_metadata([group], lambda g: g.remove_offsets(eligible))
            log.info("The following offsets of the group %s were deleted: %s (%d removed)", group_id, eligible,
                     removed)
            for tp in eligible:
                partition_errors[tp] = 0
        return 0, partition_errors
