"""DelayedHeartbeat: the session timeout of one group member (or of a pending member id).

Watched under the key (group id, member id) in the heartbeat purgatory. Every sign of life
(heartbeat, join, sync, commit) completes the current one and schedules the next
(`GroupMembershipManager.complete_and_schedule_next_expiration`); one that expires removes the member
and rebalances the group. Like delayed_join.py this is logic wrapped by an injected server
DelayedOperation; it calls back through the narrow SessionCallbacks protocol.

No byte format. Thread-safety: every method runs under the group's lock (the operation's lock).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kafkapy.coordinator.group_metadata import GroupMetadata


def member_key(group_id: str, member_id: str) -> tuple[str, str]:
    return (group_id, member_id)


class SessionCallbacks(Protocol):
    """What a member's session expiry needs from the group membership."""

    def try_complete_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool,
                               force_complete: Callable[[], bool]) -> bool: ...

    def on_expire_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool) -> None: ...


class DelayedHeartbeat:
    def __init__(self, callbacks: SessionCallbacks, group: GroupMetadata, member_id: str, is_pending: bool,
                 timeout_ms: int) -> None:
        self.callbacks = callbacks
        self.group = group
        self.member_id = member_id
        self.is_pending = is_pending
        self.delay_ms = timeout_ms

    def try_complete(self, force_complete: Callable[[], bool]) -> bool:
        return self.callbacks.try_complete_heartbeat(self.group, self.member_id, self.is_pending, force_complete)

    def on_complete(self) -> None:
        """Nothing: a completed heartbeat expectation needs no answer."""

    def on_expiration(self) -> None:
        self.callbacks.on_expire_heartbeat(self.group, self.member_id, self.is_pending)
