"""CooperativeStickyAssignor (protocol name "cooperative-sticky"): the sticky assignment without revoking
and re-assigning a partition in the same rebalance.

Members report their owned partitions (and generation) in the subscription, so the sticky
algorithm keeps them in place; a partition that must move to another member is left out of the
new owner's assignment. The old owner sees it missing, revokes it (on_partitions_revoked) and
rejoins; the follow-up rebalance then hands it to the new owner. Only moved partitions are revoked.

User data: the member's generation as an int32 (read when the subscription carries no generation,
i.e. ConsumerProtocolSubscription v0/v1). One instance per consumer.
"""

from __future__ import annotations

import struct

from kafkapy.client.assignors.consumer_protocol import (
    DEFAULT_GENERATION,
    Assignment,
    Subscription,
    encode_generation_user_data,
)
from kafkapy.client.assignors.partition_assignor import RebalanceProtocol
from kafkapy.client.assignors.sticky import AbstractStickyAssignor, MemberData
from kafkapy.common.topic_partition import TopicPartition


class CooperativeStickyAssignor(AbstractStickyAssignor):
    name = "cooperative-sticky"

    def supported_protocols(self) -> list[RebalanceProtocol]:
        return [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER]

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return encode_generation_user_data(self.generation)

    def member_data(self, subscription: Subscription) -> MemberData:
        if subscription.generation_id >= 0:
            return list(subscription.owned_partitions), subscription.generation_id
        data = subscription.user_data
        if data is None:
            generation = None
        elif len(data) >= 4:
            generation = struct.unpack_from(">i", data, 0)[0]
        else:
            generation = DEFAULT_GENERATION
        return list(subscription.owned_partitions), generation

    def assign(
        self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]
    ) -> dict[str, Assignment]:
        assignments = super().assign(partitions_per_topic, subscriptions)
        transferring = self.partitions_transferring_ownership
        if transferring is None:
            transferring = self._compute_transferring(subscriptions, assignments)
        for tp, member in transferring.items():
            parts = assignments[member].partitions
            if tp in parts:
                parts.remove(tp)
        return assignments

    @staticmethod
    def _compute_transferring(
        subscriptions: dict[str, Subscription], assignments: dict[str, Assignment]
    ) -> dict[TopicPartition, str]:
        added: dict[TopicPartition, str] = {}
        revoked: set[TopicPartition] = set()
        for member, assignment in assignments.items():
            owned = set(subscriptions[member].owned_partitions)
            assigned = set(assignment.partitions)
            for tp in assignment.partitions:
                if tp not in owned:
                    added[tp] = member
            revoked |= owned - assigned
        return {tp: m for tp, m in added.items() if tp in revoked}
