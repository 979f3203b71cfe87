"""Checksums: CRC-32C (Castagnoli) for magic-2 batches and producer snapshots, CRC-32 (IEEE) for magic 0/1.

`crc32c` uses the C-accelerated `crc32c` package; `crc32` uses zlib. Both take any buffer and an optional
running value, and return an unsigned 32-bit int. The `crc32c` package is imported on first use: its
`__init__` reads its version through importlib.metadata (~20 ms), which short-lived tools that never
checksum a batch should not pay. Pure functions, thread-safe (the deferred import runs under the import lock).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

__all__ = ["crc32c", "crc32"]

_crc32c: Callable[[bytes | bytearray | memoryview, int], int] | None = None


def _load_crc32c() -> Callable[[bytes | bytearray | memoryview, int], int]:
    global _crc32c
    from crc32c import crc32c as impl

    _crc32c = impl
    return impl


def crc32c(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    impl = _crc32c
    if impl is None:
        impl = _load_crc32c()
    return impl(data, crc)


def crc32(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    return zlib.crc32(data, crc) & 0xFFFFFFFF
