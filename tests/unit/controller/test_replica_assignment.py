"""Replica placement against the layouts Kafka's AdminUtils produces (examples from Kafka's own docs/tests)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from kafkapy.common.errors import (
    BrokerNotAvailableError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    UnknownServerError,
)
from kafkapy.controller.replica_assignment import (
    BrokerMetadata,
    RackAwareMode,
    apply_rack_aware_mode,
    assign_new_partitions,
    assign_replicas_to_brokers,
    rack_alternated_broker_list,
    validate_replica_assignment,
    validate_topic_assignment,
)


def brokers(n: int, racks: dict[int, str] | None = None) -> list[BrokerMetadata]:
    return [BrokerMetadata(i, (racks or {}).get(i)) for i in range(n)]


def test_rack_unaware_matches_kafka_layout_5_brokers_10_partitions_rf3() -> None:
    # AdminUtils' documented example (startIndex 0, shift 0), as asserted in Kafka's AdminZkClientTest.
    expected = {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }
    assert assign_replicas_to_brokers(brokers(5), 10, 3, fixed_start_index=0) == expected


def test_rack_unaware_start_partition_id_and_index() -> None:
    got = assign_replicas_to_brokers(brokers(3), 2, 2, fixed_start_index=1, start_partition_id=3)
    # p3: first=(3+1)%3=1, shift starts at 1 and bumps to 2 at p3 (3 % 3 == 0): 1 + (2+0)%2 = 1 -> broker 2
    assert got == {3: [1, 2], 4: [2, 0]}


def test_single_broker_rf1() -> None:
    assert assign_replicas_to_brokers([BrokerMetadata(7)], 3, 1, 0) == {0: [7], 1: [7], 2: [7]}


def test_random_start_is_balanced() -> None:
    got = assign_replicas_to_brokers(brokers(4), 8, 2, rng=random.Random(3))
    assert sorted(got) == list(range(8))
    leaders = Counter(r[0] for r in got.values())
    assert set(leaders.values()) == {2}
    assert all(len(set(r)) == 2 for r in got.values())


def test_rack_alternated_broker_list() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_broker_list(racks) == [0, 3, 1, 5, 4, 2]
    del racks[5]
    assert rack_alternated_broker_list(racks) == [0, 3, 1, 4, 2]


def test_rack_aware_matches_kafka_layout() -> None:
    # Kafka's AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers.
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    got = assign_replicas_to_brokers(brokers(6, racks), 7, 3, 0, 0)
    assert got == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3],
                   6: [0, 4, 2]}


def test_rack_aware_spreads_replicas_over_racks() -> None:
    racks = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
    got = assign_replicas_to_brokers(brokers(6, racks), 12, 3, rng=random.Random(1))
    for replicas in got.values():
        assert len({racks[b] for b in replicas}) == 3


def test_rack_aware_more_replicas_than_racks_still_distinct_brokers() -> None:
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    got = assign_replicas_to_brokers(brokers(4, racks), 4, 3, 0, 0)
    for replicas in got.values():
        assert len(set(replicas)) == 3
        assert {racks[b] for b in replicas} == {"a", "b"}


def test_errors() -> None:
    with pytest.raises(InvalidPartitionsError, match="Number of partitions must be larger than 0."):
        assign_replicas_to_brokers(brokers(3), 0, 1)
    with pytest.raises(InvalidReplicationFactorError, match="Replication factor must be larger than 0."):
        assign_replicas_to_brokers(brokers(3), 1, 0)
    with pytest.raises(InvalidReplicationFactorError,
                       match="Replication factor: 4 larger than available brokers: 3."):
        assign_replicas_to_brokers(brokers(3), 1, 4)
    with pytest.raises(UnknownServerError, match="Not all brokers have rack information"):
        assign_replicas_to_brokers(brokers(3, {0: "a"}), 1, 1)


def test_rack_aware_modes() -> None:
    mixed = [BrokerMetadata(2, "a"), BrokerMetadata(0, None), BrokerMetadata(1, "b")]
    assert apply_rack_aware_mode(mixed, RackAwareMode.SAFE) == brokers(3)
    assert apply_rack_aware_mode(mixed, RackAwareMode.ENFORCED)[0] == BrokerMetadata(0, None)
    assert [b.rack for b in apply_rack_aware_mode(mixed, RackAwareMode.DISABLED)] == [None] * 3


def test_add_partitions_continues_leaders_from_partition0() -> None:
    existing = assign_replicas_to_brokers(brokers(5), 10, 3, 0)
    got = assign_new_partitions("t", existing, brokers(5), 13)
    # startIndex = position of partition 0's first replica (0), start partition 10; the replica shift
    # restarts from startIndex and bumps at p10, as in Kafka (leaders continue the round robin).
    assert got == {10: [0, 2, 3], 11: [1, 3, 4], 12: [2, 4, 0]}


def test_add_partitions_start_follows_first_replica_of_partition0() -> None:
    existing = {0: [2, 0], 1: [0, 1]}
    got = assign_new_partitions("t", existing, brokers(3), 4)
    # startIndex = index of first broker with id >= 2 -> 2; startPartitionId = 2
    assert got == assign_replicas_to_brokers(brokers(3), 2, 2, 2, 2)
    assert sorted(got) == [2, 3]
    assert got[2][0] == 1  # (2 + 2) % 3


def test_add_partitions_errors() -> None:
    existing = {0: [0], 1: [0]}
    with pytest.raises(InvalidPartitionsError, match="can only be increased"):
        assign_new_partitions("t", existing, brokers(1), 2)
    with pytest.raises(BrokerNotAvailableError, match="not available"):
        assign_new_partitions("t", existing, brokers(1), 3, {2: [5]})
    with pytest.raises(InvalidReplicaAssignmentError, match="Inconsistent replication factor"):
        assign_new_partitions("t", existing, brokers(2), 3, {2: [0, 1]})
    assert assign_new_partitions("t", existing, brokers(2), 3, {2: [1]}) == {2: [1]}


def test_validate_replica_assignment_messages() -> None:
    with pytest.raises(InvalidReplicaAssignmentError, match="Cannot have replication factor of 0"):
        validate_replica_assignment({1: []}, 1, {0})
    with pytest.raises(InvalidReplicaAssignmentError, match="Duplicate brokers not allowed in replica assignment: 0, 0"):
        validate_replica_assignment({1: [0, 0]}, 2, {0})


def test_validate_topic_assignment() -> None:
    validate_topic_assignment({0: [0, 1], 1: [1, 0]})
    with pytest.raises(InvalidReplicaAssignmentError, match="same number of replicas"):
        validate_topic_assignment({0: [0, 1], 1: [1]})
    with pytest.raises(InvalidReplicaAssignmentError, match="Duplicate replica assignment found"):
        validate_topic_assignment({0: [1, 1]})
    with pytest.raises(InvalidReplicaAssignmentError, match="consecutive 0-based"):
        validate_topic_assignment({0: [0], 2: [0]})
