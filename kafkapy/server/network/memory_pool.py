"""MemoryPool: the bytes of requests in flight across a broker (Kafka's SimpleMemoryPool, non-strict).

`queued.max.request.bytes` > 0 gives a SocketServer one pool shared by every Processor; -1 (Kafka's
default) gives none, so reading is not limited by it. A Processor reserves a frame's announced size
from the pool when it reads the frame's size prefix, before buffering any of its bytes; the
reservation is released when the request's response is handed back (or its connection closes).
Non-strict as Kafka's broker pool: a reservation succeeds while any memory is available, so the
bytes in flight stay under `queued.max.request.bytes` + `socket.request.max.bytes`; when nothing is
available the reservation fails and the Processor stops reading that connection (it stays muted for
memory) until a release makes memory available again.

No bytes are read or written here: the pool only counts.

Thread-safety: `try_allocate` / `release` may be called from any thread (Processors reserve,
request handlers and delayed-operation completions release); one lock guards the counter.
Listeners registered with `add_release_listener` are called, outside the lock, by the releasing thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kafkapy.server.kafka_config_defs import ConfigError


class MemoryPool:
    __slots__ = ("size", "max_single_allocation", "_available", "_lock", "_listeners")

    def __init__(self, size_bytes: int, max_single_allocation: int) -> None:
        if size_bytes <= 0 or max_single_allocation <= 0:
            raise ValueError(f"invalid memory pool size {size_bytes} / max allocation {max_single_allocation}")
        self.size = size_bytes
        self.max_single_allocation = max_single_allocation
        self._available = size_bytes
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    @classmethod
    def from_config(cls, queued_max_bytes: int, socket_request_max_bytes: int) -> MemoryPool | None:
        """Kafka's SocketServer: a pool only when queued.max.request.bytes > 0, which KafkaConfig
        requires to be at least socket.request.max.bytes (one whole request always fits)."""
        if queued_max_bytes <= 0:
            return None
        if queued_max_bytes < socket_request_max_bytes:
            raise ConfigError("requirement failed: queued.max.request.bytes must be larger or equal to "
                              "socket.request.max.bytes")
        return cls(queued_max_bytes, socket_request_max_bytes)

    def add_release_listener(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def try_allocate(self, size_bytes: int) -> bool:
        if size_bytes < 0 or size_bytes > self.max_single_allocation:
            raise ValueError(f"requested size {size_bytes} is out of range [0, {self.max_single_allocation}]")
        with self._lock:
            if self._available < 1:
                return False
            self._available -= size_bytes
            return True

    def release(self, size_bytes: int) -> None:
        with self._lock:
            was_out = self._available < 1
            self._available += size_bytes
            now_in = self._available >= 1
        if was_out and now_in:
            for listener in self._listeners:
                listener()

    @property
    def available(self) -> int:
        return self._available

    def is_out_of_memory(self) -> bool:
        return self._available < 1
