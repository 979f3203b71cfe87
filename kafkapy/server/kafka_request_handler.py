"""KafkaRequestHandlerPool: num.io.threads threads that take Requests and call `apis.handle(request)`.

The handler owns no bytes: the API layer decodes `request.frame` and answers through
`request_channel.send_response`. An exception escaping `apis.handle` closes that request's
connection (the client sees a disconnect, as with Kafka) and the thread carries on.

Thread-safety: the pool is started and shut down by one owner thread; handler threads share only
the RequestChannel (thread-safe) and `apis` (which must be thread-safe).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from kafkapy.common.time import SYSTEM, Time
from kafkapy.server.network.request_channel import Request, RequestChannel

log = logging.getLogger("kafka.server.KafkaRequestHandler")

_RECEIVE_TIMEOUT_S = 0.3


class ApiRequestHandler(Protocol):
    def handle(self, request: Request) -> None: ...


class KafkaRequestHandler:
    """One handler thread."""

    def __init__(
        self, handler_id: int, broker_id: int, request_channel: RequestChannel, apis: ApiRequestHandler, time: Time
    ) -> None:
        self.id = handler_id
        self._channel = request_channel
        self._apis = apis
        self._time = time
        self._stopped = False
        # RequestHandlerAvgIdlePercent (server/broker_metrics.py): marked with idle ns / pool size; None = off.
        self.idle_meter: Any = None
        self.pool_size: Callable[[], int] = lambda: 1
        self.thread = threading.Thread(
            target=self.run, name=f"data-plane-kafka-request-handler-{handler_id}", daemon=True
        )

    def run(self) -> None:
        while not self._stopped:
            idle_start = self._time.nanoseconds()
            request = self._channel.receive_request(_RECEIVE_TIMEOUT_S)
            now = self._time.nanoseconds()  # the end of the idle wait is the request's dequeue time: one read
            if self.idle_meter is not None:
                self.idle_meter.mark((now - idle_start) // self.pool_size())
            if request is None:
                continue
            request.dequeue_ns = now
            try:
                self._apis.handle(request)
            except Exception:
                log.exception("Exception when handling request %r; closing its connection", request)
                try:
                    self._channel.close_connection(request)
                except Exception:
                    log.exception("Could not close the connection of %r", request)
            # Not kept while waiting for the next one: its frame may be up to socket.request.max.bytes.
            request = None

    def stop(self) -> None:
        self._stopped = True


class KafkaRequestHandlerPool:
    def __init__(
        self,
        num_threads: int,
        request_channel: RequestChannel,
        apis: ApiRequestHandler,
        broker_id: int = 0,
        time: Time = SYSTEM,
    ) -> None:
        if num_threads < 1:
            raise ValueError("num_threads must be at least 1")
        self._channel = request_channel
        self._apis = apis
        self._broker_id = broker_id
        self._time = time
        self._lock = threading.Lock()
        self.handlers: list[KafkaRequestHandler] = []
        self.idle_meter: Any = None  # set before the threads start by whoever wants the idle ratio
        for _ in range(num_threads):
            self._add_handler()

    def _add_handler(self) -> None:
        handler = KafkaRequestHandler(len(self.handlers), self._broker_id, self._channel, self._apis, self._time)
        handler.idle_meter, handler.pool_size = self.idle_meter, lambda: len(self.handlers) or 1
        self.handlers.append(handler)
        handler.thread.start()

    def set_idle_meter(self, meter: Any) -> None:
        """Mark RequestHandlerAvgIdlePercent from every handler thread (each marks idle ns / pool size)."""
        with self._lock:
            self.idle_meter = meter
            for handler in self.handlers:
                handler.idle_meter = meter

    @property
    def num_threads(self) -> int:
        return len(self.handlers)

    def resize_thread_pool(self, new_size: int) -> None:
        """Grow or shrink the pool (dynamic num.io.threads)."""
        if new_size < 1:
            raise ValueError("num_threads must be at least 1")
        with self._lock:
            while len(self.handlers) < new_size:
                self._add_handler()
            removed = self.handlers[new_size:]
            del self.handlers[new_size:]
        for handler in removed:
            handler.stop()
        self._channel.interrupt_receivers()
        for handler in removed:
            handler.thread.join(5)

    def shutdown(self, timeout: float = 10.0) -> None:
        with self._lock:
            handlers = list(self.handlers)
            self.handlers.clear()
        for handler in handlers:
            handler.stop()
        self._channel.interrupt_receivers()
        for handler in handlers:
            handler.thread.join(timeout)
