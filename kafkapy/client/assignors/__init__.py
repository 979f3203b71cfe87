"""Consumer partition assignors (Kafka's ConsumerPartitionAssignor) and their registry.

An assignor runs on the group leader only: `assign(partitions_per_topic, subscriptions)` maps each
member id to an Assignment, from the members' Subscriptions (decoded JoinGroup metadata) and the
partition count of every subscribed topic that exists. Members call `subscription_user_data()` when
they join and `on_assignment()` when SyncGroup hands them their share (sticky assignors remember it).

`partition.assignment.strategy` accepts Kafka's class names and the protocol names:
org.apache.kafka.clients.consumer.RangeAssignor / range, RoundRobinAssignor / roundrobin,
StickyAssignor / sticky, CooperativeStickyAssignor / cooperative-sticky; or assignor instances.

Assignors keep per-member state (their last assignment); one instance per consumer.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Iterable
from typing import Any

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
    # builtins.range: importing the `range` submodule rebinds `range` in this package's namespace.
    return [TopicPartition(topic, p) for p in builtins.range(count)]


def as_assignments(lists: dict[str, list[TopicPartition]]) -> dict[str, Assignment]:
    return {m: Assignment(tps) for m, tps in lists.items()}


_CLASS_PREFIX = "org.apache.kafka.clients.consumer."
_NAMES = {
    "range": "range",
    "RangeAssignor": "range",
    "roundrobin": "roundrobin",
    "RoundRobinAssignor": "roundrobin",
    "sticky": "sticky",
    "StickyAssignor": "sticky",
    "cooperative-sticky": "cooperative-sticky",
    "CooperativeStickyAssignor": "cooperative-sticky",
}


def assignor_for(spec: Any) -> ConsumerPartitionAssignor:
    """An assignor from a strategy name/class name, an assignor class, or an instance."""
    if isinstance(spec, ConsumerPartitionAssignor):
        return spec
    if isinstance(spec, type) and issubclass(spec, ConsumerPartitionAssignor):
        return spec()
    name = str(spec).strip()
    if name.startswith(_CLASS_PREFIX):
        name = name[len(_CLASS_PREFIX):]
    key = _NAMES.get(name)
    if key == "range":
        from kafkapy.client.assignors.range import RangeAssignor

        return RangeAssignor()
    if key == "roundrobin":
        from kafkapy.client.assignors.round_robin import RoundRobinAssignor

        return RoundRobinAssignor()
    if key == "sticky":
        from kafkapy.client.assignors.sticky import StickyAssignor

        return StickyAssignor()
    if key == "cooperative-sticky":
        from kafkapy.client.assignors.cooperative_sticky import CooperativeStickyAssignor

        return CooperativeStickyAssignor()
    raise ValueError(f"Invalid value {spec} for configuration partition.assignment.strategy: Class {spec} cannot "
                     "be found")


def assignors_for(specs: Iterable[Any]) -> list[ConsumerPartitionAssignor]:
    out: list[ConsumerPartitionAssignor] = []
    for spec in specs:
        a = assignor_for(spec)
        if any(o.name == a.name for o in out):
            raise ValueError(f"The assignor name: '{a.name}' is used in more than one assignor")
        out.append(a)
    return out


__all__ = [
    "Assignment", "ConsumerPartitionAssignor", "RebalanceProtocol", "Subscription", "assignor_for", "assignors_for",
    "member_sort_key", "partitions_for",
]
