"""AbstractCoordinator: a client's membership in a Kafka group (Kafka's classic group protocol).

Owns: finding the group coordinator (FindCoordinator v0-6, batched keys from v4), one dedicated
connection to it (like Java's client, which gives the coordinator its own socket as node
`2^31-1 - id`, so heartbeats never queue behind fetches), the join/sync state machine (JoinGroup
v0-9 with MEMBER_ID_REQUIRED retry, SyncGroup v0-5), the heartbeat thread and LeaveGroup v0-5. Subclasses supply the embedded protocol: `metadata()`, `on_join_prepare()`, `perform_assignment()`, `on_join_complete()`.

JoinGroup and SyncGroup are sent as futures and awaited only within the caller's deadline, so a
poll(100) during a long rebalance returns on time and the next poll picks the rebalance up again.
Closing shares one deadline too (Kafka's close timer): `begin_close()` makes coordinator lookups
honour the deadline exactly, `maybe_leave_group(reason, deadline)` waits no longer than it, and
`close_coordinator(deadline)` drops the connection before joining the heartbeat thread.

`HeartbeatThread` (Kafka's AbstractCoordinator.HeartbeatThread; daemon, `kafka-coordinator-heartbeat-thread
| <group>`) acts on the Heartbeat timers (client/heartbeat.py): while the member is STABLE, it sends
Heartbeat v0-4 on the coordinator connection and applies the answer: REBALANCE_IN_PROGRESS asks the
consumer to rejoin on its next poll(); ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID reset
the generation (FENCED_INSTANCE_ID is also fatal); coordinator errors trigger a new FindCoordinator; an
expired session marks the coordinator unknown, an expired poll interval leaves the group.

Thread-safety: the consumer's thread drives joins, commits and fetches; the heartbeat thread only
heartbeats, looks up a lost coordinator and may leave the group. Shared state (generation, member
state, coordinator) is guarded by `self._lock`; network I/O happens outside it (BrokerConnection
serialises concurrent senders and readers).
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from kafkapy.client.config import ConsumerConfig
from kafkapy.client.connection import BrokerConnection
from kafkapy.client.errors import DisconnectError, KafkaTimeoutError, error_from_code
from kafkapy.client.heartbeat import Heartbeat
from kafkapy.client.metadata import Node
from kafkapy.client.network_client import NetworkClient
from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.time import Time
from kafkapy.protocol.messages import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    SyncGroupRequest,
)

log = logging.getLogger(__name__)

FIND_COORDINATOR, JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 10, 11, 12, 13, 14
POLL_TIMEOUT_REASON = ("consumer poll timeout has expired. This means the time between subsequent calls to poll() "
                       "was longer than the configured max.poll.interval.ms, which typically implies that the poll "
                       "loop is spending too much time processing messages. You can address this either by "
                       "increasing max.poll.interval.ms or by reducing the maximum size of batches returned in "
                       "poll() with max.poll.records.")
JOIN_GROUP_TIMEOUT_LAPSE_MS = 5000
MIN_LOOKUP_TIMEOUT_MS = 1000
DEFAULT_CLOSE_TIMEOUT_MS = 30000  # Java's KafkaConsumer DEFAULT_CLOSE_TIMEOUT_MS
COORDINATOR_ERRORS = {ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR}
_FATAL_JOIN_ERRORS = {
    ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ErrorCode.INVALID_SESSION_TIMEOUT, ErrorCode.INVALID_GROUP_ID,
    ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.GROUP_MAX_SIZE_REACHED, ErrorCode.FENCED_INSTANCE_ID,
    ErrorCode.UNSUPPORTED_VERSION,
}


class MemberState(enum.Enum):
    UNJOINED = "UNJOINED"
    PREPARING_REBALANCE = "PREPARING_REBALANCE"
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
    STABLE = "STABLE"


@dataclass(frozen=True)
class Generation:
    generation_id: int
    member_id: str
    protocol_name: str | None

    def has_member_id(self) -> bool:
        return bool(self.member_id)


NO_GENERATION = Generation(-1, "", None)


class AbstractCoordinator:
    def __init__(self, client: NetworkClient, config: ConsumerConfig, time: Time) -> None:
        self.client = client
        self.config = config
        self.time = time
        self.group_id: str = config["group.id"]
        self.group_instance_id: str | None = config["group.instance.id"] or None
        self.session_timeout_ms = int(config["session.timeout.ms"])
        self.rebalance_timeout_ms = int(config["max.poll.interval.ms"])
        self.retry_backoff_ms = int(config["retry.backoff.ms"])
        self.request_timeout_ms = int(config["request.timeout.ms"])
        self.heartbeat = Heartbeat(time, self.session_timeout_ms, int(config["heartbeat.interval.ms"]),
                                   self.rebalance_timeout_ms, self.retry_backoff_ms)
        self._lock = threading.RLock()
        self._lookup_lock = threading.Lock()  # one FindCoordinator at a time (consumer or heartbeat thread)
        self._wake = threading.Condition(self._lock)
        self.coordinator: Node | None = None
        self._conn: BrokerConnection | None = None
        self.generation = NO_GENERATION
        self.state = MemberState.UNJOINED
        self.rejoin_needed = True
        self.rejoin_reason = "initialized abstract coordinator"
        self.fatal_error: KafkaError | None = None
        self.is_leader = False
        self._needs_join_prepare = True
        self._join_future: tuple[Future, int] | None = None
        self._sync_future: tuple[Future, int, Generation] | None = None
        self._heartbeat_thread: threading.Thread | None = None
        self._heartbeat_enabled = False
        self._closed = False
        self._closing = False

    # ------------------------------------------------------------------------------------------
    # subclass hooks

    def protocol_type(self) -> str:
        raise NotImplementedError

    def metadata(self) -> list[tuple[str, bytes]]:
        raise NotImplementedError

    def on_join_prepare(self, generation: Generation) -> bool:
        """Before (re)joining; return False to be called again later (e.g. a commit is pending)."""
        return True

    def perform_assignment(self, leader_id: str, protocol: str, members: list[JoinGroupResponse.JoinGroupResponseMember],
                           skip: bool) -> dict[str, bytes]:
        raise NotImplementedError

    def on_join_complete(self, generation: Generation, assignment: bytes) -> None:
        raise NotImplementedError

    def rejoin_needed_or_pending(self) -> bool:
        return self.rejoin_needed or self._join_future is not None or self._sync_future is not None

    # ------------------------------------------------------------------------------------------
    # coordinator

    def coordinator_unknown(self) -> bool:
        conn = self._conn
        if self.coordinator is None or conn is None:
            return True
        if not conn.is_connected():
            self.mark_coordinator_unknown("the coordinator connection was closed")
            return True
        return False

    def mark_coordinator_unknown(self, cause: str) -> None:
        with self._lock:
            if self.coordinator is not None:
                log.info("Group coordinator %s is unavailable or invalid due to cause: %s. Rediscovery will be "
                         "attempted.", self.coordinator, cause)
            self.coordinator = None
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def ensure_coordinator_ready(self, deadline: float) -> bool:
        """Look the coordinator up and connect to it, retrying until `deadline` (ms)."""
        while self.coordinator_unknown():
            if self._closed or (self._closing and self.time.milliseconds() >= deadline):
                return False
            try:
                with self._lookup_lock:
                    if self.coordinator_unknown():
                        self._lookup_coordinator(deadline)
            except KafkaError as e:
                if not e.retriable:
                    raise
                log.debug("FindCoordinator for group %s failed: %s", self.group_id, e)
                remaining = deadline - self.time.milliseconds()
                if remaining <= 0:
                    return False
                self.time.sleep(min(self.retry_backoff_ms, remaining))
                continue
            if self.time.milliseconds() >= deadline and self.coordinator_unknown():
                return False
        return True

    def _lookup_coordinator(self, deadline: float) -> None:
        # A floor, so poll(0) loops still find the coordinator (the lookup is a blocking round trip here);
        # none while closing, whose deadline is the caller's promise.
        floor = 1 if self._closing else MIN_LOOKUP_TIMEOUT_MS
        timeout = min(self.request_timeout_ms, max(floor, int(deadline - self.time.milliseconds())))
        group_id = self.group_id

        def build(version: int) -> Any:
            if version >= 4:
                return FindCoordinatorRequest(key_type=0, coordinator_keys=[group_id])
            return FindCoordinatorRequest(key=group_id, key_type=0)

        node = self.client.least_loaded_node()
        resp: FindCoordinatorResponse = self.client.request(node, build, min(timeout, self.request_timeout_ms),
                                                            api_key=FIND_COORDINATOR)
        if resp.coordinators:
            c = resp.coordinators[0]
            code, message, node_id, host, port = c.error_code, c.error_message, c.node_id, c.host, c.port
        else:
            code, message = resp.error_code, resp.error_message
            node_id, host, port = resp.node_id, resp.host, resp.port
        if code:
            raise error_from_code(code, message)
        coordinator = Node(node_id, host, port)
        conn = BrokerConnection(
            2**31 - 1 - node_id, host, port,
            client_id=self.client.client_id,
            request_timeout_ms=self.request_timeout_ms,
            connection_setup_timeout_ms=int(self.config["socket.connection.setup.timeout.ms"]),
            send_buffer_bytes=int(self.config["send.buffer.bytes"]),
            receive_buffer_bytes=int(self.config["receive.buffer.bytes"]),
            time=self.time,
            security=self.client.security,
        )
        conn.connect(min(timeout, int(self.config["socket.connection.setup.timeout.ms"])))
        with self._lock:
            old, self._conn = self._conn, conn
            self.coordinator = coordinator
        if old is not None:
            old.close()
        log.info("Discovered group coordinator %s", coordinator)

    def coordinator_send(self, build: Callable[[int], Any], api_key: int, timeout_ms: int | None = None) -> tuple[Future, int]:
        """Send to the coordinator without waiting: (future, version). Raises if it is unknown."""
        conn = self._conn
        if conn is None or self.coordinator is None:
            raise error_from_code(ErrorCode.COORDINATOR_NOT_AVAILABLE, "the group coordinator is not known")
        try:
            version = conn.pick_version(api_key)
            return conn.send(build(version), version, True, timeout_ms or self.request_timeout_ms), version
        except DisconnectError as e:
            self.mark_coordinator_unknown(str(e))
            raise

    def await_future(self, future: Future, deadline: float) -> bool:
        """Read responses until `future` completes or `deadline` (ms) passes; True when done."""
        conn = self._conn
        if future.done() or conn is None:
            return future.done()
        remaining = deadline - self.time.milliseconds()
        try:
            if remaining > 0:
                conn.wait(future, remaining)
            else:
                conn.poll(0)
        except KafkaError:
            pass  # the future holds the outcome (or it is still pending after a wait timeout)
        return future.done()

    def coordinator_request(self, build: Callable[[int], Any], api_key: int, timeout_ms: float) -> tuple[Any, int]:
        """Send and wait (raising transport errors, marking the coordinator unknown on disconnects)."""
        future, version = self.coordinator_send(build, api_key, int(min(timeout_ms, self.request_timeout_ms)))
        self.await_future(future, self.time.milliseconds() + timeout_ms)
        if not future.done():
            raise KafkaTimeoutError(f"Timed out waiting for the group coordinator after {timeout_ms:.0f} ms")
        exc = future.exception()
        if exc is not None:
            if isinstance(exc, DisconnectError | KafkaTimeoutError):
                self.mark_coordinator_unknown(str(exc))
            raise exc
        return future.result(), version

    # ------------------------------------------------------------------------------------------
    # join / sync

    def generation_if_stable(self) -> Generation | None:
        with self._lock:
            return self.generation if self.state is MemberState.STABLE else None

    def rebalance_in_progress(self) -> bool:
        return self.state in (MemberState.PREPARING_REBALANCE, MemberState.COMPLETING_REBALANCE)

    def request_rejoin(self, reason: str) -> None:
        with self._lock:
            if not self.rejoin_needed:
                log.info("Request joining group due to: %s", reason)
            self.rejoin_needed = True
            self.rejoin_reason = reason

    def reset_generation(self, reason: str, need_rejoin: bool = True) -> None:
        with self._lock:
            log.info("Resetting generation and member id due to: %s", reason)
            self.generation = NO_GENERATION
            self.state = MemberState.UNJOINED
            self._heartbeat_enabled = False
            if need_rejoin:
                self.rejoin_needed = True
                self.rejoin_reason = reason

    def ensure_active_group(self, deadline: float) -> bool:
        """Join (or finish joining) the group; False when `deadline` passes first."""
        self._raise_fatal()
        if not self.ensure_coordinator_ready(deadline):
            return False
        self._start_heartbeat_thread()
        for _ in range(1000):
            self._raise_fatal()
            if self._sync_future is not None:
                if not self._finish_sync(deadline):
                    return False
                continue
            if self._join_future is not None:
                if not self._finish_join(deadline):
                    return False
                continue
            if not self.rejoin_needed and self.state is MemberState.STABLE:
                return True
            if self.coordinator_unknown() and not self.ensure_coordinator_ready(deadline):
                return False
            if self._needs_join_prepare:
                # Generation and member id as they are now: on_join_prepare may find them reset (lost).
                if not self.on_join_prepare(self.generation):
                    return False
                self._needs_join_prepare = False
            try:
                self._send_join_group()
            except KafkaError as e:
                if not e.retriable:
                    raise
                if not self.backoff(deadline):
                    return False
        return False

    def backoff(self, deadline: float) -> bool:
        """Sleep retry.backoff.ms (or what is left of the deadline); False when the deadline has passed."""
        remaining = deadline - self.time.milliseconds()
        if remaining <= 0:
            return False
        self.time.sleep(min(self.retry_backoff_ms, remaining))
        return True

    def _send_join_group(self) -> None:
        with self._lock:
            self.state = MemberState.PREPARING_REBALANCE
            self._heartbeat_enabled = False
            reason = self.rejoin_reason
            self.rejoin_needed = False
            member_id = self.generation.member_id
        protocols = self.metadata()
        group_id, instance, session, rebalance = (self.group_id, self.group_instance_id, self.session_timeout_ms,
                                                  self.rebalance_timeout_ms)
        ptype = self.protocol_type()

        def build(version: int) -> Any:
            return JoinGroupRequest(
                group_id=group_id, session_timeout_ms=session, rebalance_timeout_ms=rebalance, member_id=member_id,
                group_instance_id=instance if version >= 5 else None, protocol_type=ptype,
                protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name=n, metadata=m) for n, m in protocols],
                reason=reason if version >= 8 else None,
            )

        log.info("(Re-)joining group %s", group_id)
        timeout = max(self.request_timeout_ms, rebalance + JOIN_GROUP_TIMEOUT_LAPSE_MS)
        try:
            self._join_future = self.coordinator_send(build, JOIN_GROUP, timeout)
        except KafkaError:
            with self._lock:
                self.rejoin_needed = True
            raise

    def _finish_join(self, deadline: float) -> bool:
        assert self._join_future is not None
        future, version = self._join_future
        if not self.await_future(future, deadline):
            return False
        self._join_future = None
        exc = future.exception()
        if exc is not None:
            self.mark_coordinator_unknown(str(exc))
            self.request_rejoin(f"JoinGroup failed: {exc}")
            return self.backoff(deadline)
        resp: JoinGroupResponse = future.result()
        code = resp.error_code
        if code == ErrorCode.NONE:
            generation = Generation(resp.generation_id, resp.member_id, resp.protocol_name)
            with self._lock:
                if self.state is not MemberState.PREPARING_REBALANCE:
                    self.request_rejoin("the member left the group while joining")
                    return True
                self.generation = generation
                self.state = MemberState.COMPLETING_REBALANCE
                self.is_leader = resp.leader == resp.member_id
            log.info("Successfully joined group %s with generation %s", self.group_id, generation)
            if self.is_leader:
                # ProtocolName is nullable (v7+) only in error answers; "" matches no assignor
                assignments = self.perform_assignment(resp.leader, resp.protocol_name or "", list(resp.members),
                                                      resp.skip_assignment)
            else:
                assignments = {}
            self._send_sync_group(generation, assignments)
            return True
        with self._lock:
            self.rejoin_needed = True
            if code == ErrorCode.MEMBER_ID_REQUIRED:
                # v4+: the coordinator hands out the member id; join again with it at once.
                self.generation = Generation(-1, resp.member_id, None)
                return True
            if code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
                self.generation = NO_GENERATION
                self.state = MemberState.UNJOINED
                return True
        if code in COORDINATOR_ERRORS:
            self.mark_coordinator_unknown(error_from_code(code).name)
            return self.backoff(deadline)
        if code in (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.REBALANCE_IN_PROGRESS):
            return self.backoff(deadline)
        if code in _FATAL_JOIN_ERRORS:
            self.state = MemberState.UNJOINED
            err = error_from_code(code, f"JoinGroup for group {self.group_id} failed")
            if code == ErrorCode.FENCED_INSTANCE_ID:
                self.fatal_error = err
            raise err
        raise error_from_code(code, f"Unexpected error in join group response for group {self.group_id}")

    def _send_sync_group(self, generation: Generation, assignments: dict[str, bytes]) -> None:
        group_id, instance, ptype = self.group_id, self.group_instance_id, self.protocol_type()

        def build(version: int) -> Any:
            return SyncGroupRequest(
                group_id=group_id, generation_id=generation.generation_id, member_id=generation.member_id,
                group_instance_id=instance if version >= 3 else None,
                protocol_type=ptype if version >= 5 else None,
                protocol_name=generation.protocol_name if version >= 5 else None,
                assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=a)
                             for m, a in assignments.items()],
            )

        try:
            future, version = self.coordinator_send(build, SYNC_GROUP)
        except KafkaError:
            self.request_rejoin("SyncGroup could not be sent")
            raise
        self._sync_future = (future, version, generation)

    def _finish_sync(self, deadline: float) -> bool:
        assert self._sync_future is not None
        future, _version, generation = self._sync_future
        if not self.await_future(future, deadline):
            return False
        self._sync_future = None
        exc = future.exception()
        if exc is not None:
            self.mark_coordinator_unknown(str(exc))
            self.request_rejoin(f"SyncGroup failed: {exc}")
            return True
        resp = future.result()
        code = resp.error_code
        if code == ErrorCode.NONE:
            with self._lock:
                if self.generation != generation or self.state is not MemberState.COMPLETING_REBALANCE:
                    self.request_rejoin("the generation changed while syncing")
                    return True
                self.state = MemberState.STABLE
                self._needs_join_prepare = True
                self.rejoin_needed = False
                self.heartbeat.reset_timeouts(self.time.milliseconds())
                self._heartbeat_enabled = True
                self._wake.notify_all()
            self.on_join_complete(generation, bytes(resp.assignment or b""))
            return True
        if code == ErrorCode.REBALANCE_IN_PROGRESS:
            self.request_rejoin("the group is rebalancing (SyncGroup)")
            with self._lock:
                self.state = MemberState.PREPARING_REBALANCE
            return True
        if code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
            self.reset_generation(f"SyncGroup failed with {error_from_code(code).name}")
            return True
        if code in COORDINATOR_ERRORS:
            self.mark_coordinator_unknown(error_from_code(code).name)
            self.request_rejoin("the coordinator moved during SyncGroup")
            return True
        self.request_rejoin("SyncGroup failed")
        err = error_from_code(code, f"SyncGroup for group {self.group_id} failed")
        if code == ErrorCode.FENCED_INSTANCE_ID:
            self.fatal_error = err
        raise err

    def _raise_fatal(self) -> None:
        if self.fatal_error is not None:
            raise self.fatal_error

    # ------------------------------------------------------------------------------------------
    # heartbeat thread

    def _start_heartbeat_thread(self) -> None:
        with self._lock:
            if self._heartbeat_thread is None and not self._closed:
                self._heartbeat_thread = HeartbeatThread(self)
                self._heartbeat_thread.start()

    def heartbeat_enabled(self) -> bool:
        with self._lock:
            return self._heartbeat_enabled and self.state is MemberState.STABLE

    def poll_heartbeat(self, now: int) -> None:
        """The consumer polled: reset the max.poll.interval.ms timer."""
        with self._lock:
            self.heartbeat.poll(now)

    # ------------------------------------------------------------------------------------------
    # leave / close

    def is_dynamic_member(self) -> bool:
        return self.group_instance_id is None

    def begin_close(self) -> None:
        """From now on coordinator lookups end at the caller's deadline (no poll(0) floor)."""
        self._closing = True

    def maybe_leave_group(self, reason: str, deadline: float | None = None) -> None:
        """LeaveGroup for a dynamic member that joined; static members just reset (Kafka's rule).
        Waits for the answer until `deadline` (ms; default one request.timeout.ms from now). The request
        is sent even when the deadline has passed: it costs nothing and spares the group a session timeout."""
        if deadline is None:
            deadline = self.time.milliseconds() + self.request_timeout_ms
        with self._lock:
            generation, coordinator_known = self.generation, self.coordinator is not None
            send = (self.is_dynamic_member() and coordinator_known and self.state is not MemberState.UNJOINED
                    and generation.has_member_id())
        if send:
            log.info("Member %s sending LeaveGroup request to coordinator %s due to %s", generation.member_id,
                     self.coordinator, reason)
            group_id = self.group_id

            def build(version: int) -> Any:
                if version >= 3:
                    return LeaveGroupRequest(group_id=group_id, members=[LeaveGroupRequest.MemberIdentity(
                        member_id=generation.member_id, group_instance_id=None,
                        reason=reason[:255] if version >= 5 else None)])
                return LeaveGroupRequest(group_id=group_id, member_id=generation.member_id)

            try:
                self.coordinator_request(build, LEAVE_GROUP, max(1, deadline - self.time.milliseconds()))
            except KafkaError as e:
                log.debug("LeaveGroup failed: %s", e)
        self.reset_generation("consumer pro-actively leaving the group", need_rejoin=True)

    def close_coordinator(self, deadline: float | None = None) -> None:
        """Stop the heartbeat thread and drop the coordinator connection, waiting for the thread until
        `deadline` (ms; default 5 s from now). The connection goes first: that fails a heartbeat the
        thread may be blocked on, so it sees `_closed` at once instead of after request.timeout.ms."""
        if deadline is None:
            deadline = self.time.milliseconds() + 5000
        with self._lock:
            self._closed = True
            self._wake.notify_all()
            thread = self._heartbeat_thread
            conn, self._conn = self._conn, None
            self.coordinator = None
        if conn is not None:
            conn.close()
        if thread is not None and thread is not threading.current_thread():
            # A little grace past the deadline: the thread wakes within ~100 ms once its request failed.
            thread.join(max(100, deadline - self.time.milliseconds()) / 1000.0)


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
