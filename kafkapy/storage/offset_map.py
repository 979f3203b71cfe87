"""SkimpyOffsetMap: the log cleaner's bounded map from a record key's hash to the latest offset of that key.

Memory layout: one anonymous mmap of `log.cleaner.dedupe.buffer.size` bytes seen as int64 slots, two per
entry: [hash of the key, offset + 1] (offset + 1 so that 0 marks an empty slot: a fresh mapping is an
empty map, and the OS commits its zero pages only when touched, so a broker whose cleaner never runs
pays nothing). clear() maps a fresh region instead of zeroing the old one. Open addressing
with linear probing. Like Kafka's map it stores hashes, not keys: two keys with the same 64-bit hash would
share an entry (Kafka accepts the same risk with MD5). The map counts as full at `load_factor` of its slots
(`log.cleaner.io.buffer.load.factor`), the point where the cleaner stops adding segments to a pass.

Thread-safety: none; each cleaner thread owns one map.
"""

from __future__ import annotations

import mmap

__all__ = ["SkimpyOffsetMap", "BYTES_PER_ENTRY"]

BYTES_PER_ENTRY = 16  # int64 key hash + int64 offset


class SkimpyOffsetMap:
    def __init__(self, memory: int, load_factor: float = 0.9) -> None:
        self.slots = max(2, memory // BYTES_PER_ENTRY)
        self.load_factor = load_factor
        self.max_entries = max(1, int(self.slots * load_factor))
        self._mm: mmap.mmap | None = None
        self._q = memoryview(b"").cast("q")
        self.size = 0
        self.latest_offset = -1
        self.lookups = 0
        self.probes = 0
        self.clear()

    def clear(self) -> None:
        self._q.release()
        if self._mm is not None:
            self._mm.close()
        self._mm = mmap.mmap(-1, self.slots * BYTES_PER_ENTRY)
        self._q = memoryview(self._mm).cast("q")
        self.size = 0
        self.latest_offset = -1

    def close(self) -> None:
        self._q.release()
        if self._mm is not None:
            self._mm.close()
            self._mm = None

    @property
    def is_full(self) -> bool:
        return self.size >= self.max_entries

    @property
    def utilization(self) -> float:
        return self.size / self.slots

    def put(self, key: bytes, offset: int) -> None:
        """Map `key` to `offset` (callers put offsets in increasing order)."""
        q = self._q
        h = hash(key)
        slots = self.slots
        i = h % slots
        while True:
            j = i << 1
            stored = q[j + 1]
            if stored == 0:
                if self.size >= self.max_entries:
                    raise OverflowError("The offset map is full")
                q[j] = h
                q[j + 1] = offset + 1
                self.size += 1
                break
            if q[j] == h:
                q[j + 1] = offset + 1
                break
            i += 1
            if i == slots:
                i = 0
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The latest offset put for `key`, or -1."""
        q = self._q
        h = hash(key)
        slots = self.slots
        i = h % slots
        self.lookups += 1
        while True:
            j = i << 1
            stored = q[j + 1]
            if stored == 0:
                return -1
            if q[j] == h:
                return stored - 1
            self.probes += 1
            i += 1
            if i == slots:
                i = 0
