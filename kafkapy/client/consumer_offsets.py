"""ConsumerOffsets: a group member's offset work, a collaborator of ConsumerCoordinator: commit (sync,
async, auto) and fetch, sent on the AbstractCoordinator's coordinator connection it is given.

OffsetCommit v0-9 carries the generation and member id when subscribed, -1/"" for manual assignment (as
Kafka's "simple" consumer); OffsetFetch v0-9 (require_stable) gives the committed offsets that initialise
the positions of new partitions. Retriable commit errors are retried within the caller's deadline;
commit_async callbacks run on the consumer's thread (next poll/commit/close).

Thread-safety: the consumer's thread only (as ConsumerCoordinator).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any

from kafkapy.client.abstract_coordinator import NO_GENERATION, AbstractCoordinator, Generation
from kafkapy.client.config import ConsumerConfig
from kafkapy.client.errors import KafkaTimeoutError, error_from_code
from kafkapy.client.group_offsets import (
    OFFSET_COMMIT,
    OFFSET_FETCH,
    CommitFailedError,
    OffsetAndMetadata,
    offset_commit_builder,
    offset_fetch_builder,
    parse_offset_fetch,
    to_offset_and_metadata,
)
from kafkapy.client.subscription_state import SubscriptionState
from kafkapy.common.errors import ErrorCode, KafkaError, RebalanceInProgressError
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import OffsetCommitResponse, OffsetFetchResponse

log = logging.getLogger("kafkapy.client.consumer_coordinator")

_RETRIABLE_COMMIT = {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                     ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.REQUEST_TIMED_OUT}


def sorted_partitions(tps: Iterable[TopicPartition]) -> list[TopicPartition]:
    return sorted(tps, key=lambda tp: (tp.topic, tp.partition))


class ConsumerOffsets:
    """Offset commit/fetch of a group member, over its AbstractCoordinator's coordinator connection."""

    def __init__(self, coordinator: AbstractCoordinator, subscriptions: SubscriptionState, config: ConsumerConfig,
                 time: Time) -> None:
        self.coordinator = coordinator
        self.subscriptions = subscriptions
        self.time = time
        self.group_id = coordinator.group_id
        self.auto_commit_enabled = bool(config["enable.auto.commit"])
        self.auto_commit_interval_ms = int(config["auto.commit.interval.ms"])
        self.next_auto_commit_deadline = time.milliseconds() + self.auto_commit_interval_ms
        self.default_api_timeout_ms = int(config["default.api.timeout.ms"])
        self._pending_commits: list[tuple[Future, dict[TopicPartition, OffsetAndMetadata], Any, Generation]] = []
        self._completed_commits: deque[tuple[Any, dict[TopicPartition, OffsetAndMetadata], BaseException | None]] = \
            deque()

    def reset_auto_commit_deadline(self) -> None:
        """A new assignment: the next auto commit is a full interval away."""
        self.next_auto_commit_deadline = self.time.milliseconds() + self.auto_commit_interval_ms

    def all_consumed(self) -> dict[TopicPartition, OffsetAndMetadata]:
        out = {}
        for tp in self.subscriptions.assigned_partitions():
            st = self.subscriptions.state(tp)
            if st.has_valid_position() and st.position is not None:
                out[tp] = OffsetAndMetadata(st.position.offset, "", st.position.offset_epoch)
        return out

    @staticmethod
    def _normalise(offsets: Mapping[Any, Any]) -> dict[TopicPartition, OffsetAndMetadata]:
        out = {}
        for tp, v in offsets.items():
            om = to_offset_and_metadata(v)
            if om.offset < 0:
                raise ValueError(f"Invalid negative offset {om.offset} for partition {tp}")
            out[TopicPartition(tp[0], tp[1])] = om
        return out

    def _commit_generation(self) -> tuple[Generation, str | None]:
        if not self.subscriptions.has_auto_assigned_partitions():
            return NO_GENERATION, None
        generation = self.coordinator.generation_if_stable()
        if generation is None:
            if self.coordinator.rebalance_in_progress():
                raise RebalanceInProgressError(
                    "Offset commit cannot be completed since the consumer is undergoing a rebalance for auto "
                    "partition assignment. You can try completing the rebalance by calling poll() and then retry "
                    "the operation.")
            raise CommitFailedError(
                "Offset commit cannot be completed since the consumer is not part of an active group for auto "
                "partition assignment; it is likely that the consumer was kicked out of the group.")
        return generation, self.coordinator.group_instance_id

    def _send_offset_commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> tuple[Future, Generation]:
        generation, instance = self._commit_generation()
        build = offset_commit_builder(self.group_id, generation.generation_id, generation.member_id, instance, offsets)
        future, _ = self.coordinator.coordinator_send(build, OFFSET_COMMIT)
        return future, generation

    def _commit_result(self, resp: OffsetCommitResponse, generation: Generation) -> Exception | None:
        """None on success; the exception to raise otherwise (retriable ones are KafkaErrors)."""
        unauthorized = []
        for t in resp.topics:
            for p in t.partitions:
                code = p.error_code
                if code == ErrorCode.NONE:
                    continue
                tp = TopicPartition(t.name, p.partition_index)
                err = error_from_code(code)
                if code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
                    unauthorized.append(tp)
                    continue
                if code in _RETRIABLE_COMMIT:
                    if code in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR,
                                ErrorCode.REQUEST_TIMED_OUT):
                        self.coordinator.mark_coordinator_unknown(err.name)
                    return error_from_code(code, f"Offset commit failed with a retriable exception for {tp}")
                if code == ErrorCode.REBALANCE_IN_PROGRESS:
                    self.coordinator.request_rejoin("offset commit failed since group is already rebalancing")
                    return RebalanceInProgressError(
                        "Offset commit cannot be completed since the consumer group is executing a rebalance at "
                        "the moment. You can try completing the rebalance by calling poll() and then retry commit "
                        "again")
                if code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
                    if self.coordinator.generation == generation:
                        self.coordinator.reset_generation(f"encountered {err.name} from OFFSET_COMMIT response")
                    return CommitFailedError()
                return error_from_code(code, f"Unexpected error in commit for partition {tp}")
        if unauthorized:
            return error_from_code(ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                   "Not authorized to access topics: " + str(sorted({tp.topic for tp in unauthorized})))
        return None

    def commit_sync(self, offsets: Mapping[Any, Any] | None = None, timeout_ms: float | None = None) -> None:
        self.invoke_completed_commit_callbacks()
        offsets_ = self.all_consumed() if offsets is None else self._normalise(offsets)
        if not offsets_:
            return
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        deadline = self.time.milliseconds() + timeout_ms
        last: Exception | None = None
        while True:
            if self.coordinator.ensure_coordinator_ready(deadline):
                try:
                    future, generation = self._send_offset_commit(offsets_)
                    self.coordinator.await_future(future, deadline)
                    if future.done():
                        exc = future.exception()
                        result = exc if exc is not None else self._commit_result(future.result(), generation)
                        if result is None:
                            return
                        if isinstance(exc, KafkaError) and exc.retriable:
                            self.coordinator.mark_coordinator_unknown(str(exc))
                        if not (isinstance(result, KafkaError) and result.retriable):
                            raise result
                        last = result
                except KafkaError as e:
                    if not e.retriable:
                        raise
                    last = e
            if not self.coordinator.backoff(deadline):
                raise KafkaTimeoutError(f"Timeout of {timeout_ms:.0f}ms expired before successfully committing "
                                        f"offsets {offsets_}" + (f" (last error: {last})" if last else ""))

    def commit_async(self, offsets: Mapping[Any, Any] | None = None,
                     callback: Callable[[dict[TopicPartition, OffsetAndMetadata], Exception | None], Any] | None = None
                     ) -> None:
        self.invoke_completed_commit_callbacks()
        offsets_ = self.all_consumed() if offsets is None else self._normalise(offsets)
        if not offsets_:
            if callback is not None:
                self._completed_commits.append((callback, offsets_, None))
            return
        try:
            if not self.coordinator.ensure_coordinator_ready(self.time.milliseconds() + self.coordinator.request_timeout_ms):
                raise error_from_code(ErrorCode.COORDINATOR_NOT_AVAILABLE, "the group coordinator is not available")
            future, generation = self._send_offset_commit(offsets_)
        except KafkaError as e:
            self._completed_commits.append((callback, offsets_, e))
            return
        self._pending_commits.append((future, offsets_, callback, generation))

    def process_pending_commits(self, deadline: float | None = None) -> None:
        still = []
        for entry in self._pending_commits:
            future, offsets, callback, generation = entry
            if deadline is not None:
                self.coordinator.await_future(future, deadline)
            elif not future.done():
                self.coordinator.await_future(future, 0)
            if not future.done():
                still.append(entry)
                continue
            exc = future.exception()
            result = exc if exc is not None else self._commit_result(future.result(), generation)
            self._completed_commits.append((callback, offsets, result))
        self._pending_commits = still

    def invoke_completed_commit_callbacks(self) -> None:
        self.process_pending_commits()
        while self._completed_commits:
            callback, offsets, exc = self._completed_commits.popleft()
            if callback is not None:
                callback(offsets, exc)
            elif exc is not None:
                log.warning("Asynchronous auto-commit of offsets %s failed: %s", offsets, exc)

    def maybe_auto_commit_offsets_async(self, now: int) -> None:
        if not self.auto_commit_enabled or now < self.next_auto_commit_deadline:
            return
        if self.coordinator.coordinator_unknown():
            # Do not block poll() on a lookup here: try again after retry.backoff.ms (Kafka does the same).
            self.next_auto_commit_deadline = now + self.coordinator.retry_backoff_ms
            return
        self.next_auto_commit_deadline = now + self.auto_commit_interval_ms
        if self.subscriptions.has_auto_assigned_partitions() and self.coordinator.generation_if_stable() is None:
            return
        offsets = self.all_consumed()
        if offsets:
            log.debug("Sending asynchronous auto-commit of offsets %s", offsets)
            self.commit_async(offsets, self._auto_commit_done)

    def _auto_commit_done(self, offsets: dict[TopicPartition, OffsetAndMetadata], exc: Exception | None) -> None:
        if exc is None:
            log.debug("Completed asynchronous auto-commit of offsets %s", offsets)
        else:
            log.warning("Asynchronous auto-commit of offsets %s failed: %s", offsets, exc)
            if isinstance(exc, KafkaError) and exc.retriable:
                self.next_auto_commit_deadline = min(self.next_auto_commit_deadline,
                                                     self.time.milliseconds() + self.coordinator.retry_backoff_ms)

    # ------------------------------------------------------------------------------------------
    # offsets: fetch

    def fetch_committed_offsets(self, partitions: Iterable[TopicPartition], timeout_ms: float
                                ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        tps = sorted_partitions({TopicPartition(tp[0], tp[1]) for tp in partitions})
        if not tps:
            return {}
        deadline = self.time.milliseconds() + timeout_ms
        build = offset_fetch_builder(self.group_id, tps, require_stable=True)

        while True:
            if self.coordinator.ensure_coordinator_ready(deadline):
                try:
                    resp, version = self.coordinator.coordinator_request(build, OFFSET_FETCH,
                                                             max(1, deadline - self.time.milliseconds()))
                    result = self._offset_fetch_result(resp)
                    if result is not None:
                        return {tp: result.get(tp) for tp in tps}
                except KafkaError as e:
                    if not e.retriable:
                        raise
                    log.debug("OffsetFetch failed: %s", e)
            if not self.coordinator.backoff(deadline):
                raise KafkaTimeoutError(f"Timeout of {timeout_ms:.0f}ms expired before the last committed offset "
                                        f"for partitions {tps} could be determined. Try tuning "
                                        "default.api.timeout.ms larger to relax the threshold.")

    def _offset_fetch_result(self, resp: OffsetFetchResponse) -> dict[TopicPartition, OffsetAndMetadata | None] | None:
        """Parsed offsets, or None to retry."""
        result = parse_offset_fetch(resp)
        code = result.error_code
        if code:
            if code in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR):
                self.coordinator.mark_coordinator_unknown(error_from_code(code).name)
                return None
            if code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                return None
            raise error_from_code(code, f"OffsetFetch for group {self.group_id} failed")
        for tp, pcode in result.partition_errors.items():
            if pcode == ErrorCode.UNSTABLE_OFFSET_COMMIT:
                return None
            log.warning("Failed to fetch offset for partition %s: %s", tp, error_from_code(pcode).name)
        return result.offsets

    def refresh_committed_offsets_if_needed(self, timeout_ms: float) -> None:
        """Positions of partitions without one come from the group's committed offsets."""
        missing = self.subscriptions.missing_positions()
        if not missing:
            return
        committed = self.fetch_committed_offsets(missing, timeout_ms)
        for tp, om in committed.items():
            if om is None or not self.subscriptions.is_assigned(tp):
                continue
            st = self.subscriptions.state(tp)
            if st.position is None and st.reset_timestamp is None:
                log.info("Setting offset for partition %s to the committed offset %s", tp, om.offset)
                self.subscriptions.seek(tp, om.offset, om.leader_epoch)

    # ------------------------------------------------------------------------------------------
