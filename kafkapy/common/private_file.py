"""Files that hold credentials (the embedded metadata file with SCRAM keys, ACLs and delegation tokens;
a broker's run record, whose command line can carry a JAAS password): written owner-only, 0600.

`write_private_file(path, data)`: the bytes go to `<path>.tmp`, created 0600 (and forced to 0600 with
fchmod when a stale one was left by a crash, whatever its mode or the umask), fsynced, renamed over
`path`, then the directory is fsynced: readers see the old file or the new one, and no reader other
than the owner ever sees either. `tighten_private_file(path)`: at start, an existing file (and a stale
`.tmp`) readable or writable by group or others is chmod-ed 0600 with one WARN line. POSIX only.
Stateless; safe from any thread for distinct paths (callers serialise writes to one path).
"""

from __future__ import annotations

import logging
import os
import stat

log = logging.getLogger(__name__)

PRIVATE_MODE = 0o600


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


def write_private_file(path: str, data: bytes, fsync: bool = True) -> None:
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), PRIVATE_MODE)
    try:
        os.fchmod(fd, PRIVATE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if fsync:
        _fsync_dir(os.path.dirname(os.path.abspath(path)))


def tighten_private_file(path: str) -> None:
    for candidate in (path, path + ".tmp"):
        try:
            mode = stat.S_IMODE(os.stat(candidate, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077:
            os.chmod(candidate, PRIVATE_MODE, follow_symlinks=False)
            log.warning("%s holds credentials and was mode %04o; changed to 0600", candidate, mode)
