"""A broker SIGKILLed in the middle of a transaction: after the restart the partition's producer state is
rebuilt from the log (no clean-shutdown snapshot), so the open transaction still holds the LSO back for
read_committed readers; the reloaded transaction coordinator aborts it once its timeout passes, and then
read_committed readers get exactly the committed records while read_uncommitted ones get everything."""

from __future__ import annotations

import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from txn_support import TXN_OVERRIDES  # noqa: E402

OVERRIDES = {k: v for k, v in TXN_OVERRIDES.items() if k != "listeners"}
OVERRIDES["transaction.abort.timed.out.transaction.cleanup.interval.ms"] = "500"
TXN_TIMEOUT_MS = 12_000


def offsets(bootstrap: str, isolation: str) -> tuple[int, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "probe", "isolation.level": isolation})
    try:
        return c.get_watermark_offsets(TopicPartition("crash-txn", 0), timeout=15, cached=False)
    finally:
        c.close()


def read(bootstrap: str, isolation: str, expected: int) -> list[bytes]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{isolation}", "isolation.level": isolation,
                  "enable.partition.eof": True})
    c.assign([TopicPartition("crash-txn", 0, 0)])
    out: list[bytes] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        m = c.poll(0.3)
        if m is None:
            continue
        if m.error():
            if len(out) >= expected:
                break
            continue
        out.append(m.value())
    c.close()
    return out


def test_sigkill_mid_transaction_recovers_producer_state_and_lso(broker_process) -> None:
    broker = broker_process(overrides=OVERRIDES)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic("crash-txn", 1, 1)]).values():
        f.result(30)
    p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "crash-txn-id",
                  "transaction.timeout.ms": TXN_TIMEOUT_MS, "message.timeout.ms": TXN_TIMEOUT_MS})
    p.init_transactions(30)
    committed = [b"c%d" % i for i in range(5)]
    p.begin_transaction()
    for v in committed:
        p.produce("crash-txn", v)
    p.commit_transaction(30)  # offsets 0-4, COMMIT marker at 5
    p.begin_transaction()
    for i in range(3):
        p.produce("crash-txn", b"open%d" % i)  # offsets 6-8, never committed
    p.flush(10)
    assert offsets(broker.bootstrap, "read_committed") == (0, 6)
    broker.kill()
    p.purge()
    del p

    restarted = broker_process(log_dir=broker.log_dir, overrides=OVERRIDES)
    assert offsets(restarted.bootstrap, "read_uncommitted") == (0, 9)
    assert offsets(restarted.bootstrap, "read_committed") == (0, 6)  # the open transaction was recovered
    deadline = time.monotonic() + TXN_TIMEOUT_MS / 1000 + 20
    while offsets(restarted.bootstrap, "read_committed")[1] != 10 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert offsets(restarted.bootstrap, "read_committed") == (0, 10)  # aborted: marker at 9
    assert read(restarted.bootstrap, "read_committed", 5) == committed
    assert read(restarted.bootstrap, "read_uncommitted", 8) == committed + [b"open%d" % i for i in range(3)]

    again = Producer({"bootstrap.servers": restarted.bootstrap, "transactional.id": "crash-txn-id"})
    again.init_transactions(30)
    again.begin_transaction()
    again.produce("crash-txn", b"after")
    again.commit_transaction(30)
    assert read(restarted.bootstrap, "read_committed", 6) == committed + [b"after"]
