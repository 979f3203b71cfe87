"""Whole-file replacement that a crash cannot tear: Kafka's `Utils.atomicMoveWithFallback` discipline.

`atomic_write(path, data)`: the bytes go to `<path>.tmp` (opened without following a link there),
are fsynced, renamed over `path`, then the directory is fsynced, so a reader sees the old file or the
new one, never a prefix. `mode` is the creation mode (the umask applies); `force_mode` also fchmods the
`.tmp` to exactly `mode`, for files whose permissions matter whatever a crash left behind (credentials).
The bytes are written as given; the format is the caller's (checkpoint text, meta.properties, JSON).
`read_whole_file(path)` is the read side: the file's bytes through os.open/os.read (a start-up reads
several small files per partition, and a buffered or text `open()` costs several times the system calls).
Stateless; safe from any thread for distinct paths (callers serialise writes to one path).
"""

from __future__ import annotations

import os

__all__ = ["atomic_write", "fsync_dir", "read_whole_file", "write_tmp"]

_READ_CHUNK = 1 << 16


def fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


def write_tmp(path: str, data: bytes, fsync: bool = True, mode: int = 0o644, force_mode: bool = False) -> str:
    """atomic_write's first step: `data` into `<path>.tmp` (fsynced if asked); returns that name."""
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        if force_mode:
            # O_CREAT's mode is ignored for a stale .tmp left by a crash, and the umask narrows it.
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    return tmp


def atomic_write(path: str, data: bytes, fsync: bool = True, mode: int = 0o644, force_mode: bool = False) -> None:
    os.replace(write_tmp(path, data, fsync, mode, force_mode), path)
    if fsync:
        fsync_dir(os.path.dirname(os.path.abspath(path)))


def read_whole_file(path: str) -> bytes:
    """The file's bytes (FileNotFoundError when it does not exist)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = os.read(fd, _READ_CHUNK)
        if len(data) < _READ_CHUNK:  # a short read of a regular file is its end
            return data
        chunks = [data]
        while True:
            chunk = os.read(fd, _READ_CHUNK << 4)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)
