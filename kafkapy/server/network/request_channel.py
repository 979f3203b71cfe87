"""RequestChannel: the hand-off between network Processors and request-handler threads.

Processors put parsed Requests into one bounded queue (`queued.max.requests`; a full queue blocks
the processor, which is Kafka's back-pressure); handler threads take them with
`receive_request(timeout)` (parked LIFO, one wake per request). A handler answers with
`send_response(request, chunks)`, which routes the response to the Processor that owns the
connection: written there and then on the calling thread when the socket takes it, else queued for
the Processor thread (see socket_server.py).

A Request's `frame` is one whole request without its int32 size prefix: request header then body,
big-endian (api_key int16, api_version int16, correlation_id int32, client_id, ...). Response chunks
are the bytes to write verbatim, size prefix included (bytes, bytearray, memoryview or FileRegion).

Thread-safety: every method may be called from any thread; one lock guards the request queue and
the parked receivers.
"""

from __future__ import annotations

import threading
import time as _time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kafkapy.common.file_region import FileRegion
from kafkapy.common.kafka_principal import ANONYMOUS, KafkaPrincipal

Chunk = bytes | bytearray | memoryview | FileRegion


@dataclass(slots=True, eq=False)
class Request:
    processor_id: int
    connection_id: str
    api_key: int
    api_version: int
    correlation_id: int
    frame: memoryview
    client_address: tuple[str, int]
    start_ns: int
    listener_name: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"
    dequeue_ns: int = 0
    principal: KafkaPrincipal = ANONYMOUS  # who the connection authenticated as when the request arrived
    sasl: Any = None  # SASL listeners: the connection's SaslSession (network/sasl_session.py)
    raw_sasl_token: bool = False  # a bare SASL token (after SaslHandshake v0), framed here as SaslAuthenticate v0
    context: Any = None  # free for the API layer (e.g. the decoded header)

    def __repr__(self) -> str:
        return (
            f"Request(api_key={self.api_key}, api_version={self.api_version}, correlation_id={self.correlation_id}, "
            f"connection_id={self.connection_id!r}, size={len(self.frame)})"
        )


SEND = 0
NOOP = 1  # no response bytes (acks=0): just unmute the connection
CLOSE = 2
SEND_AND_CLOSE = 3  # the last response on the connection (failed authentication): write it, then close


@dataclass(slots=True, eq=False)
class Response:
    request: Request
    chunks: Sequence[Chunk] | None
    action: int = SEND
    delay_ms: int = 0  # held back by the Processor this long first (connection.failed.authentication.delay.ms)
    throttle_ms: int = 0  # a quota throttle: sent at once, then the connection stays muted this long


class ResponseSink(Protocol):
    """What a Processor offers the channel."""

    def enqueue_response(self, response: Response) -> None: ...


class _ThreadState(threading.local):
    """Per-thread facts of a RequestChannel; the class attributes are each thread's starting values."""

    receiver = False  # the thread takes requests from this channel (a request handler)
    waiter: threading.Lock | None = None  # its park lock, made on its first wait


class RequestChannel:
    def __init__(self, queue_size: int) -> None:
        if queue_size < 1:
            raise ValueError("queue_size must be at least 1")
        self.queue_size = queue_size
        self._requests: deque[Request] = deque()
        self._lock = threading.Lock()
        self._not_full = threading.Condition(self._lock)
        self._full_waiters = 0  # senders waiting for room
        # Parked receivers, each blocked on its own held lock; a new request releases the most
        # recently parked one (LIFO: the warmest thread, maybe not even asleep yet), after
        # `_lock` is dropped so the woken thread does not sleep again on it. Exactly one wake
        # per request (a Condition adds a second sleep on its lock; a SimpleQueue wakes a second,
        # idle getter on every put).
        self._parked: list[threading.Lock] = []
        self._interrupts = 0
        self._processors: dict[int, ResponseSink] = {}
        self._local = _ThreadState()

    # -- processors -----------------------------------------------------------------------------

    def add_processor(self, processor_id: int, processor: ResponseSink) -> None:
        if processor_id in self._processors:
            raise ValueError(f"Processor id {processor_id} already registered")
        self._processors[processor_id] = processor

    def remove_processor(self, processor_id: int) -> None:
        self._processors.pop(processor_id, None)

    # -- requests -------------------------------------------------------------------------------

    def send_request(self, request: Request, timeout: float | None = None, wake_receiver: bool = True) -> bool:
        """Queue a request, blocking while the queue is full for up to timeout seconds (None =
        forever). Returns False if it timed out. wake_receiver=False: the caller is a receiver
        thread that calls receive_request next (see in_receiver_thread), so it takes the request
        itself instead of waking another thread to contend with it for the GIL; should it be held
        up, a parked receiver still finds the request when its receive timeout expires."""
        with self._lock:
            if len(self._requests) >= self.queue_size:
                deadline = None if timeout is None else _time.monotonic() + timeout
                self._full_waiters += 1
                try:
                    while len(self._requests) >= self.queue_size:
                        remaining = None if deadline is None else deadline - _time.monotonic()
                        if remaining is not None and remaining <= 0:
                            return False
                        self._not_full.wait(remaining)
                finally:
                    self._full_waiters -= 1
            self._requests.append(request)
            parked = self._parked.pop() if self._parked and wake_receiver else None
        if parked is not None:
            parked.release()
        return True

    def receive_request(self, timeout: float | None = None) -> Request | None:
        """Take the oldest request, waiting up to timeout seconds (None = until one arrives or
        interrupt_receivers() is called). Returns None on timeout or interrupt."""
        deadline = None
        self._local.receiver = True
        with self._lock:
            generation = self._interrupts
            while True:
                if self._requests:
                    request = self._requests.popleft()
                    if self._full_waiters:
                        self._not_full.notify()
                    return request
                if self._interrupts != generation:
                    return None
                if timeout is not None:
                    if deadline is None:
                        deadline = _time.monotonic() + timeout
                    remaining = deadline - _time.monotonic()
                    if remaining <= 0:
                        return None
                else:
                    remaining = -1
                waiter = self._waiter()
                self._parked.append(waiter)
                self._lock.release()
                try:
                    signalled = waiter.acquire(True, remaining)
                finally:
                    self._lock.acquire()
                if not signalled:
                    try:
                        self._parked.remove(waiter)
                    except ValueError:  # released just as we timed out: consume the release
                        waiter.acquire()

    def in_receiver_thread(self) -> bool:
        """Whether the calling thread takes requests from this channel (a request handler)."""
        return self._local.receiver

    def _waiter(self) -> threading.Lock:
        """This thread's park lock, held (so acquiring it again blocks until a release)."""
        waiter = self._local.waiter
        if waiter is None:
            waiter = self._local.waiter = threading.Lock()
            waiter.acquire()
        return waiter

    def interrupt_receivers(self) -> None:
        """Make every thread blocked in receive_request return None (used at shutdown)."""
        with self._lock:
            self._interrupts += 1
            parked, self._parked = self._parked, []
        for waiter in parked:
            waiter.release()

    @property
    def request_queue_size(self) -> int:
        return len(self._requests)

    def clear(self) -> list[Request]:
        """Drop queued requests (shutdown); returns them."""
        with self._lock:
            dropped = list(self._requests)
            self._requests.clear()
            self._not_full.notify_all()
            return dropped

    # -- responses ------------------------------------------------------------------------------

    def send_response(self, request: Request, chunks: Sequence[Chunk] | None, throttle_ms: int = 0) -> None:
        """Send `chunks` (the whole response, size prefix included) on the request's connection, or,
        with None, send nothing and resume reading (acks=0); with `throttle_ms` the connection is read
        again only that long after (Kafka's quota throttle: the channel is muted, no thread waits)."""
        self._route(Response(request, chunks, SEND if chunks is not None else NOOP, 0, throttle_ms))

    def send_final_response(self, request: Request, chunks: Sequence[Chunk] | None, delay_ms: int = 0) -> None:
        """Send `chunks` (or nothing) after `delay_ms`, then close the connection; the connection stays
        muted meanwhile and no handler thread waits (Kafka's delayed close on failed authentication)."""
        self._route(Response(request, chunks, SEND_AND_CLOSE, delay_ms))

    def close_connection(self, request: Request) -> None:
        """Close the request's connection without answering."""
        self._route(Response(request, None, CLOSE))

    def _route(self, response: Response) -> None:
        processor = self._processors.get(response.request.processor_id)
        if processor is not None:  # gone at shutdown: nothing left to answer
            processor.enqueue_response(response)
