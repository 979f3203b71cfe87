"""The GroupCoordinator's offset and administration side: OffsetCommit, OffsetFetch, OffsetDelete,
DescribeGroups, ListGroups, DeleteGroups (Kafka's handleCommitOffsets ... handleDeleteGroups).

A mixin of GroupCoordinator (group_coordinator.py), split out to keep modules small; it uses the
coordinator's `group_manager`, `validate_group_status`, `validate_current_member` and heartbeat
scheduling. Commits are answered after their records are appended to __consumer_offsets; a commit
with generation -1 and no member id from a group Kafka does not manage (a standalone consumer) is
accepted while the group is Empty. DeleteGroups and OffsetDelete write tombstones.

No byte format. Thread-safety: group state under each group's lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.group_metadata import (
    CR,
    PR,
    D,
    E,
    GroupMetadata,
    GroupOverview,
    GroupState,
    GroupSummary,
    OffsetAndMetadata,
    S,
)
from kafkapy.coordinator.group_metadata_manager import OffsetFetchPartition

if TYPE_CHECKING:
    from kafkapy.coordinator.group_coordinator import GroupCoordinator

log = logging.getLogger("kafka.coordinator.group.GroupCoordinator")

CommitCallback = Callable[[dict[TopicPartition, int]], None]

DEAD_GROUP = GroupSummary(str(GroupState.DEAD), "", "", [])
EMPTY_GROUP = GroupSummary("", "", "", [])


class GroupOffsetsMixin:
    # -- OffsetCommit -------------------------------------------------------------------------------

    def handle_commit_offsets(self: GroupCoordinator, group_id: str, member_id: str, group_instance_id: str | None,
                              generation_id: int, offsets: dict[TopicPartition, OffsetAndMetadata],
                              callback: CommitCallback) -> None:
        error = self.validate_group_status(group_id, allow_empty_id=True)
        if error:
            callback({tp: error for tp in offsets})
            return
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

    def _do_commit_offsets(self: GroupCoordinator, group: GroupMetadata, member_id: str, group_instance_id: str | None,
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
                    self.complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
                self.group_manager.store_offsets(group, member_id, offsets, callback)
            elif group.is_state(CR):
                # The member has the new generation but not yet its assignment.
                callback({tp: ErrorCode.REBALANCE_IN_PROGRESS for tp in offsets})
            else:
                callback({tp: ErrorCode.COORDINATOR_NOT_AVAILABLE for tp in offsets})

    def _validate_offset_commit(self: GroupCoordinator, group: GroupMetadata, generation_id: int, member_id: str,
                                group_instance_id: str | None) -> int:
        if group.is_state(D):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id >= 0 or member_id != "" or group_instance_id is not None:
            error = self.validate_current_member(group, member_id, group_instance_id)
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

    def handle_fetch_offsets(self: GroupCoordinator, group_id: str, require_stable: bool,
                             partitions: list[TopicPartition] | None
                             ) -> tuple[int, dict[TopicPartition, OffsetFetchPartition]]:
        """(error, offsets); `partitions` None = every committed offset of the group."""
        error = self.validate_group_status(group_id, allow_empty_id=True)
        if error:
            return error, {}
        # Answered whatever the group state: the group may use Kafka only to store offsets.
        return 0, self.group_manager.get_offsets(group_id, require_stable, partitions)

    def handle_delete_offsets(self: GroupCoordinator, group_id: str, partitions: list[TopicPartition]
                              ) -> tuple[int, dict[TopicPartition, int]]:
        error = self.validate_group_status(group_id)
        if error:
            return error, {}
        group = self.group_manager.get_group(group_id)
        if group is None:
            return self._missing_group_error(group_id), {}
        partition_errors: dict[TopicPartition, int] = {}
        with group.lock:
            state = group.state
            if state is D:
                return self._missing_group_error(group_id), {}
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

    def _missing_group_error(self: GroupCoordinator, group_id: str) -> int:
        return ErrorCode.GROUP_ID_NOT_FOUND if self.group_manager.group_not_exists(group_id) else \
            ErrorCode.NOT_COORDINATOR

    # -- DescribeGroups / ListGroups / DeleteGroups -------------------------------------------------

    def handle_describe_group(self: GroupCoordinator, group_id: str) -> tuple[int, GroupSummary | None]:
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

    def handle_list_groups(self: GroupCoordinator, states: set[str] | None = None) -> tuple[int, list[GroupOverview]]:
        """Groups of every owned partition, filtered by state names (case-insensitive; empty = all)."""
        if not self.is_active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        self.refresh_ownership()
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

    def handle_delete_groups(self: GroupCoordinator, group_ids: list[str]) -> dict[str, int]:
        errors: dict[str, int] = {}
        eligible: list[GroupMetadata] = []
        for group_id in group_ids:
            error = self.validate_group_status(group_id, allow_empty_id=True)
            if error:
                errors[group_id] = error
                continue
            group = self.group_manager.get_group(group_id)
            if group is None:
                errors[group_id] = self._missing_group_error(group_id)
                continue
            with group.lock:
                if group.is_state(D):
                    errors[group_id] = self._missing_group_error(group_id)
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
