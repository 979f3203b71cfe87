"""Kafka's Heartbeat timers of a group member (the thread that acts on them is AbstractCoordinator's
HeartbeatThread, in abstract_coordinator.py, as in Kafka).

`Heartbeat`: when the next Heartbeat is due (heartbeat.interval.ms after the last one sent, or
retry.backoff.ms after a failure), when the session expires (session.timeout.ms without a response:
the coordinator is treated as dead and looked up again) and when the consumer last called poll()
(max.poll.interval.ms without one: the member leaves the group so its partitions move on).

Thread-safety: none of its own; the coordinator's lock guards it.
"""

from __future__ import annotations

from kafkapy.common.time import Time


class Heartbeat:
    """Kafka's Heartbeat timers: when to send the next heartbeat, session and poll expiry (ms)."""

    def __init__(self, time: Time, session_timeout_ms: int, heartbeat_interval_ms: int, max_poll_interval_ms: int,
                 retry_backoff_ms: int) -> None:
        self.time = time
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_poll_interval_ms = max_poll_interval_ms
        self.retry_backoff_ms = retry_backoff_ms
        now = time.milliseconds()
        self.last_poll = now
        self.next_heartbeat = now + heartbeat_interval_ms
        self.session_deadline = now + session_timeout_ms
        self.in_flight = False

    def poll(self, now: int) -> None:
        self.last_poll = now

    def sent(self, now: int) -> None:
        self.in_flight = True
        self.next_heartbeat = now + self.heartbeat_interval_ms

    def received(self, now: int) -> None:
        self.in_flight = False
        self.session_deadline = now + self.session_timeout_ms

    def failed(self, now: int) -> None:
        self.in_flight = False
        self.next_heartbeat = now + self.retry_backoff_ms

    def reset_timeouts(self, now: int) -> None:
        self.session_deadline = now + self.session_timeout_ms
        self.next_heartbeat = now + self.heartbeat_interval_ms
        self.last_poll = now

    def time_to_next_heartbeat(self, now: int) -> int:
        return max(0, self.next_heartbeat - now)

    def session_timeout_expired(self, now: int) -> bool:
        return now >= self.session_deadline

    def poll_timeout_expired(self, now: int) -> bool:
        return now - self.last_poll > self.max_poll_interval_ms
