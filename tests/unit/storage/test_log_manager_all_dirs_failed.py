"""The LogManager's last online log dir failing halts the broker (Kafka's LogManager.handleLogDirFailure:
"Shutdown broker because all log dirs in <dirs> have failed", Exit.halt(1)); a failure that leaves a dir online
does not. The halt procedure is swapped for a recorder (Kafka's Exit.setHaltProcedure)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest
from storage_helpers import START_MS

from kafkapy.common import exit as kafka_exit
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.log_manager import LogManager


@pytest.fixture
def halts() -> Iterator[list[int]]:
    statuses: list[int] = []
    kafka_exit.set_halt_procedure(statuses.append)
    try:
        yield statuses
    finally:
        kafka_exit.reset_halt_procedure()


def test_the_last_online_dir_failing_halts_with_status_1(tmp_path, halts, caplog) -> None:
    d1, d2 = str(tmp_path / "d1"), str(tmp_path / "d2")
    mgr = LogManager([d1, d2], {}, MockTime(START_MS))
    mgr.startup()
    reported: list[str] = []
    mgr.on_log_dir_failure = reported.append
    try:
        caplog.set_level(logging.ERROR, logger="kafka.log.LogManager")
        mgr.log_dir_failed(d1, OSError(5, "Input/output error"))
        assert halts == [] and reported == [os.path.abspath(d1)]
        mgr.get_or_create_log(TopicPartition("t", 0))  # still served from d2
        mgr.log_dir_failed(d2, OSError(28, "No space left on device"))
        assert halts == [1]
        assert reported == [os.path.abspath(d1)]  # halted before telling anyone
        fatal = [r for r in caplog.records if r.levelno == logging.CRITICAL]
        assert [r.getMessage() for r in fatal] == [
            f"Shutdown broker because all log dirs in {os.path.abspath(d1)}, {os.path.abspath(d2)} have failed"]
    finally:
        mgr.shutdown()


def test_a_single_dir_failing_halts(tmp_path, halts) -> None:
    mgr = LogManager([str(tmp_path / "only")], {}, MockTime(START_MS))
    mgr.startup()
    try:
        mgr.log_dir_failed(str(tmp_path / "only"), OSError(27, "File too large"))
        assert halts == [1]
    finally:
        mgr.shutdown()
