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

from kafkapy.common.atomic_file import atomic_write

log = logging.getLogger(__name__)

PRIVATE_MODE = 0o600


def write_private_file(path: str, data: bytes, fsync: bool = True) -> None:
    atomic_write(path, data, fsync, mode=PRIVATE_MODE, force_mode=True)


def tighten_private_file(path: str) -> None:
    for candidate in (path, path + ".tmp"):
        try:
            mode = stat.S_IMODE(os.stat(candidate, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077:
            os.chmod(candidate, PRIVATE_MODE, follow_symlinks=False)
            log.warning("%s holds credentials and was mode %04o; changed to 0600", candidate, mode)
