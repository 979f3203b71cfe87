"""Checksums: CRC-32C (Castagnoli) for magic-2 batches and producer snapshots, CRC-32 (IEEE) for magic 0/1.

`crc32c` uses the C-accelerated `crc32c` package; `crc32` uses zlib. Both take any buffer and an optional
running value, and return an unsigned 32-bit int. Pure functions, thread-safe.
"""

from __future__ import annotations

import zlib

from crc32c import crc32c as _crc32c

__all__ = ["crc32c", "crc32"]


def crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    return _crc32c(data, crc)


def crc32(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    return zlib.crc32(data, crc) & 0xFFFFFFFF
