"""ReplicaManager with an incremental fetch session (KIP-227), MockTime: the session's delayed fetch waits under
one key, an append to one of 50 partitions wakes it, only that partition is read, and the read and the answer
run on the completion pool, not on the thread of the append that woke it."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_replica_manager import Harness, batch, values

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.fetch_params import FetchParams, FetchPartitionInfo
from kafkapy.server.fetch_session import SessionWatchKey

TPS = [TopicPartition("t", p) for p in range(50)]


@pytest.fixture
def h(tmp_path):
    harness = Harness(tmp_path)
    harness.rm._fetch_completions = ThreadPoolExecutor(1, thread_name_prefix="fetch-completion-test")
    yield harness
    harness.close()


def params(read: dict, max_wait_ms: int) -> FetchParams:
    return FetchParams(-1, max_wait_ms, 1, 1 << 20, 0, read)


def test_session_fetch_reads_and_waits_on_what_changed(h) -> None:
    for tp in TPS:
        h.lead(tp)
    h.produce(batch(b"a"), tp=TPS[0])
    fm, rm = h.rm.fetch_manager, h.rm
    fm.sweep_interval_ms = 10**9
    full = fm.new_context(0, 0, {tp: FetchPartitionInfo(0, 1 << 20) for tp in TPS}, [], False)
    first: list = []
    rm.fetch_messages(params(full.read, 0), first.append)
    sid = fm.create_session(False, full.read, first[0])
    session = fm.cache.get(sid)
    # Epoch 1 reads what the creation touched (every partition) and answers nothing new beyond partition 0.
    inc = fm.new_context(sid, 1, {TPS[0]: FetchPartitionInfo(1, 1 << 20)}, [], False)
    assert len(inc.read) == 50
    out: list = []
    rm.fetch_messages(params(inc.read, 0), out.append, session)
    assert fm.changed(session, out[0]) == {}

    reads: list[TopicPartition] = []
    original = rm._read_partition

    def counting(tp, *args):
        reads.append(tp)
        return original(tp, *args)

    rm._read_partition = counting
    answered = threading.Event()
    got: list = []

    def callback(results) -> None:
        got.append((threading.current_thread().name, fm.changed(session, results)))
        answered.set()

    inc = fm.new_context(sid, 2, {}, [], False)
    assert inc.read == {}
    rm.fetch_messages(params(inc.read, 5000), callback, session)
    assert got == [] and rm.fetch_purgatory.watch_keys() == [SessionWatchKey(sid)]

    h.produce(batch(b"woken"), tp=TPS[7])
    assert answered.wait(10)
    thread, changed = got[0]
    assert thread.startswith("fetch-completion-test") and thread != threading.current_thread().name
    assert list(changed) == [TPS[7]] and changed[TPS[7]].high_watermark == 1
    assert reads == [TPS[7]]
    assert values(changed[TPS[7]].records) == [b"woken"]
