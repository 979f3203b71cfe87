"""A broker restart over many partitions (issue 20 item 7): after a clean stop the partitions' indexes are
not opened or mapped by the start-up (Kafka's lazy indexes) until a read needs one, every record is read
back at its offset; after a crash-like stop (no clean-shutdown marker, a torn tail) recovery truncates the
tail and rebuilds the index; start-up leaves the cyclic GC on with its own objects frozen, and the shutdown
unfreezes them."""

from __future__ import annotations

import gc
import os

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.storage.meta_properties import CLEAN_SHUTDOWN_FILE

PARTITIONS = 40
WRITTEN = range(0, PARTITIONS, 4)  # the partitions given records; the others stay empty


def batch(*values: bytes) -> bytes:
    builder = MemoryRecordsBuilder()
    for v in values:
        builder.append(1_700_000_000_000, None, v)
    return builder.build()


def append(server, tp: TopicPartition, records: bytes) -> int:
    out: list = []
    server.replica_manager.append_records(1000, -1, {tp: records}, out.append)
    assert out[0][tp].error == 0
    return out[0][tp].base_offset


def read_all(server, tp: TopicPartition) -> list[tuple[int, bytes]]:
    info = server.replica_manager.get_partition(tp).read_records(0, 1 << 20)
    data = info.fetched_data.records.read_bytes() if info.fetched_data.records is not None else b""
    return [(r.offset, r.value) for b in MemoryRecords(data).batches() for r in b.records()]


def mapped_indexes(under: str) -> set[str]:
    with open("/proc/self/maps") as f:
        paths = {parts[5].strip() for line in f if len(parts := line.split(None, 5)) == 6}
    return {p for p in paths if p.startswith(under) and p.endswith((".index", ".timeindex"))}


def test_restart_lazy_indexes_recovery_and_gc(broker_factory) -> None:
    broker = broker_factory(overrides={"num.partitions": str(PARTITIONS)})
    server = broker.server
    assert gc.isenabled() and gc.get_freeze_count() > 0
    server.controller.create_topics([("rs", -1, -1, None, {})]).result(10)
    tps = [TopicPartition("rs", p) for p in range(PARTITIONS)]
    for p in WRITTEN:
        assert append(server, tps[p], batch(b"a%d" % p, b"b%d" % p)) == 0
        assert append(server, tps[p], batch(b"c%d" % p)) == 2
    log_dir = broker.log_dir

    broker.restart()
    server = broker.server
    assert gc.isenabled() and gc.get_freeze_count() > 0
    assert mapped_indexes(log_dir) == set()  # loaded and led, no index opened
    lm = server.log_manager
    assert {tp: lm.get_log(tp).log_end_offset for tp in tps} == {tp: 3 if tp.partition in WRITTEN else 0
                                                                  for tp in tps}
    assert read_all(server, tps[4]) == [(0, b"a4"), (1, b"b4"), (2, b"c4")]
    assert mapped_indexes(log_dir) == {os.path.join(log_dir, "rs-4", f"{0:020d}.index")}

    # A crash: no clean-shutdown marker, and a torn batch at the end of rs-8's log.
    server.shutdown()
    assert gc.get_freeze_count() == 0
    os.unlink(os.path.join(log_dir, CLEAN_SHUTDOWN_FILE))
    segment = os.path.join(log_dir, "rs-8", f"{0:020d}.log")
    whole = os.path.getsize(segment)
    with open(segment, "ab") as f:
        f.write(batch(b"torn")[:30])
    broker.restart()
    server = broker.server
    assert os.path.getsize(segment) == whole  # the torn tail is cut
    assert read_all(server, tps[8]) == [(0, b"a8"), (1, b"b8"), (2, b"c8")]
    assert append(server, tps[8], batch(b"d8")) == 3
    assert read_all(server, tps[8])[-1] == (3, b"d8")
    assert all(server.log_manager.get_log(tp).log_end_offset == 0 for tp in tps if tp.partition % 4)


def test_restart_rewrites_no_leader_epoch_checkpoint(broker_factory) -> None:
    """A leader restarting at the epoch its file holds leaves the file alone (it was rewritten, identical,
    for every partition at every start-up)."""
    broker = broker_factory(overrides={"num.partitions": "8"})
    broker.server.controller.create_topics([("ep", -1, -1, None, {})]).result(10)
    tps = [TopicPartition("ep", p) for p in range(8)]
    append(broker.server, tps[3], batch(b"x"))
    broker.stop()
    files = [os.path.join(broker.log_dir, str(tp), "leader-epoch-checkpoint") for tp in tps]
    before = {path: (os.stat(path).st_ino, open(path, "rb").read()) for path in files}
    assert before[files[3]][1] == b"0\n1\n0 0\n"

    broker.restart()
    server = broker.server
    assert all(server.replica_manager.get_partition(tp).is_leader for tp in tps)
    assert not any(server.log_manager.get_log(tp).leader_epoch_cache.unflushed for tp in tps)
    assert {path: (os.stat(path).st_ino, open(path, "rb").read()) for path in files} == before
