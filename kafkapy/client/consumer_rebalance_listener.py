"""ConsumerRebalanceListener: Kafka's callbacks around group rebalances, run on the consumer's thread.

on_partitions_revoked(partitions): before partitions are taken away (commit their offsets here);
on_partitions_assigned(partitions): after the new ones are installed (positions come from committed
offsets); on_partitions_lost(partitions): the member lost them without a clean revoke (it fell out of
the group), by default the same as revoked. Partitions arrive as a list sorted by (topic, partition).
Any object with these method names works; this base class supplies no-op defaults. Stateless.
"""

from __future__ import annotations

from kafkapy.common.topic_partition import TopicPartition


class ConsumerRebalanceListener:
    """Kafka's ConsumerRebalanceListener; lost partitions default to the revoked callback."""

    def on_partitions_revoked(self, revoked: list[TopicPartition]) -> None:
        pass

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        pass

    def on_partitions_lost(self, lost: list[TopicPartition]) -> None:
        self.on_partitions_revoked(lost)
