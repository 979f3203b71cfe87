"""ConsumerCoordinator: the consumer's group membership and offset management (Kafka's design).

On top of AbstractCoordinator (find/join/sync/heartbeat/leave) it speaks the "consumer" embedded
protocol: JoinGroup metadata is one ConsumerProtocolSubscription per configured assignor
(partition.assignment.strategy, in order), the leader runs the chosen assignor over every member's
subscription and the partition counts from Metadata, and each member installs its Assignment.

Rebalance protocol: COOPERATIVE when every configured assignor supports it (e.g. only
cooperative-sticky), else EAGER (Kafka's rule; the default [range, cooperative-sticky] is EAGER).
EAGER revokes everything before joining; COOPERATIVE keeps owned partitions, revokes only those the
new assignment lacks, then rejoins so they can be handed on. Listener callbacks
(on_partitions_revoked / on_partitions_assigned / on_partitions_lost) run on the consumer's thread.

Offsets (commit sync/async, fetch) are a collaborator, `self.offsets` (ConsumerOffsets,
client/consumer_offsets.py): auto commit every auto.commit.interval.ms from poll(), before each
rebalance and on close.

Thread-safety: driven by the consumer's thread; the heartbeat thread touches only the base class'
guarded state.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

from kafkapy.client.abstract_coordinator import (
    DEFAULT_CLOSE_TIMEOUT_MS,
    MIN_LOOKUP_TIMEOUT_MS,
    NO_GENERATION,
    AbstractCoordinator,
    Generation,
)
from kafkapy.client.assignors import Assignment, RebalanceProtocol, Subscription, assignors_for
from kafkapy.client.assignors.consumer_protocol import (
    PROTOCOL_TYPE,
    ConsumerProtocolError,
    deserialize_assignment,
    deserialize_subscription,
    serialize_assignment,
    serialize_subscription,
)
from kafkapy.client.config import ConsumerConfig
from kafkapy.client.consumer_offsets import ConsumerOffsets, sorted_partitions
from kafkapy.client.consumer_rebalance_listener import ConsumerRebalanceListener
from kafkapy.client.group_offsets import (
    CommitFailedError,
    OffsetAndMetadata,
)
from kafkapy.client.network_client import NetworkClient
from kafkapy.client.subscription_state import SubscriptionState, SubscriptionType
from kafkapy.common.errors import KafkaError
from kafkapy.common.time import Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages.join_group import JoinGroupResponse

log = logging.getLogger(__name__)

__all__ = ["CommitFailedError", "ConsumerCoordinator", "ConsumerRebalanceListener", "OffsetAndMetadata"]


class ConsumerCoordinator(AbstractCoordinator):
    def __init__(self, client: NetworkClient, subscriptions: SubscriptionState, fetcher: Any,
                 config: ConsumerConfig, time: Time) -> None:
        super().__init__(client, config, time)
        self.subscriptions = subscriptions
        self.fetcher = fetcher
        self.assignors = assignors_for(config["partition.assignment.strategy"])
        if not self.assignors:
            raise ValueError("partition.assignment.strategy must name at least one assignor")
        common = set(RebalanceProtocol)
        for a in self.assignors:
            common &= set(a.supported_protocols())
        if not common:
            raise ValueError("Specified assignors " + str([a.name for a in self.assignors])
                             + " do not have commonly supported rebalance protocol")
        self.protocol = max(common, key=lambda p: p.value)
        self.exclude_internal_topics = bool(config["exclude.internal.topics"])
        self.allow_auto_create_topics = bool(config["allow.auto.create.topics"])
        self.rack_id = config["client.rack"] or None
        self.listener: Any = None
        self.pattern: re.Pattern[str] | None = None
        self.joined_subscription: set[str] = set()
        self.group_subscription: set[str] = set()
        self._assignment_snapshot: dict[str, int] | None = None
        self._metadata_version_seen = -1
        self.offsets = ConsumerOffsets(self, subscriptions, config, time)
        self._listener_error: Exception | None = None

    # ------------------------------------------------------------------------------------------
    # subscription

    def protocol_type(self) -> str:
        return PROTOCOL_TYPE

    def subscribe(self, topics: Iterable[str] = (), pattern: Any = None, listener: Any = None) -> None:
        subs = self.subscriptions
        if subs.subscription_type is SubscriptionType.USER_ASSIGNED:
            raise ValueError("Subscription to topics, partitions and pattern are mutually exclusive")
        if listener is not None:
            self.listener = listener
        if pattern is not None:
            self.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
            subs.subscription_type = SubscriptionType.AUTO_PATTERN
            self.client.metadata.need_all_topics = True
            self.client.metadata.request_update()
            self._metadata_version_seen = -1
            return
        topics = list(topics)
        if any(t is None or not str(t).strip() for t in topics):
            raise ValueError("Topic collection to subscribe to cannot contain null or empty topic")
        self.pattern = None
        subs.subscription_type = SubscriptionType.AUTO_TOPICS
        subs.subscription = set(topics)
        self.client.metadata.need_all_topics = False
        self.client.metadata.set_topics(set(topics) | self.group_subscription)

    def unsubscribe(self) -> None:
        if self.subscriptions.has_auto_assigned_partitions():
            self.on_leave_prepare()
            self.maybe_leave_group("the consumer unsubscribed from all topics")
        self.pattern = None
        self.client.metadata.need_all_topics = False
        self.joined_subscription = set()

    def _update_pattern_subscription(self) -> None:
        if self.pattern is None or self.client.metadata.version == self._metadata_version_seen:
            return
        self._metadata_version_seen = self.client.metadata.version
        cluster = self.client.cluster
        matched = {t.name for t in cluster.topics.values()
                   if not (self.exclude_internal_topics and t.is_internal) and self.pattern.fullmatch(t.name)}
        if matched != self.subscriptions.subscription:
            log.info("Subscribed to pattern: '%s'; matching topics: %s", self.pattern.pattern, sorted(matched))
            self.subscriptions.subscription = matched

    def rejoin_needed_or_pending(self) -> bool:
        if not self.subscriptions.has_auto_assigned_partitions():
            return False
        if super().rejoin_needed_or_pending():
            return True
        if self.joined_subscription != self.subscriptions.subscription:
            self.request_rejoin("the subscription changed")
            return True
        if self.is_leader and self._assignment_snapshot is not None:
            cluster = self.client.cluster
            for topic in self.group_subscription:
                t = cluster.topic(topic)
                if t is not None and t.partitions and len(t.partitions) != self._assignment_snapshot.get(topic, 0):
                    self.request_rejoin(f"cached metadata has changed for topic {topic}")
                    return True
        return False

    # ------------------------------------------------------------------------------------------
    # poll

    def poll(self, deadline: float) -> bool:
        """Called on every KafkaConsumer.poll iteration: rebalance if needed, auto commit, callbacks.
        True when the consumer has its assignment (or does not use group assignment)."""
        self.offsets.invoke_completed_commit_callbacks()
        now = self.time.milliseconds()
        ready = True
        if self.subscriptions.has_auto_assigned_partitions():
            self.poll_heartbeat(now)
            self._update_pattern_subscription()
            if self.coordinator_unknown() and not self.ensure_coordinator_ready(deadline):
                return False
            if self.rejoin_needed_or_pending():
                if self._join_future is None and self._sync_future is None:
                    self._refresh_topics(deadline)
                ready = self.ensure_active_group(deadline)
                self._raise_listener_error()
            self.poll_heartbeat(self.time.milliseconds())
        self.offsets.maybe_auto_commit_offsets_async(self.time.milliseconds())
        return ready

    def _refresh_topics(self, deadline: float) -> None:
        """Fresh metadata before joining: every topic for a pattern (then re-match it), else ours."""
        timeout = min(self.request_timeout_ms, max(MIN_LOOKUP_TIMEOUT_MS, deadline - self.time.milliseconds()))
        try:
            if self.pattern is not None:
                self.client.update_metadata(None, timeout)
                self._update_pattern_subscription()
                return
            topics = set(self.subscriptions.subscription)
            if topics:
                self.client.update_metadata(sorted(topics | self.client.metadata.topics), timeout,
                                            allow_auto_topic_creation=self.allow_auto_create_topics)
        except KafkaError as e:
            log.debug("metadata refresh before joining failed: %s", e)

    # ------------------------------------------------------------------------------------------
    # rebalance hooks

    def metadata(self) -> list[tuple[str, bytes]]:
        topics = set(self.subscriptions.subscription)
        self.joined_subscription = set(topics)
        owned = sorted_partitions(self.subscriptions.assigned_partitions())
        out = []
        for a in self.assignors:
            sub = Subscription(sorted(topics), a.subscription_user_data(topics), owned,
                               self.generation.generation_id, self.rack_id)
            out.append((a.name, serialize_subscription(sub)))
        return out

    def on_join_prepare(self, generation: Generation) -> bool:
        if self.offsets.auto_commit_enabled:
            try:
                self.offsets.commit_sync(None, min(self.rebalance_timeout_ms, self.request_timeout_ms))
            except KafkaError as e:
                log.warning("Synchronous auto-commit of offsets failed before rebalancing: %s", e)
        owned = sorted_partitions(self.subscriptions.assigned_partitions())
        if generation.generation_id == -1 or not generation.member_id:
            if owned:
                log.info("Giving away all assigned partitions as lost since generation/memberID has been reset, "
                         "indicating that consumer is in old state or no longer part of the group")
                self._invoke("on_partitions_lost", owned)
                self._revoke_from_subscriptions(owned)
        elif self.protocol is RebalanceProtocol.EAGER:
            if owned:
                self._invoke("on_partitions_revoked", owned)
                self._revoke_from_subscriptions(owned)
        else:
            unsubscribed = [tp for tp in owned if tp.topic not in self.subscriptions.subscription]
            if unsubscribed:
                self._invoke("on_partitions_revoked", unsubscribed)
                self._revoke_from_subscriptions(unsubscribed)
        self.is_leader = False
        self.group_subscription = set()
        self._assignment_snapshot = None
        return True

    def _revoke_from_subscriptions(self, revoked: list[TopicPartition]) -> None:
        gone = set(revoked)
        self.subscriptions.assign_from_subscribed([tp for tp in self.subscriptions.assigned_partitions()
                                                   if tp not in gone])
        for tp in revoked:
            self.fetcher.clear_buffered(tp)

    def perform_assignment(self, leader_id: str, protocol: str, members: list[JoinGroupResponse.JoinGroupResponseMember],
                           skip: bool) -> dict[str, bytes]:
        if skip:
            return {}
        assignor = next((a for a in self.assignors if a.name == protocol), None)
        if assignor is None:
            raise ValueError(f"Coordinator selected invalid assignment protocol: {protocol}")
        subscriptions: dict[str, Subscription] = {}
        for m in members:
            try:
                sub = deserialize_subscription(m.metadata)
            except ConsumerProtocolError as e:
                log.warning("Member %s sent invalid metadata: %s", m.member_id, e)
                sub = Subscription([])
            sub.group_instance_id = m.group_instance_id
            subscriptions[m.member_id] = sub
        all_topics = {t for s in subscriptions.values() for t in s.topics}
        self.group_subscription = set(all_topics)
        self.client.metadata.add_topics(*all_topics)
        cluster = self.client.cluster
        try:
            wanted = None if self.client.metadata.need_all_topics else sorted(all_topics | self.client.metadata.topics)
            if wanted != []:
                cluster = self.client.update_metadata(wanted, self.request_timeout_ms)
        except KafkaError as e:
            log.warning("Metadata for the group's topics could not be refreshed: %s", e)
        counts: dict[str, int] = {}
        for topic in all_topics:
            t = cluster.topic(topic)
            if t is not None and t.partitions:
                counts[topic] = len(t.partitions)
        self._assignment_snapshot = dict(counts)
        log.debug("Performing assignment using strategy %s with subscriptions %s", protocol, subscriptions)
        assignments = assignor.assign(counts, subscriptions)
        out: dict[str, bytes] = {}
        for member_id in subscriptions:
            out[member_id] = serialize_assignment(assignments.get(member_id) or Assignment([]))
        return out

    def on_join_complete(self, generation: Generation, assignment: bytes) -> None:
        try:
            decoded = deserialize_assignment(assignment)
        except ConsumerProtocolError as e:
            log.error("Invalid assignment from the group leader: %s", e)
            self.request_rejoin("invalid assignment received")
            return
        assigned = list(dict.fromkeys(decoded.partitions))
        unsubscribed = [tp for tp in assigned if tp.topic not in self.subscriptions.subscription]
        if unsubscribed:
            log.warning("We received an assignment %s that doesn't match our current subscription %s; it is likely "
                        "that the subscription has changed since we joined the group. Will try re-join the group "
                        "with current subscription", assigned, sorted(self.subscriptions.subscription))
            self.request_rejoin("received an assignment that doesn't match the subscription")
            return
        owned = set(self.subscriptions.assigned_partitions())
        assigned_set = set(assigned)
        added = sorted_partitions(assigned_set - owned)
        revoked = sorted_partitions(owned - assigned_set)
        if revoked:
            # COOPERATIVE only (EAGER revoked everything before joining): revoke while still owned.
            log.info("Revoke previously assigned partitions %s", revoked)
            self._invoke("on_partitions_revoked", revoked)
            for tp in revoked:
                self.fetcher.clear_buffered(tp)
        self.subscriptions.assign_from_subscribed(sorted_partitions(assigned_set))
        log.info("Notifying assignor about the new Assignment(partitions=%s)", sorted_partitions(assigned_set))
        assignor = next((a for a in self.assignors if a.name == generation.protocol_name), None)
        if assignor is not None:
            assignor.on_assignment(Assignment(sorted_partitions(assigned_set), decoded.user_data), generation.generation_id)
        self.offsets.reset_auto_commit_deadline()
        self._invoke("on_partitions_assigned", added)
        if revoked and self.protocol is RebalanceProtocol.COOPERATIVE:
            self.request_rejoin("need to revoke partitions and re-join")

    def on_leave_prepare(self) -> None:
        owned = sorted_partitions(self.subscriptions.assigned_partitions())
        if self.subscriptions.has_auto_assigned_partitions() and owned:
            lost = self.generation == NO_GENERATION or self.rebalance_in_progress()
            self._invoke("on_partitions_lost" if lost else "on_partitions_revoked", owned)
            self._revoke_from_subscriptions(owned)

    def _invoke(self, method: str, partitions: list[TopicPartition]) -> None:
        listener = self.listener
        if listener is None:
            return
        callback = getattr(listener, method, None)
        if callback is None and method == "on_partitions_lost":
            callback = getattr(listener, "on_partitions_revoked", None)
        if callback is None:
            return
        try:
            callback(list(partitions))
        except Exception as e:  # noqa: BLE001 - Kafka logs, finishes the rebalance, then rethrows
            log.error("User provided listener %s failed on invocation of %s for partitions %s", listener, method,
                      partitions, exc_info=True)
            if self._listener_error is None:
                self._listener_error = e

    def _raise_listener_error(self) -> None:
        err, self._listener_error = self._listener_error, None
        if err is not None:
            raise KafkaError(f"User rebalance callback throws an error: {err}") from err

    # ------------------------------------------------------------------------------------------
    # close

    def close(self, timeout_ms: float | None = None) -> None:
        """Auto commit, finish async commits, leave and stop heartbeating, all within one deadline:
        timeout_ms (default 30 s) capped at request.timeout.ms, as Java's close timer."""
        timeout_ms = DEFAULT_CLOSE_TIMEOUT_MS if timeout_ms is None else timeout_ms
        deadline = self.time.milliseconds() + min(timeout_ms, self.request_timeout_ms)
        self.begin_close()
        try:
            stable = not self.subscriptions.has_auto_assigned_partitions() or self.generation_if_stable() is not None
            if self.offsets.auto_commit_enabled and stable:
                try:
                    self.offsets.commit_sync(None, max(1, deadline - self.time.milliseconds()))
                except KafkaError as e:
                    log.warning("Synchronous auto-commit of offsets failed on close: %s", e)
            self.offsets.process_pending_commits(deadline)
            self.offsets.invoke_completed_commit_callbacks()
            self.on_leave_prepare()
            self.maybe_leave_group("the consumer is being closed", deadline)
        finally:
            self.close_coordinator(deadline)
