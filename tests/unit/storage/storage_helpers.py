"""Helpers for storage tests: build magic-2 batches with record/ and open logs with small configs."""

from __future__ import annotations

import struct

from kafkapy.common.time import MockTime
from kafkapy.record.crc import crc32c
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.storage.log import Log
from kafkapy.storage.log_config import LogConfig

START_MS = 1_700_000_000_000


def batch(n: int = 1, ts: int = START_MS, value_size: int = 10, key: bytes | None = b"k", compression: int = 0,
          step_ms: int = 1, **kw) -> bytes:
    """One client-style batch (baseOffset 0) of n records with timestamps ts, ts+step, ..."""
    b = MemoryRecordsBuilder(compression=compression, **kw)
    for i in range(n):
        b.append(ts + i * step_ms, key, bytes([65 + i % 26]) * value_size)
    return b.build()


def with_offsets(raw: bytes, base_offset: int, epoch: int) -> bytes:
    """The batch as the leader stores it: baseOffset and partitionLeaderEpoch rewritten, CRC untouched."""
    out = bytearray(raw)
    struct.pack_into(">q", out, 0, base_offset)
    struct.pack_into(">i", out, 12, epoch)
    return bytes(out)


def crc_ok(b: bytes) -> bool:
    return crc32c(b[21:]) == struct.unpack_from(">I", b, 17)[0]


def config(**overrides) -> LogConfig:
    props = {"file.delete.delay.ms": 0}
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    return LogConfig.from_props(props)


def open_log(path: str, time: MockTime | None = None, cfg: LogConfig | None = None, **kw) -> Log:
    return Log.open(str(path), cfg or config(), time or MockTime(START_MS), **kw)
