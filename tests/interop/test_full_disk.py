"""A log dir that stops taking writes, as a full disk does, on a subprocess broker with two log dirs.

The broker's RLIMIT_FSIZE is lowered (prlimit) below the size its segment is about to reach: the next write of
the segment fails with EFBIG, a real I/O error from the kernel, as ENOSPC would. Kafka's answer (KIP-112), as
here: the log dir goes offline; the producer gets KAFKA_STORAGE_ERROR (then no leader) instead of
UNKNOWN_SERVER_ERROR; the broker logs the failure once instead of a traceback per request; DescribeLogDirs
answers KAFKA_STORAGE_ERROR for the dir; the other log dir keeps working; and after a restart (no limit) every
record the producer saw acknowledged is read back at its offset."""

from __future__ import annotations

import os
import resource
import time

import pytest

from kafkapy.client.admin import AdminClient
from kafkapy.common.errors import KafkaStorageError

ck = pytest.importorskip("confluent_kafka")

LIMIT = 1024 * 1024
VALUE = b"x" * 1000


def test_a_log_dir_that_cannot_grow_goes_offline(broker_process, tmp_path) -> None:
    d1, d2 = str(tmp_path / "d1"), str(tmp_path / "d2")
    overrides = {"log.dirs": f"{d1},{d2}", "log.index.size.max.bytes": "65536", "num.partitions": "1"}
    broker = broker_process(overrides=overrides)
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{broker.port}"})
    try:
        from kafkapy.client.admin_types import NewTopic

        admin.create_topics([NewTopic("filling", 1, 1), NewTopic("spare", 1, 1)])
        time.sleep(0.5)
        where = {tp.topic: path for path, d in admin.describe_log_dirs([0])[0].items() for tp in d.replicas}
        assert where["filling"] != where["spare"]  # one partition per dir (fewest partitions first)
        resource.prlimit(broker.proc.pid, resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

        acked: dict[int, bytes] = {}
        failed: list[str] = []

        def on_delivery(err, msg) -> None:
            if err is None:
                acked[msg.offset()] = msg.value()
            else:
                failed.append(err.name())

        p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{broker.port}", "linger.ms": 5, "acks": 1,
                         "message.timeout.ms": 4000, "batch.size": 16384})
        for i in range(3000):
            p.produce("filling", value=VALUE[:-8] + f"{i:08d}".encode(), partition=0, on_delivery=on_delivery)
            p.poll(0)
        p.flush(30)
        assert 0 < len(acked) < 3000 and failed
        assert set(failed) <= {"KAFKA_STORAGE_ERROR", "_MSG_TIMED_OUT", "NOT_LEADER_OR_FOLLOWER",
                               "LEADER_NOT_AVAILABLE"}, set(failed)

        dirs = admin.describe_log_dirs([0])[0]
        assert isinstance(dirs[where["filling"]].error, KafkaStorageError)
        assert dirs[where["spare"]].error is None
        p.produce("spare", value=b"still fine", partition=0)
        assert p.flush(10) == 0
        output = broker.output()
        assert output.count("Traceback") <= 1, output[-4000:]
        assert output.count("File too large") <= 3, output[-4000:]
        assert "UNKNOWN_SERVER_ERROR" not in output
    finally:
        admin.close()
        broker.proc.terminate()
        broker.proc.wait(30)

    again = broker_process(overrides=overrides)
    c = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{again.port}", "group.id": "full-disk-check",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([ck.TopicPartition("filling", 0, 0)])
    got: dict[int, bytes] = {}
    deadline = time.monotonic() + 30
    while len(got) < len(acked):
        assert time.monotonic() < deadline, f"read {len(got)} of {len(acked)} acknowledged"
        m = c.poll(0.2)
        if m is not None and m.error() is None:
            got[m.offset()] = m.value()
    c.close()
    assert {o: v for o, v in got.items() if o in acked} == acked
    assert os.path.isdir(where["filling"])
