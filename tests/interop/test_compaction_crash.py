"""A subprocess broker SIGKILLed while its cleaner rewrites a compacted topic (throttled so the pass is
under way: a `.cleaned` or `.swap` file exists): after each restart a confluent-kafka consumer reads a
correct log (every record at the offset the producer got, offsets increasing, each key's latest value
present), and once the cleaner finishes the cleaned part holds exactly one record per key."""

from __future__ import annotations

import os
import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from tests.interop.test_compaction_confluent import (  # noqa: E402
    KEYS,
    TOPIC,
    TOPIC_CONFIG,
    check_consistent,
    cleaner_checkpoint,
    consume_all,
    key_of,
    produce,
    value_of,
)

OVERRIDES = {"log.cleaner.backoff.ms": "100", "log.cleaner.dedupe.buffer.size": "1048576",
             "log.cleaner.io.max.bytes.per.second": "1500000", "log.cleaner.io.buffer.size": "65536"}
KILLS = 3


def pass_under_way(part_dir: str) -> bool:
    try:
        return any(n.endswith((".cleaned", ".swap")) for n in os.listdir(part_dir))
    except FileNotFoundError:
        return False


def cleaning_done(broker, part_dir: str) -> bool:
    """The cleaner's checkpoint reached the active (last) segment and no pass is under way."""
    bases = [int(n[:20]) for n in os.listdir(part_dir) if n.endswith(".log")]
    return not pass_under_way(part_dir) and bool(bases) and cleaner_checkpoint(broker) >= max(bases)


def test_sigkill_during_cleaning_leaves_a_correct_log(broker_process) -> None:
    broker = broker_process(overrides=OVERRIDES)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(TOPIC, 1, 1, config=TOPIC_CONFIG)]).values():
        f.result(30)
    part_dir = os.path.join(broker.log_dir, f"{TOPIC}-0")
    produced_list: list = []
    kills = 0
    for round_ in range(KILLS):
        # 2.5 MB more each round: new dirty segments for a pass to work on.
        items = [(key_of(k), value_of(k, round_ * 1000 + r)) for r in range(125) for k in range(KEYS)]
        produced_list += produce(broker.bootstrap, items)
        produced = set(produced_list)
        latest = {k: (o, v) for o, k, v in produced_list}
        deadline = time.monotonic() + 30
        while not pass_under_way(part_dir) and time.monotonic() < deadline:
            time.sleep(0.005)
        if pass_under_way(part_dir):
            time.sleep(0.1 * round_)  # a different point of the pass each time
            broker.kill()
            kills += 1
        else:
            broker.stop()
        broker = broker_process(log_dir=broker.log_dir, overrides=OVERRIDES)
        check_consistent(consume_all(broker.bootstrap, f"after-kill-{round_}"), produced, latest)
    assert kills >= 1

    # Left alone, the cleaner finishes: one record per key below its checkpoint, all latest values kept.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not cleaning_done(broker, part_dir):
        time.sleep(0.1)
    seen = consume_all(broker.bootstrap, "final")
    check_consistent(seen, set(produced_list), {k: (o, v) for o, k, v in produced_list})
    checkpoint = cleaner_checkpoint(broker)
    assert cleaning_done(broker, part_dir)
    below = [k for o, k, _ in seen if o < checkpoint]
    assert below and len(below) == len(set(below))
    broker.stop()
