"""DescriptorReserve: one file descriptor held back so that a write which must not fail for want of
descriptors (the embedded metadata store's, whose ZooKeeper counterpart writes over a socket it already
holds) still gets one when the process has reached RLIMIT_NOFILE.

The reserve is `/dev/null` opened read-only. `call(fn)` runs `fn`; if it fails with EMFILE or ENFILE, the
reserve is closed (freeing the lowest descriptor number, which the next open takes), `fn` runs once more, and
the reserve is opened again afterwards (if that fails too, later calls try again). `fn` should need one
descriptor at a time (open, write, close, then the next). Reads and writes no bytes itself.
Thread-safety: callers serialise calls on one reserve; another thread opening a file between the close and
`fn`'s open can still take the freed number (then `fn`'s EMFILE propagates, as without a reserve).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from typing import TypeVar

__all__ = ["DescriptorReserve", "is_descriptor_exhaustion"]

T = TypeVar("T")

_EXHAUSTED = frozenset((errno.EMFILE, errno.ENFILE))


def is_descriptor_exhaustion(e: BaseException) -> bool:
    """The process (EMFILE) or the system (ENFILE) is out of file descriptors."""
    return isinstance(e, OSError) and e.errno in _EXHAUSTED


class DescriptorReserve:
    def __init__(self) -> None:
        self._fd: int | None = None
        self._acquire()

    def _acquire(self) -> None:
        if self._fd is None:
            try:
                self._fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                self._fd = None

    def _release(self) -> bool:
        fd, self._fd = self._fd, None
        if fd is None:
            return False
        os.close(fd)
        return True

    @property
    def held(self) -> bool:
        return self._fd is not None

    def call(self, fn: Callable[[], T]) -> T:
        try:
            result = fn()
        except OSError as e:
            if not is_descriptor_exhaustion(e) or not self._release():
                raise
            try:
                return fn()
            finally:
                self._acquire()
        self._acquire()  # a reserve that could not be reopened after an earlier use
        return result

    def close(self) -> None:
        self._release()
