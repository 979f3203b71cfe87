"""Clickstream input generator: deterministic page-view events produced to a topic with kafkapy's client.

Each event is one record: key = user id, value = JSON {"user": ..., "page": ...}, record timestamp =
the event time (the pipelines window on Spark's `timestamp` column). `click_events(n, seed, start_ms)`
gives the same events for the same arguments, so tests can compute the expected counts.

    python examples/clickstream/clicks.py --bootstrap-server 127.0.0.1:9092 --topic clicks --events 100000
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

PAGES = ("/", "/search", "/product/1", "/product/2", "/product/3", "/cart", "/checkout", "/help")


def click_events(n: int, seed: int = 7, start_ms: int | None = None) -> list[tuple[int, str, str]]:
    """(timestamp ms, user, page) for n events, 250 ms apart on average, starting at start_ms."""
    rng = random.Random(seed)
    if start_ms is None:
        start_ms = (int(time.time()) // 60 - 60) * 60_000  # an hour ago, on a minute
    out = []
    for i in range(n):
        ts = start_ms + i * 250 + rng.randrange(0, 250)
        page = PAGES[min(int(rng.expovariate(0.6)), len(PAGES) - 1)]
        out.append((ts, f"u{rng.randrange(1000)}", page))
    return out


def produce_clicks(bootstrap: str, topic: str, events: list[tuple[int, str, str]], partitions: int = 3) -> None:
    from kafkapy.client.admin import AdminClient, NewTopic
    from kafkapy.client.producer import KafkaProducer

    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        admin.create_topics([NewTopic(topic, partitions, 1)], raise_errors=False)  # may exist already
    producer = KafkaProducer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20,
                              "compression.type": "lz4"})
    try:
        for ts, user, page in events:
            value = json.dumps({"user": user, "page": page}, separators=(",", ":")).encode()
            producer.send(topic, value, key=user.encode(), timestamp=ts)
        producer.flush()
    finally:
        producer.close()


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description="Produce synthetic page-view events")
    p.add_argument("--bootstrap-server", default="127.0.0.1:9092")
    p.add_argument("--topic", default="clicks")
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--start-ms", type=int, default=None)
    p.add_argument("--partitions", type=int, default=3)
    a = p.parse_args(argv)
    events = click_events(a.events, a.seed, a.start_ms)
    produce_clicks(a.bootstrap_server, a.topic, events, a.partitions)
    print(f"produced {len(events)} click events to {a.topic}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
