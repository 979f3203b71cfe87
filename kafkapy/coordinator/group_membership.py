"""The GroupCoordinator's membership side after JoinGroup: SyncGroup (the leader's assignment is written
to __consumer_offsets, then every waiting member gets its part), Heartbeat, LeaveGroup (batched, and
administrative removal of static members by group.instance.id) and session expiry (DelayedHeartbeat).

A mixin of GroupCoordinator (group_coordinator.py), split out to keep modules small; it follows Kafka's
GroupCoordinator handleSyncGroup / handleHeartbeat / handleLeaveGroup / onExpireHeartbeat.
No byte format. Thread-safety: all group state under the group's RLock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from kafkapy.common.errors import ErrorCode
from kafkapy.coordinator.delayed_heartbeat import DelayedHeartbeat, member_key
from kafkapy.coordinator.delayed_join import join_key, sync_key
from kafkapy.coordinator.group_metadata import (
    CR,
    PR,
    UNKNOWN_MEMBER_ID,
    D,
    E,
    GroupMetadata,
    JoinGroupResult,
    MemberMetadata,
    S,
    SyncCallback,
    SyncGroupResult,
)

if TYPE_CHECKING:
    from kafkapy.coordinator.group_coordinator import GroupCoordinator

log = logging.getLogger("kafka.coordinator.group.GroupCoordinator")



class GroupMembershipMixin:
    # -- SyncGroup ----------------------------------------------------------------------------------

    def handle_sync_group(self: GroupCoordinator, group_id: str, generation: int, member_id: str, protocol_type: str | None,
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
        group = self.group_manager.get_group(group_id)
        if group is None:
            callback(SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
            return
        with group.lock:
            error = self._validate_sync_group(group, generation, member_id, protocol_type, protocol_name,
                                              group_instance_id)
            if error:
                callback(SyncGroupResult(error))
                return
            state = group.state
            if state is E:
                callback(SyncGroupResult(ErrorCode.UNKNOWN_MEMBER_ID))
            elif state is PR:
                callback(SyncGroupResult(ErrorCode.REBALANCE_IN_PROGRESS))
            elif state is CR:
                group.get(member_id).awaiting_sync_callback = callback
                self._remove_pending_sync_member(group, member_id)
                if group.is_leader(member_id):
                    self._store_leader_assignment(group, member_id, assignment)
            elif state is S:
                self._remove_pending_sync_member(group, member_id)
                member = group.get(member_id)
                callback(SyncGroupResult(0, member.assignment, group.protocol_type, group.protocol_name))
                self.complete_and_schedule_next_heartbeat_expiration(group, member)
            else:
                raise RuntimeError(f"Reached unexpected condition for Dead group {group_id}")

    def _store_leader_assignment(self: GroupCoordinator, group: GroupMetadata, leader_id: str, assignment: dict[str, bytes]) -> None:
        log.info("Assignment received from leader %s for group %s for generation %d. The group has %d members, "
                 "%d of which are static.", leader_id, group.group_id, group.generation_id, group.size,
                 len(group.static_members))
        missing = [m for m in group.all_members() if m not in assignment]
        if missing:
            log.warning("Setting empty assignments for members %s of %s for generation %d", missing, group.group_id,
                        group.generation_id)
        full = {m: bytes(assignment.get(m, b"")) for m in group.all_members()}
        generation = group.generation_id

        def stored(error: int) -> None:
            with group.lock:
                # Another member may have joined meanwhile: only finish this very rebalance.
                if group.is_state(CR) and generation == group.generation_id:
                    if error:
                        self._reset_and_propagate_assignment_error(group, error)
                        self.maybe_prepare_rebalance(group, f"Error {ErrorCode(error).name} when storing group "
                                                            f"assignment during SyncGroup (member: {leader_id})")
                    else:
                        for member in group.all_member_metadata():
                            member.assignment = full[member.member_id]
                        self._propagate_assignment(group, 0)
                        group.transition_to(S)

        self.group_manager.store_group(group, full, stored)

    def _validate_sync_group(self: GroupCoordinator, group: GroupMetadata, generation: int, member_id: str, protocol_type: str | None,
                             protocol_name: str | None, group_instance_id: str | None) -> int:
        if group.is_state(D):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = self.validate_current_member(group, member_id, group_instance_id)
        if error:
            return error
        if generation != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if protocol_type is not None and group.protocol_type != protocol_type:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and group.protocol_name != protocol_name:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return 0

    def validate_current_member(self: GroupCoordinator, group: GroupMetadata, member_id: str, group_instance_id: str | None) -> int:
        """FENCED_INSTANCE_ID when the instance id maps to another member id; UNKNOWN_MEMBER_ID when unknown."""
        if group_instance_id is not None:
            current = group.current_static_member_id(group_instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if current != member_id:
                log.info("Request memberId=%s for static member with groupInstanceId=%s is fenced by existing "
                         "memberId=%s", member_id, group_instance_id, current)
                return ErrorCode.FENCED_INSTANCE_ID
            return 0
        return 0 if group.has(member_id) else ErrorCode.UNKNOWN_MEMBER_ID

    def _remove_pending_sync_member(self: GroupCoordinator, group: GroupMetadata, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        self.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def _reset_and_propagate_assignment_error(self: GroupCoordinator, group: GroupMetadata, error: int) -> None:
        for member in group.all_member_metadata():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self: GroupCoordinator, group: GroupMetadata, error: int) -> None:
        protocol_type = group.protocol_type if not error else None
        protocol_name = group.protocol_name if not error else None
        for member in group.all_member_metadata():
            if group.maybe_invoke_sync_callback(member, SyncGroupResult(error, member.assignment, protocol_type,
                                                                        protocol_name)):
                # Expirations are ignored while a member waits in SyncGroup: restart its session now.
                self.complete_and_schedule_next_heartbeat_expiration(group, member)

    # -- Heartbeat and LeaveGroup -------------------------------------------------------------------

    def handle_heartbeat(self: GroupCoordinator, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int) -> int:
        error = self.validate_group_status(group_id)
        if error:
            # A loading group answers blindly: its members learn of any rebalance at their next heartbeat.
            return 0 if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS else error
        group = self.group_manager.get_group(group_id)
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        with group.lock:
            if group.is_state(D):
                return ErrorCode.COORDINATOR_NOT_AVAILABLE
            error = self.validate_current_member(group, member_id, group_instance_id)
            if error:
                return error
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
            if group.is_state(E):
                return ErrorCode.UNKNOWN_MEMBER_ID
            self.complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
            return ErrorCode.REBALANCE_IN_PROGRESS if group.is_state(PR) else 0

    def handle_leave_group(self: GroupCoordinator, group_id: str, leaving: list[tuple[str, str | None, str | None]]
                           ) -> tuple[int, list[tuple[str, str | None, int]]]:
        """leaving: (member id, group instance id, reason). Returns (group error, [(member id, instance id, error)])."""
        error = self.validate_group_status(group_id)
        if error:
            return error, []
        group = self.group_manager.get_group(group_id)
        if group is None:
            return 0, [(m, i, ErrorCode.UNKNOWN_MEMBER_ID) for m, i, _ in leaving]
        results = []
        with group.lock:
            if group.is_state(D):
                return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
            for member_id, instance_id, reason in leaving:
                reason = reason or "not provided"
                if member_id == UNKNOWN_MEMBER_ID:
                    # Administrative removal of a static member by its instance id.
                    current = group.current_static_member_id(instance_id)
                    if current is None:
                        results.append((member_id, instance_id, ErrorCode.UNKNOWN_MEMBER_ID))
                    else:
                        self._remove_current_member_from_group(group, current, reason)
                        results.append((member_id, instance_id, 0))
                elif group.is_pending_member(member_id):
                    self._remove_pending_member_and_update_group(group, member_id)
                    self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))
                    log.info("Pending member %s has left group %s through explicit `LeaveGroup` request; client "
                             "reason: %s", member_id, group_id, reason)
                    results.append((member_id, instance_id, 0))
                else:
                    error = self.validate_current_member(group, member_id, instance_id)
                    if not error:
                        self._remove_current_member_from_group(group, member_id, reason)
                    results.append((member_id, instance_id, error))
        return 0, results

    def _remove_current_member_from_group(self: GroupCoordinator, group: GroupMetadata, member_id: str, reason: str) -> None:
        member = group.get(member_id)
        self._remove_member_and_update_group(group, member, f"Removing member {member_id} on LeaveGroup; client "
                                                            f"reason: {reason}")
        self._remove_heartbeat_for_leaving_member(group, member)
        log.info("Member %s has left group %s through explicit `LeaveGroup`; client reason: %s", member,
                 group.group_id, reason)

    def _remove_member_and_update_group(self: GroupCoordinator, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        # A new member may time out while its JoinGroup waits: answer it so that it rejoins if still alive.
        group.maybe_invoke_join_callback(member, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.state in (S, CR):
            self.maybe_prepare_rebalance(group, reason)
        elif group.is_state(PR):
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def _remove_pending_member_and_update_group(self: GroupCoordinator, group: GroupMetadata, member_id: str) -> None:
        group.remove_pending_member(member_id)
        if group.is_state(PR):
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    # -- session expiry -----------------------------------------------------------------------------

    def complete_and_schedule_next_heartbeat_expiration(self: GroupCoordinator, group: GroupMetadata, member: MemberMetadata) -> None:
        self.complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def complete_and_schedule_next_expiration(self: GroupCoordinator, group: GroupMetadata, member: MemberMetadata,
                                              timeout_ms: int) -> None:
        key = member_key(group.group_id, member.member_id)
        member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(key)
        member.heartbeat_satisfied = False
        self._watch(self.heartbeat_purgatory, DelayedHeartbeat(self, group, member.member_id, False, timeout_ms), key)

    def _add_pending_member_expiration(self: GroupCoordinator, group: GroupMetadata, member_id: str, timeout_ms: int) -> None:
        self._watch(self.heartbeat_purgatory, DelayedHeartbeat(self, group, member_id, True, timeout_ms),
                    member_key(group.group_id, member_id))

    def _remove_heartbeat_for_leaving_member(self: GroupCoordinator, group: GroupMetadata, member: MemberMetadata) -> None:
        member.is_leaving = True
        self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))

    def try_complete_heartbeat(self: GroupCoordinator, group: GroupMetadata, member_id: str, is_pending: bool,
                               force_complete: Callable[[], bool]) -> bool:
        with group.lock:
            if group.is_state(D):
                return force_complete()
            if is_pending:
                return force_complete() if group.has(member_id) else False
            member = group.members.get(member_id)
            if member is None or member.is_leaving or member.has_satisfied_heartbeat():
                return force_complete()
            return False

    def on_expire_heartbeat(self: GroupCoordinator, group: GroupMetadata, member_id: str, is_pending: bool) -> None:
        with group.lock:
            if group.is_state(D):
                log.info("Received notification of heartbeat expiration for member %s after group %s had already "
                         "been unloaded or deleted.", member_id, group.group_id)
            elif is_pending:
                log.info("Pending member %s in group %s has been removed after session timeout expiration.",
                         member_id, group.group_id)
                self._remove_pending_member_and_update_group(group, member_id)
            elif group.has(member_id):
                member = group.get(member_id)
                if not member.has_satisfied_heartbeat():
                    log.info("Member %s in group %s has failed, removing it from the group", member_id,
                             group.group_id)
                    self._remove_member_and_update_group(group, member, f"removing member {member_id} on heartbeat "
                                                                        "expiration")
