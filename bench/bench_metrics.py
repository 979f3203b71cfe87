"""Metrics benchmark (not a test): produce throughput with the broker's metrics on vs off, in one run, and the
time to scrape /metrics with 1,000 partitions.

Headline figure (`produce path`): what a request-handler thread does per ProduceRequest (KafkaApis.handle:
decode, ReplicaManager append to a real log, response encoded and handed to a stub channel, RequestMetrics
and BrokerTopicMetrics recorded when on, and their fold, which runs inside the measured time), in process on
the broker's real services, 16 and 500 x 100-byte records per request, acks=1. Made to be read on a loaded
machine: many short rounds in on/off pairs, the order inside a pair alternating (on-off, off-on, ...) so that
load from other processes weighs on both alike; each pair gives a ratio (on / off throughput) from the
thread's CPU time (time.thread_time: what the handler thread spent, whatever else runs) and one from wall
time; reported: the median of the pair ratios (target >= 0.97), their spread (10th-90th percentile), the
medians' throughputs and the added cost per request in microseconds.

Then the same end to end with librdkafka over the network (noisy on a shared machine: for information), rounds
alternating on / off on the same broker (off = the recording hooks detached: no BrokerTopicMetrics,
RequestMetrics, idle meters): `batched` (linger.ms=5, 100-byte records: many records per request) and
`requests` (linger.ms=0, acks=1: close to one record per request). Then a topic with 1,000 partitions gets a
record in each and /metrics is scraped 10 times (median and max reported, with the number of samples served).

    .venv/bin/python bench/bench_metrics.py [--pairs 31] [--requests 2000] [--seconds 2] [--rounds 3]
                                            [--partitions 1000] [--path-only]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import urllib.request
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from kafkapy.common.time import SYSTEM
from kafkapy.protocol.header import RequestHeader, encode_request
from kafkapy.protocol.messages import ProduceRequest
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.broker_topic_stats import DISABLED
from kafkapy.server.kafka_apis import KafkaApis
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.kafka_server import KafkaServer
from kafkapy.server.network.request_channel import Request


def set_metrics(server: KafkaServer, on: bool) -> None:
    """Attach or detach every recording hook (what a broker without metrics would run)."""
    bm = server.broker_metrics
    services, rm = server.services, server.replica_manager
    assert services is not None and rm is not None
    services.metrics = bm if on else None
    rm.broker_topic_stats = rm.replica_fetcher_manager.topic_stats = bm.topic_stats if on else DISABLED
    pool = server.request_handler_pool
    assert pool is not None
    bm.attach_network(pool if on else None, server.socket_server if on else None)
    if not on:
        pool.set_idle_meter(None)
        for processor in server.socket_server.processors if server.socket_server else []:
            processor.idle_meter = None


class StubChannel:
    """Takes the responses KafkaApis hands to the network."""

    def __init__(self) -> None:
        self.sent = 0

    def send_response(self, request: Any, chunks: Any, throttle_ms: int = 0) -> None:
        self.sent += 1

    def close_connection(self, request: Any) -> None:
        raise RuntimeError("connection closed by the handler")


def produce_frame(topic: str, records: int = 16) -> memoryview:
    builder = MemoryRecordsBuilder()
    now = SYSTEM.milliseconds()
    for _ in range(records):
        builder.append(now, None, b"v" * 100)
    body = ProduceRequest(transactional_id=None, acks=1, timeout_ms=30000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=builder.build())])])
    return memoryview(encode_request(RequestHeader(0, 9, 7, "bench-producer"), body)[4:])


def produce_path_round(apis: KafkaApis, channel: StubChannel, frame: memoryview, requests: int,
                       fold: Any = None) -> tuple[float, float]:
    """(thread CPU s, wall s) of `requests` ProduceRequests handled in this thread, the metrics' fold of those
    requests included (the tick thread is stopped: the fold runs here, inside the measured time)."""
    before = channel.sent
    wall, cpu = time.perf_counter(), time.thread_time()
    for i in range(requests):
        req = Request(0, "c-0", 0, 9, i, frame, ("127.0.0.1", 1), time.monotonic_ns())
        req.dequeue_ns = req.start_ns
        apis.handle(req)
    if fold is not None:
        fold()
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    assert channel.sent - before == requests
    return cpu, wall


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def produce_path(server: KafkaServer, apis: KafkaApis, channel: StubChannel, records: int, requests: int,
                 pairs: int) -> float:
    """On/off pairs of rounds over the in-process produce path; prints the figures, returns the CPU ratio."""
    frame = produce_frame("bench-path", records)
    for on in (True, False):  # warm-up: code paths, the log's segment, the metrics' first values
        set_metrics(server, on)
        produce_path_round(apis, channel, frame, requests, server.metrics.fold if on else None)
    times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for pair in range(pairs):
        for on in ((True, False) if pair % 2 == 0 else (False, True)):
            set_metrics(server, on)
            times[on].append(produce_path_round(apis, channel, frame, requests, server.metrics.fold if on else None))
    set_metrics(server, True)
    print(f"produce path ({records} x 100 B per request, acks=1; {pairs} on/off pairs of {requests} requests):")
    medians = []
    for label, k in (("thread CPU", 0), ("wall", 1)):
        on_s, off_s = [t[k] for t in times[True]], [t[k] for t in times[False]]
        ratios = [off / on for on, off in zip(on_s, off_s, strict=True)]  # throughput on / off
        ratio = statistics.median(ratios)
        medians.append(ratio)
        on_med, off_med = statistics.median(on_s), statistics.median(off_s)
        print(f"  {label:10s}: ratio on/off median {ratio:.3f} (p10 {percentile(ratios, 0.1):.3f}, p90 "
              f"{percentile(ratios, 0.9):.3f}); on {requests * records / on_med:,.0f} rec/s, off "
              f"{requests * records / off_med:,.0f} rec/s; {1e6 * off_med / requests:.1f} us per request off, "
              f"metrics add {1e6 * statistics.median([on - off for on, off in zip(on_s, off_s, strict=True)]) / requests:.2f} us")
    return medians[0]


def produce_round(bootstrap: str, topic: str, seconds: float, linger_ms: int) -> float:
    """Records per second acknowledged in `seconds` of producing (bounded by time and by 5 M records)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": linger_ms, "acks": "1",
                         "queue.buffering.max.messages": 200_000})
    value = b"x" * 100
    acked = [0]

    def on_ack(err: Any, _msg: Any) -> None:
        if err is None:
            acked[0] += 1

    start = time.perf_counter()
    deadline = start + seconds
    sent = 0
    while time.perf_counter() < deadline and sent < 5_000_000:
        try:
            producer.produce(topic, value, on_delivery=on_ack)
            sent += 1
        except BufferError:
            producer.poll(0.001)
        if sent % 1000 == 0:
            producer.poll(0)
    producer.flush(60)
    return acked[0] / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=2000, help="ProduceRequests per in-process round")
    ap.add_argument("--pairs", type=int, default=31, help="on/off pairs of in-process rounds")
    ap.add_argument("--path-only", action="store_true", help="the in-process produce path only")
    args = ap.parse_args()
    with open("/proc/loadavg") as f:
        print(f"load average {' '.join(f.read().split()[:3])}")
    with tempfile.TemporaryDirectory() as log_dir:
        config = KafkaConfig.from_properties(None, {
            "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": log_dir, "num.network.threads": "2",
            "num.io.threads": "4", "prometheus.listener": "http://127.0.0.1:0"})
        server = KafkaServer(config)
        server.startup()
        try:
            bootstrap = f"127.0.0.1:{server.bound_port()}"
            endpoint = server.broker_metrics.endpoint
            assert endpoint is not None
            produce_round(bootstrap, "bench-path", 0.2, 0)  # creates the topic
            channel = StubChannel()
            assert server.services is not None
            apis = KafkaApis(channel, server.services)  # type: ignore[arg-type]
            server.metrics.stop_ticker()
            for records in (16, 500):  # the same requests per round (and per fold) for both shapes
                produce_path(server, apis, channel, records, args.requests, args.pairs)
            if args.path_only:
                return
            server.metrics.start_ticker()
            for shape, linger in (("batched", 5), ("requests", 0)):
                results: dict[bool, list[float]] = {True: [], False: []}
                produce_round(bootstrap, f"bench-{shape}", 0.5, linger)  # warm-up: topic, connections
                for r in range(args.rounds):
                    for on in ((True, False) if r % 2 == 0 else (False, True)):
                        set_metrics(server, on)
                        results[on].append(produce_round(bootstrap, f"bench-{shape}", args.seconds, linger))
                set_metrics(server, True)
                on_med, off_med = statistics.median(results[True]), statistics.median(results[False])
                ratios = [on / off for on, off in zip(results[True], results[False], strict=True)]
                print(f"{shape:9s} linger.ms={linger} (librdkafka, wall): metrics on {on_med:,.0f} rec/s, off "
                      f"{off_med:,.0f} rec/s, pair ratios median {statistics.median(ratios):.3f} "
                      f"(min {min(ratios):.3f}, max {max(ratios):.3f})")

            admin = AdminClient({"bootstrap.servers": bootstrap})
            admin.create_topics([NewTopic("bench-scrape", args.partitions, 1)])["bench-scrape"].result(60)
            producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
            for p in range(args.partitions):
                producer.produce("bench-scrape", b"v", partition=p)
            producer.flush(60)
            times = []
            samples = 0
            for _ in range(10):
                t0 = time.perf_counter()
                body = urllib.request.urlopen(endpoint.url, timeout=60).read()
                times.append(time.perf_counter() - t0)
                samples = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
            print(f"scrape /metrics with {len(server.log_manager.all_logs()) if server.log_manager else 0} "
                  f"partitions: median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms, "
                  f"{len(body):,} bytes, {samples:,} samples")
        finally:
            server.shutdown()


if __name__ == "__main__":
    main()
