"""LogManager start-up loads a dir's logs on num.recovery.threads.per.data.dir threads (Kafka's recovery
thread pool per data dir): the same logs, offsets, start offsets, topic ids and per-topic configs as a load on
one thread, after a clean and after an unclean stop."""

from __future__ import annotations

import threading
import uuid

import pytest
from storage_helpers import START_MS, batch

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage import log_manager as log_manager_module
from kafkapy.storage.log_manager import LogManager

TOPIC_IDS = {"orders": uuid.uuid4(), "audit": uuid.uuid4()}
PARTITIONS = [TopicPartition(t, p) for t in TOPIC_IDS for p in range(12)]


def _configs(topic: str) -> dict[str, object]:
    return {"segment.bytes": 1 << 20} if topic == "audit" else {}


def _fill(root, defaults) -> None:
    mgr = LogManager([str(root / "d1"), str(root / "d2")], defaults, MockTime(START_MS), _configs)
    mgr.startup()
    for i, tp in enumerate(PARTITIONS):
        log = mgr.get_or_create_log(tp, topic_id=TOPIC_IDS[tp.topic])
        for _ in range(i % 4 + 1):
            log.append_as_leader(batch(3), 0)
        if i % 3 == 0:
            log.update_high_watermark(log.log_end_offset)
            log.maybe_increment_log_start_offset(2)
    mgr.shutdown()


def _state(mgr: LogManager) -> dict[TopicPartition, tuple]:
    return {tp: (lg.log_end_offset, lg.log_start_offset, lg.topic_id, lg.config.segment_size)
            for tp, lg in ((tp, mgr.get_log(tp)) for tp in PARTITIONS)}


@pytest.mark.parametrize("clean", [True, False])
def test_parallel_load_equals_serial_load(tmp_path, monkeypatch, clean) -> None:
    threads_seen: set[str] = set()
    real_open = log_manager_module.Log.open

    def spy_open(*args, **kwargs):
        threads_seen.add(threading.current_thread().name)
        return real_open(*args, **kwargs)

    results = {}
    for threads in (1, 4):
        root = tmp_path / f"t{threads}"
        defaults = {"num.recovery.threads.per.data.dir": threads}
        _fill(root, defaults)
        if not clean:
            for d in ("d1", "d2"):
                (root / d / ".kafka_cleanshutdown").unlink()
        threads_seen.clear()
        monkeypatch.setattr(log_manager_module.Log, "open", spy_open)
        mgr = LogManager([str(root / "d1"), str(root / "d2")], defaults, MockTime(START_MS), _configs)
        mgr.startup()
        monkeypatch.setattr(log_manager_module.Log, "open", real_open)
        try:
            results[threads] = _state(mgr)
            if threads == 1:
                assert threads_seen == {threading.current_thread().name}
            else:
                assert all(name.startswith("log-recovery-") for name in threads_seen)
        finally:
            mgr.shutdown()
    assert results[1] == results[4]
    assert len(results[4]) == 24
    assert results[4][TopicPartition("orders", 1)][:2] == (6, 0)
    assert results[4][TopicPartition("orders", 0)][:2] == (3, 2)
    assert results[4][TopicPartition("audit", 0)][2:] == (TOPIC_IDS["audit"], 1 << 20)
