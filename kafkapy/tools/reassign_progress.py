"""reassign-partitions' live progress (kafkapy's addition; Kafka's tool has none): bytes copied to the
adding replicas of each moving partition, the copy rate and an ETA.

A sample asks DescribeLogDirs of the brokers involved for the partition's replica sizes: the source size is
the largest size among the replicas that stay or leave (the leader's log), and each adding replica's moved
bytes are its own size; a partition's total is source size x adding replicas. The tracker turns successive
samples into a rate (bytes/s over the last interval, smoothed) and ETA = remaining / rate.
Thread-safety: one ProgressTracker per thread; sample() does blocking admin calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafkapy.client.admin_api import ReplicaLogDirsApi

SMOOTHING = 0.5  # weight of the newest interval in the rate (an exponential moving average)


@dataclass(frozen=True)
class PartitionProgress:
    moved: int
    total: int

    @property
    def fraction(self) -> float:
        return 1.0 if self.total <= 0 else min(1.0, self.moved / self.total)


def sample(admin: ReplicaLogDirsApi, reassignments: Mapping[TopicPartition, Any]) -> dict[TopicPartition, PartitionProgress]:
    """Progress of each ongoing reassignment (PartitionReassignment: replicas, adding_replicas, ...)."""
    brokers = sorted({b for r in reassignments.values() for b in r.replicas})
    topics: dict[str, list[int]] = {}
    for tp in reassignments:
        topics.setdefault(tp.topic, []).append(tp.partition)
    sizes: dict[tuple[TopicPartition, int], int] = {}
    if brokers:
        for broker, dirs in admin.describe_log_dirs(brokers, topics).items():
            for d in dirs.values():
                for tp, info in d.replicas.items():
                    if not info.is_future:
                        sizes[(tp, broker)] = max(sizes.get((tp, broker), 0), info.size)
    out = {}
    for tp, r in reassignments.items():
        adding = list(r.adding_replicas)
        staying = [b for b in r.replicas if b not in adding]
        source = max((sizes.get((tp, b), 0) for b in staying), default=0)
        moved = sum(min(sizes.get((tp, b), 0), source) for b in adding)
        out[tp] = PartitionProgress(moved, source * len(adding))
    return out


def completed(last: PartitionProgress | None, final_size: int | None) -> PartitionProgress:
    """A partition whose reassignment just finished, shown at 100%: its last sampled total (what was copied), or,
    when it finished before any sample, its replica's size now; 0 B when neither is known."""
    total = last.total if last is not None and last.total > 0 else (final_size or 0)
    return PartitionProgress(total, total)


def replica_sizes(admin: ReplicaLogDirsApi, replicas: Mapping[TopicPartition, list[int]]) -> dict[TopicPartition, int]:
    """The largest size of each partition's (non-future) replicas on the given brokers."""
    brokers = sorted({b for bs in replicas.values() for b in bs})
    topics: dict[str, list[int]] = {}
    for tp in replicas:
        topics.setdefault(tp.topic, []).append(tp.partition)
    sizes: dict[TopicPartition, int] = {}
    if brokers:
        for dirs in admin.describe_log_dirs(brokers, topics).values():
            for d in dirs.values():
                for tp, info in d.replicas.items():
                    if tp in replicas and not info.is_future:
                        sizes[tp] = max(sizes.get(tp, 0), info.size)
    return sizes


@dataclass
class ProgressTracker:
    """Rate and ETA from successive samples (times in seconds)."""

    rate: float = 0.0
    _last: tuple[float, int] | None = None
    history: list[tuple[float, int]] = field(default_factory=list)

    def update(self, now_s: float, progress: Mapping[TopicPartition, PartitionProgress]) -> None:
        moved = sum(p.moved for p in progress.values())
        if self._last is not None and now_s > self._last[0]:
            interval = max(0, moved - self._last[1]) / (now_s - self._last[0])
            first = len(self.history) < 2  # the first interval sets the rate outright
            self.rate = interval if first else SMOOTHING * interval + (1 - SMOOTHING) * self.rate
        self._last = (now_s, moved)
        self.history.append((now_s, moved))

    def eta_s(self, progress: Mapping[TopicPartition, PartitionProgress]) -> float | None:
        remaining = sum(max(0, p.total - p.moved) for p in progress.values())
        if remaining == 0:
            return 0.0
        return None if self.rate <= 0 else remaining / self.rate


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # unreachable


def human_eta(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(seconds + 0.5)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
