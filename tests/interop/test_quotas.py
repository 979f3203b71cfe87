"""Client quotas enforced against real clients (confluent-kafka / librdkafka): quotas set with
`kafkapy configs --alter --entity-type clients --add-config producer_byte_rate=...` (the CLI, as an
operator would) hold a producer and a consumer to within 20% of 1 MB/s over ~5 s each.

`max.connections.per.ip.overrides` closes a client address's connection over its limit at once.

The broker runs with quota.window.num=2 (1 s windows) so the rate settles within the short runs; the
throttle itself (respond at once with throttle_time_ms, then mute the connection) is Kafka's.
"""

from __future__ import annotations

import socket
import struct
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
    # 127.0.0.2 (loopback too) may open 2 connections; the clients on 127.0.0.1 are not limited.
    with KafkaBroker({"quota.window.num": "2", "quota.window.size.seconds": "1",
                      "max.connections.per.ip.overrides": "127.0.0.2:2",
                      "group.initial.rebalance.delay.ms": "0"}) as b:  # no 3 s wait before the first join
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


def _api_versions(sock: socket.socket, correlation_id: int) -> bool:
    """Send ApiVersions v0; whether a response with this correlation id came back (False: closed)."""
    client_id = b"conn-quota"
    body = struct.pack(">hhih", 18, 0, correlation_id, len(client_id)) + client_id
    sock.sendall(struct.pack(">i", len(body)) + body)
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
        chunk = sock.recv(65536)
        if not chunk:
            return False
        data += chunk
    return struct.unpack(">i", data[4:8])[0] == correlation_id


def _connect_from(ip: str, broker) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10)
    s.bind((ip, 0))
    s.connect(("127.0.0.1", broker.port))
    return s


def test_max_connections_per_ip_refuses_the_extra_connection(broker) -> None:
    first, second = _connect_from("127.0.0.2", broker), _connect_from("127.0.0.2", broker)
    try:
        assert _api_versions(first, 1) and _api_versions(second, 2)
        third = _connect_from("127.0.0.2", broker)  # TCP accepts it; the broker closes it at once
        try:
            assert third.recv(1) == b""
        except ConnectionResetError:
            pass
        finally:
            third.close()
        first.close()
        deadline = time.monotonic() + 10
        while True:  # the broker counts the closed one out once its Processor sees the close
            fourth = _connect_from("127.0.0.2", broker)
            try:
                if _api_versions(fourth, 4):
                    break
            except ConnectionResetError:
                pass
            fourth.close()
            assert time.monotonic() < deadline
            time.sleep(0.1)
        fourth.close()
        assert _api_versions(second, 5)
    finally:
        first.close()
        second.close()


def test_produce_quota_holds_an_acks_0_producer(broker) -> None:
    """acks=0 gets no response to carry throttle_time_ms: the muted connection alone holds it back."""
    configs(broker, "--alter", "--entity-type", "clients", "--entity-name", "q-acks0",
            "--add-config", f"producer_byte_rate={QUOTA}")
    broker.create_topic("quota-acks0", partitions=1)
    p = ck.Producer({"bootstrap.servers": broker.bootstrap, "client.id": "q-acks0", "acks": 0, "linger.ms": 5,
                     "batch.size": 65536, "queue.buffering.max.kbytes": 4096})
    watcher = ck.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "q-watch"})
    tp = ck.TopicPartition("quota-acks0", 0)
    try:
        start = time.monotonic()
        while time.monotonic() - start < RUN_S:
            try:
                p.produce("quota-acks0", VALUE)
            except BufferError:
                p.poll(0.01)
        high = watcher.get_watermark_offsets(tp, timeout=10)[1]
        elapsed = time.monotonic() - start
    finally:
        p.purge()
        del p
        watcher.close()
    rate = high * len(VALUE) / elapsed
    print(f"acks=0 produce rate under a {QUOTA} B/s quota: {rate:.0f} B/s ({rate / QUOTA:.2f}x) over {elapsed:.1f} s")
    assert 0.8 * QUOTA <= rate <= 1.2 * QUOTA
