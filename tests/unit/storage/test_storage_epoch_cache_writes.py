"""leader-epoch-checkpoint writes: a load's truncation is not written (Kafka's async flush), and the cache
skips rewriting what the file already durably holds (a restarted leader re-assigning its epoch)."""

from __future__ import annotations

import os

from kafkapy.storage.checkpoint_file import LeaderEpochCheckpointFile
from kafkapy.storage.leader_epoch_file_cache import LeaderEpochFileCache


def test_reassigning_what_is_on_disk_writes_nothing(tmp_path) -> None:
    path = str(tmp_path / "leader-epoch-checkpoint")
    cache = LeaderEpochFileCache(LeaderEpochCheckpointFile(path))
    assert cache.assign(0, 0)
    written = os.stat(path).st_ino
    assert LeaderEpochCheckpointFile(path).read() == [(0, 0)]

    # A restart of the empty log: the load truncates from the end (0) without writing...
    again = LeaderEpochFileCache(LeaderEpochCheckpointFile(path))
    again.truncate_from_end(0, sync=False)
    assert again.epoch_entries() == [] and LeaderEpochCheckpointFile(path).read() == [(0, 0)]
    # ...and leading at epoch 0 again finds the file already right: no rewrite (same inode, atomic_write
    # would have renamed a new file over it).
    assert again.assign(0, 0)
    assert again.epoch_entries() == [(0, 0)] and os.stat(path).st_ino == written
    # A new epoch is written.
    assert again.assign(1, 5)
    assert LeaderEpochCheckpointFile(path).read() == [(0, 0), (1, 5)] and os.stat(path).st_ino != written
    # A synchronous truncation is written at once.
    again.truncate_from_end(5)
    assert LeaderEpochCheckpointFile(path).read() == [(0, 0)]
