"""Rebalance-purgatory operations of the group coordinator: DelayedJoin, InitialDelayedJoin, DelayedSync.

These are the decision logic of Kafka's operations of the same names; the coordinator layer may not
import server/, so the broker injects a factory that wraps each one in a server DelayedOperation
(`operation_factory(delay_ms, group.lock, logic)`), whose `try_complete()` calls
`logic.try_complete(force_complete)`, `on_complete()` and `on_expiration()` delegate likewise.

- DelayedJoin (watch key ("join", group)): completes when every member rejoined, or after the
  rebalance timeout; completing it ends the join phase (`RebalanceCallbacks.on_complete_join`).
- InitialDelayedJoin: the first rebalance of an Empty group waits group.initial.rebalance.delay.ms,
  and again (up to the rebalance timeout) while new members keep arriving.
- DelayedSync (watch key ("sync", group)): after the join phase, members that do not send SyncGroup
  within the rebalance timeout are removed.

The operations call back into the group membership through the narrow RebalanceCallbacks protocol
(implemented by GroupMembershipManager), not through the coordinator's modules.

No byte format. Thread-safety: every method runs under the group's lock (the operation's lock).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kafkapy.coordinator.group_metadata import GroupMetadata

ForceComplete = Callable[[], bool]


class RebalanceCallbacks(Protocol):
    """What the rebalance operations need from the group membership (Kafka's GroupCoordinator callbacks)."""

    def try_complete_join(self, group: GroupMetadata, force_complete: ForceComplete) -> bool: ...

    def on_complete_join(self, group: GroupMetadata) -> None: ...

    def watch_join(self, logic: DelayedJoin) -> None: ...

    def try_complete_pending_sync(self, group: GroupMetadata, generation_id: int,
                                  force_complete: ForceComplete) -> bool: ...

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None: ...


def join_key(group_id: str) -> tuple[str, str]:
    return ("join", group_id)


def sync_key(group_id: str) -> tuple[str, str]:
    return ("sync", group_id)


class DelayedJoin:
    def __init__(self, callbacks: RebalanceCallbacks, group: GroupMetadata, rebalance_timeout_ms: int) -> None:
        self.callbacks = callbacks
        self.group = group
        self.delay_ms = rebalance_timeout_ms

    def try_complete(self, force_complete: ForceComplete) -> bool:
        return self.callbacks.try_complete_join(self.group, force_complete)

    def on_complete(self) -> None:
        self.callbacks.on_complete_join(self.group)

    def on_expiration(self) -> None:
        """Nothing beyond completion: members that did not rejoin are removed by on_complete_join."""


class InitialDelayedJoin(DelayedJoin):
    def __init__(self, callbacks: RebalanceCallbacks, group: GroupMetadata, configured_rebalance_delay_ms: int,
                 delay_ms: int, remaining_ms: int) -> None:
        super().__init__(callbacks, group, delay_ms)
        self.configured_rebalance_delay_ms = configured_rebalance_delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self, force_complete: ForceComplete) -> bool:
        return False

    def on_complete(self) -> None:
        group = self.group
        with group.lock:
            if group.new_member_added and self.remaining_ms != 0:
                group.new_member_added = False
                delay = min(self.configured_rebalance_delay_ms, self.remaining_ms)
                remaining = max(self.remaining_ms - self.delay_ms, 0)
                self.callbacks.watch_join(InitialDelayedJoin(
                    self.callbacks, group, self.configured_rebalance_delay_ms, delay, remaining))
            else:
                super().on_complete()


class DelayedSync:
    def __init__(self, callbacks: RebalanceCallbacks, group: GroupMetadata, generation_id: int,
                 rebalance_timeout_ms: int) -> None:
        self.callbacks = callbacks
        self.group = group
        self.generation_id = generation_id
        self.delay_ms = rebalance_timeout_ms

    def try_complete(self, force_complete: ForceComplete) -> bool:
        return self.callbacks.try_complete_pending_sync(self.group, self.generation_id, force_complete)

    def on_complete(self) -> None:
        """Nothing: completing early means every member synced (or the generation moved on)."""

    def on_expiration(self) -> None:
        self.callbacks.on_expire_pending_sync(self.group, self.generation_id)
