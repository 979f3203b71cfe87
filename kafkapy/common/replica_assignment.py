"""Replica placement: Kafka's AdminUtils.assignReplicasToBrokers (rack-unaware and rack-aware), the
assignment for partitions added to an existing topic, and the checks on user-given assignments.

Rack-unaware: the first replica of partition p goes to broker (p + startIndex) % n; the other replicas
follow at a shift that grows by one every n partitions, so leaders and followers spread evenly.
Rack-aware: brokers are first arranged alternating racks (rack-sorted, ids sorted within a rack), then the
same walk is done, skipping a broker whose rack (or itself) already holds a replica while some rack (or
broker) holds none. Brokers must be given sorted by id, as Kafka's callers do.
Lives in common/ because both the Controller (topic creation, partition addition) and the
reassign-partitions tool (`--generate`, which proposes assignments client-side as Kafka's
ReassignPartitionsCommand does) need it; kafkapy/controller/replica_assignment.py re-exports it.
Pure functions (randomness from an injectable random.Random); thread-safe.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from kafkapy.common.errors import (
    BrokerNotAvailableError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    UnknownServerError,
)

_RANDOM = random.Random()


@dataclass(frozen=True, slots=True)
class BrokerMetadata:
    id: int
    rack: str | None = None


class RackAwareMode(Enum):
    DISABLED = "disabled"  # ignore racks
    ENFORCED = "enforced"  # all brokers need a rack, or none (Kafka's default)
    SAFE = "safe"  # use racks only when every broker has one


def apply_rack_aware_mode(brokers: Iterable[BrokerMetadata], mode: RackAwareMode) -> list[BrokerMetadata]:
    """Kafka's AdminZkClient.getBrokerMetadatas: sorted by id, racks dropped as the mode says."""
    out = sorted(brokers, key=lambda b: b.id)
    if mode is RackAwareMode.DISABLED or (mode is RackAwareMode.SAFE and any(b.rack is None for b in out)):
        return [BrokerMetadata(b.id, None) for b in out]
    return out


def assign_replicas_to_brokers(brokers: Sequence[BrokerMetadata], num_partitions: int, replication_factor: int,
                               fixed_start_index: int = -1, start_partition_id: int = -1,
                               rng: random.Random | None = None) -> dict[int, list[int]]:
    """partition -> replicas (first replica is the preferred leader)."""
    if num_partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    rng = rng or _RANDOM
    if all(b.rack is None for b in brokers):
        return _assign_rack_unaware(num_partitions, replication_factor, [b.id for b in brokers],
                                    fixed_start_index, start_partition_id, rng)
    if any(b.rack is None for b in brokers):
        # Kafka throws AdminOperationException here, which clients see as UNKNOWN_SERVER_ERROR.
        raise UnknownServerError("Not all brokers have rack information for replica rack aware assignment.")
    return _assign_rack_aware(num_partitions, replication_factor, {b.id: b.rack for b in brokers},  # type: ignore[misc]
                              fixed_start_index, start_partition_id, rng)


def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int) -> int:
    shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


def _assign_rack_unaware(num_partitions: int, replication_factor: int, broker_ids: list[int],
                         fixed_start_index: int, start_partition_id: int,
                         rng: random.Random) -> dict[int, list[int]]:
    n = len(broker_ids)
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    next_replica_shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    current = max(0, start_partition_id)
    out: dict[int, list[int]] = {}
    for _ in range(num_partitions):
        if current > 0 and current % n == 0:
            next_replica_shift += 1
        first = (current + start_index) % n
        replicas = [broker_ids[first]]
        for j in range(replication_factor - 1):
            replicas.append(broker_ids[_replica_index(first, next_replica_shift, j, n)])
        out[current] = replicas
        current += 1
    return out


def rack_alternated_broker_list(broker_racks: Mapping[int, str]) -> list[int]:
    """Brokers taken one per rack in turn (racks sorted, ids sorted within a rack)."""
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker_id)
    iterators = {rack: iter(sorted(ids)) for rack, ids in by_rack.items()}
    racks = sorted(iterators)
    out: list[int] = []
    rack_index = 0
    while len(out) < len(broker_racks):
        nxt = next(iterators[racks[rack_index]], None)
        if nxt is not None:
            out.append(nxt)
        rack_index = (rack_index + 1) % len(racks)
    return out


def _assign_rack_aware(num_partitions: int, replication_factor: int, broker_racks: Mapping[int, str],
                       fixed_start_index: int, start_partition_id: int,
                       rng: random.Random) -> dict[int, list[int]]:
    num_racks = len(set(broker_racks.values()))
    arranged = rack_alternated_broker_list(broker_racks)
    n = len(arranged)
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    next_replica_shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    current = max(0, start_partition_id)
    out: dict[int, list[int]] = {}
    for _ in range(num_partitions):
        if current > 0 and current % n == 0:
            next_replica_shift += 1
        first = (current + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_with_replicas = {broker_racks[leader]}
        brokers_with_replicas = {leader}
        k = 0
        for _ in range(replication_factor - 1):
            # Bounded: within n consecutive k values every broker is visited once (shift covers 1..n-1).
            for _attempt in range(n * n + 1):
                broker = arranged[_replica_index(first, next_replica_shift * num_racks, k, n)]
                rack = broker_racks[broker]
                k += 1
                if ((rack not in racks_with_replicas or len(racks_with_replicas) == num_racks)
                        and (broker not in brokers_with_replicas or len(brokers_with_replicas) == n)):
                    replicas.append(broker)
                    racks_with_replicas.add(rack)
                    brokers_with_replicas.add(broker)
                    break
        out[current] = replicas
        current += 1
    return out


def assign_new_partitions(topic: str, existing_assignment: Mapping[int, Sequence[int]],
                          brokers: Sequence[BrokerMetadata], num_partitions: int,
                          replica_assignment: Mapping[int, Sequence[int]] | None = None,
                          rng: random.Random | None = None) -> dict[int, list[int]]:
    """Kafka's AdminZkClient.createNewPartitionsAssignment: the assignment of partitions
    len(existing)..num_partitions-1. Without replica_assignment, placement continues from the broker
    holding partition 0's first replica, so the new partitions extend the existing layout."""
    if 0 not in existing_assignment:
        raise UnknownServerError(f"Unexpected existing replica assignment for topic '{topic}', "
                                 f"partition id 0 is missing. Assignment: {dict(existing_assignment)}")
    partition0 = list(existing_assignment[0])
    to_add = num_partitions - len(existing_assignment)
    if to_add <= 0:
        raise InvalidPartitionsError(
            f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
            f"{len(existing_assignment)} partitions, {num_partitions} would not be an increase.")
    if replica_assignment is not None:
        validate_replica_assignment(replica_assignment, len(partition0), {b.id for b in brokers})
        return {p: list(r) for p, r in replica_assignment.items()}
    start_index = next((i for i, b in enumerate(brokers) if b.id >= partition0[0]), 0)
    return assign_replicas_to_brokers(brokers, to_add, len(partition0), start_index, len(existing_assignment), rng)


def validate_replica_assignment(replica_assignment: Mapping[int, Sequence[int]], expected_replication_factor: int,
                                available_broker_ids: set[int]) -> None:
    """Kafka's checks on a user-given assignment for new partitions."""
    for partition, replicas in replica_assignment.items():
        if not replicas:
            raise InvalidReplicaAssignmentError(f"Cannot have replication factor of 0 for partition id {partition}.")
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                "Duplicate brokers not allowed in replica assignment: "
                f"{', '.join(map(str, replicas))} for partition id {partition}.")
        if not set(replicas) <= available_broker_ids:
            raise BrokerNotAvailableError(
                f"Some brokers specified for partition id {partition} are not available. "
                f"Specified brokers: {', '.join(map(str, replicas))}, "
                f"available brokers: {', '.join(map(str, sorted(available_broker_ids)))}.")
    bad = sorted((p, len(r)) for p, r in replica_assignment.items() if len(r) != expected_replication_factor)
    if bad:
        raise InvalidReplicaAssignmentError(
            "Inconsistent replication factor between partitions, partition 0 has "
            f"{expected_replication_factor} while partitions [{', '.join(str(p) for p, _ in bad)}] have "
            f"replication factors [{', '.join(str(n) for _, n in bad)}], respectively.")


def validate_topic_assignment(assignment: Mapping[int, Sequence[int]]) -> None:
    """Kafka's AdminZkClient.validateTopicCreate checks on a full topic assignment."""
    if len({len(r) for r in assignment.values()}) != 1:
        raise InvalidReplicaAssignmentError("All partitions should have the same number of replicas")
    for replicas in assignment.values():
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"Duplicate replica assignment found: {_format_assignment(assignment)}")
    if sorted(assignment) != list(range(len(assignment))):
        raise InvalidReplicaAssignmentError("partitions should be a consecutive 0-based integer sequence")


def _format_assignment(assignment: Mapping[int, Sequence[int]]) -> str:
    inner = ", ".join(f"{p} -> List({', '.join(map(str, r))})" for p, r in sorted(assignment.items()))
    return f"Map({inner})"
