"""Produce-path micro-benchmark (not a test): the broker's Python cost per ProduceRequest, in process.

Each iteration runs what a request-handler thread does for one request: KafkaApis.handle decodes a
ProduceRequest v9 frame (one topic, one partition, one batch), the produce handler calls
ReplicaManager.append_records over a real LogManager in a temporary log dir (Partition ->
Log.append_as_leader -> LogSegment append + indexes), and the response is encoded and handed to a
stub RequestChannel (no socket: the network cost is not part of these figures).

Cases:
  small   - 16 records of 100 B per batch (the shape of produce_100 in bench_vs_tansu.py)
  one     - 1 record of 100 B per batch (single-message produce)
  large   - one 1 MiB batch (~1000 records of 1000 B)
Both acks=1 and acks=-1 (one replica: completes at once through the purgatory path) are measured.

    .venv/bin/python bench/bench_produce_path.py [--seconds 2] [--requests 50000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import tempfile
import time
import uuid
from typing import Any

from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState
from kafkapy.cluster.metadata_cache import MetadataCache
from kafkapy.common.time import SYSTEM
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.header import RequestHeader, encode_request
from kafkapy.protocol.messages import ProduceRequest
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.kafka_apis import KafkaApis
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.network.request_channel import Request
from kafkapy.server.replica_manager import ReplicaManager
from kafkapy.storage.log_manager import LogManager

TOPIC = "bench"
TP = TopicPartition(TOPIC, 0)


class StubChannel:
    """Collects what KafkaApis would hand to the network layer."""

    def __init__(self) -> None:
        self.sent = 0
        self.bytes = 0
        self.last: Any = None

    def send_response(self, request: Request, chunks: Any) -> None:
        self.sent += 1
        if chunks:
            self.last = chunks
            self.bytes += sum(len(c) for c in chunks)

    def close_connection(self, request: Request) -> None:
        raise RuntimeError("connection closed by the handler")


class Services:
    def __init__(self, replica_manager: ReplicaManager) -> None:
        self.replica_manager = replica_manager


def make_batch(records: int, value_size: int) -> bytes:
    builder = MemoryRecordsBuilder(producer_id=-1)
    ts = SYSTEM.milliseconds()
    value = b"v" * value_size
    for _ in range(records):
        builder.append(ts, None, value)
    return builder.build()


def make_frame(batch: bytes, acks: int, version: int = 9) -> memoryview:
    body = ProduceRequest(transactional_id=None, acks=acks, timeout_ms=30000, topic_data=[
        ProduceRequest.TopicProduceData(name=TOPIC, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=batch)])])
    whole = encode_request(RequestHeader(0, version, 7, "bench-producer"), body)
    return memoryview(whole[4:])


def run_case(apis: KafkaApis, channel: StubChannel, name: str, frame: memoryview, acks: int, records: int,
             seconds: float, max_requests: int) -> None:
    n = 0
    sent_before = channel.sent
    start = time.perf_counter()
    cpu_start = time.thread_time()
    deadline = start + seconds
    while n < max_requests:
        req = Request(0, "c-0", 0, 9, 7, frame, ("127.0.0.1", 1), 0)
        apis.handle(req)
        n += 1
        if not n & 63 and time.perf_counter() > deadline:
            break
    elapsed = time.perf_counter() - start
    cpu = time.thread_time() - cpu_start
    assert channel.sent - sent_before == n, "every request must be answered"
    us = cpu / n * 1e6
    print(f"{name:<22} {n:>7} req  {us:8.1f} us/req (thread CPU)  {elapsed / n * 1e6:8.1f} us/req wall  "
          f"{n * records / elapsed:>12,.0f} records/s  {n * len(frame) / elapsed / 1e6:8.1f} MB/s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--requests", type=int, default=50000)
    ap.add_argument("--profile", action="store_true", help="cProfile the small acks=1 case")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="kafkapy-bench-produce-")
    config = KafkaConfig({"log.dirs": root, "listeners": "PLAINTEXT://127.0.0.1:0",
                          "log.segment.bytes": str(256 * 1024 * 1024)})
    log_manager = LogManager([root], {"segment.bytes": 256 * 1024 * 1024}, SYSTEM,
                             topic_configs=lambda topic: {})
    log_manager.startup()
    rm = ReplicaManager(config, SYSTEM, log_manager, MetadataCache(0), 0, reaper_enabled=False)
    rm.startup()
    rm.become_leader_or_follower(0, 1, [LeaderAndIsrPartitionState(
        TOPIC, 0, uuid.UUID(int=1), 1, 0, 0, (0,), 0, (0,))])
    channel = StubChannel()
    apis = KafkaApis(channel, Services(rm))  # type: ignore[arg-type]
    try:
        small = make_batch(16, 100)
        one = make_batch(1, 100)
        large = make_batch(1000, 1000)
        print(f"batches: small {len(small)} B (16 x 100 B), one {len(one)} B, large {len(large)} B; "
              f"{args.seconds}s or {args.requests} requests per case")
        cases = [
            ("small acks=1", make_frame(small, 1), 1, 16, args.requests),
            ("small acks=-1", make_frame(small, -1), -1, 16, args.requests),
            ("one acks=1", make_frame(one, 1), 1, 1, args.requests),
            ("large 1MiB acks=1", make_frame(large, 1), 1, 1000, max(1, args.requests // 250)),
        ]
        for name, frame, acks, records, limit in cases:
            run_case(apis, channel, name, frame, acks, records, args.seconds / 4, min(limit, 1000))  # warm-up
            run_case(apis, channel, name, frame, acks, records, args.seconds, limit)
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            run_case(apis, channel, "profiled small acks=1", cases[0][1], 1, 16, args.seconds, args.requests)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    finally:
        rm.shutdown()
        log_manager.shutdown()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
