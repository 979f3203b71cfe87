"""DelayedFetch: a fetch waiting for fetch.min.bytes of new data, or for max_wait_ms to elapse.

Kafka's DelayedFetch rules, per partition it watches: complete at once if the partition is gone, no
longer led by this broker (when the fetch must go to the leader), its leader epoch moved away from the
one the fetcher named, or its log end fell below the fetch offset (truncation); otherwise count the
bytes between the fetch offset and the end offset (the HW for consumers, the log end for followers),
capped by partition_max_bytes, and complete when they reach min_bytes; a follower's partition held back by
the leader's replication throttle counts nothing (it would be answered empty). Bytes are counted from batch
headers only (the segment's index and batch sizes); records are never read. On completion (or expiry)
the fetch is read again from the logs and answered. No byte format of its own.
A fetch of an incremental fetch session (KIP-227) is watched under the session's one key instead of one key
per partition: try_complete looks only at the session's changes since it last looked (appends, moves; each
once, the bytes ready kept per partition), and the answer re-reads the request's partitions plus the touched ones (`reread`), so
its cost follows what changed, not the session's size. With an `executor`, the read and the answer run
there, not on the thread whose append woke the fetch (a producer's request thread).
It reaches the partitions through a `FetchReader` (the ReplicaManager is one) passed in, so this module
never imports the ReplicaManager.
Thread-safety: try_complete runs under the operation's lock (purgatory contract); on_complete runs once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kafkapy.cluster.partition import FetchIsolation
from kafkapy.common.errors import KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.fetch_params import FetchParams, FetchPartitionData, FetchPartitionInfo
from kafkapy.server.purgatory.delayed_operation import DelayedOperation

if TYPE_CHECKING:
    from kafkapy.cluster.partition import Partition
    from kafkapy.server.fetch_session import FetchSession

log = logging.getLogger("kafka.server.DelayedFetch")


class FetchReader(Protocol):
    """What a DelayedFetch needs of the ReplicaManager."""

    def get_partition(self, tp: TopicPartition) -> Partition | None: ...

    def read_from_local_log(self, params: FetchParams
                            ) -> tuple[dict[TopicPartition, FetchPartitionData], int, bool]: ...

    def should_leader_throttle(self, partition: Partition, replica_id: int) -> bool: ...


@dataclass(slots=True)
class FetchPartitionStatus:
    start_offset: int
    fetch_info: FetchPartitionInfo


class DelayedFetch(DelayedOperation):
    def __init__(self, delay_ms: int, params: FetchParams, statuses: dict[TopicPartition, FetchPartitionStatus],
                 replica_manager: FetchReader,
                 callback: Callable[[dict[TopicPartition, FetchPartitionData]], None], *,
                 session: FetchSession | None = None,
                 reread: Callable[[FetchParams], FetchParams] | None = None,
                 executor: Callable[[Callable[[], None]], object] | None = None) -> None:
        super().__init__(delay_ms)
        self.params = params
        self.statuses = statuses
        self.replica_manager = replica_manager
        self.callback = callback
        self.session = session
        self.reread = reread
        self.executor = executor
        self._ready: dict[TopicPartition, int] = {}  # session fetches: bytes ready per changed partition
        self._ready_total = 0

    def try_complete(self) -> bool:
        accumulated = 0
        session = self.session
        if session is None:
            for tp, status in self.statuses.items():
                got = self._ready_bytes(tp, status.start_offset, status.fetch_info, accumulated)
                if got is None:
                    return self.force_complete()
                accumulated += got
                if accumulated >= self.params.min_bytes:
                    return self.force_complete()
            return False
        cached = session.partitions
        ready = self._ready
        for tp in session.take_recent():
            entry = cached.get(tp)
            if entry is None:
                continue
            got = self._ready_bytes(tp, entry.fetch_offset, entry.info(), self._ready_total - ready.get(tp, 0))
            if got is None:
                return self.force_complete()
            self._ready_total += got - ready.get(tp, 0)
            ready[tp] = got
            if self._ready_total >= self.params.min_bytes:
                return self.force_complete()
        return False

    def _ready_bytes(self, tp: TopicPartition, fetch_offset: int, info: FetchPartitionInfo,
                     accumulated: int) -> int | None:
        """Bytes ready for this partition, or None when the fetch must be answered now."""
        params = self.params
        rm = self.replica_manager
        partition = rm.get_partition(tp)
        if partition is None:
            return None
        local_log = partition.log
        if local_log is None or (params.fetch_only_from_leader and not partition.is_leader):
            return None
        if 0 <= info.current_leader_epoch != partition.leader_epoch:
            return None
        if params.is_from_follower:
            end = partition.log_end_offset
        elif params.isolation == FetchIsolation.TXN_COMMITTED:
            end = partition.last_stable_offset
        else:
            end = partition.high_watermark
        if end <= fetch_offset:
            if fetch_offset > partition.log_end_offset:
                return None  # the log was truncated below the fetch offset
            return 0  # nothing new yet (or a new leader's HW still catching up)
        if params.is_from_follower and rm.should_leader_throttle(partition, params.replica_id):
            return 0  # a throttled follower gets nothing now: its bytes must not end the wait (Kafka's rule)
        if params.min_bytes - accumulated <= 1:
            return None
        try:
            data = local_log.read(fetch_offset, info.partition_max_bytes, end, True)
        except KafkaError:
            return None
        if data.records is None:
            return 0
        return min(data.records.length, info.partition_max_bytes)

    def on_complete(self) -> None:
        if self.executor is None:
            self._answer()
            return
        try:
            self.executor(self._answer)
        except RuntimeError:  # the executor is shut down: answer here
            self._answer()

    def _answer(self) -> None:
        try:
            params = self.reread(self.params) if self.reread is not None else self.params
            results, _bytes, _urgent = self.replica_manager.read_from_local_log(params)
        except Exception:
            log.exception("Could not complete %r", self)
            return
        self.callback(results)

    def __repr__(self) -> str:
        if self.session is not None:
            return f"DelayedFetch(delay_ms={self.delay_ms}, session={self.session.id})"
        return f"DelayedFetch(delay_ms={self.delay_ms}, partitions={[str(tp) for tp in self.statuses]})"
