"""RangeAssignor (protocol name "range"): Kafka's per-topic range assignment.

For each topic: its partitions in order and its subscribers in Kafka's MemberInfo order (static
members by group.instance.id first, then member id); with n partitions and m subscribers each gets
n // m consecutive partitions and the first n % m get one more. Topics are handled independently, so
with several topics of the same size the first members get the extra partition of every topic
(the imbalance Kafka documents). Stateless; thread-safe.
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


class RangeAssignor(ConsumerPartitionAssignor):
    name = "range"

    def assign(
        self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]
    ) -> dict[str, Assignment]:
        consumers_per_topic: dict[str, list[str]] = {}
        for member_id, sub in subscriptions.items():
            for topic in dict.fromkeys(sub.topics):
                consumers_per_topic.setdefault(topic, []).append(member_id)
        result: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        for topic in sorted(consumers_per_topic):
            count = partitions_per_topic.get(topic)
            if not count:
                continue
            members = sorted(consumers_per_topic[topic], key=lambda m: member_sort_key(m, subscriptions[m]))
            partitions = partitions_for(topic, count)
            per_member, extra = divmod(count, len(members))
            for i, member_id in enumerate(members):
                start = per_member * i + min(i, extra)
                length = per_member + (1 if i < extra else 0)
                result[member_id].extend(partitions[start : start + length])
        return as_assignments(result)
