"""ReplicaManager over a real LogManager: a LeaderAndIsr making 40 new leaders defers their leader-epoch-checkpoint
entries (make_leader assigns with flush=False); an OffsetsForLeaderEpoch answer is given only after its partition's
entry is on disk, and shutdown writes the rest."""

from __future__ import annotations

import os
import uuid

from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.replica_manager import ReplicaManager
from kafkapy.storage.checkpoint_file import LEADER_EPOCH_CHECKPOINT_FILE, LeaderEpochCheckpointFile
from kafkapy.storage.log_manager import LogManager

TOPIC_ID = uuid.UUID(int=0x5678)


def test_new_leaders_epoch_entries_are_durable_before_offsets_for_leader_epoch(tmp_path, monkeypatch) -> None:
    config = KafkaConfig({"log.dirs": str(tmp_path), "listeners": "PLAINTEXT://127.0.0.1:0"})
    lm = LogManager([str(tmp_path)], {}, MockTime(), topic_configs=lambda topic: {})
    lm.startup()
    rm = ReplicaManager(config, MockTime(), lm, MetadataCache(0), 0, reaper_enabled=False)
    rm.startup()
    # The background batch is what this test checks it does not need: keep it from running.
    monkeypatch.setattr(lm, "schedule_deferred_writes", lambda logs: None)
    try:
        tps = [TopicPartition("fresh", p) for p in range(40)]
        states = [LeaderAndIsrPartitionState(tp.topic, tp.partition, TOPIC_ID, 1, 0, 3, (0, 1), 0, (0, 1))
                  for tp in tps]
        assert rm.become_leader_or_follower(0, 1, states) == dict.fromkeys(tps, 0)
        logs = [rm.get_partition(tp).log for tp in tps]
        assert all(lg is not None and lg.leader_epoch_cache.unflushed for lg in logs)
        assert all(not os.path.exists(os.path.join(lg.dir, LEADER_EPOCH_CHECKPOINT_FILE)) for lg in logs if lg)

        # Answered only from an entry already on disk: the answer writes it first.
        assert rm.last_offset_for_leader_epoch(tps[35], 3, 3) == (0, 3, 0)
        for i, lg in enumerate(logs):
            assert lg is not None
            on_disk = LeaderEpochCheckpointFile(os.path.join(lg.dir, LEADER_EPOCH_CHECKPOINT_FILE)).read()
            assert (on_disk, lg.leader_epoch_cache.unflushed) == (([(3, 0)], False) if i == 35 else ([], True))
    finally:
        rm.shutdown()
        lm.shutdown()
    # Shutdown wrote what was still deferred.
    assert all(LeaderEpochCheckpointFile(os.path.join(lg.dir, LEADER_EPOCH_CHECKPOINT_FILE)).read() == [(3, 0)]
               for lg in logs if lg is not None)
