"""Replica: what a partition leader knows about one follower (Kafka's Replica / ReplicaState): its log end
and start offsets as of its last fetch, and when it was last caught up (the ISR shrink clock).

Immutable ReplicaState snapshots replaced on each update; the owning Partition serialises updates under
its lock, readers may take the current snapshot without locking.
"""

from __future__ import annotations

from dataclasses import dataclass

UNKNOWN_OFFSET = -1


@dataclass(frozen=True, slots=True)
class ReplicaState:
    log_start_offset: int = UNKNOWN_OFFSET
    log_end_offset: int = UNKNOWN_OFFSET
    last_fetch_leader_log_end_offset: int = UNKNOWN_OFFSET
    last_fetch_time_ms: int = 0
    last_caught_up_time_ms: int = 0

    def is_caught_up(self, leader_end_offset: int, now_ms: int, replica_max_lag_ms: int) -> bool:
        return leader_end_offset == self.log_end_offset or now_ms - self.last_caught_up_time_ms <= replica_max_lag_ms


class Replica:
    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.state = ReplicaState()

    def update_fetch_state(self, follower_fetch_offset: int, follower_start_offset: int, fetch_time_ms: int,
                           leader_end_offset: int) -> None:
        """Kafka's rule: a fetch at the leader's end catches the follower up now; a fetch reaching what the
        leader's end was at the previous fetch catches it up as of that previous fetch."""
        s = self.state
        caught_up = s.last_caught_up_time_ms
        if follower_fetch_offset >= leader_end_offset:
            caught_up = max(caught_up, fetch_time_ms)
        elif follower_fetch_offset >= s.last_fetch_leader_log_end_offset:
            caught_up = max(caught_up, s.last_fetch_time_ms)
        self.state = ReplicaState(follower_start_offset, follower_fetch_offset, leader_end_offset, fetch_time_ms,
                                  caught_up)

    def reset(self, now_ms: int, leader_end_offset: int, is_new_leader: bool, in_sync: bool) -> None:
        """On leadership change: forget the follower's offsets; an ISR member counts as caught up now so it
        gets replica.lag.time.max.ms to fetch from the new leader."""
        if is_new_leader:
            self.state = ReplicaState(UNKNOWN_OFFSET, UNKNOWN_OFFSET, UNKNOWN_OFFSET, 0,
                                      now_ms if in_sync else 0)
        else:
            s = self.state
            self.state = ReplicaState(s.log_start_offset, s.log_end_offset, leader_end_offset,
                                      now_ms if in_sync else s.last_fetch_time_ms,
                                      now_ms if in_sync else s.last_caught_up_time_ms)

    def __repr__(self) -> str:
        return f"Replica({self.broker_id}, {self.state})"
