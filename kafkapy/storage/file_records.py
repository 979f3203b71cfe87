"""FileRecords: a segment's `.log` file (concatenated record batches) and a batch-header scanner over it.

Byte format (record-format.md sections 1, 2, 5): batches of any magic back to back; each starts with
`offset int64, size int32`; the magic byte is at byte 16. For magic 2 the header gives the last offset
(baseOffset + lastOffsetDelta at byte 23), maxTimestamp (byte 35) and partitionLeaderEpoch (byte 12);
for magic 0/1 the offset field is the (last) offset and v1 carries a timestamp at byte 18.
Appends use os.pwrite at the tracked size (one syscall per append); reads use os.pread. The file
object is what FileRegion carries to os.sendfile; its descriptor is closed when the last reference goes
(so a region being sent survives a concurrent segment deletion), or by close().

Thread-safety: one appender (under the Log lock); readers may run concurrently and must bound their
reads by a `size` snapshot, which is only advanced after the bytes are written.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

from kafkapy.record.batch_header import LOG_OVERHEAD, RECORD_BATCH_OVERHEAD
from kafkapy.record.legacy_record import RECORD_OVERHEAD_V0 as LEGACY_RECORD_OVERHEAD_V0

__all__ = ["FileRecords", "BatchInfo", "LEGACY_RECORD_OVERHEAD_V0"]

_OFFSET_SIZE = struct.Struct(">qi")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


class BatchInfo(NamedTuple):
    """What a header scan learns about one batch, without reading its records."""

    position: int
    size: int  # whole batch, log overhead included
    base_offset: int
    last_offset: int
    magic: int
    max_timestamp: int
    partition_leader_epoch: int


def parse_batch_info(buf: bytes | memoryview, off: int, position: int) -> BatchInfo:
    """Parse the header at buf[off:] (at least 61 bytes for magic 2, 26 for magic 1, 17 for magic 0)."""
    base, size = _OFFSET_SIZE.unpack_from(buf, off)
    magic = buf[off + 16]
    if magic >= 2:
        (delta,) = _INT32.unpack_from(buf, off + 23)
        (max_ts,) = _INT64.unpack_from(buf, off + 35)
        (epoch,) = _INT32.unpack_from(buf, off + 12)
        return BatchInfo(position, size + LOG_OVERHEAD, base, base + delta, magic, max_ts, epoch)
    max_ts = _INT64.unpack_from(buf, off + 18)[0] if magic == 1 else -1
    return BatchInfo(position, size + LOG_OVERHEAD, base, base, magic, max_ts, -1)


def header_bytes_needed(magic: int, batch_size: int) -> int:
    if magic >= 2:
        return RECORD_BATCH_OVERHEAD
    return min(batch_size, 26 if magic == 1 else 17)


class FileRecords:
    def __init__(self, path: str, file_already_exists: bool = False, init_file_size: int = 0,
                 preallocate: bool = False) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not file_already_exists and preallocate and init_file_size > 0:
            os.ftruncate(self._fd, init_file_size)
            self.size = 0
        else:
            self.size = os.fstat(self._fd).st_size

    # --- file object protocol used by FileRegion / os.sendfile -----------------------------------------

    def fileno(self) -> int:
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        return self._fd

    @property
    def closed(self) -> bool:
        return self._fd is None

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass

    # --- writes (single writer) -----------------------------------------------------------------------

    def append(self, data: bytes | bytearray | memoryview) -> int:
        fd = self.fileno()
        pos = self.size
        written = os.pwrite(fd, data, pos)
        total = len(data) if type(data) is not memoryview else data.nbytes
        if written == total:  # the usual case: one syscall, no view
            self.size = pos + written
            return written
        view = memoryview(data).cast("B")[written:]
        pos += written
        while view:
            written = os.pwrite(fd, view, pos)
            pos += written
            view = view[written:]
        appended = pos - self.size
        self.size = pos
        return appended

    def truncate_to(self, target_size: int) -> int:
        """Cut the file to `target_size` bytes; returns the bytes removed."""
        original = self.size
        if target_size > original or target_size < 0:
            raise ValueError(f"Attempt to truncate log segment {self.path} to {target_size} bytes failed, "
                             f"size of this log segment is {original} bytes.")
        os.ftruncate(self.fileno(), target_size)
        self.size = target_size
        return original - target_size

    def trim(self) -> None:
        """Drop preallocated space past the written bytes."""
        if os.fstat(self.fileno()).st_size != self.size:
            os.ftruncate(self.fileno(), self.size)

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def rename_to(self, new_path: str) -> None:
        try:
            os.rename(self.path, new_path)
        finally:
            self.path = new_path

    def delete_if_exists(self) -> bool:
        # The descriptor stays open until the last FileRegion using it is gone (see module docstring).
        try:
            os.unlink(self.path)
            return True
        except FileNotFoundError:
            return False

    # --- reads ----------------------------------------------------------------------------------------

    def read(self, position: int, length: int) -> bytes:
        out = bytearray()
        fd = self.fileno()
        while len(out) < length:
            chunk = os.pread(fd, length - len(out), position + len(out))
            if not chunk:
                break
            out += chunk
        return bytes(out)

    def batches_from(self, start: int, end: int | None = None, chunk_size: int = 4096) -> Iterator[BatchInfo]:
        """Headers of the complete batches in [start, end); stops at a partial or malformed batch.

        Reads in chunks that grow to 1 MiB so a long scan costs few syscalls; a batch larger than the
        chunk is skipped over by its size field without reading its body.
        """
        end = self.size if end is None else end
        fd = self.fileno()
        pos = start
        buf = b""
        buf_start = start
        while end - pos >= LOG_OVERHEAD:
            off = pos - buf_start
            if off + 17 > len(buf):
                buf = os.pread(fd, min(chunk_size, end - pos), pos)
                buf_start, off = pos, 0
                chunk_size = min(chunk_size * 2, 1 << 20)
                if len(buf) < 17:
                    return
            size = _INT32.unpack_from(buf, off + 8)[0]
            if size < LEGACY_RECORD_OVERHEAD_V0 or pos + LOG_OVERHEAD + size > end:
                return
            magic = buf[off + 16]
            if magic >= 2 and size + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD:
                return
            need = header_bytes_needed(magic, size + LOG_OVERHEAD)
            if off + need > len(buf):
                buf = os.pread(fd, max(need, min(chunk_size, end - pos)), pos)
                buf_start, off = pos, 0
                if len(buf) < need:
                    return
            yield parse_batch_info(buf, off, pos)
            pos += LOG_OVERHEAD + size

    def __repr__(self) -> str:
        return f"FileRecords(path={self.path}, size={self.size})"
