"""GroupMembershipManager: the membership side of Kafka's classic group protocol, for the groups the
GroupCoordinator owns: JoinGroup and the rebalance, SyncGroup, Heartbeat, LeaveGroup and session expiry.

A rebalance moves a group Empty/Stable -> PreparingRebalance (JoinGroups wait in the rebalance
purgatory: DelayedJoin, or InitialDelayedJoin for group.initial.rebalance.delay.ms when the group was
Empty) -> CompletingRebalance (every joined member gets the generation, the leader also gets every
member's metadata; the protocol is chosen by vote) -> Stable when the leader's SyncGroup assignment is
written to __consumer_offsets (then every waiting SyncGroup gets its member's assignment). Session
expiry is a DelayedHeartbeat per member; a member that does not rejoin in time (rebalance timeout) or
does not sync in time (DelayedSync) is removed. v4+ JoinGroup without member id gets MEMBER_ID_REQUIRED
and a pending member id; static members (group.instance.id) keep their place across restarts and fence
older instances. Follows Kafka's (pre-KIP-848) GroupCoordinator handleJoinGroup ... onExpireHeartbeat.

A collaborator of GroupCoordinator (group_coordinator.py), which checks the group's status (active,
owned, loaded) before calling in. It gets what it needs explicitly: the GroupConfig, the
GroupMetadataManager (group lookup, storing assignments), the heartbeat and rebalance purgatories and
the injected `operation_factory(delay_ms, lock, logic)` that wraps the delayed operations' logic
(delayed_join.py, delayed_heartbeat.py) in server DelayedOperations (this layer may not import
server/). It is the RebalanceCallbacks / SessionCallbacks those operations call back into.

Answers go through callbacks, from the thread that completes the operation (a request handler, a
purgatory reaper, the appender). No byte format (see group_records.py).
Thread-safety: all group state under the group's RLock.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.internal_topics import GROUP_METADATA_TOPIC_NAME
from kafkapy.coordinator.delayed_heartbeat import DelayedHeartbeat, member_key
from kafkapy.coordinator.delayed_join import DelayedJoin, DelayedSync, InitialDelayedJoin, join_key, sync_key
from kafkapy.coordinator.group_metadata import (
    CR,
    PR,
    UNKNOWN_MEMBER_ID,
    D,
    E,
    GroupMetadata,
    JoinCallback,
    JoinGroupResult,
    MemberMetadata,
    S,
    SyncCallback,
    SyncGroupResult,
)
from kafkapy.coordinator.group_metadata_manager import GroupMetadataManager

log = logging.getLogger("kafka.coordinator.group.GroupCoordinator")

# New members that never rejoin (e.g. a client that timed out its JoinGroup) are dropped after this.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000

# Wraps a delayed operation's logic in a server DelayedOperation: (delay_ms, lock, logic) -> operation.
OperationFactory = Callable[[int, Any, Any], Any]


@dataclass(slots=True)
class GroupConfig:
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = 2**31 - 1

    @classmethod
    def from_config(cls, config: Any) -> GroupConfig:
        return cls(config.get_int("group.min.session.timeout.ms"), config.get_int("group.max.session.timeout.ms"),
                   config.get_int("group.initial.rebalance.delay.ms"), config.get_int("group.max.size"))


class GroupMembershipManager:
    def __init__(self, group_config: GroupConfig, group_manager: GroupMetadataManager, heartbeat_purgatory: Any,
                 rebalance_purgatory: Any, operation_factory: OperationFactory) -> None:
        self.group_config = group_config
        self.group_manager = group_manager
        self.heartbeat_purgatory = heartbeat_purgatory
        self.rebalance_purgatory = rebalance_purgatory
        self._operation_factory = operation_factory

    # -- loading and unloading ----------------------------------------------------------------------

    def on_group_loaded(self, group: GroupMetadata) -> None:
        """A group loaded from __consumer_offsets: every member's session starts now."""
        with group.lock:
            log.info("Loading group metadata for %s with generation %d", group.group_id, group.generation_id)
            if not (group.is_state(S) or group.is_state(E)):
                raise RuntimeError(f"Loaded group {group.group_id} in unexpected state {group.state}")
            for member in group.all_member_metadata():
                self.complete_and_schedule_next_heartbeat_expiration(group, member)

    def on_group_unloaded(self, group: GroupMetadata) -> None:
        """This broker no longer coordinates the group: waiting members get NOT_COORDINATOR."""
        with group.lock:
            log.info("Unloading group metadata for %s with generation %d", group.group_id, group.generation_id)
            previous = group.state
            group.transition_to(D)
            if previous is PR:
                for member in group.all_member_metadata():
                    group.maybe_invoke_join_callback(member, JoinGroupResult(member.member_id,
                                                                             ErrorCode.NOT_COORDINATOR))
                self.rebalance_purgatory.check_and_complete(join_key(group.group_id))
            elif previous in (S, CR):
                for member in group.all_member_metadata():
                    group.maybe_invoke_sync_callback(member, SyncGroupResult(ErrorCode.NOT_COORDINATOR))
                    self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))
            self._remove_sync_expiration(group)

    # -- purgatory plumbing -------------------------------------------------------------------------

    def _watch(self, purgatory: Any, logic: Any, key: Any) -> None:
        op = self._operation_factory(logic.delay_ms, logic.group.lock, logic)
        purgatory.try_complete_else_watch(op, [key])

    def watch_join(self, logic: DelayedJoin) -> None:
        self._watch(self.rebalance_purgatory, logic, join_key(logic.group.group_id))

    # -- JoinGroup ----------------------------------------------------------------------------------

    def join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                   require_known_member_id: bool, support_skipping_assignment: bool, client_id: str,
                   client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                   protocols: list[tuple[str, bytes]], callback: JoinCallback, reason: str | None = None) -> None:
        """JoinGroup for a group this coordinator owns (the coordinator validated the group's status)."""
        if not (self.group_config.group_min_session_timeout_ms <= session_timeout_ms
                <= self.group_config.group_max_session_timeout_ms):
            callback(JoinGroupResult(member_id, ErrorCode.INVALID_SESSION_TIMEOUT))
            return
        is_unknown_member = member_id == UNKNOWN_MEMBER_ID
        group = self.group_manager.get_or_maybe_create_group(group_id, is_unknown_member)
        if group is None:
            callback(JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))
            return
        reason = reason or "not provided"
        with group.lock:
            if not self._accept_joining_member(group, member_id):
                group.remove(member_id)
                callback(JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.GROUP_MAX_SIZE_REACHED))
            elif is_unknown_member:
                self._do_new_member_join_group(group, group_instance_id, require_known_member_id,
                                               support_skipping_assignment, client_id, client_host,
                                               rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols,
                                               callback, reason)
            else:
                self._do_current_member_join_group(group, member_id, group_instance_id, client_id, client_host,
                                                   rebalance_timeout_ms, session_timeout_ms, protocol_type,
                                                   protocols, callback, reason)
            if group.is_state(PR):
                self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def _accept_joining_member(self, group: GroupMetadata, member_id: str) -> bool:
        max_size = self.group_config.group_max_size
        if group.state in (E, D):
            return True
        if group.is_state(PR):
            return ((group.has(member_id) and group.get(member_id).is_awaiting_join)
                    or group.num_awaiting_join() < max_size)
        return group.has(member_id) or group.size < max_size

    def _do_new_member_join_group(self, group: GroupMetadata, group_instance_id: str | None,
                                  require_known_member_id: bool, support_skipping_assignment: bool, client_id: str,
                                  client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int,
                                  protocol_type: str, protocols: list[tuple[str, bytes]], callback: JoinCallback,
                                  reason: str) -> None:
        if group.is_state(D):
            # The group was just unloaded or deleted: the member finds the coordinator again.
            callback(JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(protocol_type, {name for name, _ in protocols}):
            callback(JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        new_member_id = f"{group_instance_id if group_instance_id is not None else client_id}-{uuid.uuid4()}"
        if group_instance_id is not None:
            old_member_id = group.current_static_member_id(group_instance_id)
            if old_member_id is None:
                self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, new_member_id,
                                               group_instance_id, client_id, client_host, protocol_type, protocols,
                                               group, callback, reason)
            else:
                self._update_static_member_and_rebalance(group, old_member_id, new_member_id, group_instance_id,
                                                         protocols, rebalance_timeout_ms, session_timeout_ms,
                                                         callback, support_skipping_assignment, reason)
        elif require_known_member_id:
            # v4+: the member must come back with the id we give it, so a client whose JoinGroup times
            # out does not leave a defunct member behind.
            group.add_pending_member(new_member_id)
            self._add_pending_member_expiration(group, new_member_id, session_timeout_ms)
            callback(JoinGroupResult(new_member_id, ErrorCode.MEMBER_ID_REQUIRED))
        else:
            self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, new_member_id, None, client_id,
                                           client_host, protocol_type, protocols, group, callback, reason)

    def _do_current_member_join_group(self, group: GroupMetadata, member_id: str, group_instance_id: str | None,
                                      client_id: str, client_host: str, rebalance_timeout_ms: int,
                                      session_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]],
                                      callback: JoinCallback, reason: str) -> None:
        if group.is_state(D):
            callback(JoinGroupResult(member_id, ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(protocol_type, {name for name, _ in protocols}):
            callback(JoinGroupResult(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        if group.is_pending_member(member_id):
            # A pending member (MEMBER_ID_REQUIRED) is never static.
            self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, member_id, None, client_id,
                                           client_host, protocol_type, protocols, group, callback, reason)
            return
        instance_not_found = group_instance_id is not None and not group.has_static_member(group_instance_id)
        if group.is_static_member_fenced(group_instance_id, member_id):
            callback(JoinGroupResult(member_id, ErrorCode.FENCED_INSTANCE_ID))
            return
        if not group.has(member_id) or instance_not_found:
            callback(JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))
            return
        member = group.get(member_id)
        state = group.state
        if state is PR:
            self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms, session_timeout_ms,
                                              callback, f"Member {member_id} joining group during {state}; "
                                              f"client reason: {reason}")
        elif state is CR:
            if member.matches(protocols):
                # The member lost our JoinGroup answer: answer again with the current generation.
                callback(self._current_join_result(group, member_id,
                                                   with_members=group.is_leader(member_id)))
            else:
                self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms,
                                                  session_timeout_ms, callback, f"Updating metadata for member "
                                                  f"{member_id} during {state}; client reason: {reason}")
        elif state is S:
            if group.is_leader(member_id) or not member.matches(protocols):
                # A leader's JoinGroup always rebalances: it may have seen metadata changes that its
                # subscription does not show (e.g. new partitions).
                self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms,
                                                  session_timeout_ms, callback, f"Leader {member_id} re-joining "
                                                  f"group during {state}; client reason: {reason}")
            else:
                callback(self._current_join_result(group, member_id, with_members=False))
        else:
            log.warning("Attempt to add rejoining member %s of group %s in unexpected group state %s", member_id,
                        group.group_id, state)
            callback(JoinGroupResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))

    def _current_join_result(self, group: GroupMetadata, member_id: str, with_members: bool,
                             leader_id: str | None = None, skip_assignment: bool = False) -> JoinGroupResult:
        return JoinGroupResult(member_id, 0, group.current_member_metadata() if with_members else [],
                               group.generation_id, group.protocol_type, group.protocol_name,
                               group.leader_or_null() if leader_id is None else leader_id, skip_assignment)

    def _add_member_and_rebalance(self, rebalance_timeout_ms: int, session_timeout_ms: int, member_id: str,
                                  group_instance_id: str | None, client_id: str, client_host: str, protocol_type: str,
                                  protocols: list[tuple[str, bytes]], group: GroupMetadata, callback: JoinCallback,
                                  reason: str) -> None:
        member = MemberMetadata(member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms,
                                session_timeout_ms, protocol_type, protocols)
        member.is_new = True
        # A new member during the first rebalance lets InitialDelayedJoin wait a little longer.
        if group.is_state(PR) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member, callback)
        # The member cannot heartbeat before it has its id, and its connection is muted while the
        # JoinGroup waits: bound how long a silent new member can hold the rebalance.
        self.complete_and_schedule_next_expiration(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self.maybe_prepare_rebalance(group, f"Adding new member {member_id} with group instance id "
                                            f"{group_instance_id}; client reason: {reason}")

    def _update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata,
                                     protocols: list[tuple[str, bytes]], rebalance_timeout_ms: int,
                                     session_timeout_ms: int, callback: JoinCallback, reason: str) -> None:
        group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, callback)
        self.maybe_prepare_rebalance(group, reason)

    def _update_static_member_and_rebalance(self, group: GroupMetadata, old_member_id: str, new_member_id: str,
                                            group_instance_id: str, protocols: list[tuple[str, bytes]],
                                            rebalance_timeout_ms: int, session_timeout_ms: int,
                                            callback: JoinCallback, support_skipping_assignment: bool,
                                            reason: str) -> None:
        current_leader = group.leader_or_null()
        member = group.replace_static_member(
            group_instance_id, old_member_id, new_member_id,
            lambda kind: (JoinGroupResult(old_member_id, ErrorCode.FENCED_INSTANCE_ID) if kind == "join"
                          else SyncGroupResult(ErrorCode.FENCED_INSTANCE_ID)))
        # The old id's heartbeat expires harmlessly (no such member any more); watch the new id.
        self.complete_and_schedule_next_heartbeat_expiration(group, member)
        old_protocols = member.supported_protocols
        old_rebalance_timeout, old_session_timeout = member.rebalance_timeout_ms, member.session_timeout_ms
        group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, callback)
        state = group.state
        if state is S:
            selected = group.select_protocol()
            if group.protocol_name == selected:
                log.info("Static member which joins during Stable stage and doesn't affect selectProtocol will "
                         "not trigger rebalance.")
                assignment = {m.member_id: m.assignment for m in group.all_member_metadata()}
                generation = group.generation_id

                def stored(error: int) -> None:
                    with group.lock:
                        if error:
                            log.warning("Failed to persist metadata for group %s: %s", group.group_id,
                                        ErrorCode(error).name)
                            if group.has(new_member_id):
                                group.update_member(member, old_protocols, old_rebalance_timeout,
                                                    old_session_timeout, None)
                                group.replace_static_member(group_instance_id, new_member_id, old_member_id,
                                                            lambda _kind: None)
                            callback(JoinGroupResult(UNKNOWN_MEMBER_ID, error))
                        elif group.generation_id == generation and group.has(new_member_id):
                            leader_skips = support_skipping_assignment and group.is_leader(new_member_id)
                            # A follower gets the old leader id so it does not assign: the Stable group would
                            # not broadcast a new assignment. A v9+ leader gets its members and skips assigning.
                            group.maybe_invoke_join_callback(member, self._current_join_result(
                                group, new_member_id, with_members=leader_skips,
                                leader_id=new_member_id if leader_skips else current_leader,
                                skip_assignment=leader_skips))

                self.group_manager.store_group(group, assignment, stored)
            else:
                self.maybe_prepare_rebalance(group, f"Group's selectedProtocol will change because static member "
                                                    f"{new_member_id} with instance id {group_instance_id} joined "
                                                    f"with change of protocol; client reason: {reason}")
        elif state is CR:
            self.maybe_prepare_rebalance(group, f"Updating metadata for static member {new_member_id} with "
                                                f"instance id {group_instance_id}; client reason: {reason}")
        elif state is not PR:
            raise RuntimeError(f"Group {group.group_id} was not supposed to be in the state {state} "
                               "when the unknown static member rejoins.")

    # -- rebalance ----------------------------------------------------------------------------------

    def maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        with group.lock:
            if group.can_rebalance():
                self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.is_state(CR):
            # Members waiting in SyncGroup must rejoin.
            self._reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        delay = self.group_config.group_initial_rebalance_delay_ms
        if group.is_state(E):
            delayed: DelayedJoin = InitialDelayedJoin(self, group, delay, delay,
                                                      max(group.rebalance_timeout_ms() - delay, 0))
        else:
            delayed = DelayedJoin(self, group, group.rebalance_timeout_ms())
        group.transition_to(PR)
        log.info("Preparing to rebalance group %s in state %s with old generation %d (%s-%d) (reason: %s)",
                 group.group_id, group.state, group.generation_id, GROUP_METADATA_TOPIC_NAME,
                 self.group_manager.partition_for(group.group_id), reason)
        self.watch_join(delayed)

    def try_complete_join(self, group: GroupMetadata, force_complete: Callable[[], bool]) -> bool:
        with group.lock:
            return force_complete() if group.has_all_members_joined() else False

    def on_complete_join(self, group: GroupMetadata) -> None:
        with group.lock:
            not_rejoined = [m for m in group.not_yet_rejoined_members() if not m.is_static_member]
            if not_rejoined:
                log.info("Group %s removed dynamic members who haven't joined: %s", group.group_id,
                         [m.member_id for m in not_rejoined])
                for member in not_rejoined:
                    group.remove(member.member_id)
                    self._remove_heartbeat_for_leaving_member(group, member)
            if group.is_state(D):
                log.info("Group %s is dead, skipping rebalance stage", group.group_id)
            elif not group.maybe_elect_new_joined_leader() and group.all_members():
                # Nobody rejoined: wait again until session expiry removes the silent members.
                log.error("Group %s could not complete rebalance because no members rejoined", group.group_id)
                self.watch_join(DelayedJoin(self, group, group.rebalance_timeout_ms()))
            else:
                group.init_next_generation()
                if group.is_state(E):
                    log.info("Group %s with generation %d is now empty (%s-%d)", group.group_id, group.generation_id,
                             GROUP_METADATA_TOPIC_NAME, self.group_manager.partition_for(group.group_id))

                    def stored(error: int) -> None:
                        if error:
                            log.warning("Failed to write empty metadata for group %s: %s", group.group_id,
                                        ErrorCode(error).name)

                    self.group_manager.store_group(group, {}, stored)
                else:
                    log.info("Stabilized group %s generation %d (%s-%d) with %d members", group.group_id,
                             group.generation_id, GROUP_METADATA_TOPIC_NAME, self.group_manager.partition_for(group.group_id),
                             group.size)
                    for member in group.all_member_metadata():
                        group.maybe_invoke_join_callback(member, self._current_join_result(
                            group, member.member_id, with_members=group.is_leader(member.member_id)))
                        self.complete_and_schedule_next_heartbeat_expiration(group, member)
                        member.is_new = False
                        group.add_pending_sync_member(member.member_id)
                    self._watch(self.rebalance_purgatory,
                                DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms()),
                                sync_key(group.group_id))

    def try_complete_pending_sync(self, group: GroupMetadata, generation_id: int,
                                  force_complete: Callable[[], bool]) -> bool:
        with group.lock:
            if generation_id != group.generation_id or group.state in (D, E, PR):
                return force_complete()
            return force_complete() if group.has_received_sync_from_all_members() else False

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        with group.lock:
            if generation_id != group.generation_id or group.state not in (CR, S):
                return
            if not group.has_received_sync_from_all_members():
                pending = list(group.pending_sync_members)
                for member_id in pending:
                    member = group.members.get(member_id)
                    group.remove(member_id)
                    if member is not None:
                        self._remove_heartbeat_for_leaving_member(group, member)
                log.debug("Group %s removed members %s who haven't sent their sync requests", group.group_id,
                          pending)
                self.prepare_rebalance(group, f"Removing {pending} on pending sync request expiration")

    def _remove_sync_expiration(self, group: GroupMetadata) -> None:
        group.clear_pending_sync_members()
        self.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    # -- SyncGroup ----------------------------------------------------------------------------------

    def sync_group(self, group_id: str, generation: int, member_id: str, protocol_type: str | None,
                   protocol_name: str | None, group_instance_id: str | None, assignment: dict[str, bytes],
                   callback: SyncCallback) -> None:
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

    def _store_leader_assignment(self, group: GroupMetadata, leader_id: str, assignment: dict[str, bytes]) -> None:
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

    def _validate_sync_group(self, group: GroupMetadata, generation: int, member_id: str, protocol_type: str | None,
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

    def validate_current_member(self, group: GroupMetadata, member_id: str, group_instance_id: str | None) -> int:
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

    def _remove_pending_sync_member(self, group: GroupMetadata, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        self.rebalance_purgatory.check_and_complete(sync_key(group.group_id))

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: int) -> None:
        for member in group.all_member_metadata():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: GroupMetadata, error: int) -> None:
        protocol_type = group.protocol_type if not error else None
        protocol_name = group.protocol_name if not error else None
        for member in group.all_member_metadata():
            if group.maybe_invoke_sync_callback(member, SyncGroupResult(error, member.assignment, protocol_type,
                                                                        protocol_name)):
                # Expirations are ignored while a member waits in SyncGroup: restart its session now.
                self.complete_and_schedule_next_heartbeat_expiration(group, member)

    # -- Heartbeat and LeaveGroup -------------------------------------------------------------------

    def heartbeat(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int) -> int:
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

    def leave_group(self, group_id: str, leaving: list[tuple[str, str | None, str | None]]
                    ) -> tuple[int, list[tuple[str, str | None, int]]]:
        """leaving: (member id, group instance id, reason). Returns (group error, [(member id, instance id, error)])."""
        group = self.group_manager.get_group(group_id)
        if group is None:
            return 0, [(m, i, ErrorCode.UNKNOWN_MEMBER_ID) for m, i, _ in leaving]
        results: list[tuple[str, str | None, int]] = []
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

    def _remove_current_member_from_group(self, group: GroupMetadata, member_id: str, reason: str) -> None:
        member = group.get(member_id)
        self._remove_member_and_update_group(group, member, f"Removing member {member_id} on LeaveGroup; client "
                                                            f"reason: {reason}")
        self._remove_heartbeat_for_leaving_member(group, member)
        log.info("Member %s has left group %s through explicit `LeaveGroup`; client reason: %s", member,
                 group.group_id, reason)

    def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        # A new member may time out while its JoinGroup waits: answer it so that it rejoins if still alive.
        group.maybe_invoke_join_callback(member, JoinGroupResult(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.state in (S, CR):
            self.maybe_prepare_rebalance(group, reason)
        elif group.is_state(PR):
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    def _remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None:
        group.remove_pending_member(member_id)
        if group.is_state(PR):
            self.rebalance_purgatory.check_and_complete(join_key(group.group_id))

    # -- session expiry -----------------------------------------------------------------------------

    def complete_and_schedule_next_heartbeat_expiration(self, group: GroupMetadata, member: MemberMetadata) -> None:
        self.complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def complete_and_schedule_next_expiration(self, group: GroupMetadata, member: MemberMetadata,
                                              timeout_ms: int) -> None:
        key = member_key(group.group_id, member.member_id)
        member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(key)
        member.heartbeat_satisfied = False
        self._watch(self.heartbeat_purgatory, DelayedHeartbeat(self, group, member.member_id, False, timeout_ms), key)

    def _add_pending_member_expiration(self, group: GroupMetadata, member_id: str, timeout_ms: int) -> None:
        self._watch(self.heartbeat_purgatory, DelayedHeartbeat(self, group, member_id, True, timeout_ms),
                    member_key(group.group_id, member_id))

    def _remove_heartbeat_for_leaving_member(self, group: GroupMetadata, member: MemberMetadata) -> None:
        member.is_leaving = True
        self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))

    def try_complete_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool,
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

    def on_expire_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool) -> None:
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
