"""partition.metadata of a new log is written lazily, as Kafka's PartitionMetadataFile.record/maybeFlush: creating
the log writes nothing (no fsync on the creation path); the first append (leader or follower), close, or the
LogManager's background `flush-metadata-file` thread writes it, before any data reaches the log."""

from __future__ import annotations

import os
import uuid

from storage_helpers import START_MS, batch, with_offsets

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.checkpoint_file import PARTITION_METADATA_FILE, PartitionMetadataFile
from kafkapy.storage.log import Log
from kafkapy.storage.log_config import LogConfig
from kafkapy.storage.log_manager import LogManager


def _metadata(dir_: str) -> PartitionMetadataFile:
    return PartitionMetadataFile(os.path.join(dir_, PARTITION_METADATA_FILE))


def test_first_leader_append_writes_it_before_the_data(tmp_path) -> None:
    topic_id = uuid.uuid4()
    log = Log.open(str(tmp_path / "orders-0"), LogConfig.from_props(), MockTime(START_MS), topic_id=topic_id)
    assert not _metadata(log.dir).exists() and log.metadata_file_dirty
    info = log.append_as_leader(batch(2), 0)
    assert info.first_offset == 0 and log.log_end_offset == 2
    assert _metadata(log.dir).read() == topic_id and not log.metadata_file_dirty
    log.close()


def test_first_follower_append_and_close_write_it(tmp_path) -> None:
    ids = uuid.uuid4(), uuid.uuid4()
    follower = Log.open(str(tmp_path / "orders-1"), LogConfig.from_props(), MockTime(START_MS), topic_id=ids[0])
    follower.append_as_follower(with_offsets(batch(3), 0, 0))
    assert _metadata(follower.dir).read() == ids[0] and follower.log_end_offset == 3
    follower.close()
    idle = Log.open(str(tmp_path / "orders-2"), LogConfig.from_props(), MockTime(START_MS), topic_id=ids[1])
    assert not _metadata(idle.dir).exists()
    idle.close()
    assert _metadata(idle.dir).read() == ids[1]
    # Reopened without a topic id, the log reads it back from the file.
    again = Log.open(idle.dir, LogConfig.from_props(), MockTime(START_MS))
    assert again.topic_id == ids[1] and not again.metadata_file_dirty
    again.close()


def test_log_manager_writes_it_in_the_background_and_a_deleted_log_never(tmp_path) -> None:
    mgr = LogManager([str(tmp_path / "d1")], {"log.segment.delete.delay.ms": 0}, MockTime(START_MS))
    mgr.startup()
    topic_id = uuid.uuid4()
    logs = [mgr.get_or_create_log(TopicPartition("audit", p), topic_id=topic_id) for p in range(20)]
    flusher = mgr._metadata_flusher
    assert flusher is not None
    flusher.submit(lambda: None).result(10)  # the single flush thread has run every earlier task
    assert all(_metadata(lg.dir).read() == topic_id and not lg.metadata_file_dirty for lg in logs)
    mgr.shutdown()
    dropped = Log.open(str(tmp_path / "gone-0"), LogConfig.from_props(), MockTime(START_MS), topic_id=topic_id)
    dropped.delete()
    dropped.maybe_flush_metadata_file()
    assert not os.path.exists(dropped.dir)
