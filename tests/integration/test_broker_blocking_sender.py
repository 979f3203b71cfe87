"""BrokerBlockingSender against a real in-process broker and real sockets: the exchange, a request timeout and
a refused connect closing the connection with a typed error, the reconnect backoff (Kafka's ExponentialBackoff,
+-20% jitter, reset by a successful connect), a destination change reconnecting, and close() failing a call
blocked in the connect handshake, the wait for an answer or the backoff wait at once. The controller channel on
it: a LeaderAndIsr to a broker that refuses connections is retried until the broker listens, then answered once
(a fenced controller epoch, so nothing is applied); a send blocked on a frozen broker ends when the broker leaves
the live set."""

from __future__ import annotations

import random
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kafkapy.client.errors import DisconnectError, KafkaTimeoutError
from kafkapy.cluster.broker import Broker, EndPoint, Node
from kafkapy.cluster.leader_and_isr import LeaderAndIsrPartitionState
from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import ApiVersionsRequest, FetchRequest, MetadataRequest
from kafkapy.server.broker_blocking_sender import BrokerBlockingSender, ExponentialBackoff, SenderConfig
from kafkapy.server.controller_channel_manager import ControllerChannelManager

WAIT_S = 10
PARKED_TOPIC = "parked"


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return int(port)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server that accepts and never answers (a frozen broker)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(5)
        for s in accepted:
            s.close()
        server.close()


@pytest.fixture(scope="module")
def broker(kafkapy_broker: Any) -> Any:
    """The module's broker, with an empty topic to park Fetch requests on."""
    from kafkapy.client.admin import AdminClient
    from kafkapy.client.admin_types import NewTopic

    admin = AdminClient({"bootstrap.servers": kafkapy_broker.bootstrap})
    try:
        admin.create_topics([NewTopic(PARKED_TOPIC, 1, 1)])
    finally:
        admin.close()
    return kafkapy_broker


def parked_fetch() -> Any:
    """A Fetch the broker parks until max_wait_ms (the empty topic's log end, min_bytes 1)."""
    return FetchRequest(replica_id=-1, max_wait_ms=20_000, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                        session_id=0, session_epoch=-1, topics=[FetchRequest.FetchTopic(
                            topic=PARKED_TOPIC, partitions=[FetchRequest.FetchPartition(
                                partition=0, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                                partition_max_bytes=1 << 20)])], forgotten_topics_data=[])


def in_thread(fn: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as e:  # noqa: BLE001 - the outcome is what the test checks
            out.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def test_exponential_backoff_is_kafkas() -> None:
    backoff = ExponentialBackoff(50, 2, 1000, 0.2, random.Random(1))
    for attempts, base in ((0, 50), (1, 100), (2, 200), (3, 400), (4, 800)):
        values = [backoff.backoff(attempts) for _ in range(200)]
        assert min(values) >= int(base * 0.8) and max(values) <= min(int(base * 1.2), 1000)
        assert max(values) > min(values)  # jittered
    assert {backoff.backoff(20) for _ in range(200)} <= set(range(800, 1001))  # capped, jitter never above
    assert ExponentialBackoff(0, 2, 0, 0.2).backoff(5) == 0  # the fetcher's and controller channel's 0 / 0
    assert ExponentialBackoff(50, 2, 50, 0.2).backoff(7) == 50  # constant when max <= initial
    assert ExponentialBackoff(100, 2, 40, 0.2).backoff(0) == 40


def test_exchange_at_the_highest_common_version(broker: Any) -> None:
    node = Node(0, "127.0.0.1", broker.port)
    sender = BrokerBlockingSender(lambda: node, SenderConfig("test-sender"))
    try:
        response = sender.send_and_receive(MetadataRequest(topics=[], allow_auto_topic_creation=False))
        assert [(b.node_id, b.port) for b in response.brokers] == [(0, broker.port)]
        assert response.topics == []
        assert sender.node == node
        versions = sender.send_and_receive(ApiVersionsRequest(client_software_name="t",
                                                              client_software_version="1"), max_version=2)
        assert versions.error_code == 0 and any(k.api_key == 1 for k in versions.api_keys)
    finally:
        sender.close()
    with pytest.raises(DisconnectError, match="is closed"):
        sender.send_and_receive(MetadataRequest(topics=[], allow_auto_topic_creation=False))


def test_socket_options(broker: Any) -> None:
    sender = BrokerBlockingSender(lambda: Node(0, "127.0.0.1", broker.port),
                                  SenderConfig("test-sender", send_buffer_bytes=32768, receive_buffer_bytes=65536))
    try:
        sender.send_and_receive(MetadataRequest(topics=[]))
        fd = sender._conn.fileno() if sender._conn is not None else None
        assert fd is not None
        with socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM) as dup:  # a duplicate: the sender keeps its own
            assert dup.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
            assert dup.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) in (65536, 2 * 65536)  # Linux doubles it
            assert dup.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) in (32768, 2 * 32768)
    finally:
        sender.close()


def test_refused_connect_backs_off_exponentially_and_a_connect_resets_it(broker: Any) -> None:
    time_ = MockTime()
    port = [closed_port()]
    sender = BrokerBlockingSender(lambda: Node(0, "127.0.0.1", port[0]),
                                  SenderConfig("test-sender", reconnect_backoff_ms=50, reconnect_backoff_max_ms=1000),
                                  time=time_)
    try:
        with pytest.raises(DisconnectError, match="failed"):
            sender.send_and_receive(MetadataRequest(topics=[]))
        assert sender.failed_attempts == 1 and 40 <= sender.connection_delay_ms() <= 60
        time_.advance(60)
        assert sender.connection_delay_ms() == 0
        with pytest.raises(DisconnectError):
            sender.send_and_receive(MetadataRequest(topics=[]))
        assert sender.failed_attempts == 2 and 80 <= sender.connection_delay_ms() <= 120
        time_.advance(120)
        port[0] = broker.port  # the broker is there now (the next call resolves it again)
        response = sender.send_and_receive(MetadataRequest(topics=[]))
        assert [b.port for b in response.brokers] == [broker.port]
        assert sender.failed_attempts == 0 and sender.connection_delay_ms() == 0
    finally:
        sender.close()


def test_request_timeout_closes_and_the_next_call_reconnects(broker: Any) -> None:
    node = Node(0, "127.0.0.1", broker.port)
    sender = BrokerBlockingSender(lambda: node, SenderConfig("test-sender", reconnect_backoff_ms=0,
                                                             reconnect_backoff_max_ms=0))
    try:
        sender.send_and_receive(MetadataRequest(topics=[]))
        with pytest.raises(KafkaTimeoutError):
            sender.send_and_receive(parked_fetch(), max_version=12, timeout_ms=300)
        assert sender.node is None and sender.failed_attempts == 1  # closed: its answer would come late
        response = sender.send_and_receive(MetadataRequest(topics=[]))
        assert [b.port for b in response.brokers] == [broker.port]
    finally:
        sender.close()


def test_destination_change_reconnects(broker: Any) -> None:
    nodes = [Node(0, "127.0.0.1", broker.port)]
    sender = BrokerBlockingSender(lambda: nodes[-1], SenderConfig("test-sender"))
    try:
        sender.send_and_receive(MetadataRequest(topics=[]))
        assert sender.node == nodes[0]
        nodes.append(Node(0, "localhost", broker.port))  # same broker, another address
        sender.send_and_receive(MetadataRequest(topics=[]))
        assert sender.node == nodes[1]
        nodes.append(None)  # type: ignore[arg-type]  # no endpoint (the broker left the metadata)
        with pytest.raises(DisconnectError, match="No endpoint"):
            sender.send_and_receive(MetadataRequest(topics=[]))
    finally:
        sender.close()


def test_close_interrupts_a_call_waiting_for_its_answer(broker: Any) -> None:
    sender = BrokerBlockingSender(lambda: Node(0, "127.0.0.1", broker.port), SenderConfig("test-sender"))
    sender.send_and_receive(MetadataRequest(topics=[]))
    thread, out = in_thread(lambda: sender.send_and_receive(parked_fetch(), max_version=12))
    time.sleep(0.3)  # the Fetch is parked in the broker's purgatory (20 s)
    assert thread.is_alive()
    start = time.monotonic()
    sender.close()
    thread.join(WAIT_S)
    assert not thread.is_alive() and time.monotonic() - start < 2
    assert isinstance(out[0], DisconnectError)


def test_close_interrupts_a_connect_to_a_frozen_broker(silent_server: int) -> None:
    sender = BrokerBlockingSender(lambda: Node(0, "127.0.0.1", silent_server), SenderConfig("test-sender"))
    thread, out = in_thread(lambda: sender.send_and_receive(MetadataRequest(topics=[])))
    time.sleep(0.3)  # TCP is up, ApiVersions is never answered (setup timeout 10 s)
    assert thread.is_alive()
    start = time.monotonic()
    sender.close()
    thread.join(WAIT_S)
    assert not thread.is_alive() and time.monotonic() - start < 2
    assert isinstance(out[0], DisconnectError) and "closed" in str(out[0])


def test_close_interrupts_the_backoff_wait() -> None:
    sender = BrokerBlockingSender(lambda: Node(0, "127.0.0.1", closed_port()),
                                  SenderConfig("test-sender", reconnect_backoff_ms=20_000,
                                               reconnect_backoff_max_ms=20_000))
    with pytest.raises(DisconnectError):
        sender.send_and_receive(MetadataRequest(topics=[]))
    assert sender.connection_delay_ms() > 15_000
    thread, out = in_thread(lambda: sender.send_and_receive(MetadataRequest(topics=[])))
    time.sleep(0.2)
    assert thread.is_alive()
    sender.close()
    thread.join(WAIT_S)
    assert not thread.is_alive() and isinstance(out[0], DisconnectError) and "closed" in str(out[0])


def forward(listener: socket.socket, upstream_port: int, accepted: list[socket.socket]) -> None:
    """Accept on `listener` and relay each connection to the broker, both ways, until either side closes."""

    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    listener.settimeout(WAIT_S)
    while True:
        try:
            client = listener.accept()[0]
        except OSError:
            return
        accepted.append(client)
        upstream = socket.create_connection(("127.0.0.1", upstream_port))
        accepted.append(upstream)
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


def test_controller_channel_retries_until_the_broker_listens_then_stop_ends_a_blocked_send(
        broker: Any, silent_server: int) -> None:
    late = socket.socket()  # bound, not listening yet: connects are refused
    late.bind(("127.0.0.1", 0))
    late_port = late.getsockname()[1]
    channel = ControllerChannelManager(9, "PLAINTEXT", request_timeout_ms=5_000)
    answers: list[tuple[int, dict[TopicPartition, int]]] = []
    answered = threading.Event()
    channel.on_leader_and_isr_response = lambda b, errors: (answers.append((b, errors)), answered.set())
    accepted: list[socket.socket] = []
    try:
        channel.set_live_brokers({0: Broker(0, (EndPoint("PLAINTEXT", "127.0.0.1", late_port),))})
        stale_epoch = broker.server.replica_manager.controller_epoch - 1  # fenced: nothing is applied
        channel.send_leader_and_isr(0, 9, stale_epoch, [LeaderAndIsrPartitionState(
            "never-applied", 0, uuid.UUID(int=5), stale_epoch, 0, 0, (0,), 0, (0,))], [])
        time.sleep(0.5)  # refused and retried every 100 ms meanwhile
        assert not answered.is_set()
        late.listen(8)
        threading.Thread(target=forward, args=(late, broker.port, accepted), daemon=True).start()
        assert answered.wait(WAIT_S)
        assert answers == [(0, {TopicPartition("never-applied", 0): ErrorCode.STALE_CONTROLLER_EPOCH})]
        assert len(accepted) == 2  # one connection once the broker listened (client side + its relay)

        channel.set_live_brokers({1: Broker(1, (EndPoint("PLAINTEXT", "127.0.0.1", silent_server),))})
        channel.send_update_metadata([1], 9, stale_epoch, [], [], {})
        time.sleep(0.3)  # blocked in the connect handshake with a broker that never answers
        thread = channel._senders[1]._thread
        assert thread.is_alive()
        start = time.monotonic()
        channel.reset()  # the broker left the live set: its sender is closed
        thread.join(WAIT_S)
        assert not thread.is_alive() and time.monotonic() - start < 2
    finally:
        channel.reset()
        late.close()
        for s in accepted:
            s.close()
