"""A consume-transform-produce processor (confluent-kafka) run as a subprocess by test_transactions_eos.py.

argv: bootstrap src dst group transactional_id max_seconds [stall_after]. Reads src (read_committed, group), writes
b"out:" + value to dst and commits the consumed offsets in the same transaction (send_offsets_to_transaction),
a few records per transaction; prints "committed N" after each commit. Exits after max_seconds. With
stall_after, once N records are committed it writes the next transaction's records (flushed, not committed),
prints "stalled" and sleeps until killed: the test's SIGKILL then lands mid-transaction.
"""

from __future__ import annotations

import sys
import time

from confluent_kafka import Consumer, Producer


def main(argv: list[str]) -> int:
    bootstrap, src, dst, group, txn_id, max_seconds = argv[:6]
    stall_after = int(argv[6]) if len(argv) > 6 else None
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "isolation.level": "read_committed",
                         "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 2})
    producer.init_transactions(30)
    consumer.subscribe([src])
    done = 0
    deadline = time.monotonic() + float(max_seconds)
    while time.monotonic() < deadline:
        msgs = [m for m in consumer.consume(num_messages=7, timeout=0.5) if not m.error()]
        if not msgs:
            continue
        producer.begin_transaction()
        for m in msgs:
            producer.produce(dst, b"out:" + m.value(), key=m.key())
        producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                             consumer.consumer_group_metadata(), 30)
        if stall_after is not None and done >= stall_after:
            producer.flush(30)
            print("stalled", flush=True)
            time.sleep(float(max_seconds))
            return 1
        producer.commit_transaction(30)
        done += len(msgs)
        print(f"committed {done}", flush=True)
    consumer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
