"""FileRegion: a byte range of an open file, sent to a socket with os.sendfile (zero copy).

Storage returns FileRegions from reads, the protocol encoder passes them through untouched as
`records` values, and the network Processor writes them with os.sendfile. Immutable; the file
object is kept referenced so the descriptor stays valid until the response is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class FileRegion:
    file: Any  # an open binary file object with fileno()
    position: int
    length: int

    def read_bytes(self) -> bytes:
        """Read the region into memory (for tests and for paths that must inspect bytes)."""
        return os_pread(self.file.fileno(), self.length, self.position)


def os_pread(fd: int, length: int, position: int) -> bytes:
    import os

    out = bytearray()
    while len(out) < length:
        chunk = os.pread(fd, length - len(out), position + len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)
