"""Producer partitioning: Kafka's murmur2 key hash and the sticky partitioner for null keys.

`murmur2(data)` is the exact algorithm of Java's `Utils.murmur2` (seed 0x9747b28c, m 0x5bd1e995,
r 24, little-endian 4-byte blocks, signed 32-bit result), so a kafkapy producer places a keyed
record on the same partition as the Java client and librdkafka's `murmur2_random` partitioner.
`partition = to_positive(murmur2(key)) % num_partitions` where `to_positive(h) = h & 0x7fffffff`.

Null keys (or `partitioner.ignore.keys=true`) use Kafka's built-in sticky partitioner (KIP-794
without the adaptive queue weighting): stay on one partition until `batch.size` bytes were
appended to it, then switch to another random available partition.

Thread-safety: `murmur2` is pure; `BuiltInPartitioner` guards its per-topic state with a lock.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK32 = 0xFFFFFFFF


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Java `Utils.murmur2`: the 32-bit MurmurHash2 of `data`, as a signed int."""
    data = bytes(data)
    length = len(data)
    h = (_SEED ^ length) & _MASK32
    n4 = length & ~3
    for i in range(0, n4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * _M) & _MASK32
        k ^= k >> 24
        k = (k * _M) & _MASK32
        h = (h * _M) & _MASK32
        h ^= k
    rem = length & 3
    if rem == 3:
        h ^= data[n4 + 2] << 16
    if rem >= 2:
        h ^= data[n4 + 1] << 8
    if rem >= 1:
        h ^= data[n4]
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(n: int) -> int:
    """Java `Utils.toPositive`: clear the sign bit (not abs, so MIN_VALUE maps to 0)."""
    return n & 0x7FFFFFFF


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """The partition Kafka's default partitioner picks for a non-null key."""
    return to_positive(murmur2(key)) % num_partitions


class _StickyState:
    __slots__ = ("partition", "produced_bytes")

    def __init__(self, partition: int) -> None:
        self.partition = partition
        self.produced_bytes = 0


class BuiltInPartitioner:
    """Kafka's default partitioning: murmur2 for keys, sticky batches for null keys."""

    def __init__(self, batch_size: int = 16384, ignore_keys: bool = False, rng: random.Random | None = None):
        self._batch_size = max(1, batch_size)
        self.ignore_keys = ignore_keys
        self._rng = rng or random.Random()
        self._sticky: dict[str, _StickyState] = {}
        self._lock = threading.Lock()

    def partition(
        self,
        topic: str,
        key: bytes | None,
        num_partitions: int,
        available_partitions: Sequence[int] | None = None,
    ) -> int:
        if num_partitions <= 0:
            raise ValueError(f"topic {topic} has no partitions")
        if key is not None and not self.ignore_keys:
            return partition_for_key(key, num_partitions)
        with self._lock:
            st = self._sticky.get(topic)
            if st is None or st.partition >= num_partitions:
                st = _StickyState(self._next_partition(-1, num_partitions, available_partitions))
                self._sticky[topic] = st
            return st.partition

    def update_partition_info(
        self,
        topic: str,
        partition: int,
        appended_bytes: int,
        num_partitions: int,
        available_partitions: Sequence[int] | None = None,
    ) -> None:
        """Count bytes appended to the sticky partition; switch after batch.size bytes."""
        with self._lock:
            st = self._sticky.get(topic)
            if st is None or st.partition != partition:
                return
            st.produced_bytes += appended_bytes
            if st.produced_bytes >= self._batch_size:
                self._sticky[topic] = _StickyState(
                    self._next_partition(partition, num_partitions, available_partitions)
                )

    def _next_partition(self, previous: int, num_partitions: int, available: Sequence[int] | None) -> int:
        candidates = list(available) if available else list(range(num_partitions))
        if len(candidates) > 1 and previous in candidates:
            candidates.remove(previous)
        return candidates[self._rng.randrange(len(candidates))]
