"""What a fetch asks for and what it gets, per partition (Kafka's FetchParams and FetchPartitionData).

The Fetch handler builds a FetchParams; the ReplicaManager reads with it (at once, or again when a
DelayedFetch completes) and answers one FetchPartitionData per partition. Also the replica ids with a
meaning of their own (Kafka's FetchRequest.CONSUMER_REPLICA_ID / DEBUGGING_REPLICA_ID), shared with
ListOffsets. No byte format: records stay a FileRegion of the segment file.
Thread-safety: plain values; a FetchParams is not changed after the handler built it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkapy.cluster.partition import READ_COMMITTED, FetchIsolation
from kafkapy.common.file_region import FileRegion
from kafkapy.common.topic_partition import TopicPartition

CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2


@dataclass(slots=True)
class FetchPartitionInfo:
    fetch_offset: int
    partition_max_bytes: int
    log_start_offset: int = -1
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1


@dataclass(slots=True)
class FetchParams:
    replica_id: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    partitions: dict[TopicPartition, FetchPartitionInfo]
    hard_max_bytes_limit: bool = False
    replica_epoch: int = -1

    @property
    def is_from_follower(self) -> bool:
        return self.replica_id >= 0

    @property
    def isolation(self) -> FetchIsolation:
        if self.replica_id >= 0:
            return FetchIsolation.LOG_END
        return FetchIsolation.TXN_COMMITTED if self.isolation_level == READ_COMMITTED else FetchIsolation.HIGH_WATERMARK

    @property
    def fetch_only_from_leader(self) -> bool:
        return self.replica_id != DEBUGGING_REPLICA_ID


@dataclass(slots=True)
class FetchPartitionData:
    """One partition of a fetch answer (Kafka's FetchPartitionData)."""

    error: int
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: FileRegion | None = None
    diverging_epoch: tuple[int, int] | None = None
    current_leader: tuple[int, int] | None = None
    preferred_read_replica: int = -1
    # read_committed fetches: [(producer_id, first_offset)] of aborted transactions in range; else None
    aborted_transactions: list[tuple[int, int]] | None = None
