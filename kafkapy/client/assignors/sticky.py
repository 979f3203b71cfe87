"""StickyAssignor (protocol name "sticky") and the sticky algorithm CooperativeStickyAssignor shares.

Goals, in Kafka's order: (1) balanced - member partition counts differ by at most one where the
subscriptions allow it; (2) sticky - as many partitions as possible stay with their previous owner.

Previous ownership comes from each member's "member data": for StickyAssignor the StickyAssignorUserData
in the subscription's user data (eager members own nothing when they join), for the cooperative
variant the subscription's owned partitions and generation. Only claims from the highest generation
count; a partition claimed twice in that generation is treated as unowned.

- All members subscribe to the same topics: Kafka's constrained algorithm. min/max quota =
  floor/ceil(partitions / members); each member keeps up to min quota of what it owned (up to max
  quota for the first `partitions % members` such members), the rest is dealt to members under
  quota (sorted by member id, round robin), then one each to members at min quota.
- Otherwise (general case): keep valid ownership, give each unowned partition (fewest eligible
  members first) to the least loaded eligible member, then move partitions from members holding at
  least two more than an eligible member until no such move exists.

`partitions_transferring_ownership` (partition -> new owner, for partitions another member owned)
is left for the cooperative subclass. Keeps the member's last assignment and generation (for its
user data); one instance per consumer.
"""

from __future__ import annotations

import logging

from kafkapy.client.assignors.consumer_protocol import (
    DEFAULT_GENERATION,
    Assignment,
    ConsumerProtocolError,
    Subscription,
    decode_sticky_user_data,
    encode_sticky_user_data,
)
from kafkapy.client.assignors.partition_assignor import (
    ConsumerPartitionAssignor,
    as_assignments,
    partitions_for,
)
from kafkapy.common.topic_partition import TopicPartition

log = logging.getLogger(__name__)

MemberData = tuple[list[TopicPartition], int | None]  # (owned partitions, generation or None)


class AbstractStickyAssignor(ConsumerPartitionAssignor):
    def __init__(self) -> None:
        self.partitions_transferring_ownership: dict[TopicPartition, str] | None = {}
        self._multiple_owners: set[TopicPartition] = set()
        self.member_assignment: list[TopicPartition] | None = None
        self.generation = DEFAULT_GENERATION

    def member_data(self, subscription: Subscription) -> MemberData:
        raise NotImplementedError

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.member_assignment = list(assignment.partitions)
        self.generation = generation

    # ------------------------------------------------------------------------------------------

    def assign(
        self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]
    ) -> dict[str, Assignment]:
        partitions_per_topic = {t: n for t, n in partitions_per_topic.items() if n > 0}
        if not subscriptions:
            self.partitions_transferring_ownership = {}
            return {}
        owned = self._owned_partitions(partitions_per_topic, subscriptions)
        topic_sets = [frozenset(s.topics) for s in subscriptions.values()]
        if topic_sets and all(ts == topic_sets[0] for ts in topic_sets):
            self.partitions_transferring_ownership = {}
            result = self._constrained_assign(partitions_per_topic, subscriptions, owned)
        else:
            self.partitions_transferring_ownership = None
            result = self._general_assign(partitions_per_topic, subscriptions, owned)
        return as_assignments(result)

    def _owned_partitions(
        self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        """Each member's still-valid previous partitions (highest generation only, no double claims)."""
        data = {m: self.member_data(subscriptions[m]) for m in sorted(subscriptions)}
        generations = [g for _, g in data.values() if g is not None]
        max_generation = max(generations) if generations else DEFAULT_GENERATION
        owned: dict[str, list[TopicPartition]] = {}
        claims: dict[TopicPartition, int] = {}
        for member_id, (parts, generation) in data.items():
            current = generation == max_generation if generation is not None else max_generation == DEFAULT_GENERATION
            topics = set(subscriptions[member_id].topics)
            keep = []
            if current:
                for tp in dict.fromkeys(parts):
                    if tp.topic in topics and 0 <= tp.partition < partitions_per_topic.get(tp.topic, 0):
                        keep.append(tp)
                        claims[tp] = claims.get(tp, 0) + 1
            owned[member_id] = keep
        doubly = {tp for tp, n in claims.items() if n > 1}
        if doubly:
            log.error("Found partitions claimed by more than one member in the same generation: %s",
                      sorted(doubly))
            self._multiple_owners = doubly
            owned = {m: [tp for tp in parts if tp not in doubly] for m, parts in owned.items()}
        else:
            self._multiple_owners = set()
        return owned

    # ------------------------------------------------------------------------------------------
    # all members subscribe to the same topics

    def _constrained_assign(
        self,
        partitions_per_topic: dict[str, int],
        subscriptions: dict[str, Subscription],
        owned: dict[str, list[TopicPartition]],
    ) -> dict[str, list[TopicPartition]]:
        topics = set(next(iter(subscriptions.values())).topics)
        all_partitions = [tp for t in sorted(topics) if t in partitions_per_topic
                          for tp in partitions_for(t, partitions_per_topic[t])]
        members = sorted(subscriptions)
        n = len(members)
        total = len(all_partitions)
        min_quota, max_quota = total // n, -(-total // n)
        expected_over_min = total % n
        over_min = 0
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
        revoked: set[TopicPartition] = set()
        under_min: list[str] = []
        exactly_min: list[str] = []
        for m in members:
            parts = owned.get(m, [])
            if len(parts) <= min_quota:
                assignment[m].extend(parts)
                (under_min if len(parts) < min_quota else exactly_min).append(m)
            elif len(parts) >= max_quota and over_min < expected_over_min:
                over_min += 1
                assignment[m].extend(parts[:max_quota])
                revoked.update(parts[max_quota:])
            else:
                assignment[m].extend(parts[:min_quota])
                revoked.update(parts[min_quota:])
                if over_min < expected_over_min:
                    exactly_min.append(m)
        if over_min >= expected_over_min:
            exactly_min = []
        kept = {tp for parts in assignment.values() for tp in parts}
        unassigned = [tp for tp in all_partitions if tp not in kept]
        transferring = self.partitions_transferring_ownership
        assert transferring is not None
        moved_from_owner = revoked | self._multiple_owners
        index = 0
        for tp in unassigned:
            if under_min:
                index %= len(under_min)
                member = under_min[index]
                index += 1
            elif exactly_min:
                member = exactly_min.pop(0)
            else:  # cannot happen: quotas leave exactly the unowned partitions to hand out
                raise AssertionError("partitions left unassigned with every member at its quota")
            assignment[member].append(tp)
            if tp in moved_from_owner:
                transferring[tp] = member
            count = len(assignment[member])
            if count == min_quota and member in under_min:
                i = under_min.index(member)
                under_min.pop(i)
                if i < index:
                    index -= 1
                if over_min < expected_over_min:
                    exactly_min.append(member)
            elif count == max_quota and max_quota > min_quota:
                over_min += 1
                if over_min >= expected_over_min:
                    exactly_min = []
        return assignment

    # ------------------------------------------------------------------------------------------
    # members subscribe to different topics

    def _general_assign(
        self,
        partitions_per_topic: dict[str, int],
        subscriptions: dict[str, Subscription],
        owned: dict[str, list[TopicPartition]],
    ) -> dict[str, list[TopicPartition]]:
        members = sorted(subscriptions)
        eligible: dict[TopicPartition, list[str]] = {}
        for m in members:
            for t in sorted(set(subscriptions[m].topics)):
                for tp in partitions_for(t, partitions_per_topic.get(t, 0)):
                    eligible.setdefault(tp, []).append(m)
        assignment: dict[str, list[TopicPartition]] = {m: list(owned.get(m, [])) for m in members}
        taken = {tp for parts in assignment.values() for tp in parts}
        potential = {m: sum(1 for tp, ms in eligible.items() if m in ms) for m in members}
        unassigned = sorted((tp for tp in eligible if tp not in taken),
                            key=lambda tp: (len(eligible[tp]), tp.topic, tp.partition))
        for tp in unassigned:
            best = min(eligible[tp], key=lambda m: (len(assignment[m]), potential[m], m))
            assignment[best].append(tp)
        self._balance(assignment, eligible, members, {tp for parts in owned.values() for tp in parts})
        return assignment

    @staticmethod
    def _balance(
        assignment: dict[str, list[TopicPartition]],
        eligible: dict[TopicPartition, list[str]],
        members: list[str],
        owned: set[TopicPartition],
    ) -> None:
        """Shift load along chains of moves (u gives a partition to v, v to w, ...) from a member to one
        holding at least two fewer, until no such chain exists; each chain leaves the members in between
        with the same count. Newly assigned partitions move before previously owned ones."""
        holders = {tp: m for m, parts in assignment.items() for tp in parts}
        limit = (len(holders) + 1) * (len(members) + 1)
        for _ in range(limit):
            loads = {m: len(assignment[m]) for m in members}
            path = None
            for src in sorted(members, key=lambda m: (-loads[m], m)):
                path = AbstractStickyAssignor._chain_from(src, assignment, eligible, loads, owned)
                if path:
                    break
            if not path:
                return
            for tp, src, dst in path:
                assignment[src].remove(tp)
                assignment[dst].append(tp)

    @staticmethod
    def _chain_from(
        src: str,
        assignment: dict[str, list[TopicPartition]],
        eligible: dict[TopicPartition, list[str]],
        loads: dict[str, int],
        owned: set[TopicPartition],
    ) -> list[tuple[TopicPartition, str, str]] | None:
        parent: dict[str, tuple[str, TopicPartition]] = {}
        queue = [src]
        seen = {src}
        target = loads[src] - 2
        for u in queue:
            parts = sorted(assignment[u], key=lambda tp: (tp in owned, tp.topic, tp.partition))
            for tp in parts:
                for v in eligible[tp]:
                    if v in seen:
                        continue
                    seen.add(v)
                    parent[v] = (u, tp)
                    if loads[v] <= target:
                        chain = []
                        node = v
                        while node != src:
                            prev, moved = parent[node]
                            chain.append((moved, prev, node))
                            node = prev
                        return chain[::-1]
                    queue.append(v)
        return None


class StickyAssignor(AbstractStickyAssignor):
    """The eager sticky assignor: previous assignment and generation travel in the user data."""

    name = "sticky"

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        if self.member_assignment is None:
            return None
        return encode_sticky_user_data(self.member_assignment, self.generation)

    def member_data(self, subscription: Subscription) -> MemberData:
        data = subscription.user_data
        if not data:
            return [], None
        try:
            return decode_sticky_user_data(data)
        except ConsumerProtocolError as e:
            log.error("Could not parse the sticky assignor user data: %s", e)
            return [], None
