"""Progress arithmetic of reassign-partitions' live view: per-partition moved/total from replica sizes, rate
and ETA from successive samples."""

from __future__ import annotations

from dataclasses import dataclass

from kafkapy.client.admin_types import LogDirDescription, PartitionReassignment, ReplicaInfo
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools.reassign_progress import PartitionProgress, ProgressTracker, human_bytes, human_eta, sample

TP = TopicPartition("t", 0)


@dataclass
class LogDirsAdmin:  # the one admin call sample() makes, answering fixed replica sizes
    sizes: dict[int, int]

    def describe_log_dirs(self, brokers, topics):
        return {b: {"/d": LogDirDescription("/d", None, {TP: ReplicaInfo(self.sizes[b], 0, False)})}
                for b in brokers if b in self.sizes}


def test_sample_counts_bytes_on_adding_replicas_against_the_source() -> None:
    ra = {TP: PartitionReassignment([0, 1, 2], adding_replicas=[1, 2], removing_replicas=[0])}
    assert sample(LogDirsAdmin({0: 1000, 1: 600, 2: 100}), ra) == {TP: PartitionProgress(700, 2000)}
    assert sample(LogDirsAdmin({0: 1000, 1: 1000, 2: 1000}), ra)[TP].fraction == 1.0


def test_rate_and_eta() -> None:
    tracker = ProgressTracker()
    tracker.update(0.0, {TP: PartitionProgress(0, 1000)})
    tracker.update(1.0, {TP: PartitionProgress(100, 1000)})
    assert tracker.rate == 100.0 and tracker.eta_s({TP: PartitionProgress(100, 1000)}) == 9.0
    tracker.update(2.0, {TP: PartitionProgress(400, 1000)})
    assert tracker.rate == 200.0  # half the newest interval (300 B/s), half the previous rate
    assert tracker.eta_s({TP: PartitionProgress(1000, 1000)}) == 0.0
    assert ProgressTracker().eta_s({TP: PartitionProgress(0, 10)}) is None
    assert (human_bytes(512), human_bytes(3 * 1024 * 1024), human_eta(None), human_eta(3725)) == \
        ("512 B", "3.0 MiB", "--:--", "1:02:05")
