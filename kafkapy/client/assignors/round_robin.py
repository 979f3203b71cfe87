"""RoundRobinAssignor (protocol name "roundrobin"): Kafka's round-robin over all partitions.

Every partition of every subscribed topic, sorted by (topic, partition), is dealt to the members in
Kafka's MemberInfo order (static members by group.instance.id first, then member id), cycling; a
member not subscribed to the partition's topic is skipped. Balanced to within one partition when all
members share a subscription. Stateless; thread-safe.
"""

from __future__ import annotations

from kafkapy.client.assignors.consumer_protocol import Assignment, Subscription
from kafkapy.client.assignors.partition_assignor import (
    ConsumerPartitionAssignor,
    as_assignments,
    member_sort_key,
    partitions_for,
)
from kafkapy.common.topic_partition import TopicPartition


class RoundRobinAssignor(ConsumerPartitionAssignor):
    name = "roundrobin"

    def assign(
        self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]
    ) -> dict[str, Assignment]:
        result: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        if not subscriptions:
            return as_assignments(result)
        members = sorted(subscriptions, key=lambda m: member_sort_key(m, subscriptions[m]))
        topic_sets = {m: set(subscriptions[m].topics) for m in members}
        all_topics = sorted({t for s in topic_sets.values() for t in s})
        position = 0
        n = len(members)
        for topic in all_topics:
            count = partitions_per_topic.get(topic)
            if not count:
                continue
            for tp in partitions_for(topic, count):
                # Someone subscribes to `topic` (it came from a subscription), so this terminates.
                while topic not in topic_sets[members[position % n]]:
                    position += 1
                result[members[position % n]].append(tp)
                position += 1
        return as_assignments(result)
