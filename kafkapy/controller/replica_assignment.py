"""Replica placement for the Controller: Kafka's AdminUtils.assignReplicasToBrokers and the checks on
user-given assignments. The pure functions live in kafkapy/common/replica_assignment.py (the
reassign-partitions tool proposes assignments with them too, and tools may not import controller/);
this module re-exports them under the names the Controller has always used.
Thread-safety: pure functions.
"""

from __future__ import annotations

from kafkapy.common.replica_assignment import (
    BrokerMetadata,
    RackAwareMode,
    apply_rack_aware_mode,
    assign_new_partitions,
    assign_replicas_to_brokers,
    rack_alternated_broker_list,
    validate_replica_assignment,
    validate_topic_assignment,
)

__all__ = [
    "BrokerMetadata",
    "RackAwareMode",
    "apply_rack_aware_mode",
    "assign_new_partitions",
    "assign_replicas_to_brokers",
    "rack_alternated_broker_list",
    "validate_replica_assignment",
    "validate_topic_assignment",
]
