"""SubscriptionState: which partitions a consumer reads and where it is in each (Kafka's design).

Per assigned partition: the fetch position (offset + the leader epoch of the last record
consumed), a pending offset reset (earliest / latest / a timestamp), paused flag, and the last
high watermark / log start offset / last stable offset seen in a Fetch response (for lag).

Only manual assignment (`assign`) exists today. Group membership will add AUTO_TOPICS /
AUTO_PATTERN subscriptions: the coordinator then calls `assign_from_subscribed()` with the
assignment, and everything below (Fetcher, positions, pause) works unchanged.

Thread-safety: owned by the consumer's thread (KafkaConsumer is single-threaded, like Java's).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kafkapy.common.topic_partition import TopicPartition

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3


class OffsetResetStrategy(enum.Enum):
    LATEST = "latest"
    EARLIEST = "earliest"
    NONE = "none"

    @property
    def timestamp(self) -> int:
        return EARLIEST_TIMESTAMP if self is OffsetResetStrategy.EARLIEST else LATEST_TIMESTAMP


class SubscriptionType(enum.Enum):
    NONE = "NONE"
    AUTO_TOPICS = "AUTO_TOPICS"
    AUTO_PATTERN = "AUTO_PATTERN"
    USER_ASSIGNED = "USER_ASSIGNED"


@dataclass
class FetchPosition:
    offset: int
    offset_epoch: int | None = None  # leader epoch of the last consumed record
    current_leader_epoch: int | None = None


@dataclass
class TopicPartitionState:
    position: FetchPosition | None = None
    reset_timestamp: int | None = None  # pending reset: -2 earliest, -1 latest, >=0 a timestamp
    paused: bool = False
    high_watermark: int = -1
    log_start_offset: int = -1
    last_stable_offset: int = -1
    preferred_read_replica: int | None = None

    def has_valid_position(self) -> bool:
        return self.position is not None and self.reset_timestamp is None

    def is_fetchable(self) -> bool:
        return not self.paused and self.has_valid_position()


class SubscriptionState:
    def __init__(self, default_reset: OffsetResetStrategy = OffsetResetStrategy.LATEST) -> None:
        self.default_reset = default_reset
        self.subscription_type = SubscriptionType.NONE
        self.subscription: set[str] = set()
        self._assignment: dict[TopicPartition, TopicPartitionState] = {}

    # assignment
    def assign(self, partitions: list[TopicPartition]) -> None:
        """Manual assignment (replaces the previous one; keeps positions of partitions still assigned)."""
        if self.subscription_type not in (SubscriptionType.NONE, SubscriptionType.USER_ASSIGNED):
            raise ValueError("Subscription to topics, partitions and pattern are mutually exclusive")
        self.subscription_type = SubscriptionType.USER_ASSIGNED if partitions else SubscriptionType.NONE
        new = {TopicPartition(tp[0], tp[1]): self._assignment.get(TopicPartition(tp[0], tp[1])) or TopicPartitionState()
               for tp in partitions}
        self._assignment = new
        self.subscription = {tp.topic for tp in new}

    def assign_from_subscribed(self, partitions: list[TopicPartition]) -> None:
        """For group membership: install the partitions the group assigned us."""
        self._assignment = {tp: self._assignment.get(tp) or TopicPartitionState() for tp in partitions}

    def has_auto_assigned_partitions(self) -> bool:
        """True when the group assigns our partitions (subscribed to topics or a pattern)."""
        return self.subscription_type in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN)

    def unsubscribe(self) -> None:
        self._assignment = {}
        self.subscription = set()
        self.subscription_type = SubscriptionType.NONE

    def assigned_partitions(self) -> list[TopicPartition]:
        return list(self._assignment)

    def is_assigned(self, tp: TopicPartition) -> bool:
        return tp in self._assignment

    def state(self, tp: TopicPartition) -> TopicPartitionState:
        st = self._assignment.get(tp)
        if st is None:
            raise ValueError(f"No current assignment for partition {tp}")
        return st

    # positions
    def seek(self, tp: TopicPartition, offset: int, leader_epoch: int | None = None) -> None:
        st = self.state(tp)
        st.position = FetchPosition(offset, leader_epoch)
        st.reset_timestamp = None

    def position(self, tp: TopicPartition) -> FetchPosition | None:
        return self.state(tp).position

    def request_offset_reset(self, tp: TopicPartition, timestamp: int | None = None) -> None:
        """Mark tp for a reset to `timestamp` (-2 earliest, -1 latest) or to the default strategy."""
        st = self.state(tp)
        if timestamp is None:
            if self.default_reset is OffsetResetStrategy.NONE:
                raise ValueError("no reset policy")
            timestamp = self.default_reset.timestamp
        st.reset_timestamp = timestamp

    def partitions_needing_reset(self) -> dict[TopicPartition, int]:
        return {tp: st.reset_timestamp for tp, st in self._assignment.items() if st.reset_timestamp is not None}

    def missing_positions(self) -> list[TopicPartition]:
        return [tp for tp, st in self._assignment.items() if st.position is None and st.reset_timestamp is None]

    def has_all_fetch_positions(self) -> bool:
        return all(st.has_valid_position() for st in self._assignment.values())

    def fetchable_partitions(self) -> list[TopicPartition]:
        return [tp for tp, st in self._assignment.items() if st.is_fetchable()]

    # pause
    def pause(self, tp: TopicPartition) -> None:
        self.state(tp).paused = True

    def resume(self, tp: TopicPartition) -> None:
        self.state(tp).paused = False

    def paused_partitions(self) -> set[TopicPartition]:
        return {tp for tp, st in self._assignment.items() if st.paused}
