"""ConsumerPartitionAssignor: the base of the consumer partition assignors, and what they share.

An assignor runs on the group leader only: `assign(partitions_per_topic, subscriptions)` maps each
member id to an Assignment, from the members' Subscriptions (decoded JoinGroup metadata) and the
partition count of every subscribed topic that exists. Members call `subscription_user_data()` when
they join and `on_assignment()` when SyncGroup hands them their share (sticky assignors remember it).
RebalanceProtocol: EAGER or COOPERATIVE, as each assignor supports.

Thread-safety: assignors keep per-member state (their last assignment); one instance per consumer.
"""

from __future__ import annotations

import enum

from kafkapy.client.assignors.consumer_protocol import Assignment, Subscription
from kafkapy.common.topic_partition import TopicPartition


class RebalanceProtocol(enum.Enum):
    EAGER = 0
    COOPERATIVE = 1


class ConsumerPartitionAssignor:
    """Base class: override `name` and `assign`."""

    name: str = ""

    def supported_protocols(self) -> list[RebalanceProtocol]:
        return [RebalanceProtocol.EAGER]

    def version(self) -> int:
        return 0

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return None

    def assign(
        self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]
    ) -> dict[str, Assignment]:
        raise NotImplementedError

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        """Called on every member after SyncGroup (generation is the group's new generation)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


def member_sort_key(member_id: str, subscription: Subscription) -> tuple[int, str]:
    """Kafka's MemberInfo order: static members (by group.instance.id) first, then by member id."""
    if subscription.group_instance_id is not None:
        return (0, subscription.group_instance_id)
    return (1, member_id)


def partitions_for(topic: str, count: int) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for p in range(count)]


def as_assignments(lists: dict[str, list[TopicPartition]]) -> dict[str, Assignment]:
    return {m: Assignment(tps) for m, tps in lists.items()}
