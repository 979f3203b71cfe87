"""A broker whose every log dir has failed halts, as Kafka's LogManager does: a subprocess broker with one log dir
whose RLIMIT_FSIZE is lowered (prlimit) below the size its segment is about to reach; the next segment write fails
with EFBIG (a real kernel I/O error, as ENOSPC would be), the dir goes offline, and with no dir left the process
logs "Shutdown broker because all log dirs in <dir> have failed" at FATAL and exits with status 1 (Exit.halt)
instead of serving KAFKA_STORAGE_ERROR forever."""

from __future__ import annotations

import os
import resource
import subprocess

import pytest

ck = pytest.importorskip("confluent_kafka")

LIMIT = 512 * 1024
VALUE = b"x" * 1000


def test_a_broker_whose_only_log_dir_fails_halts_with_status_1(broker_process, tmp_path) -> None:
    only = str(tmp_path / "only")
    broker = broker_process(overrides={"log.dirs": only, "log.index.size.max.bytes": "65536",
                                       "num.partitions": "1"})
    _, hard = resource.prlimit(broker.proc.pid, resource.RLIMIT_FSIZE)
    p = ck.Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5, "acks": 1, "message.timeout.ms": 3000,
                     "retries": 0, "log_level": 0})
    p.produce("halting", value=b"first")  # the topic (auto-created) and its segment exist before the limit
    assert p.flush(10) == 0
    resource.prlimit(broker.proc.pid, resource.RLIMIT_FSIZE, (LIMIT, hard))
    for i in range(LIMIT // len(VALUE) * 2):  # twice what the segment may still grow by
        if broker.proc.poll() is not None:
            break
        p.produce("halting", value=VALUE[:-8] + f"{i:08d}".encode())
        p.poll(0)
    p.flush(5)
    del p
    try:
        status = broker.proc.wait(30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the broker is still running:\n{broker.output()[-4000:]}")
    output = broker.output()
    assert status == 1, output[-4000:]
    assert f"FATAL Shutdown broker because all log dirs in {os.path.abspath(only)} have failed" in output, \
        output[-4000:]
