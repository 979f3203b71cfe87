"""A new leadership's leader-epoch-checkpoint entry is written later, never later than something relies on it.

Partition.make_leader assigns its epoch at the log end with flush=False; the Log writes the entry (fsynced)
before its first append, before an OffsetsForLeaderEpoch answer and at close, and the LogManager writes many
logs' deferred files in one batch (common/atomic_write_batch: two durability barriers per batch)."""

from __future__ import annotations

import os
import threading
import uuid

import pytest
from storage_helpers import START_MS, batch, with_offsets

from kafkapy.common import atomic_write_batch as awb
from kafkapy.common.atomic_write_batch import PendingReplace, atomic_write_batch
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.checkpoint_file import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    PARTITION_METADATA_FILE,
    LeaderEpochCheckpointFile,
    PartitionMetadataFile,
)
from kafkapy.storage.leader_epoch_file_cache import LeaderEpochFileCache
from kafkapy.storage.log import Log
from kafkapy.storage.log_config import LogConfig
from kafkapy.storage.log_manager import LogManager


def _on_disk(dir_: str) -> list[tuple[int, int]]:
    return LeaderEpochCheckpointFile(os.path.join(dir_, LEADER_EPOCH_CHECKPOINT_FILE)).read()


def _new_log(path: str) -> Log:
    return Log.open(path, LogConfig.from_props(), MockTime(START_MS), topic_id=uuid.uuid4())


def test_deferred_assign_is_written_before_the_first_leader_append(tmp_path) -> None:
    log = _new_log(str(tmp_path / "orders-0"))
    log.maybe_assign_epoch_start_offset(3, 0, flush=False)
    assert log.leader_epoch_cache.unflushed and log.leader_epoch_cache.epoch_entries() == [(3, 0)]
    assert _on_disk(log.dir) == []
    info = log.append_as_leader(batch(2), 3)
    assert (info.first_offset, log.log_end_offset) == (0, 2)
    assert _on_disk(log.dir) == [(3, 0)] and not log.leader_epoch_cache.unflushed
    log.close()


def test_deferred_assign_is_written_before_a_follower_append_an_epoch_answer_and_at_close(tmp_path) -> None:
    follower = _new_log(str(tmp_path / "orders-1"))
    follower.maybe_assign_epoch_start_offset(1, 0, flush=False)
    follower.append_as_follower(with_offsets(batch(3), 0, 1))
    assert _on_disk(follower.dir) == [(1, 0)]
    follower.close()

    answering = _new_log(str(tmp_path / "orders-2"))
    answering.maybe_assign_epoch_start_offset(4, 0, flush=False)
    assert _on_disk(answering.dir) == []
    # A follower may truncate on this answer: the entry behind it is durable first.
    assert answering.end_offset_for_epoch(4) == (4, 0)
    assert _on_disk(answering.dir) == [(4, 0)]
    answering.close()

    closing = _new_log(str(tmp_path / "orders-3"))
    closing.maybe_assign_epoch_start_offset(2, 0, flush=False)
    closing.close()
    assert _on_disk(closing.dir) == [(2, 0)]


@pytest.mark.parametrize("group", [True, False], ids=["syncfs", "fsync-each"])
def test_batch_writes_many_logs_and_marks_them_durable(tmp_path, monkeypatch, group: bool) -> None:
    if not group:
        monkeypatch.setattr(awb, "_syncfs", None)
    elif not awb.syncfs_available():
        pytest.skip("no syncfs(2) on this platform")
    logs = [_new_log(str(tmp_path / f"audit-{p}")) for p in range(30)]
    for p, lg in enumerate(logs):
        lg.maybe_assign_epoch_start_offset(p % 4, 0, flush=False)
    items = [item for lg in logs for item in lg.pending_replaces()]
    assert len(items) == 60  # partition.metadata and leader-epoch-checkpoint of each
    assert atomic_write_batch(items) == []
    for p, lg in enumerate(logs):
        assert _on_disk(lg.dir) == [(p % 4, 0)]
        assert PartitionMetadataFile(os.path.join(lg.dir, PARTITION_METADATA_FILE)).read() == lg.topic_id
        assert not lg.metadata_file_dirty and not lg.leader_epoch_cache.unflushed and lg.pending_replaces() == []
        assert not os.path.exists(os.path.join(lg.dir, LEADER_EPOCH_CHECKPOINT_FILE + ".tmp"))
        lg.close()


def test_batch_skips_what_changed_meanwhile_and_fails_a_removed_dir_alone(tmp_path) -> None:
    changed = LeaderEpochFileCache(LeaderEpochCheckpointFile(str(tmp_path / "a-epochs")))
    changed.assign(1, 0, flush=False)
    stale = changed.pending_replace()
    assert stale is not None
    changed.assign(2, 5, flush=False)  # a newer entry after the snapshot: the batch must not mark it durable
    os.mkdir(tmp_path / "gone")
    gone = LeaderEpochFileCache(LeaderEpochCheckpointFile(str(tmp_path / "gone" / "epochs")))
    gone.assign(1, 0, flush=False)
    gone_item = gone.pending_replace()
    os.rmdir(tmp_path / "gone")  # a deleted log's directory
    kept = LeaderEpochFileCache(LeaderEpochCheckpointFile(str(tmp_path / "b-epochs")))
    kept.assign(7, 0, flush=False)
    kept_item = kept.pending_replace()
    assert gone_item is not None and kept_item is not None

    failed = atomic_write_batch([stale, gone_item, kept_item])
    assert [(item.path, type(e)) for item, e in failed] == [(gone_item.path, FileNotFoundError)]
    assert changed.unflushed and not os.path.exists(tmp_path / "a-epochs")
    assert not kept.unflushed and LeaderEpochCheckpointFile(str(tmp_path / "b-epochs")).read() == [(7, 0)]
    changed.flush_unflushed()
    assert LeaderEpochCheckpointFile(str(tmp_path / "a-epochs")).read() == [(1, 0), (2, 5)]


def test_an_owner_write_between_the_phases_wins(tmp_path) -> None:
    """The owner flushes the same entry itself after the batch wrote its .tmp: the batch renames nothing."""
    path = str(tmp_path / "epochs")
    cache = LeaderEpochFileCache(LeaderEpochCheckpointFile(path))
    cache.assign(5, 0, flush=False)
    item = cache.pending_replace()
    assert item is not None
    lock = threading.Lock()
    flushed = threading.Event()

    def current() -> bool:
        if not flushed.is_set() and os.path.exists(path + ".tmp"):
            flushed.set()
            cache.flush_unflushed()  # runs between the batch's .tmp write and its rename
        return item.current()

    wrapped = PendingReplace(item.path, item.data, lock, current, item.durable)
    assert atomic_write_batch([wrapped]) == []
    assert flushed.is_set() and not cache.unflushed
    assert LeaderEpochCheckpointFile(path).read() == [(5, 0)] and not os.path.exists(path + ".tmp")


def test_log_manager_writes_deferred_entries_in_the_background_and_at_shutdown(tmp_path) -> None:
    mgr = LogManager([str(tmp_path / "d1")], {}, MockTime(START_MS))
    mgr.startup()
    topic_id = uuid.uuid4()
    logs = [mgr.get_or_create_log(TopicPartition("audit", p), topic_id=topic_id) for p in range(40)]
    for lg in logs[:30]:
        lg.maybe_assign_epoch_start_offset(0, 0, flush=False)
    mgr.schedule_deferred_writes(logs[:30])
    flusher = mgr._metadata_flusher
    assert flusher is not None
    flusher.submit(lambda: None).result(30)  # the single flush thread has run every earlier batch
    assert all(_on_disk(lg.dir) == [(0, 0)] and not lg.leader_epoch_cache.unflushed for lg in logs[:30])
    for lg in logs[30:]:  # not handed to the flusher: shutdown writes them in its one batch
        lg.maybe_assign_epoch_start_offset(1, 0, flush=False)
    mgr.shutdown()
    assert all(_on_disk(lg.dir) == [(1, 0)] for lg in logs[30:])
    assert all(PartitionMetadataFile(os.path.join(lg.dir, PARTITION_METADATA_FILE)).read() == topic_id
               for lg in logs)
