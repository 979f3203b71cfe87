"""Micro-benchmark of the protocol codec (not a test): encode/decode ops/s of a Produce v9 request
and a Fetch v12 response, each with 10 partitions of 1 KiB record blobs.

Run: .venv/bin/python bench/bench_protocol.py
"""

from __future__ import annotations

import time

from kafkapy.protocol.header import encode_response
from kafkapy.protocol.messages import FetchResponse, ProduceRequest

RECORDS = bytes(range(256)) * 4


def produce_request() -> ProduceRequest:
    return ProduceRequest(
        transactional_id=None, acks=-1, timeout_ms=30000,
        topic_data=[ProduceRequest.TopicProduceData(name="bench-topic", partition_data=[
            ProduceRequest.PartitionProduceData(index=i, records=RECORDS) for i in range(10)])],
    )


def fetch_response() -> FetchResponse:
    return FetchResponse(
        throttle_time_ms=0, error_code=0, session_id=0,
        responses=[FetchResponse.FetchableTopicResponse(topic="bench-topic", partitions=[
            FetchResponse.PartitionData(partition_index=i, error_code=0, high_watermark=1000, last_stable_offset=1000,
                                        log_start_offset=0, aborted_transactions=None, records=RECORDS)
            for i in range(10)])],
    )


def rate(fn, seconds: float = 0.5) -> float:
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(100):
            fn()
        n += 100
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


def main() -> None:
    req = produce_request()
    raw_req = req.encode(9)
    resp = fetch_response()
    raw_resp = resp.encode(12)
    assert ProduceRequest.decode(raw_req, 9) == req and FetchResponse.decode(raw_resp, 12) == resp
    results = {
        "ProduceRequest v9 decode (10 partitions)": rate(lambda: ProduceRequest.decode(raw_req, 9)),
        "ProduceRequest v9 encode (10 partitions)": rate(lambda: req.encode(9)),
        "FetchResponse v12 encode (10 partitions)": rate(lambda: resp.encode(12)),
        "FetchResponse v12 encode_response (+header)": rate(lambda: encode_response(1, 12, 1, resp)),
        "FetchResponse v12 decode (10 partitions)": rate(lambda: FetchResponse.decode(raw_resp, 12)),
        "FetchResponse v12 build + encode_response": rate(lambda: encode_response(1, 12, 1, fetch_response())),
    }
    for name, ops in results.items():
        print(f"{name:48s} {ops:12,.0f} ops/s  {1e6 / ops:8.1f} us/op")


if __name__ == "__main__":
    main()
