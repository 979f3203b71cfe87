"""Network round-trip benchmark: SocketServer + KafkaRequestHandlerPool with an echo `apis`.

The broker side runs in this process; the load generator runs in a child process (so the two do
not share a GIL) driving N connections from one selector loop, each with one request in flight
(a Kafka client with max.in.flight=1). A third case fetches a 1 MiB FileRegion per request to
show sendfile throughput. Every run is bounded by a request count and a time limit.

    .venv/bin/python bench/bench_network.py [--seconds 3] [--max-requests 200000]
"""

from __future__ import annotations

import argparse
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


def run_case(port: int, connections: int, seconds: float, max_requests: int, api_key: int, body_len: int) -> dict:
    cmd = [sys.executable, __file__, "--client", str(port), str(connections), str(seconds), str(max_requests),
           str(api_key), str(body_len)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    if proc.returncode != 0:
        raise RuntimeError(f"client failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


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
        for label, conns, api, body_len, limit in (
            ("echo 16 B, 1 connection", 1, ECHO, 16, args.max_requests),
            ("echo 16 B, 16 connections", 16, ECHO, 16, args.max_requests),
            ("echo 16 KiB, 16 connections", 16, ECHO, 16384, args.max_requests),
            ("sendfile 1 MiB, 4 connections", 4, FILE, 0, min(args.max_requests, 20_000)),
        ):
            r = run_case(port, conns, args.seconds, limit, api, body_len)
            rate = r["requests"] / r["seconds"]
            mib = r["bytes"] / r["seconds"] / (1 << 20)
            print(f"{label:32s} {rate:10.0f} req/s  {1e6 / rate * conns:8.1f} us/round trip  {mib:8.1f} MiB/s")
    finally:
        server.shutdown()
        pool.shutdown()
        region_file.close()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        p, n, secs, maxr, key, blen = sys.argv[2:8]
        client_main(int(p), int(n), float(secs), int(maxr), int(key), int(blen))
    else:
        main()
