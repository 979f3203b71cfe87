"""OffsetMetadataManager: the offsets side of the group coordinator: OffsetCommit, OffsetFetch and
OffsetDelete for the groups this broker coordinates (Kafka's handleCommitOffsets / handleFetchOffsets /
handleDeleteOffsets).

A collaborator of GroupCoordinator (group_coordinator.py), which checks the group's status before
calling in. It gets the GroupMetadataManager (the offsets cache and the __consumer_offsets writes) and
the GroupMembershipManager (a member's commit is a sign of life, and commits are validated against the
member's generation). Commits are answered after their records are appended to __consumer_offsets; a
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
from kafkapy.coordinator.group_metadata import CR, PR, D, E, GroupMetadata, OffsetAndMetadata, S
from kafkapy.coordinator.group_metadata_manager import GroupMetadataManager, OffsetFetchPartition

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
