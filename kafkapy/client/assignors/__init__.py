"""Consumer partition assignors (Kafka's ConsumerPartitionAssignor, partition_assignor.py) and their registry.

`partition.assignment.strategy` accepts Kafka's class names and the protocol names:
org.apache.kafka.clients.consumer.RangeAssignor / range, RoundRobinAssignor / roundrobin,
StickyAssignor / sticky, CooperativeStickyAssignor / cooperative-sticky; or assignor instances.

Assignors keep per-member state (their last assignment); one instance per consumer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafkapy.client.assignors.consumer_protocol import Assignment, Subscription
from kafkapy.client.assignors.partition_assignor import (
    ConsumerPartitionAssignor,
    RebalanceProtocol,
    member_sort_key,
    partitions_for,
)

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
