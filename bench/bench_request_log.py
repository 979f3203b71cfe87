"""Cost of Kafka's request log (kafka.request.logger): produce requests per second with the logger off (WARN, the
default: one isEnabledFor per request) and at DEBUG ("Completed request:{json}" per request to a file), in one run.

An in-process broker; the load runs in a child process (no shared GIL): one connection, one Produce v9 (acks=1,
one 10-record batch) in flight at a time. Rounds alternate off / DEBUG, each bounded by --seconds and
--max-requests; the figures are the medians of the rounds.

    .venv/bin/python bench/bench_request_log.py [--seconds 3] [--rounds 3] [--max-requests 100000]
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def client(port: int, seconds: float, max_requests: int) -> None:
    from kafkapy.protocol.header import RequestHeader, encode_request
    from kafkapy.protocol.messages import ProduceRequest as PR
    from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

    builder = MemoryRecordsBuilder()
    for i in range(10):
        builder.append(1_700_000_000_000, b"k%d" % i, b"v" * 100)
    body = PR(acks=1, timeout_ms=5000, topic_data=[PR.TopicProduceData(
        name="bench-request-log", partition_data=[PR.PartitionProduceData(index=0, records=builder.build())])])
    sock = socket.create_connection(("127.0.0.1", port))
    n = 0
    deadline = time.monotonic() + seconds
    start = time.perf_counter()
    while n < max_requests and time.monotonic() < deadline:
        sock.sendall(encode_request(RequestHeader(0, 9, n + 1, "bench"), body))
        size = int.from_bytes(_recv(sock, 4), "big")
        _recv(sock, size)
        n += 1
    print(f"{n} {time.perf_counter() - start}")


def _recv(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return bytes(buf)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-requests", type=int, default=100_000)
    ap.add_argument("--client", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        client(args.client, args.seconds, args.max_requests)
        return
    from kafkapy.testing import KafkaBroker

    logger = logging.getLogger("kafka.request.logger")
    logger.propagate = False
    with tempfile.TemporaryDirectory() as tmp, KafkaBroker({"num.io.threads": "2"}) as broker:
        handler = logging.FileHandler(os.path.join(tmp, "kafka-request.log"))
        logger.addHandler(handler)
        broker.create_topic("bench-request-log")
        rates: dict[str, list[float]] = {"off": [], "DEBUG": []}
        for _ in range(args.rounds):
            for mode in ("off", "DEBUG"):
                logger.setLevel(logging.DEBUG if mode == "DEBUG" else logging.WARNING)
                out = subprocess.run([sys.executable, __file__, "--client", str(broker.port), "--seconds",
                                      str(args.seconds), "--max-requests", str(args.max_requests)],
                                     capture_output=True, text=True, check=True, timeout=args.seconds + 60).stdout
                n, elapsed = out.split()
                rates[mode].append(int(n) / float(elapsed))
        logger.setLevel(logging.WARNING)
        lines = sum(1 for _ in open(os.path.join(tmp, "kafka-request.log")))
        logger.removeHandler(handler)
        handler.close()
    off, on = statistics.median(rates["off"]), statistics.median(rates["DEBUG"])
    print(f"produce requests/s, kafka.request.logger off (WARN): {off:,.0f}  (rounds: "
          f"{', '.join(f'{r:,.0f}' for r in rates['off'])})")
    print(f"produce requests/s, kafka.request.logger DEBUG:     {on:,.0f}  (rounds: "
          f"{', '.join(f'{r:,.0f}' for r in rates['DEBUG'])}); {lines:,} 'Completed request' lines written")
    print(f"DEBUG / off: {on / off:.3f}")


if __name__ == "__main__":
    main()
