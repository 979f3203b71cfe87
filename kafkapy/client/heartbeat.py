"""Kafka's Heartbeat timers and the coordinator heartbeat thread of a group member.

`Heartbeat`: when the next Heartbeat is due (heartbeat.interval.ms after the last one sent, or
retry.backoff.ms after a failure), when the session expires (session.timeout.ms without a response:
the coordinator is treated as dead and looked up again) and when the consumer last called poll()
(max.poll.interval.ms without one: the member leaves the group so its partitions move on).
`HeartbeatThread` (daemon, `kafka-coordinator-heartbeat-thread | <group>`): while the member is
STABLE, sends Heartbeat v0-4 on the coordinator connection and applies the answer: REBALANCE_IN_PROGRESS
asks the consumer to rejoin on its next poll(); ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID /
FENCED_INSTANCE_ID reset the generation (FENCED_INSTANCE_ID is also fatal); coordinator errors
trigger a new FindCoordinator.

Thread-safety: Heartbeat is guarded by the coordinator's lock; the thread takes that lock for every
read or change of membership state and does its network I/O without it.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from kafkapy.client.errors import DisconnectError, KafkaTimeoutError, error_from_code
from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.time import Time
from kafkapy.protocol.messages import HeartbeatRequest

if TYPE_CHECKING:
    from kafkapy.client.abstract_coordinator import AbstractCoordinator, Generation

log = logging.getLogger(__name__)

HEARTBEAT = 12
POLL_TIMEOUT_REASON = ("consumer poll timeout has expired. This means the time between subsequent calls to poll() "
                       "was longer than the configured max.poll.interval.ms, which typically implies that the poll "
                       "loop is spending too much time processing messages. You can address this either by "
                       "increasing max.poll.interval.ms or by reducing the maximum size of batches returned in "
                       "poll() with max.poll.records.")


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


class HeartbeatThread(threading.Thread):
    """Heartbeats for one AbstractCoordinator (uses its lock, condition, state and connection)."""

    def __init__(self, coordinator: AbstractCoordinator) -> None:
        super().__init__(name=f"kafka-coordinator-heartbeat-thread | {coordinator.group_id}", daemon=True)
        self.c = coordinator

    def run(self) -> None:
        c = self.c
        while True:
            with c._lock:
                if c._closed:
                    return
                if not c.heartbeat_enabled():
                    c._wake.wait(0.1)
                    continue
                now = c.time.milliseconds()
                if c.coordinator_unknown():
                    action = "lookup"
                elif c.heartbeat.session_timeout_expired(now):
                    action = "session"
                elif c.heartbeat.poll_timeout_expired(now):
                    action = "poll"
                elif c.heartbeat.time_to_next_heartbeat(now) > 0:
                    c._wake.wait(min(c.heartbeat.time_to_next_heartbeat(now), 100) / 1000.0)
                    continue
                else:
                    action = "heartbeat"
                    generation = c.generation
                    c.heartbeat.sent(now)
            try:
                self._action(action, generation if action == "heartbeat" else None)
            except Exception as e:  # noqa: BLE001 - the heartbeat thread must survive anything
                log.warning("Heartbeat thread error: %s", e)
                with c._lock:
                    c.heartbeat.failed(c.time.milliseconds())

    def _action(self, action: str, generation: Generation | None) -> None:
        c = self.c
        if action == "lookup":
            if not c.ensure_coordinator_ready(c.time.milliseconds() + c.retry_backoff_ms * 10):
                c.time.sleep(c.retry_backoff_ms)
            return
        if action == "session":
            c.mark_coordinator_unknown("session timed out without receiving a heartbeat response")
            return
        if action == "poll":
            log.warning("%s", POLL_TIMEOUT_REASON)
            c.maybe_leave_group(POLL_TIMEOUT_REASON)
            return
        assert generation is not None
        group_id, instance = c.group_id, c.group_instance_id

        def build(version: int) -> Any:
            return HeartbeatRequest(group_id=group_id, generation_id=generation.generation_id,
                                    member_id=generation.member_id,
                                    group_instance_id=instance if version >= 3 else None)

        try:
            resp, _ = c.coordinator_request(build, HEARTBEAT, c.request_timeout_ms)
        except KafkaError as e:
            with c._lock:
                c.heartbeat.failed(c.time.milliseconds())
            if not isinstance(e, DisconnectError | KafkaTimeoutError):
                c.mark_coordinator_unknown(str(e))
            return
        self._handle_response(resp.error_code, generation)

    def _handle_response(self, code: int, generation: Generation) -> None:
        c = self.c
        now = c.time.milliseconds()
        with c._lock:
            if code == ErrorCode.NONE:
                c.heartbeat.received(now)
                return
            if code == ErrorCode.REBALANCE_IN_PROGRESS:
                c.heartbeat.received(now)
                if c.generation_if_stable() is not None:
                    c.request_rejoin("group is already rebalancing")
                return
            c.heartbeat.failed(now)
        if code in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR):
            c.mark_coordinator_unknown(error_from_code(code).name)
        elif code in (ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID):
            if c.generation == generation:
                c.reset_generation(f"encountered {error_from_code(code).name} from HEARTBEAT response")
            if code == ErrorCode.FENCED_INSTANCE_ID:
                c.fatal_error = error_from_code(code, f"Received fatal exception: group.instance.id gets "
                                                         f"fenced ({c.group_instance_id})")
        elif code == ErrorCode.GROUP_AUTHORIZATION_FAILED:
            c.fatal_error = error_from_code(code, f"Not authorized to access group: {c.group_id}")
        else:
            log.warning("Unexpected error in heartbeat response: %s", error_from_code(code).name)

