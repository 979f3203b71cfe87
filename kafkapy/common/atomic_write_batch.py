"""Many whole-file replacements made durable together: atomic_file.atomic_write's discipline, group-committed.

`atomic_write_batch(items)` gives each `PendingReplace` what `atomic_write` gives one file (`<path>.tmp` written,
made durable, renamed over `path`, the rename made durable: a reader after a crash sees the old file or the
new one, never a prefix), but with two durability barriers for the whole batch instead of two fsyncs per file:
every `.tmp` is written, one barrier, every rename, one barrier. On Linux a barrier is syncfs(2) once per file
system holding the batch (it writes back every dirty inode of that file system and commits its journal, so it
covers what fsync of each `.tmp` and of each directory would); elsewhere, or if syncfs is refused, each `.tmp`
is fsynced before its rename and each directory after, as atomic_write does.
The bytes are the caller's; this module adds no format.

An item belongs to an owner (a checkpoint file's cache, a log) that may write the same file itself meanwhile:
`lock` is the owner's lock, held while the `.tmp` is written and while it is renamed, and `current()` (asked
under it) says whether the item is still what the owner wants on disk. An item the owner changed or wrote
since is skipped (its `.tmp` left for the owner's next write); `durable()` is called, under the lock, only for
items renamed, made durable and still current. Safe from any thread; items must name distinct paths.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from kafkapy.common.atomic_file import fsync_dir, write_tmp

__all__ = ["PendingReplace", "atomic_write_batch", "syncfs_available"]


@dataclass
class PendingReplace:
    path: str
    data: bytes
    lock: AbstractContextManager[object]
    current: Callable[[], bool]
    durable: Callable[[], None]


def _load_syncfs() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn  # type: ignore[no-any-return]


_syncfs = _load_syncfs()


def syncfs_available() -> bool:
    return _syncfs is not None


def _syncfs_dirs(dirs: Iterable[str]) -> None:
    """syncfs(2) once per file system holding one of `dirs`; raises OSError when the kernel reports a failed
    write-back (Linux >= 5.8 reports them to syncfs)."""
    assert _syncfs is not None
    by_device: dict[int, list[str]] = {}
    for d in dirs:
        try:
            by_device.setdefault(os.stat(d).st_dev, []).append(d)
        except FileNotFoundError:
            continue  # removed meanwhile (a deleted log): nothing of it to keep
    for candidates in by_device.values():
        for d in candidates:  # the first that still exists
            try:
                fd = os.open(d, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                continue
            try:
                if _syncfs(fd) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"syncfs of {d}: {os.strerror(err)}")
            finally:
                os.close(fd)
            break


def _each_current(items: Iterable[PendingReplace], step: Callable[[PendingReplace], object],
                  failed: list[tuple[PendingReplace, OSError]]) -> list[PendingReplace]:
    """Run `step` on each item still current, under its owner's lock; the items it succeeded on."""
    done = []
    for item in items:
        with item.lock:
            if not item.current():
                continue
            try:
                step(item)
            except OSError as e:
                failed.append((item, e))
                continue
        done.append(item)
    return done


def atomic_write_batch(items: Iterable[PendingReplace]) -> list[tuple[PendingReplace, OSError]]:
    """Replace every item's file durably, with two barriers for the batch; the items that failed, with why.

    A failed item (its directory removed, a full disk) fails alone: the others are still written; a failed
    barrier fails every item it covered."""
    group = _syncfs is not None
    failed: list[tuple[PendingReplace, OSError]] = []
    written = _each_current(items, lambda item: write_tmp(item.path, item.data, fsync=not group), failed)
    if not written:
        return failed
    if group:
        try:
            _syncfs_dirs(_dirs(written))
        except OSError as e:
            return failed + [(i, e) for i in written]
    renamed = _each_current(written, lambda item: os.replace(item.path + ".tmp", item.path), failed)
    if group:
        try:
            _syncfs_dirs(_dirs(renamed))
        except OSError as e:
            return failed + [(i, e) for i in renamed]
    else:
        for d in _dirs(renamed):
            fsync_dir(d)
    for item in renamed:
        with item.lock:
            if item.current():
                item.durable()
    return failed


def _dirs(items: list[PendingReplace]) -> list[str]:
    return list(dict.fromkeys(os.path.dirname(os.path.abspath(i.path)) for i in items))
