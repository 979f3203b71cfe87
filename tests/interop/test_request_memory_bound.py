"""queued.max.request.bytes bounds the broker's memory under a flood of huge announced frames.

A subprocess broker with queued.max.request.bytes = socket.request.max.bytes = 100 MiB (the smallest
pool Kafka accepts) gets 10 connections that each announce a 100 MiB request and then stream its
bytes as fast as the broker reads them. The Processor reserves a frame's size from the pool before
buffering it and mutes the other connections until memory is released, so the broker's peak RSS
(VmHWM from /proc/<pid>/status) stays under its idle RSS + the limit + a margin, while a bystander
confluent-kafka producer's median produce round trip stays within 2x of its quiet value.
"""

from __future__ import annotations

import selectors
import socket
import statistics
import struct
import threading
import time

import pytest

ck = pytest.importorskip("confluent_kafka")
from memory_bound_support import produce_latencies_ms, status_kb  # noqa: E402

LIMIT = 100 * 1024 * 1024
FLOODERS = 10
FLOOD_S = 6.0
MARGIN = 80 * 1024 * 1024
SAMPLES = 60


def flood(port: int, stop: threading.Event, sent: list[int]) -> None:
    """10 connections: each announces a LIMIT-byte ApiVersions v0 request, then streams its body."""
    chunk = memoryview(bytes(1024 * 1024))
    header = struct.pack(">ihhi", LIMIT, 18, 0, 7) + struct.pack(">h", -1)
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(FLOODERS):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(header)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_WRITE, [len(header)])
        socks.append(s)
    try:
        while not stop.is_set() and sel.get_map():
            for key, _ in sel.select(0.1):
                done = key.data
                want = min(len(chunk), LIMIT + 4 - done[0])
                try:
                    n = key.fileobj.send(chunk[:want])  # type: ignore[union-attr]
                except BlockingIOError:
                    continue
                except OSError:
                    sel.unregister(key.fileobj)
                    continue
                done[0] += n
                sent[0] += n
                if done[0] >= LIMIT + 4:
                    sel.unregister(key.fileobj)  # whole request sent; leave the connection open
    finally:
        sel.close()
        for s in socks:
            s.close()


def test_announced_frames_are_bounded_by_queued_max_request_bytes(broker_process) -> None:
    broker = broker_process(overrides={"queued.max.request.bytes": str(LIMIT),
                                       "socket.request.max.bytes": str(LIMIT)})
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap, "acks": "1", "linger.ms": 0})
    deadline = time.monotonic() + 60
    produce_latencies_ms(producer, "bystander", 20, deadline)  # creates the topic, warms up
    quiet = produce_latencies_ms(producer, "bystander", SAMPLES, deadline)
    idle_kb = status_kb(broker.pid, "VmRSS")

    stop = threading.Event()
    sent = [0]
    flooder = threading.Thread(target=flood, args=(broker.port, stop, sent), daemon=True)
    flooder.start()
    time.sleep(0.5)  # the flood is under way
    loud: list[float] = []
    flood_end = time.monotonic() + FLOOD_S
    while time.monotonic() < flood_end:
        loud += produce_latencies_ms(producer, "bystander", 10, flood_end)
    stop.set()
    flooder.join(30)
    producer.flush(10)
    peak_kb = status_kb(broker.pid, "VmHWM")

    quiet_p50, loud_p50 = statistics.median(quiet), statistics.median(loud)
    print(f"idle RSS {idle_kb // 1024} MiB, peak RSS {peak_kb // 1024} MiB, flood sent {sent[0] >> 20} MiB; "
          f"bystander produce p50 quiet {quiet_p50:.2f} ms, under flood {loud_p50:.2f} ms ({len(loud)} samples)")
    assert sent[0] > LIMIT, "the flood never got past one request: the broker stopped reading altogether"
    assert peak_kb * 1024 < idle_kb * 1024 + LIMIT + MARGIN
    # 1 ms floor: sub-millisecond medians on a shared 2-core machine are within scheduling noise.
    assert loud_p50 <= 2 * max(quiet_p50, 1.0)
    assert broker.proc.poll() is None
    # Every bystander record was really stored: the partition's end offset counts them all.
    consumer = ck.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "bystander-check"})
    try:
        low, high = consumer.get_watermark_offsets(ck.TopicPartition("bystander", 0), timeout=10)
    finally:
        consumer.close()
    assert (low, high) == (0, 20 + len(quiet) + len(loud))
