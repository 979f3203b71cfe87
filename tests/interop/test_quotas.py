"""Client quotas enforced against real clients (confluent-kafka / librdkafka): quotas set with
`kafkapy configs --alter --entity-type clients --add-config producer_byte_rate=...` (the CLI, as an
operator would) hold a producer and a consumer to within 20% of 1 MB/s over ~5 s each.

The broker runs with quota.window.num=2 (1 s windows) so the rate settles within the short runs; the
throttle itself (respond at once with throttle_time_ms, then mute the connection) is Kafka's.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kafkapy.testing import KafkaBroker

ck = pytest.importorskip("confluent_kafka")

QUOTA = 1048576
RUN_S = 5.0
VALUE = b"q" * 10_000


@pytest.fixture(scope="module")
def broker():
    with KafkaBroker({"quota.window.num": "2", "quota.window.size.seconds": "1"}) as b:
        yield b


def configs(broker, *args: str) -> str:
    rs = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "configs", "--bootstrap-server", broker.bootstrap, *args],
                        capture_output=True, text=True, timeout=60)
    assert rs.returncode == 0, rs.stderr
    return rs.stdout


def test_configs_alter_and_describe_client_quota(broker) -> None:
    out = configs(broker, "--alter", "--entity-type", "users", "--entity-name", "alice",
                  "--add-config", "producer_byte_rate=2048,consumer_byte_rate=4096")
    assert "Completed updating config for user alice." in out
    out = configs(broker, "--describe", "--entity-type", "users")
    assert "Quota configs for user-principal 'alice' are producer_byte_rate=2048.0, consumer_byte_rate=4096.0" in out
    configs(broker, "--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config",
            "producer_byte_rate,consumer_byte_rate")
    assert "alice" not in configs(broker, "--describe", "--entity-type", "users")


def test_produce_quota_holds_producer_to_1mb_per_s(broker) -> None:
    configs(broker, "--alter", "--entity-type", "clients", "--entity-name", "q-producer",
            "--add-config", f"producer_byte_rate={QUOTA}")
    broker.create_topic("quota-produce", partitions=1)
    acked = [0]

    def on_delivery(err, msg) -> None:
        if err is None:
            acked[0] += len(msg.value())

    p = ck.Producer({"bootstrap.servers": broker.bootstrap, "client.id": "q-producer", "linger.ms": 5,
                     "batch.size": 65536, "queue.buffering.max.kbytes": 4096})
    start = time.monotonic()
    while time.monotonic() - start < RUN_S:
        try:
            p.produce("quota-produce", VALUE, on_delivery=on_delivery)
        except BufferError:
            p.poll(0.01)
        p.poll(0)
    elapsed = time.monotonic() - start
    done = acked[0]
    p.flush(30)
    del p
    rate = done / elapsed
    print(f"produce rate under a {QUOTA} B/s quota: {rate:.0f} B/s ({rate / QUOTA:.2f}x) over {elapsed:.1f} s")
    assert 0.8 * QUOTA <= rate <= 1.2 * QUOTA


def test_fetch_quota_holds_consumer_to_1mb_per_s(broker) -> None:
    broker.create_topic("quota-fetch", partitions=1)
    p = ck.Producer({"bootstrap.servers": broker.bootstrap, "client.id": "q-loader", "linger.ms": 5})
    for _ in range(1000):  # 10 MB: more than the consumer may read in RUN_S
        while True:
            try:
                p.produce("quota-fetch", VALUE)
                break
            except BufferError:
                p.poll(0.01)
    assert p.flush(60) == 0
    del p
    configs(broker, "--alter", "--entity-type", "clients", "--entity-name", "q-consumer",
            "--add-config", f"consumer_byte_rate={QUOTA}")
    c = ck.Consumer({"bootstrap.servers": broker.bootstrap, "client.id": "q-consumer", "group.id": "q-group",
                     "auto.offset.reset": "earliest", "max.partition.fetch.bytes": 262144,
                     "fetch.max.bytes": 262144, "message.max.bytes": 262144})
    c.subscribe(["quota-fetch"])
    try:
        first = c.poll(15)
        assert first is not None and first.error() is None
        start = time.monotonic()
        got = 0
        while time.monotonic() - start < RUN_S:
            m = c.poll(0.1)
            if m is not None and m.error() is None:
                got += len(m.value())
        elapsed = time.monotonic() - start
    finally:
        c.close()
    rate = got / elapsed
    print(f"fetch rate under a {QUOTA} B/s quota: {rate:.0f} B/s ({rate / QUOTA:.2f}x) over {elapsed:.1f} s")
    assert 0.8 * QUOTA <= rate <= 1.2 * QUOTA
