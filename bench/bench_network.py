"""Network round-trip benchmark: SocketServer + KafkaRequestHandlerPool with an echo `apis`.

The broker side runs in this process; the load generator runs in a child process (so the two do
not share a GIL) driving N connections from one selector loop, each with one request in flight
(a Kafka client with max.in.flight=1). A third case fetches a 1 MiB FileRegion per request to
show sendfile throughput. "paced" cases send at a fixed rate on one connection without waiting for
answers (like librdkafka with linger.ms=0) and report round-trip p50/p99. Every case also reports
the broker side's CPU time per request (this process's CPU, less sensitive to a loaded box than
wall-clock figures). Every run is bounded by a request count and a time limit.

    .venv/bin/python bench/bench_network.py [--seconds 3] [--max-requests 200000]
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import selectors
import socket
import struct
import subprocess
import sys
import tempfile
import time

ECHO = 18
FILE = 1
_SIZE = struct.Struct(">i")


def client_main(port: int, connections: int, seconds: float, max_requests: int, api_key: int, body_len: int) -> None:
    body = b"x" * body_len
    request = struct.pack(">ihhi", 8 + len(body), api_key, 0, 0) + body
    sel = selectors.DefaultSelector()
    state = {}
    for _ in range(connections):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        state[s] = [bytearray(), -1]
        sel.register(s, selectors.EVENT_READ)
    done = 0
    received_bytes = 0
    sent = 0
    started = time.perf_counter()
    deadline = started + seconds
    for s in state:
        s.sendall(request)
        sent += 1
    while done < sent:
        for key, _ in sel.select(1.0):
            s = key.fileobj
            buf, need = state[s]
            chunk = s.recv(1 << 20)
            if not chunk:
                raise SystemExit("server closed a connection")
            buf += chunk
            while True:
                if need < 0 and len(buf) >= 4:
                    need = _SIZE.unpack_from(buf)[0] + 4
                if need < 0 or len(buf) < need:
                    break
                received_bytes += need
                del buf[:need]
                need = -1
                done += 1
                if sent < max_requests and time.perf_counter() < deadline:
                    s.sendall(request)
                    sent += 1
            state[s][1] = need
        if time.perf_counter() > deadline + 10:
            raise SystemExit("responses stalled")
    elapsed = time.perf_counter() - started
    for s in state:
        s.close()
    print(json.dumps({"requests": done, "seconds": elapsed, "bytes": received_bytes}))


def paced_client_main(port: int, rate: int, seconds: float, body_len: int) -> None:
    """One connection, requests sent on a fixed schedule whatever is outstanding; latency per request."""
    body = b"x" * body_len
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    total = int(rate * seconds)
    sent_at: dict[int, float] = {}
    latencies: list[float] = []
    buf = bytearray()
    started = time.perf_counter()
    deadline = started + seconds + 10
    sent = 0
    while len(latencies) < total:
        now = time.perf_counter()
        if now > deadline:
            raise SystemExit("responses stalled")
        while sent < total and started + sent / rate <= now:
            sock.setblocking(True)
            sock.sendall(struct.pack(">ihhi", 8 + len(body), ECHO, 0, sent) + body)
            sock.setblocking(False)
            sent_at[sent] = time.perf_counter()
            sent += 1
        wait = max(0.0, started + sent / rate - time.perf_counter()) if sent < total else 1.0
        if sel.select(wait):
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise SystemExit("server closed the connection")
            buf += chunk
            now = time.perf_counter()
            while len(buf) >= 4 and len(buf) >= _SIZE.unpack_from(buf)[0] + 4:
                size = _SIZE.unpack_from(buf)[0]
                corr = _SIZE.unpack_from(buf, 4)[0]
                latencies.append(now - sent_at.pop(corr))
                del buf[: size + 4]
    sock.close()
    latencies.sort()
    p50 = latencies[len(latencies) // 2]
    p99 = heapq.nlargest(max(1, len(latencies) // 100), latencies)[-1]
    print(json.dumps({"requests": total, "seconds": time.perf_counter() - started, "bytes": 0,
                      "p50_ms": p50 * 1000, "p99_ms": p99 * 1000}))  # fmt: skip


def run_case(port: int, connections: int, seconds: float, max_requests: int, api_key: int, body_len: int,
             rate: int = 0) -> dict:  # fmt: skip
    if rate:
        cmd = [sys.executable, __file__, "--paced-client", str(port), str(rate), str(seconds), str(body_len)]
    else:
        cmd = [sys.executable, __file__, "--client", str(port), str(connections), str(seconds), str(max_requests),
               str(api_key), str(body_len)]  # fmt: skip
    cpu_before = sum(os.times()[:2])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    cpu = sum(os.times()[:2]) - cpu_before  # this process only: the broker side (children are not counted)
    if proc.returncode != 0:
        raise RuntimeError(f"client failed: {proc.stderr.strip()}")
    result = json.loads(proc.stdout)
    result["broker_cpu_s"] = cpu
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--network-threads", default="3")
    parser.add_argument("--io-threads", default="8")
    args = parser.parse_args()

    from kafkapy.common.file_region import FileRegion
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_request_handler import KafkaRequestHandlerPool
    from kafkapy.server.network.request_channel import Request, RequestChannel
    from kafkapy.server.network.socket_server import SocketServer

    region_file = tempfile.TemporaryFile()
    region_file.write(os.urandom(1 << 20))
    region_file.flush()
    region = FileRegion(region_file, 0, 1 << 20)

    class Apis:
        def __init__(self, channel: RequestChannel) -> None:
            self.channel = channel

        def handle(self, request: Request) -> None:
            corr = struct.pack(">i", request.correlation_id)
            if request.api_key == FILE:
                self.channel.send_response(request, [struct.pack(">i", 4 + region.length), corr, region])
                return
            body = request.frame[8:]
            self.channel.send_response(request, [struct.pack(">i", 4 + len(body)), corr, body])

    config = KafkaConfig.from_properties(None, {
        "listeners": "PLAINTEXT://127.0.0.1:0",
        "num.network.threads": args.network_threads,
        "num.io.threads": args.io_threads,
    })  # fmt: skip
    channel = RequestChannel(config.get_int("queued.max.requests"))
    server = SocketServer(config, channel)
    server.startup()
    pool = KafkaRequestHandlerPool(config.num_io_threads, channel, Apis(channel))
    port = server.bound_port()
    print(f"network threads={args.network_threads} io threads={args.io_threads}, {args.seconds}s per case, "
          f"<= {args.max_requests} requests, client in a child process")  # fmt: skip
    try:
        for label, conns, api, body_len, limit, paced in (
            ("echo 16 B, 1 connection", 1, ECHO, 16, args.max_requests, 0),
            ("echo 16 B, 16 connections", 16, ECHO, 16, args.max_requests, 0),
            ("echo 16 KiB, 16 connections", 16, ECHO, 16384, args.max_requests, 0),
            ("sendfile 1 MiB, 4 connections", 4, FILE, 0, min(args.max_requests, 20_000), 0),
            ("paced 2,000/s 100 B, 1 conn", 1, ECHO, 100, 0, 2000),
            ("paced 5,000/s 100 B, 1 conn", 1, ECHO, 100, 0, 5000),
        ):
            r = run_case(port, conns, args.seconds, limit, api, body_len, paced)
            cpu_us = r["broker_cpu_s"] / r["requests"] * 1e6
            if paced:
                print(f"{label:32s} {'':10s}        p50 {r['p50_ms']:7.3f} ms  p99 {r['p99_ms']:7.3f} ms"
                      f"  broker cpu {cpu_us:6.1f} us/req")  # fmt: skip
                continue
            rate = r["requests"] / r["seconds"]
            mib = r["bytes"] / r["seconds"] / (1 << 20)
            print(f"{label:32s} {rate:10.0f} req/s  {1e6 / rate * conns:8.1f} us/round trip  {mib:8.1f} MiB/s"
                  f"  broker cpu {cpu_us:6.1f} us/req")  # fmt: skip
    finally:
        server.shutdown()
        pool.shutdown()
        region_file.close()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        p, n, secs, maxr, key, blen = sys.argv[2:8]
        client_main(int(p), int(n), float(secs), int(maxr), int(key), int(blen))
    elif len(sys.argv) > 1 and sys.argv[1] == "--paced-client":
        p, rate, secs, blen = sys.argv[2:6]
        paced_client_main(int(p), int(rate), float(secs), int(blen))
    else:
        main()
