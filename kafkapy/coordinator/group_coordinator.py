"""GroupCoordinator: Kafka's classic consumer group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
and the group side of OffsetCommit/OffsetFetch/OffsetDelete, DescribeGroups, ListGroups, DeleteGroups.

Follows Kafka's (pre-KIP-848) GroupCoordinator: a rebalance moves a group Empty/Stable ->
PreparingRebalance (JoinGroups wait in the rebalance purgatory: DelayedJoin, or InitialDelayedJoin
for group.initial.rebalance.delay.ms when the group was Empty) -> CompletingRebalance (every joined
member gets the generation, the leader also gets every member's metadata; the protocol is chosen by
vote) -> Stable when the leader's SyncGroup assignment is written to __consumer_offsets (then every
waiting SyncGroup gets its member's assignment). Session expiry is a DelayedHeartbeat per member; a
member that does not rejoin in time (rebalance timeout) or does not sync in time (DelayedSync) is
removed. v4+ JoinGroup without member id gets MEMBER_ID_REQUIRED and a pending member id; static
members (group.instance.id) keep their place across restarts and fence older instances.

Answers go through callbacks, from the thread that completes the operation (a request handler, a
purgatory reaper, the appender). The purgatories and the DelayedOperation wrapper are injected by
the broker (this layer may not import server/): `operation_factory(delay_ms, lock, logic)`.
This module holds the lifecycle, partition ownership, JoinGroup and the rebalance; SyncGroup, Heartbeat,
LeaveGroup and session expiry are in group_membership.py, offsets and DescribeGroups/ListGroups/
DeleteGroups in group_coordinator_offsets.py (mixins of GroupCoordinator).
No byte format (see group_records.py). Thread-safety: all group state under the group's RLock.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.delayed_heartbeat import member_key
from kafkapy.coordinator.delayed_join import DelayedJoin, DelayedSync, InitialDelayedJoin, join_key, sync_key
from kafkapy.coordinator.group_coordinator_offsets import GroupOffsetsMixin
from kafkapy.coordinator.group_membership import GroupMembershipMixin
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
    SyncGroupResult,
)
from kafkapy.coordinator.group_metadata_manager import (
    GROUP_METADATA_TOPIC_NAME,
    GroupMetadataManager,
    OffsetConfig,
)

log = logging.getLogger("kafka.coordinator.group.GroupCoordinator")

# New members that never rejoin (e.g. a client that timed out its JoinGroup) are dropped after this.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000

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


class GroupCoordinator(GroupMembershipMixin, GroupOffsetsMixin):
    def __init__(self, broker_id: int, group_config: GroupConfig, offset_config: OffsetConfig,
                 group_manager: GroupMetadataManager, time: Time, heartbeat_purgatory: Any, rebalance_purgatory: Any,
                 operation_factory: OperationFactory) -> None:
        self.broker_id = broker_id
        self.group_config = group_config
        self.offset_config = offset_config
        self.group_manager = group_manager
        self.time = time
        self.heartbeat_purgatory = heartbeat_purgatory
        self.rebalance_purgatory = rebalance_purgatory
        self._operation_factory = operation_factory
        self.is_active = False
        self._stop = threading.Event()
        self._scheduler: threading.Thread | None = None

    @classmethod
    def create(cls, config: Any, time: Time, replica_manager: Any, metadata_cache: Any,
               purgatory_factory: Callable[[str], Any], operation_factory: OperationFactory, broker_id: int = 0,
               append_executor: Any = None, load_executor: Any = None) -> GroupCoordinator:
        """Build from a KafkaConfig-like object (get_int/get) and the broker's components."""
        offset_config = OffsetConfig.from_config(config)
        manager = GroupMetadataManager(broker_id, offset_config, time, replica_manager, metadata_cache,
                                       append_executor, load_executor)
        return cls(broker_id, GroupConfig.from_config(config), offset_config, manager, time,
                   purgatory_factory("Heartbeat"), purgatory_factory("Rebalance"), operation_factory)

    # -- lifecycle ----------------------------------------------------------------------------------

    def startup(self, enable_scheduler: bool = True) -> None:
        """Start answering; load the partitions this broker leads. The scheduler thread follows
        leadership changes (every second) and expires offsets (offsets.retention.check.interval.ms)."""
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
        while not self._stop.wait(1.0):
            try:
                self.refresh_ownership()
                if self.time.milliseconds() >= next_cleanup:
                    next_cleanup = self.time.milliseconds() + interval
                    self.group_manager.cleanup_expired_offsets()
            except Exception:
                log.exception("Group coordinator background task failed; continuing")

    def partition_for(self, group_id: str) -> int:
        return self.group_manager.partition_for(group_id)

    def on_election(self, partition: int, epoch: int) -> None:
        """This broker leads __consumer_offsets-`partition`: load its groups and offsets."""
        self.group_manager.schedule_load_group_and_offsets(partition, epoch, self._on_group_loaded)

    def on_resignation(self, partition: int, epoch: int | None = None) -> None:
        self.group_manager.remove_groups_for_partition(partition, epoch, self._on_group_unloaded)

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

    def refresh_partition(self, partition: int) -> None:
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
        """Check every __consumer_offsets partition this broker hosts, plus those it holds groups for."""
        replica_manager = self.group_manager.replica_manager
        hosted = {tp.partition for tp in replica_manager.partitions if tp.topic == GROUP_METADATA_TOPIC_NAME}
        for partition in sorted(hosted | self.group_manager.owned_partitions()):
            self.refresh_partition(partition)

    def _on_group_loaded(self, group: GroupMetadata) -> None:
        with group.lock:
            log.info("Loading group metadata for %s with generation %d", group.group_id, group.generation_id)
            if not (group.is_state(S) or group.is_state(E)):
                raise RuntimeError(f"Loaded group {group.group_id} in unexpected state {group.state}")
            for member in group.all_member_metadata():
                self.complete_and_schedule_next_heartbeat_expiration(group, member)

    def _on_group_unloaded(self, group: GroupMetadata) -> None:
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

    def validate_group_status(self, group_id: str | None, allow_empty_id: bool = False) -> int:
        """0, or the error Kafka answers before touching the group (Kafka's validateGroupStatus)."""
        if group_id is None or (not allow_empty_id and group_id == ""):
            return ErrorCode.INVALID_GROUP_ID
        if not self.is_active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        partition = self.partition_for(group_id)
        self.refresh_partition(partition)
        if self.group_manager.is_partition_loading(partition):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if not self.group_manager.is_partition_owned(partition):
            return ErrorCode.NOT_COORDINATOR
        return 0

    # -- purgatory plumbing -------------------------------------------------------------------------

    def _watch(self, purgatory: Any, logic: Any, key: Any) -> None:
        op = self._operation_factory(logic.delay_ms, logic.group.lock, logic)
        purgatory.try_complete_else_watch(op, [key])

    def watch_join(self, logic: DelayedJoin) -> None:
        self._watch(self.rebalance_purgatory, logic, join_key(logic.group.group_id))

    # -- JoinGroup ----------------------------------------------------------------------------------

    def handle_join_group(self, group_id: str, member_id: str, group_instance_id: str | None,
                          require_known_member_id: bool, support_skipping_assignment: bool, client_id: str,
                          client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                          protocols: list[tuple[str, bytes]], callback: JoinCallback, reason: str | None = None) -> None:
        error = self.validate_group_status(group_id)
        if error:
            callback(JoinGroupResult(member_id, error))
            return
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
                 self.partition_for(group.group_id), reason)
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
                             GROUP_METADATA_TOPIC_NAME, self.partition_for(group.group_id))

                    def stored(error: int) -> None:
                        if error:
                            log.warning("Failed to write empty metadata for group %s: %s", group.group_id,
                                        ErrorCode(error).name)

                    self.group_manager.store_group(group, {}, stored)
                else:
                    log.info("Stabilized group %s generation %d (%s-%d) with %d members", group.group_id,
                             group.generation_id, GROUP_METADATA_TOPIC_NAME, self.partition_for(group.group_id),
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
