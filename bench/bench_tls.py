"""TLS cost benchmark (not a test): produce and consume throughput over SSL as a ratio to PLAINTEXT in the
same run, and TLS handshakes per second.

The broker runs as its own process (`kafkapy server-start`) with a PLAINTEXT and an SSL listener (test
certificates generated here with `cryptography`, as tests/interop/security does); the clients are
confluent-kafka (librdkafka, C) in this process, so the figures are the broker's. Rounds alternate
PLAINTEXT and SSL on fresh topics; the medians are printed. Fetch over SSL cannot use sendfile: the
broker preads the segment and encrypts it (server/network/ssl_transport.py), PLAINTEXT stays zero-copy.
Handshakes: `openssl s_time -new` against the SSL listener (full handshakes, no resumption), else Python
ssl clients on threads.

    .venv/bin/python bench/bench_tls.py [--messages 200000] [--size 1024] [--rounds 5] [--handshake-seconds 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "interop" / "security"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_broker(workdir: Path, pki) -> tuple[subprocess.Popen, int, int]:
    plain, tls = free_port(), free_port()
    overrides = {
        "listeners": f"PLAINTEXT://127.0.0.1:{plain},SSL://127.0.0.1:{tls}",
        "log.dirs": str(workdir / "data"), "ssl.keystore.location": str(pki.broker),
        "ssl.truststore.location": str(pki.ca), "num.partitions": "1",
    }
    args = [sys.executable, "-m", "kafkapy.cli.main", "server-start"]
    for k, v in overrides.items():
        args += ["--override", f"{k}={v}"]
    env = dict(os.environ, KAFKAPY_RUN_DIR=str(workdir / "run"), PYTHONPATH=str(REPO))
    proc = subprocess.Popen(args, stdout=open(workdir / "broker.log", "w"), stderr=subprocess.STDOUT, env=env)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", tls), timeout=1).close()
            return proc, plain, tls
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("broker did not start; see " + str(workdir / "broker.log"))


def produce(conf: dict, topic: str, n: int, value: bytes) -> float:
    import confluent_kafka as ck

    p = ck.Producer({**conf, "linger.ms": 5, "batch.size": 1_000_000, "acks": "1",
                     "queue.buffering.max.messages": n + 10})
    start = time.perf_counter()
    for _ in range(n):
        p.produce(topic, value)
        p.poll(0)
    if p.flush(120):
        raise SystemExit("produce did not finish")
    return time.perf_counter() - start


def consume(conf: dict, topic: str, n: int) -> tuple[int, float]:
    """(messages timed, seconds): timed from the first batch on, so connection set-up (TCP, TLS, metadata,
    ListOffsets) is not part of the throughput."""
    import confluent_kafka as ck

    c = ck.Consumer({**conf, "group.id": f"bench-{topic}", "enable.auto.commit": False,
                     "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 10485760})
    c.assign([ck.TopicPartition(topic, 0, 0)])
    got = 0
    begin = time.perf_counter()
    start = None
    first = 0
    while got < n:
        msgs = c.consume(10000, 5.0)
        if not msgs and time.perf_counter() - begin > 120:
            raise SystemExit("consume did not finish")
        count = sum(1 for m in msgs if not m.error())
        if start is None and count:
            start, first = time.perf_counter(), count
        got += count
    elapsed = time.perf_counter() - start
    c.close()
    return got - first, elapsed


def handshakes_per_second(port: int, ca: str, seconds: float) -> tuple[float, str]:
    if shutil.which("openssl"):
        out = subprocess.run(["openssl", "s_time", "-connect", f"127.0.0.1:{port}", "-new", "-time", str(int(seconds)),
                              "-CAfile", ca], capture_output=True, text=True, timeout=seconds + 60).stdout
        for line in out.splitlines():
            if "connections in" in line and "real seconds" in line:
                conns, secs = int(line.split()[0]), float(line.split("connections in")[1].split()[0])
                return conns / secs, "openssl s_time -new"
    ctx = ssl.create_default_context(cafile=ca)
    count = [0]
    stop = time.time() + seconds

    def worker() -> None:
        while time.time() < stop:
            with socket.create_connection(("127.0.0.1", port)) as raw, ctx.wrap_socket(raw, server_hostname="localhost"):
                count[0] += 1

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return count[0] / seconds, "python ssl, 4 threads"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=200000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--handshake-seconds", type=float, default=5)
    args = ap.parse_args()
    from security_certs import generate

    workdir = Path(tempfile.mkdtemp(prefix="kafkapy-bench-tls-"))
    pki = generate(workdir / "pki")
    proc, plain_port, tls_port = start_broker(workdir, pki)
    try:
        confs = {"PLAINTEXT": {"bootstrap.servers": f"127.0.0.1:{plain_port}"},
                 "SSL": {"bootstrap.servers": f"127.0.0.1:{tls_port}", "security.protocol": "SSL",
                         "ssl.ca.location": str(pki.ca)}}
        value = os.urandom(args.size)
        mb = args.messages * args.size / 1e6
        results: dict[str, dict[str, list[float]]] = {k: {"produce": [], "consume": []} for k in confs}
        for r in range(args.rounds):
            # Alternate which protocol goes first (a shared machine's load drifts within a round); produce
            # both topics before consuming, so a fetch never races the log work of a fresh append.
            order = ["PLAINTEXT", "SSL"] if r % 2 == 0 else ["SSL", "PLAINTEXT"]
            for name in order:
                results[name]["produce"].append(mb / produce(confs[name], f"bench-{name.lower()}-{r}",
                                                             args.messages, value))
            # Both protocols then read the same topic (same segment files, same page-cache state), after the
            # appends' dirty pages are written back (else the write-back of 2 x --messages x --size bytes lands in
            # the middle of whichever read goes first).
            os.sync()
            for name in order:
                timed, seconds = consume(confs[name], f"bench-plaintext-{r}", args.messages)
                results[name]["consume"].append(timed * args.size / 1e6 / seconds)
        print(f"{args.rounds} rounds of {args.messages} x {args.size} B (median MB/s; acks=1, one partition)")
        for phase in ("produce", "consume"):
            p = statistics.median(results["PLAINTEXT"][phase])
            s = statistics.median(results["SSL"][phase])
            per_round = [x / y for x, y in zip(results["SSL"][phase], results["PLAINTEXT"][phase], strict=True)]
            print(f"  {phase:8s} PLAINTEXT {p:8.1f} MB/s   SSL {s:8.1f} MB/s   SSL/PLAINTEXT {s / p:5.2f}"
                  f"   (per round: {' '.join(f'{x:.2f}' for x in per_round)})")
        # Fetch alone: one topic already on disk and read before, read alternately over each protocol.
        warm: dict[str, list[float]] = {"PLAINTEXT": [], "SSL": []}
        for _ in range(3):
            for name in ("PLAINTEXT", "SSL"):
                timed, seconds = consume(confs[name], "bench-plaintext-0", args.messages)
                warm[name].append(timed * args.size / 1e6 / seconds)
        p, s = statistics.median(warm["PLAINTEXT"]), statistics.median(warm["SSL"])
        print(f"  fetch, warm topic, 3 alternating reads: PLAINTEXT {p:8.1f} MB/s   SSL {s:8.1f} MB/s   "
              f"SSL/PLAINTEXT {s / p:5.2f}")
        rate, how = handshakes_per_second(tls_port, str(pki.ca), args.handshake_seconds)
        print(f"  TLS handshakes: {rate:.0f}/s ({how}, full handshakes, ECDSA P-256 broker key)")
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
