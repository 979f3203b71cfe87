"""LogManager: startup/shutdown, restart keeps offsets, unclean recovery, checkpoints, deletes, describe."""

from __future__ import annotations

import os
import uuid

import pytest
from storage_helpers import START_MS, batch

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.checkpoint_file import OffsetCheckpointFile, PartitionMetadataFile, uuid_to_kafka_string
from kafkapy.storage.errors import InconsistentClusterIdError, InconsistentTopicIdError, KafkaStorageError
from kafkapy.storage.log_manager import LogManager
from kafkapy.storage.meta_properties import read_meta_properties

TP0, TP1, TP2 = TopicPartition("orders", 0), TopicPartition("orders", 1), TopicPartition("audit", 0)
DEFAULTS = {"log.segment.delete.delay.ms": 0}


def _manager(tmp_path, time=None, dirs=("d1", "d2"), defaults=DEFAULTS, **kw):
    mgr = LogManager([str(tmp_path / d) for d in dirs], defaults, time or MockTime(START_MS), **kw)
    mgr.startup()
    return mgr


def test_restart_keeps_offsets_and_writes_checkpoints(tmp_path):
    mgr = _manager(tmp_path)
    topic_id = uuid.uuid4()
    for tp in (TP0, TP1, TP2):
        log = mgr.get_or_create_log(tp, topic_id=topic_id if tp.topic == "orders" else None)
        for _ in range(3):
            log.append_as_leader(batch(2), 0)
    # partitions spread over the dirs with the fewest logs
    assert {os.path.basename(mgr.log_dir_of(tp)) for tp in (TP0, TP1)} == {"d1", "d2"}
    mgr.get_log(TP0).update_high_watermark(6)
    mgr.get_log(TP0).maybe_increment_log_start_offset(2)
    mgr.checkpoint_high_watermarks({TP0: 6, TP1: 4, TP2: 6})
    mgr.shutdown()
    for d in (tmp_path / "d1", tmp_path / "d2"):
        assert (d / ".kafka_cleanshutdown").exists()
        assert (d / ".lock").exists()
    again = _manager(tmp_path)
    assert {tp: again.get_log(tp).log_end_offset for tp in (TP0, TP1, TP2)} == {TP0: 6, TP1: 6, TP2: 6}
    assert again.get_log(TP0).log_start_offset == 2
    assert again.get_log(TP0).recovery_point == 6
    assert again.get_log(TP0).topic_id == topic_id and again.get_log(TP2).topic_id is None
    assert again.read_high_watermarks() == {TP0: 6, TP1: 4, TP2: 6}
    assert not (tmp_path / "d1" / ".kafka_cleanshutdown").exists()  # removed at startup
    log_dir = os.path.dirname(again.get_log(TP0).dir)
    assert OffsetCheckpointFile(os.path.join(log_dir, "log-start-offset-checkpoint")).read() == {TP0: 2}
    assert OffsetCheckpointFile(os.path.join(log_dir, "recovery-point-offset-checkpoint")).read()[TP0] == 6
    meta = PartitionMetadataFile(os.path.join(again.get_log(TP0).dir, "partition.metadata"))
    assert meta.read() == topic_id
    with pytest.raises(InconsistentTopicIdError):
        again.get_or_create_log(TP0, topic_id=uuid.uuid4())
    again.shutdown()


def test_unclean_restart_recovers_past_recovery_point(tmp_path):
    time = MockTime(START_MS)
    mgr = _manager(tmp_path, time, dirs=("d1",))
    log = mgr.get_or_create_log(TP0)
    for _ in range(4):
        log.append_as_leader(batch(2), 0)
    log.flush()
    mgr.checkpoint_all()  # recovery point 8
    for _ in range(2):
        log.append_as_leader(batch(2), 0)
    good = open(log.active_segment.log.path, "rb").read()
    with open(log.active_segment.log.path, "ab") as f:
        f.write(good[:40])  # a torn batch written just before the crash
    # crash: no shutdown, so no clean-shutdown marker; the lock is per process, so we can reopen
    again = _manager(tmp_path, time, dirs=("d1",))
    assert not again.had_clean_shutdown[str(tmp_path / "d1")]
    recovered = again.get_log(TP0)
    assert recovered.log_end_offset == 12
    assert open(recovered.active_segment.log.path, "rb").read() == good
    assert recovered.recovery_point == 8
    assert recovered.append_as_leader(batch(1), 1).first_offset == 12
    again.shutdown()


def test_async_delete_and_pending_delete_dirs(tmp_path):
    time = MockTime(START_MS)
    mgr = _manager(tmp_path, time, dirs=("d1",), defaults={"log.segment.delete.delay.ms": 1000})
    log = mgr.get_or_create_log(TP0)
    log.append_as_leader(batch(1), 0)
    region = log.read(0, 1000).records
    assert mgr.async_delete(TP0) is log
    assert mgr.get_log(TP0) is None
    names = os.listdir(tmp_path / "d1")
    deleted = [n for n in names if n.endswith("-delete")]
    assert len(deleted) == 1 and deleted[0].startswith("orders-0.") and len(deleted[0]) == len("orders-0.") + 32 + 7
    assert region.read_bytes()[:8] == b"\x00" * 8  # an in-flight read still works
    mgr.cleanup_logs(time.milliseconds() + 999)
    assert deleted[0] in os.listdir(tmp_path / "d1")
    mgr.cleanup_logs(time.milliseconds() + 1000)
    assert deleted[0] not in os.listdir(tmp_path / "d1")
    # a -delete dir left by a crash is removed at startup; -future / -stray are left alone
    for name in ("audit-0.0123456789abcdef0123456789abcdef-delete", "audit-1.abc-future", "audit-2.abc-stray"):
        (tmp_path / "d1" / name).mkdir()
    mgr.shutdown()
    again = _manager(tmp_path, time, dirs=("d1",))
    assert sorted(n for n in os.listdir(tmp_path / "d1") if n.startswith("audit")) == [
        "audit-1.abc-future", "audit-2.abc-stray"]
    assert again.all_logs() == []
    again.shutdown()


def test_cleanup_logs_applies_retention_and_flush_dirty_logs(tmp_path):
    time = MockTime(START_MS)
    mgr = _manager(tmp_path, time, dirs=("d1",), defaults={"log.retention.ms": 1000, "log.segment.delete.delay.ms": 0,
                                                            "log.flush.interval.ms": 500},
                   topic_configs=lambda topic: {"internal.segment.bytes": 200} if topic == "orders" else {})
    log = mgr.get_or_create_log(TP0)
    for _ in range(3):
        log.append_as_leader(batch(1, START_MS, value_size=80), 0)
    assert log.num_segments == 3
    mgr.flush_dirty_logs()
    assert log.recovery_point == 2  # rolled segments flushed
    time.advance(500)
    mgr.flush_dirty_logs()
    assert log.recovery_point == 3  # flush.ms passed
    time.advance(1000)
    assert mgr.cleanup_logs() == 3
    assert log.log_start_offset == 3 and log.num_segments == 1
    mgr.shutdown()


def test_describe_log_dirs_meta_properties_and_locking(tmp_path):
    mgr = _manager(tmp_path)
    mgr.get_or_create_log(TP0).append_as_leader(batch(1), 0)
    mgr.get_or_create_log(TP1)
    described = mgr.describe_log_dirs()
    entries = [e for dir_entries in described.values() for e in dir_entries]
    sizes = {tp: size for tp, size, lag, future in entries}
    assert sizes[TP1] == 0 and sizes[TP0] == len(batch(1))
    assert all(lag == 0 and not future for _, _, lag, future in entries)
    total, usable = LogManager.log_dir_usage(str(tmp_path / "d1"))
    assert total >= usable > 0

    metas = mgr.ensure_meta_properties("q1Sh-9_ISia_zwGINzRvyQ", 5)
    d1 = str(tmp_path / "d1")
    assert read_meta_properties(d1) == metas[d1] and metas[d1].version == 1 and metas[d1].node_id == 5
    assert len({m.directory_id for m in metas.values()}) == 2
    assert mgr.ensure_meta_properties("q1Sh-9_ISia_zwGINzRvyQ", 5) == metas  # stable across calls
    with pytest.raises(InconsistentClusterIdError):
        mgr.ensure_meta_properties(uuid_to_kafka_string(uuid.uuid4()), 5)
    with pytest.raises(KafkaStorageError):
        mgr.ensure_meta_properties("q1Sh-9_ISia_zwGINzRvyQ", 6)
    mgr.shutdown()
