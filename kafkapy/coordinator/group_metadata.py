"""GroupMetadata and MemberMetadata: the in-memory state of one classic consumer group.

Kafka's classic group state machine: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead,
with Kafka's valid previous states for each transition (an invalid transition is a bug and raises).
A group holds its members (dynamic and static: group.instance.id -> member id), the members that
must still send JoinGroup after MEMBER_ID_REQUIRED (pending members), the members that must still
send SyncGroup (pending sync members), the protocol votes, the generation, and the committed offsets
(with the offsets whose append to __consumer_offsets is still in flight).

No byte format here: member metadata/assignments are opaque bytes; group_records.py writes them.
Thread-safety: every field is guarded by `lock` (an RLock shared with the group's delayed operations,
as in Kafka); callers hold it around every read and write.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.consumer_protocol import parse_subscription_topics

log = logging.getLogger("kafka.coordinator.group.GroupMetadata")

CONSUMER_PROTOCOL_TYPE = "consumer"
NO_PROTOCOL = ""
NO_LEADER = ""
UNKNOWN_MEMBER_ID = ""


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, name: str) -> GroupState | None:
        lowered = name.lower()
        for state in cls:
            if state.value.lower() == lowered:
                return state
        return None


E, PR, CR, S, D = (GroupState.EMPTY, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                   GroupState.STABLE, GroupState.DEAD)

# Kafka's GroupState.validPreviousStates.
VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    D: frozenset({S, PR, CR, E, D}),
    CR: frozenset({PR}),
    S: frozenset({CR}),
    PR: frozenset({S, CR, E}),
    E: frozenset({PR}),
}


@dataclass(slots=True)
class OffsetAndMetadata:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int | None = None


@dataclass(slots=True)
class CommitRecordMetadataAndOffset:
    """A committed offset and the log offset of the batch that holds it (None: not yet appended)."""

    appended_batch_offset: int | None
    offset_and_metadata: OffsetAndMetadata

    def older_than(self, other: CommitRecordMetadataAndOffset) -> bool:
        if self.appended_batch_offset is None or other.appended_batch_offset is None:
            raise ValueError("Cannot compare offsets whose append offset is unknown")
        return self.appended_batch_offset < other.appended_batch_offset


@dataclass(slots=True)
class JoinGroupResult:
    member_id: str
    error: int
    members: list[tuple[str, str | None, bytes]] | None = None  # (member id, instance id, metadata)
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = NO_LEADER
    skip_assignment: bool = False


@dataclass(slots=True)
class SyncGroupResult:
    error: int
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(slots=True)
class MemberSummary:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(slots=True)
class GroupSummary:
    state: str
    protocol_type: str
    protocol: str
    members: list[MemberSummary]


@dataclass(slots=True)
class GroupOverview:
    group_id: str
    protocol_type: str
    state: str


JoinCallback = Callable[[JoinGroupResult], None]
SyncCallback = Callable[[SyncGroupResult], None]


class MemberMetadata:
    """One member: its identity, timeouts, supported protocols (name, metadata) in preference order,
    its assignment, and the callbacks of its JoinGroup/SyncGroup waiting for the rebalance."""

    __slots__ = ("member_id", "group_instance_id", "client_id", "client_host", "rebalance_timeout_ms",
                 "session_timeout_ms", "protocol_type", "supported_protocols", "assignment",
                 "awaiting_join_callback", "awaiting_sync_callback", "is_new", "heartbeat_satisfied",
                 "is_leaving")

    def __init__(self, member_id: str, group_instance_id: str | None, client_id: str, client_host: str,
                 rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                 supported_protocols: list[tuple[str, bytes]], assignment: bytes = b"") -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.supported_protocols = supported_protocols
        self.assignment = assignment
        self.awaiting_join_callback: JoinCallback | None = None
        self.awaiting_sync_callback: SyncCallback | None = None
        self.is_new = False
        # Set when the member proved it is alive since the last heartbeat expiration was scheduled.
        self.heartbeat_satisfied = False
        self.is_leaving = False

    @property
    def is_static_member(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join_callback is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync_callback is not None

    def has_satisfied_heartbeat(self) -> bool:
        if self.is_new:
            # New members can expire while awaiting join, so this is checked first.
            return self.heartbeat_satisfied
        if self.is_awaiting_join or self.is_awaiting_sync:
            return True
        return self.heartbeat_satisfied

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.supported_protocols:
            if name == protocol:
                return metadata
        raise ValueError(f"Member {self.member_id} does not support protocol {protocol}")

    def protocols(self) -> set[str]:
        return {name for name, _ in self.supported_protocols}

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        if len(protocols) != len(self.supported_protocols):
            return False
        return all(a[0] == b[0] and bytes(a[1]) == bytes(b[1])
                   for a, b in zip(protocols, self.supported_protocols, strict=True))

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.supported_protocols:
            if name in candidates:
                return name
        raise ValueError(f"Member {self.member_id} does not support any of the candidate protocols")

    def summary(self, protocol: str) -> MemberSummary:
        return MemberSummary(self.member_id, self.group_instance_id, self.client_id, self.client_host,
                             self.metadata(protocol), self.assignment)

    def summary_no_metadata(self) -> MemberSummary:
        return MemberSummary(self.member_id, self.group_instance_id, self.client_id, self.client_host, b"", b"")

    def __repr__(self) -> str:
        return (f"MemberMetadata(memberId={self.member_id}, groupInstanceId={self.group_instance_id}, "
                f"clientId={self.client_id}, clientHost={self.client_host}, sessionTimeoutMs="
                f"{self.session_timeout_ms}, rebalanceTimeoutMs={self.rebalance_timeout_ms}, "
                f"supportedProtocols={[p for p, _ in self.supported_protocols]})")


class GroupMetadata:
    def __init__(self, group_id: str, initial_state: GroupState, time: Time) -> None:
        self.group_id = group_id
        self.state = initial_state
        self.time = time
        self.lock = threading.RLock()
        self.current_state_timestamp: int | None = time.milliseconds()
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, MemberMetadata] = {}
        self.static_members: dict[str, str] = {}
        self.pending_members: set[str] = set()
        self.pending_sync_members: set[str] = set()
        self.num_members_awaiting_join = 0
        self.supported_protocols: dict[str, int] = {}
        self.offsets: dict[TopicPartition, CommitRecordMetadataAndOffset] = {}
        self.pending_offset_commits: dict[TopicPartition, OffsetAndMetadata] = {}
        # TxnOffsetCommit: producer id -> offsets written in its open transaction, visible once it commits
        # (managed by the OffsetMetadataManager).
        self.pending_transactional_offset_commits: dict[int, dict[TopicPartition, CommitRecordMetadataAndOffset]] = {}
        self.new_member_added = False
        # None: unknown (not a consumer group, or a subscription we could not parse).
        self.subscribed_topics: set[str] | None = None

    # -- state --------------------------------------------------------------------------------------

    def is_state(self, state: GroupState) -> bool:
        return self.state is state

    def transition_to(self, state: GroupState) -> None:
        if self.state not in VALID_PREVIOUS_STATES[state]:
            raise RuntimeError(f"Group {self.group_id} should be in the {sorted(map(str, VALID_PREVIOUS_STATES[state]))} "
                               f"states before moving to {state} state. Instead it is in {self.state} state")
        self.state = state
        self.current_state_timestamp = self.time.milliseconds()

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS_STATES[PR]

    def current_state_timestamp_or_default(self) -> int:
        return -1 if self.current_state_timestamp is None else self.current_state_timestamp

    # -- members ------------------------------------------------------------------------------------

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> MemberMetadata:
        return self.members[member_id]

    @property
    def size(self) -> int:
        return len(self.members)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def leader_or_null(self) -> str:
        return self.leader_id if self.leader_id is not None else NO_LEADER

    def add(self, member: MemberMetadata, callback: JoinCallback | None = None) -> None:
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._inc_supported_protocols(member)
        member.awaiting_join_callback = callback
        if member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._dec_supported_protocols(member)
            if member.is_awaiting_join:
                self.num_members_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        self.pending_sync_members.discard(member_id)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Make an awaiting member leader if the leader has not rejoined; False if nobody rejoined."""
        if self.leader_id is None:
            return False
        leader = self.members.get(self.leader_id)
        if leader is not None and leader.is_awaiting_join:
            return True
        for member_id, member in self.members.items():
            if member.is_awaiting_join:
                self.leader_id = member_id
                log.info("Group leader [member.id: %s, group.instance.id: %s] failed to join before the rebalance "
                         "timeout, member %s was elected as the new leader.", leader and leader.member_id,
                         leader and leader.group_instance_id, member_id)
                return True
        return False

    def replace_static_member(self, group_instance_id: str, old_member_id: str, new_member_id: str,
                              fenced_result: Callable[[str], Any]) -> MemberMetadata:
        """Give the static member `group_instance_id` a new member id; its old requests get FENCED_INSTANCE_ID."""
        member = self.members.pop(old_member_id, None)
        if member is None:
            raise ValueError(f"Cannot replace non-existing member id {old_member_id}")
        # The old member's pending JoinGroup/SyncGroup are answered so it shuts down.
        if member.is_awaiting_join:
            self.maybe_invoke_join_callback(member, fenced_result("join"))
        if member.is_awaiting_sync:
            self.maybe_invoke_sync_callback(member, fenced_result("sync"))
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        if old_member_id in self.pending_sync_members:
            self.pending_sync_members.discard(old_member_id)
            self.pending_sync_members.add(new_member_id)
        return member

    def current_static_member_id(self, group_instance_id: str | None) -> str | None:
        return None if group_instance_id is None else self.static_members.get(group_instance_id)

    def has_static_member(self, group_instance_id: str | None) -> bool:
        return group_instance_id is not None and group_instance_id in self.static_members

    def is_static_member_fenced(self, group_instance_id: str | None, member_id: str) -> bool:
        current = self.current_static_member_id(group_instance_id)
        return current is not None and current != member_id

    def all_static_members(self) -> list[str]:
        return list(self.static_members)

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def add_pending_member(self, member_id: str) -> None:
        self.pending_members.add(member_id)

    def remove_pending_member(self, member_id: str) -> None:
        self.pending_members.discard(member_id)

    def add_pending_sync_member(self, member_id: str) -> None:
        if member_id not in self.members:
            raise ValueError(f"Attempt to add pending sync member {member_id} which is not a member of group {self.group_id}")
        self.pending_sync_members.add(member_id)

    def remove_pending_sync_member(self, member_id: str) -> None:
        self.pending_sync_members.discard(member_id)

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def clear_pending_sync_members(self) -> None:
        self.pending_sync_members.clear()

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_members_awaiting_join and not self.pending_members

    def not_yet_rejoined_members(self) -> list[MemberMetadata]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def num_awaiting_join(self) -> int:
        return self.num_members_awaiting_join

    def all_members(self) -> list[str]:
        return list(self.members)

    def all_member_metadata(self) -> list[MemberMetadata]:
        return list(self.members.values())

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def update_member(self, member: MemberMetadata, protocols: list[tuple[str, bytes]], rebalance_timeout_ms: int,
                      session_timeout_ms: int, callback: JoinCallback | None) -> None:
        self._dec_supported_protocols(member)
        member.supported_protocols = protocols
        self._inc_supported_protocols(member)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if callback is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        elif callback is None and member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        member.awaiting_join_callback = callback

    def maybe_invoke_join_callback(self, member: MemberMetadata, result: JoinGroupResult) -> None:
        callback = member.awaiting_join_callback
        if callback is None:
            return
        member.awaiting_join_callback = None
        self.num_members_awaiting_join -= 1
        try:
            callback(result)
        except Exception:
            log.exception("Failed to invoke the JoinGroup callback of member %s of group %s", member.member_id,
                          self.group_id)

    def maybe_invoke_sync_callback(self, member: MemberMetadata, result: SyncGroupResult) -> bool:
        callback = member.awaiting_sync_callback
        if callback is None:
            return False
        member.awaiting_sync_callback = None
        try:
            callback(result)
        except Exception:
            log.exception("Failed to invoke the SyncGroup callback of member %s of group %s", member.member_id,
                          self.group_id)
        return True

    # -- protocols ----------------------------------------------------------------------------------

    def _inc_supported_protocols(self, member: MemberMetadata) -> None:
        for name in member.protocols():
            self.supported_protocols[name] = self.supported_protocols.get(name, 0) + 1

    def _dec_supported_protocols(self, member: MemberMetadata) -> None:
        for name in member.protocols():
            left = self.supported_protocols.get(name, 0) - 1
            if left > 0:
                self.supported_protocols[name] = left
            else:
                self.supported_protocols.pop(name, None)

    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {name for name, count in self.supported_protocols.items() if count == n}

    def supports_protocols(self, member_protocol_type: str, member_protocols: set[str]) -> bool:
        if self.is_state(E):
            return bool(member_protocol_type) and bool(member_protocols)
        n = len(self.members)
        return (self.protocol_type == member_protocol_type
                and any(self.supported_protocols.get(p, 0) == n for p in member_protocols))

    def select_protocol(self) -> str:
        """The protocol every member supports that most members prefer (ties: the first voted for)."""
        if not self.members:
            raise RuntimeError("Cannot select protocol for empty group")
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best = max(votes.values())
        return next(name for name, count in votes.items() if count == best)

    def current_member_metadata(self) -> list[tuple[str, str | None, bytes]]:
        if self.is_state(D) or self.is_state(PR) or self.protocol_name is None:
            raise RuntimeError(f"Cannot obtain member metadata for group {self.group_id} in state {self.state}")
        return [(m.member_id, m.group_instance_id, m.metadata(self.protocol_name)) for m in self.members.values()]

    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(CR)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(E)
        self.clear_pending_sync_members()

    def compute_subscribed_topics(self) -> set[str] | None:
        """Topics the members subscribe to when this is a consumer group and every subscription parses."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            parsed = parse_subscription_topics(member.metadata(self.protocol_name))
            if parsed is None:
                return None
            topics.update(parsed)
        return topics

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return True if self.subscribed_topics is None else topic in self.subscribed_topics

    def summary(self) -> GroupSummary:
        if self.is_state(S):
            protocol = self.protocol_name
            if protocol is None:
                raise RuntimeError("Invalid null group protocol for stable group")
            return GroupSummary(str(self.state), self.protocol_type or "", protocol,
                                [m.summary(protocol) for m in self.members.values()])
        return GroupSummary(str(self.state), self.protocol_type or "", NO_PROTOCOL,
                            [m.summary_no_metadata() for m in self.members.values()])

    def overview(self) -> GroupOverview:
        return GroupOverview(self.group_id, self.protocol_type or "", str(self.state))

    # -- offsets ------------------------------------------------------------------------------------

    def initialize_offsets(self, offsets: dict[TopicPartition, CommitRecordMetadataAndOffset]) -> None:
        self.offsets.update(offsets)

    def prepare_offset_commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.pending_offset_commits.update(offsets)

    def on_offset_commit_append(self, tp: TopicPartition, committed: CommitRecordMetadataAndOffset) -> None:
        if tp in self.pending_offset_commits:
            if committed.appended_batch_offset is None:
                raise RuntimeError("Cannot complete offset commit write without the offset of its record")
            current = self.offsets.get(tp)
            if current is None or current.older_than(committed):
                self.offsets[tp] = committed
        staged = self.pending_offset_commits.get(tp)
        if staged is not None and staged == committed.offset_and_metadata:
            del self.pending_offset_commits[tp]

    def fail_pending_offset_write(self, tp: TopicPartition, offset: OffsetAndMetadata) -> None:
        if self.pending_offset_commits.get(tp) == offset:
            del self.pending_offset_commits[tp]

    def has_pending_offset_commits_for(self, tp: TopicPartition) -> bool:
        return tp in self.pending_offset_commits or any(
            tp in pending for pending in self.pending_transactional_offset_commits.values())

    def offset(self, tp: TopicPartition) -> OffsetAndMetadata | None:
        committed = self.offsets.get(tp)
        return committed.offset_and_metadata if committed is not None else None

    def all_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return {tp: c.offset_and_metadata for tp, c in self.offsets.items()}

    def has_offsets(self) -> bool:
        return bool(self.offsets) or bool(self.pending_offset_commits) or bool(self.pending_transactional_offset_commits)

    def remove_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        removed = {}
        for tp in partitions:
            self.pending_offset_commits.pop(tp, None)
            committed = self.offsets.pop(tp, None)
            if committed is not None:
                removed[tp] = committed.offset_and_metadata
        return removed

    def remove_all_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return self.remove_offsets(list(self.offsets))

    def remove_expired_offsets(self, now_ms: int, retention_ms: int) -> dict[TopicPartition, OffsetAndMetadata]:
        """Kafka's offset expiration: all offsets of an Empty group once retention passed since it became
        Empty; unsubscribed topics' offsets of a Stable consumer group; by commit time for standalone groups."""

        def expired(base: Callable[[CommitRecordMetadataAndOffset], int], keep_topics: set[str]) -> list:
            out = []
            for tp, committed in self.offsets.items():
                if tp.topic in keep_topics or tp in self.pending_offset_commits:
                    continue
                om = committed.offset_and_metadata
                if om.expire_timestamp is not None:
                    if now_ms >= om.expire_timestamp:
                        out.append(tp)
                elif now_ms - base(committed) >= retention_ms:
                    out.append(tp)
            return out

        if self.protocol_type is not None and self.is_state(E):
            state_ts = self.current_state_timestamp
            to_remove = expired(lambda c: state_ts if state_ts is not None
                                else c.offset_and_metadata.commit_timestamp, set())
        elif (self.protocol_type == CONSUMER_PROTOCOL_TYPE and self.subscribed_topics is not None
              and self.is_state(S)):
            to_remove = expired(lambda c: c.offset_and_metadata.commit_timestamp, self.subscribed_topics)
        elif self.protocol_type is None:
            to_remove = expired(lambda c: c.offset_and_metadata.commit_timestamp, set())
        else:
            to_remove = []
        return self.remove_offsets(to_remove)

    def __repr__(self) -> str:
        return (f"GroupMetadata(groupId={self.group_id}, generation={self.generation_id}, "
                f"protocolType={self.protocol_type}, currentState={self.state}, members={list(self.members)})")
