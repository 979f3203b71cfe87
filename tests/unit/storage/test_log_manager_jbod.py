"""LogManager JBOD: a future log in another dir filled by the ReplicaAlterLogDirsThread and swapped in (same
batches, offsets and epochs; `-future` dir gone; the old dir deleted), preferred dirs, unknown dirs, and a log dir
taken offline (its logs dropped, creation refused, nothing written to it, checkpoints of the others still written).
MockTime; the thread's `do_work` is driven by the test."""

from __future__ import annotations

import os
import threading

import pytest
from storage_helpers import START_MS, batch, with_offsets

from kafkapy.common.errors import LogDirNotFoundError, ReplicaNotAvailableError
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.replica_alter_log_dirs_thread import ReplicaAlterLogDirsThread
from kafkapy.storage.errors import KafkaStorageError
from kafkapy.storage.log import parse_log_dir_name
from kafkapy.storage.log_manager import LogManager, future_dir_name

TP, OTHER = TopicPartition("moves", 0), TopicPartition("stays", 0)
DEFAULTS = {"log.segment.delete.delay.ms": 0, "file.delete.delay.ms": 0}


class FakePartition:
    def __init__(self, log) -> None:
        self.log = log
        self.lock = threading.RLock()


def _manager(tmp_path):
    mgr = LogManager([str(tmp_path / "d1"), str(tmp_path / "d2")], DEFAULTS, MockTime(START_MS))
    mgr.startup()
    return mgr


def test_dir_names() -> None:
    name = future_dir_name(TopicPartition("a-b", 3))
    assert name.startswith("a-b-3.") and name.endswith("-future") and len(name) == len("a-b-3.") + 32 + 7
    assert parse_log_dir_name(name) == TopicPartition("a-b", 3)
    assert parse_log_dir_name("a-b-3") == TopicPartition("a-b", 3)


def test_move_copies_every_batch_and_swaps(tmp_path) -> None:
    mgr = _manager(tmp_path)
    log = mgr.get_or_create_log(TP)
    for epoch in (0, 0, 1, 1, 2):
        for _ in range(8):
            log.append_as_leader(batch(3), epoch)
    log.update_high_watermark(log.log_end_offset)
    source = os.path.dirname(log.dir)
    target = str(tmp_path / ("d2" if source.endswith("d1") else "d1"))
    partition = FakePartition(log)
    moved: list[TopicPartition] = []
    thread = ReplicaAlterLogDirsThread(0, lambda tp: partition, mgr, chunk_bytes=200, on_moved=moved.append)
    future = mgr.get_or_create_future_log(TP, target)
    assert future is not None and os.path.basename(future.dir).endswith("-future")
    assert mgr.get_or_create_future_log(TP, target) is future  # asked again: the same move
    rows = mgr.describe_log_dirs()
    assert [(tp, lag, fut) for tp, _, lag, fut in rows[target]] == [(TP, 120, True)]
    expected = log.read(0, 10**9).records.read_bytes()
    thread.add_partition = lambda tp: None  # no background thread: the test drives do_work
    rounds = 0
    while not moved:
        thread.do_work(TP)
        rounds += 1
        assert rounds < 200
        if rounds == 3:  # appends while the copy runs are copied too
            log.append_as_leader(batch(2), 2)
    assert rounds > 3
    assert partition.log is mgr.get_log(TP) and os.path.dirname(partition.log.dir) == target
    assert os.path.basename(partition.log.dir) == "moves-0"
    assert partition.log.read(0, 10**9).records.read_bytes()[:len(expected)] == expected
    assert partition.log.log_end_offset == 122 and partition.log.high_watermark == 120
    assert partition.log.latest_epoch() == 2
    assert mgr.future_log(TP) is None
    mgr.cleanup_logs()
    assert sorted(os.listdir(source)) == sorted(n for n in os.listdir(source) if not n.startswith("moves"))
    assert mgr.get_or_create_future_log(TP, target) is None  # already there
    mgr.shutdown()
    again = _manager(tmp_path)
    assert again.log_dir_of(TP) == target and again.get_log(TP).log_end_offset == 122
    again.shutdown()


def test_unknown_dir_preferred_dir_and_no_replica(tmp_path) -> None:
    mgr = _manager(tmp_path)
    with pytest.raises(LogDirNotFoundError, match="is not found in the config"):
        mgr.check_log_dir_online("/nowhere")
    with pytest.raises(ReplicaNotAvailableError):
        mgr.get_or_create_future_log(TP, str(tmp_path / "d2"))
    mgr.maybe_update_preferred_log_dir(TP, str(tmp_path / "d2"))
    assert mgr.log_dir_of(TP) is None
    mgr.get_or_create_log(TP)
    assert mgr.log_dir_of(TP) == str(tmp_path / "d2")  # not d1, the emptier first dir
    mgr.shutdown()


def test_offline_dir(tmp_path) -> None:
    mgr = _manager(tmp_path)
    reported: list[str] = []
    mgr.on_log_dir_failure = reported.append
    a, b = mgr.get_or_create_log(TP), mgr.get_or_create_log(OTHER)
    a.append_as_leader(batch(2), 0)
    failing = os.path.dirname(a.dir)
    mgr.log_dir_failed(failing, OSError(28, "No space left on device"))
    mgr.log_dir_failed(failing, OSError(28, "No space left on device"))  # once
    assert reported == [failing] and mgr.offline_dirs == {failing}
    assert mgr.get_log(TP) is None and mgr.is_in_offline_dir(TP) and not mgr.is_in_offline_dir(OTHER)
    with pytest.raises(KafkaStorageError, match="is offline"):
        mgr.get_or_create_log(TP)
    with pytest.raises(KafkaStorageError, match="is offline"):
        mgr.check_log_dir_online(failing)
    assert mgr.describe_log_dirs()[failing] == []
    new = mgr.get_or_create_log(TopicPartition("fresh", 0))
    assert os.path.dirname(new.dir) != failing  # new logs go to the online dir
    before = os.listdir(failing)
    mgr.checkpoint_all()
    mgr.checkpoint_high_watermarks({TP: 2, OTHER: 0})
    mgr.shutdown()
    assert os.listdir(failing) == before  # nothing written to the offline dir, not even the clean-shutdown marker
    assert b.is_closed


def test_a_move_interrupted_by_a_stop_resumes(tmp_path) -> None:
    mgr = _manager(tmp_path)
    log = mgr.get_or_create_log(TP)
    for _ in range(20):
        log.append_as_leader(batch(3), 0)
    target = str(tmp_path / ("d2" if os.path.dirname(log.dir).endswith("d1") else "d1"))
    partition = FakePartition(log)
    thread = ReplicaAlterLogDirsThread(0, lambda tp: partition, mgr, chunk_bytes=200)
    mgr.get_or_create_future_log(TP, target)
    thread.do_work(TP)
    copied = mgr.future_log(TP).log_end_offset
    assert 0 < copied < 60
    mgr.shutdown()
    again = _manager(tmp_path)
    future = again.future_log(TP)
    assert future is not None and future.log_end_offset == copied and os.path.dirname(future.dir) == target
    partition = FakePartition(again.get_log(TP))
    moved: list[TopicPartition] = []
    thread = ReplicaAlterLogDirsThread(0, lambda tp: partition, again, chunk_bytes=200, on_moved=moved.append)
    for _ in range(100):
        if moved:
            break
        thread.do_work(TP)
    assert moved == [TP] and again.log_dir_of(TP) == target and again.get_log(TP).log_end_offset == 60
    again.shutdown()


def test_future_log_follows_a_truncated_current_log(tmp_path) -> None:
    mgr = _manager(tmp_path)
    log = mgr.get_or_create_log(TP)
    for _ in range(10):
        log.append_as_leader(batch(3), 0)
    target = str(tmp_path / ("d2" if os.path.dirname(log.dir).endswith("d1") else "d1"))
    partition = FakePartition(log)
    moved: list[TopicPartition] = []
    thread = ReplicaAlterLogDirsThread(0, lambda tp: partition, mgr, chunk_bytes=10**6, on_moved=moved.append)
    future = mgr.get_or_create_future_log(TP, target)
    thread._copy_chunk(log, future)
    assert future.log_end_offset == 30
    log.truncate_to(15)  # a follower truncated after a leader change, then took the new leader's batches
    for _ in range(10):
        log.append_as_follower(with_offsets(batch(3, value_size=7), log.log_end_offset, 1))
    expected = log.read(0, 10**9).records.read_bytes()
    for _ in range(10):
        if moved:
            break
        thread.do_work(TP)
    assert moved == [TP]
    assert mgr.get_log(TP).read(0, 10**9).records.read_bytes() == expected
    assert mgr.get_log(TP).end_offset_for_epoch(0) == (0, 15)
    mgr.shutdown()


def test_an_io_error_in_the_future_dir_takes_that_dir_offline(tmp_path) -> None:
    mgr = _manager(tmp_path)
    log = mgr.get_or_create_log(TP)
    log.append_as_leader(batch(3), 0)
    target = str(tmp_path / ("d2" if os.path.dirname(log.dir).endswith("d1") else "d1"))
    partition = FakePartition(log)
    thread = ReplicaAlterLogDirsThread(0, lambda tp: partition, mgr)
    future = mgr.get_or_create_future_log(TP, target)
    thread._on_io_error(TP, OSError(5, "Input/output error", os.path.join(future.dir, "00000000000000000000.log")))
    assert mgr.offline_dirs == {target} and mgr.future_log(TP) is None
    assert mgr.get_log(TP) is log  # the current replica, in the healthy dir, is untouched
    thread._on_io_error(TP, OSError(5, "Input/output error"))  # no file name: the move is just abandoned
    assert mgr.offline_dirs == {target}
    mgr.shutdown()
