"""SocketServer + KafkaRequestHandlerPool over loopback with echo `apis` (no Kafka semantics).

Request frames here: int32 size | api_key int16 | api_version int16 | correlation_id int32 | body.
The echo apis answers: int32 size | correlation_id int32 | body (bytes, or a FileRegion for
API_FILE), so every test checks exact bytes and ordering.
"""

from __future__ import annotations

import os
import random
import socket
import struct
import tempfile
import threading
import time as _time
from collections.abc import Callable, Iterator

import pytest

from kafkapy.common.file_region import FileRegion
from kafkapy.common.time import MockTime, Time
from kafkapy.server.kafka_config import KafkaConfig
from kafkapy.server.kafka_request_handler import KafkaRequestHandlerPool
from kafkapy.server.network.request_channel import Request, RequestChannel
from kafkapy.server.network.socket_server import SocketServer

API_ECHO = 18
API_FILE = 1
API_RAISE = 99
API_NOOP = 98
API_CLOSE = 97
API_SLOW = 96
API_LATER = 95  # answered 20 ms later from a timer thread (like a completed purgatory operation)
API_BAD_CHUNK = 94  # a response chunk that is not bytes: a bug in an API handler


class EchoApis:
    def __init__(self, channel: RequestChannel, file_region: FileRegion | None = None) -> None:
        self.channel = channel
        self.file_region = file_region
        self.requests: list[Request] = []
        self.release_slow = threading.Event()

    def handle(self, request: Request) -> None:
        self.requests.append(request)
        corr = struct.pack(">i", request.correlation_id)
        if request.api_key == API_RAISE:
            raise RuntimeError("handler bug")
        if request.api_key == API_NOOP:
            self.channel.send_response(request, None)
            return
        if request.api_key == API_CLOSE:
            self.channel.close_connection(request)
            return
        if request.api_key == API_SLOW:
            self.release_slow.wait(10)
        if request.api_key == API_BAD_CHUNK:
            self.channel.send_response(request, ["not bytes"])  # type: ignore[list-item]
            return
        if request.api_key == API_LATER:
            body = bytes(request.frame[8:])
            respond = lambda: self.channel.send_response(request, [struct.pack(">i", 4 + len(body)), corr, body])  # noqa: E731
            timer = threading.Timer(0.02, respond)
            timer.daemon = True
            timer.start()
            return
        if request.api_key == API_FILE:
            region = self.file_region
            assert region is not None
            self.channel.send_response(request, [struct.pack(">i", 4 + region.length), corr, region])
            return
        body = request.frame[8:]
        self.channel.send_response(request, [struct.pack(">i", 4 + len(body)), corr, body])


def encode_request(api_key: int, correlation_id: int, body: bytes = b"", api_version: int = 0) -> bytes:
    return struct.pack(">ihhi", 8 + len(body), api_key, api_version, correlation_id) + body


def recv_exact(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(min(n - len(out), 1 << 20))
        if not chunk:
            raise ConnectionError(f"closed after {len(out)} of {n} bytes")
        out += chunk
    return bytes(out)


def recv_response(sock: socket.socket) -> tuple[int, bytes]:
    (size,) = struct.unpack(">i", recv_exact(sock, 4))
    frame = recv_exact(sock, size)
    return struct.unpack(">i", frame[:4])[0], frame[4:]


def assert_closed_by_server(sock: socket.socket) -> None:
    sock.settimeout(5)
    try:
        data = sock.recv(1024)
    except ConnectionResetError:
        return
    assert data == b"", f"expected EOF, got {data!r}"


class Broker:
    def __init__(self, overrides: dict[str, str], time: Time | None, file_region: FileRegion | None) -> None:
        props = {"listeners": "PLAINTEXT://127.0.0.1:0", "num.network.threads": "2", "num.io.threads": "4"}
        props.update(overrides)
        self.config = KafkaConfig.from_properties(None, props)
        self.channel = RequestChannel(self.config.get_int("queued.max.requests"))
        self.apis = EchoApis(self.channel, file_region)
        kwargs = {} if time is None else {"time": time}
        self.server = SocketServer(self.config, self.channel, **kwargs)
        self.server.startup()
        self.pool = KafkaRequestHandlerPool(self.config.num_io_threads, self.channel, self.apis)
        self.sockets: list[socket.socket] = []

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.server.bound_port()), timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sockets.append(sock)
        return sock

    def roundtrip(self, sock: socket.socket, correlation_id: int, body: bytes = b"") -> None:
        sock.sendall(encode_request(API_ECHO, correlation_id, body))
        assert recv_response(sock) == (correlation_id, body)

    def wait_for(self, cond: Callable[[], bool]) -> None:
        deadline = _time.monotonic() + 5
        while not cond():
            assert _time.monotonic() < deadline, "condition not reached within 5s"
            _time.sleep(0.005)

    def shutdown(self) -> None:
        self.apis.release_slow.set()
        for sock in self.sockets:
            sock.close()
        self.server.shutdown()
        self.pool.shutdown()


BROKER_THREAD_PREFIXES = ("data-plane-kafka-",)


def broker_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(BROKER_THREAD_PREFIXES)]


@pytest.fixture
def start_broker() -> Iterator[Callable[..., Broker]]:
    assert broker_threads() == []
    brokers: list[Broker] = []

    def start(time: Time | None = None, file_region: FileRegion | None = None, **overrides: str) -> Broker:
        broker = Broker({k.replace("_", "."): v for k, v in overrides.items()}, time, file_region)
        brokers.append(broker)
        return broker

    yield start
    for broker in brokers:
        broker.shutdown()
    assert broker_threads() == []


def test_request_fields_and_echo(start_broker) -> None:
    broker = start_broker()
    port = broker.server.bound_port()
    assert port != 0
    sock = broker.connect()
    sock.sendall(encode_request(API_ECHO, 7, b"hello", api_version=3))
    assert recv_response(sock) == (7, b"hello")
    (req,) = broker.apis.requests
    assert (req.api_key, req.api_version, req.correlation_id) == (API_ECHO, 3, 7)
    assert bytes(req.frame) == encode_request(API_ECHO, 7, b"hello", api_version=3)[4:]
    assert req.client_address == sock.getsockname()
    local, remote, index = req.connection_id.rsplit("-", 2)
    assert local == f"127.0.0.1:{port}" and remote == f"127.0.0.1:{sock.getsockname()[1]}"
    assert index.isdigit()
    assert req.processor_id in {p.id for p in broker.server.processors}
    assert req.listener_name == "PLAINTEXT" and req.start_ns <= req.dequeue_ns


def test_pipelined_requests_answered_in_order(start_broker) -> None:
    broker = start_broker(num_io_threads="8")
    sock = broker.connect()
    bodies = [os.urandom(i * 37 % 500) for i in range(200)]
    sock.sendall(b"".join(encode_request(API_ECHO, i, b) for i, b in enumerate(bodies)))
    for i, body in enumerate(bodies):
        assert recv_response(sock) == (i, body)


def test_many_connections_across_processors(start_broker) -> None:
    broker = start_broker(num_network_threads="3")
    socks = [broker.connect() for _ in range(30)]
    for round_ in range(3):
        for i, sock in enumerate(socks):
            sock.sendall(encode_request(API_ECHO, i * 10 + round_, b"c%d" % i))
        for i, sock in enumerate(socks):
            assert recv_response(sock) == (i * 10 + round_, b"c%d" % i)
    assert [p.connection_count() for p in broker.server.processors] == [10, 10, 10]
    ids = {r.connection_id for r in broker.apis.requests}
    assert len(ids) == 30


def test_small_request_queue_applies_backpressure(start_broker) -> None:
    broker = start_broker(queued_max_requests="1", num_io_threads="1")
    socks = [broker.connect() for _ in range(20)]
    for i, sock in enumerate(socks):
        sock.sendall(b"".join(encode_request(API_ECHO, i * 100 + j, b"x" * j) for j in range(5)))
    for i, sock in enumerate(socks):
        for j in range(5):
            assert recv_response(sock) == (i * 100 + j, b"x" * j)


def test_oversized_frame_closes_only_that_connection(start_broker) -> None:
    broker = start_broker(socket_request_max_bytes="1000")
    good = broker.connect()
    bad = broker.connect()
    broker.roundtrip(good, 1, b"a" * 900)
    # 2 GiB announced: must be refused before any allocation.
    bad.sendall(struct.pack(">i", 2**31 - 1) + b"\x00" * 64)
    assert_closed_by_server(bad)
    broker.roundtrip(good, 2, b"b" * 991)
    over = broker.connect()
    over.sendall(encode_request(API_ECHO, 3, b"c" * 993))  # 1001 bytes
    assert_closed_by_server(over)
    broker.roundtrip(good, 4)


@pytest.mark.parametrize(
    "garbage",
    [
        b"\xff\xff\xff\xfe" + b"junk",  # negative size
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",  # size 0x47455420 > max
        struct.pack(">i", 4) + b"abcd",  # shorter than a request header
        struct.pack(">i", 0),
        b"\x80" + random.Random(42).randbytes(300),
    ],
    ids=["negative", "http", "short", "empty", "random"],
)
def test_garbage_closes_only_that_connection(start_broker, garbage: bytes) -> None:
    broker = start_broker()
    good = broker.connect()
    bad = broker.connect()
    broker.roundtrip(good, 1, b"before")
    bad.sendall(garbage)
    assert_closed_by_server(bad)
    broker.roundtrip(good, 2, b"after")
    broker.wait_for(lambda: broker.server.connection_count() == 1)


def test_handler_exception_closes_only_that_connection(start_broker) -> None:
    broker = start_broker(num_io_threads="1")
    good = broker.connect()
    bad = broker.connect()
    bad.sendall(encode_request(API_RAISE, 5))
    assert_closed_by_server(bad)
    for i in range(3):  # the single handler thread is still alive
        broker.roundtrip(good, i, b"ok")
    assert len(broker.pool.handlers) == 1 and broker.pool.handlers[0].thread.is_alive()


def test_close_connection_from_handler(start_broker) -> None:
    broker = start_broker()
    sock = broker.connect()
    sock.sendall(encode_request(API_CLOSE, 1))
    assert_closed_by_server(sock)


def test_no_response_unmutes(start_broker) -> None:
    broker = start_broker()
    sock = broker.connect()
    sock.sendall(encode_request(API_NOOP, 1) + encode_request(API_ECHO, 2, b"next"))
    assert recv_response(sock) == (2, b"next")


def test_connection_stays_muted_while_request_in_flight(start_broker) -> None:
    broker = start_broker()
    sock = broker.connect()
    sock.sendall(encode_request(API_SLOW, 1, b"slow") + encode_request(API_ECHO, 2, b"fast"))
    broker.wait_for(lambda: len(broker.apis.requests) == 1)
    _time.sleep(0.05)  # give a wrongly unmuted processor time to read the second request
    assert len(broker.apis.requests) == 1
    broker.apis.release_slow.set()
    assert recv_response(sock) == (1, b"slow")
    assert recv_response(sock) == (2, b"fast")


def test_partial_frames_byte_at_a_time(start_broker) -> None:
    broker = start_broker()
    sock = broker.connect()
    data = encode_request(API_ECHO, 11, b"dribble") + encode_request(API_ECHO, 12, b"")
    for i in range(len(data)):
        sock.send(data[i : i + 1])
        if i % 3 == 0:
            _time.sleep(0.001)  # let the processor see short reads
    assert recv_response(sock) == (11, b"dribble")
    assert recv_response(sock) == (12, b"")


def test_large_request_and_response(start_broker) -> None:
    # A small receive buffer makes the 3 MiB request arrive in many short reads.
    broker = start_broker(socket_receive_buffer_bytes="8192")
    sock = broker.connect()
    body = random.Random(1).randbytes(3 * 1024 * 1024 + 17)
    sender = threading.Thread(target=sock.sendall, args=(encode_request(API_ECHO, 9, body),))
    sender.start()
    assert recv_response(sock) == (9, body)
    sender.join(10)


def test_file_region_sent_with_sendfile(start_broker) -> None:
    data = random.Random(7).randbytes(2 * 1024 * 1024)
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        region = FileRegion(f, 12345, 1_500_000)
        # 1.5 MB is far over the socket send buffer: sendfile writes it in partial sends.
        broker = start_broker(file_region=region)
        sock = broker.connect()
        # Pipeline two so the second waits while the first is written in partial sendfile calls.
        sock.sendall(encode_request(API_FILE, 1) + encode_request(API_ECHO, 2, b"tail"))
        _time.sleep(0.05)  # let the server fill its small send buffer and wait for writability
        assert recv_response(sock) == (1, data[12345 : 12345 + 1_500_000])
        assert recv_response(sock) == (2, b"tail")


def test_idle_connections_closed_with_mock_time(start_broker) -> None:
    time = MockTime()
    broker = start_broker(time=time, connections_max_idle_ms="1000")
    idle = broker.connect()
    busy = broker.connect()
    broker.wait_for(lambda: broker.server.connection_count() == 2)
    time.advance(600)
    broker.roundtrip(busy, 1)
    time.advance(600)
    assert_closed_by_server(idle)
    broker.roundtrip(busy, 2)
    broker.wait_for(lambda: broker.server.connection_count() == 1)


def test_shutdown_closes_connections_and_joins_threads(start_broker) -> None:
    broker = start_broker(num_network_threads="3", num_io_threads="3")
    socks = [broker.connect() for _ in range(6)]
    for i, sock in enumerate(socks):
        broker.roundtrip(sock, i)
    assert len(broker_threads()) == 1 + 3 + 3
    port = broker.server.bound_port()
    broker.server.shutdown()
    broker.pool.shutdown()
    assert broker_threads() == []
    for sock in socks:
        assert_closed_by_server(sock)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_startup_failure_leaks_nothing(start_broker) -> None:
    first = start_broker()
    port = first.server.bound_port()
    config = KafkaConfig.from_properties(None, {"listeners": f"PLAINTEXT://127.0.0.1:{port}"})
    server = SocketServer(config, RequestChannel(10))
    with pytest.raises(OSError, match="failed to bind"):
        server.startup()
    assert len(broker_threads()) == 1 + 2 + 4  # only the first broker's


def test_advertised_endpoints_resolve_ephemeral_port(start_broker) -> None:
    broker = start_broker()
    (ep,) = broker.server.advertised_endpoints()
    assert (ep.listener_name, ep.host, ep.port) == ("PLAINTEXT", "127.0.0.1", broker.server.bound_port())


def test_sequential_round_trips_never_wait_for_the_poll_timeout(start_broker) -> None:
    # A lost selector wakeup shows up as ~0.3 s stalls (the poll timeout) per round trip.
    broker = start_broker(num_network_threads="1")
    socks = [broker.connect() for _ in range(4)]
    started = _time.monotonic()
    for i in range(400):
        broker.roundtrip(socks[i % 4], i, b"w")
    assert _time.monotonic() - started < 15


def test_responses_from_another_thread_keep_order(start_broker) -> None:
    broker = start_broker()
    sock = broker.connect()
    sock.sendall(
        encode_request(API_LATER, 1, b"later") + encode_request(API_ECHO, 2, b"now") + encode_request(API_LATER, 3)
    )
    assert recv_response(sock) == (1, b"later")
    assert recv_response(sock) == (2, b"now")
    assert recv_response(sock) == (3, b"")
    broker.roundtrip(sock, 4, b"again")


def test_pipelined_request_then_bad_frame_closes_after_answering(start_broker) -> None:
    broker = start_broker(socket_request_max_bytes="1000")
    good = broker.connect()
    bad = broker.connect()
    # One write: the second frame is read while the first is in flight, checked when it is taken.
    bad.sendall(encode_request(API_ECHO, 1, b"first") + struct.pack(">i", 5000) + b"x" * 64)
    assert recv_response(bad) == (1, b"first")
    assert_closed_by_server(bad)
    broker.roundtrip(good, 2, b"still served")
    broker.wait_for(lambda: broker.server.connection_count() == 1)


def test_large_response_to_slow_reader_then_pipelined_request(start_broker) -> None:
    # The responder writes what the socket takes; the Processor finishes on writability, then
    # parses the request that was read behind the first one.
    broker = start_broker(socket_send_buffer_bytes="8192")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)  # before connecting: a small window
    sock.settimeout(10)
    sock.connect(("127.0.0.1", broker.server.bound_port()))
    broker.sockets.append(sock)
    body = random.Random(3).randbytes(1024 * 1024 + 5)
    small = [encode_request(API_ECHO, 10 + i, b"s%d" % i) for i in range(3)]
    sender = threading.Thread(target=sock.sendall, args=(encode_request(API_ECHO, 9, body) + b"".join(small),))
    sender.start()
    _time.sleep(0.1)  # the server's send buffer fills up while we do not read
    assert len(broker.apis.requests) == 1
    assert recv_response(sock) == (9, body)
    for i in range(3):
        assert recv_response(sock) == (10 + i, b"s%d" % i)
    sender.join(10)


def test_client_gone_before_its_response_is_dropped(start_broker) -> None:
    broker = start_broker(num_network_threads="1")
    gone = broker.connect()
    gone.sendall(encode_request(API_SLOW, 1, b"slow"))
    broker.wait_for(lambda: len(broker.apis.requests) == 1)
    gone.close()
    broker.sockets.remove(gone)
    other = broker.connect()
    broker.roundtrip(other, 2, b"meanwhile")  # the processor saw nothing of the muted connection yet
    broker.apis.release_slow.set()  # the response hits a closed peer: dropped, nothing else breaks
    broker.wait_for(lambda: broker.server.connection_count() == 1)
    for i in range(3):
        broker.roundtrip(other, 3 + i, b"after")


def test_many_pipelining_connections_with_tiny_queue(start_broker) -> None:
    # queued.max.requests=1: responders often cannot queue the next pipelined request themselves
    # and hand it back to the Processor; every answer must still come, in order.
    broker = start_broker(queued_max_requests="1", num_io_threads="3", num_network_threads="2")
    socks = [broker.connect() for _ in range(8)]
    bodies = {i: [os.urandom((i * 7 + j) % 300) for j in range(40)] for i in range(8)}
    for i, sock in enumerate(socks):
        sock.sendall(b"".join(encode_request(API_ECHO, j, b) for j, b in enumerate(bodies[i])))
    for i, sock in enumerate(socks):
        for j, body in enumerate(bodies[i]):
            assert recv_response(sock) == (j, body)


def test_unwritable_response_closes_only_that_connection(start_broker) -> None:
    broker = start_broker(num_io_threads="1")
    good = broker.connect()
    bad = broker.connect()
    bad.sendall(encode_request(API_BAD_CHUNK, 1))
    assert_closed_by_server(bad)
    for i in range(3):
        broker.roundtrip(good, i, b"ok")
    assert broker.pool.handlers[0].thread.is_alive()
    broker.wait_for(lambda: broker.server.connection_count() == 1)
