"""FileMapping: a shared memory mapping of a file that holds no file descriptor once mapped.

Python's mmap.mmap keeps a duplicate of the descriptor it maps for as long as the mapping lives (before
Python 3.13's trackfd=False), so every mapped index would cost a descriptor: with two indexes per
segment a broker ran out of descriptors near 6,600 partitions. As Java's MappedByteBuffer (Kafka's
index files), this mapping is made with mmap(2) through ctypes and the caller closes its descriptor
right after; the kernel keeps the mapping, which needs none.

Reads and writes go through `view`, a memoryview of unsigned bytes over the mapped pages (struct's
unpack_from / pack_into work on it directly); the file's bytes are whatever the owner writes there (the
index formats are in offset_index.py / time_index.py). Linux (and other POSIX libc) only.

Thread-safety: none of its own. Touching `view` after `close()` unmapped it would fault, so the owner
(AbstractIndex) makes every access and the close under one lock and drops its reference on close.
"""

from __future__ import annotations

import ctypes
import mmap
import os

__all__ = ["FileMapping"]

_libc = ctypes.CDLL(None, use_errno=True)
_mmap = _libc.mmap
_mmap.restype = ctypes.c_void_p
_mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64)
_munmap = _libc.munmap
_munmap.restype = ctypes.c_int
_munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_msync = _libc.msync
_msync.restype = ctypes.c_int
_msync.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_madvise = _libc.madvise
_madvise.restype = ctypes.c_int
_madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)

_MAP_FAILED = ctypes.c_void_p(-1).value
_MS_SYNC = 4  # Linux <sys/mman.h>
_MADV_RANDOM = getattr(mmap, "MADV_RANDOM", 1)


def _raise_errno(what: str, path: str) -> None:
    err = ctypes.get_errno()
    raise OSError(err, f"{what} failed for {path}: {os.strerror(err)}")


class FileMapping:
    __slots__ = ("_addr", "length", "view", "_path")

    def __init__(self, fd: int, length: int, writable: bool, path: str = "") -> None:
        """Map the first `length` (> 0) bytes of the file open as `fd`; `fd` may be closed afterwards."""
        if length <= 0:
            raise ValueError(f"cannot map {length} bytes of {path}")
        prot = mmap.PROT_READ | (mmap.PROT_WRITE if writable else 0)
        addr = _mmap(None, length, prot, mmap.MAP_SHARED, fd, 0)
        if addr is None or addr == _MAP_FAILED:
            _raise_errno("mmap", path)
        self._addr: int = addr
        self._path = path
        self.length = length
        buf = (ctypes.c_ubyte * length).from_address(addr)
        self.view: memoryview | None = memoryview(buf).cast("B")
        if not writable:
            self.view = self.view.toreadonly()

    def advise_random(self) -> None:
        """Appends touch one page per few hundred entries and lookups binary-search: without this hint
        the first fault reads ahead by the device's read-ahead (megabytes of zeros for a fresh index)."""
        if self._addr:
            _madvise(self._addr, self.length, _MADV_RANDOM)

    def flush(self) -> None:
        if self._addr and _msync(self._addr, self.length, _MS_SYNC) != 0:
            _raise_errno("msync", self._path)

    def close(self) -> None:
        """Unmap. The caller guarantees nothing reads `view` any more (it is released here)."""
        if not self._addr:
            return
        view, self.view = self.view, None
        if view is not None:
            view.release()
        addr, self._addr = self._addr, 0
        if _munmap(addr, self.length) != 0:
            _raise_errno("munmap", self._path)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: S110 - interpreter teardown: nothing left to report to
            pass
