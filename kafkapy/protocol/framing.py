"""FrameDecoder: splits a TCP byte stream into Kafka frames (`int32 size` + that many bytes).

The size is checked as soon as its 4 bytes arrive, before any buffer for the frame is allocated:
negative sizes raise InvalidFrameError, sizes above `max_frame_bytes` raise FrameTooLargeError
(the caller closes the connection).  Complete frames are returned as memoryviews over immutable
bytes (zero copy when a frame arrived within one `feed`).  Not thread-safe: one decoder per
connection, used by the thread that owns the connection.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from kafkapy.protocol.types import INT32, ProtocolDecodeError


class InvalidFrameError(ProtocolDecodeError):
    """A negative frame size."""


class FrameTooLargeError(ProtocolDecodeError):
    """A frame size above the configured maximum (socket.request.max.bytes)."""

    def __init__(self, size: int, max_frame_bytes: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the maximum of {max_frame_bytes}")
        self.size = size
        self.max_frame_bytes = max_frame_bytes


class FrameDecoder:
    def __init__(self, max_frame_bytes: int) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._parts: deque[bytes] = deque()
        self._pos = 0  # read position in _parts[0]
        self._avail = 0  # unread bytes across all parts
        self._size = -1  # size of the frame being assembled, -1 until its prefix is read

    @property
    def buffered_bytes(self) -> int:
        return self._avail

    def feed(self, data: Any) -> None:
        """Append bytes read from the socket (bytes are kept as is; other buffers are copied)."""
        if not data:
            return
        if type(data) is not bytes:
            data = bytes(data)
        self._parts.append(data)
        self._avail += len(data)

    def _coalesce(self, n: int) -> None:
        """Make _parts[0][_pos:] hold at least n bytes (n <= _avail)."""
        first = self._parts[0]
        if len(first) - self._pos >= n:
            return
        chunks = [first[self._pos :] if self._pos else first]
        have = len(chunks[0])
        self._parts.popleft()
        while have < n:
            nxt = self._parts.popleft()
            chunks.append(nxt)
            have += len(nxt)
        self._parts.appendleft(b"".join(chunks))
        self._pos = 0

    def _consume(self, n: int) -> memoryview:
        first = self._parts[0]
        start = self._pos
        view = memoryview(first)[start : start + n]
        self._pos = start + n
        self._avail -= n
        if self._pos == len(first):
            self._parts.popleft()
            self._pos = 0
        return view

    def next_frame(self) -> memoryview | None:
        """The next complete frame (without its size prefix), or None until more bytes arrive."""
        if self._size < 0:
            if self._avail < 4:
                return None
            self._coalesce(4)
            size = INT32.unpack_from(self._parts[0], self._pos)[0]
            if size < 0:
                raise InvalidFrameError(f"invalid negative frame size {size}")
            if size > self.max_frame_bytes:
                raise FrameTooLargeError(size, self.max_frame_bytes)
            self._consume(4)
            self._size = size
        size = self._size
        if self._avail < size:
            return None
        self._size = -1
        if size == 0:
            return memoryview(b"")
        self._coalesce(size)
        return self._consume(size)
