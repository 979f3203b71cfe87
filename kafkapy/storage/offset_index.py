"""OffsetIndex: the `.index` file, mapping offsets to byte positions in the segment's `.log` file.

Byte format (record-format.md section 8): 8-byte entries, big-endian `relativeOffset int32` (offset minus
the segment's base offset) and `position int32` (the batch's byte position in the `.log` file). Entries
strictly increase in offset (and therefore position). Sparse: one entry per `index.interval.bytes`.
Thread-safety: see abstract_index.py (single writer, concurrent lookups under the index lock).
"""

from __future__ import annotations

import os
import struct
from typing import NamedTuple

from kafkapy.storage.abstract_index import KEY, VALUE, AbstractIndex
from kafkapy.storage.errors import CorruptIndexError, LogSegmentOffsetOverflowError

__all__ = ["OffsetIndex", "OffsetPosition", "InvalidOffsetError", "read_last_entry"]

_ENTRY = struct.Struct(">ii")
INT32_MAX = 2**31 - 1


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class InvalidOffsetError(ValueError):
    """An append whose offset is not larger than the index's last offset."""


class OffsetIndex(AbstractIndex):
    ENTRY_SIZE = 8

    def __init__(self, path: str, base_offset: int, max_index_size: int = -1, writable: bool = True) -> None:
        super().__init__(path, base_offset, max_index_size, writable)
        self._last_offset = self._read_last_offset()

    def _parse_key_value(self, mm: memoryview, slot: int) -> tuple[int, int]:
        rel, pos = _ENTRY.unpack_from(mm, slot * 8)
        return self.base_offset + rel, pos

    def _read_last_offset(self) -> int:
        with self._lock:
            if self._entries == 0 or self._mmap is None:
                return self.base_offset
            return self._parse_key_value(self._mmap, self._entries - 1)[0]

    def _on_truncated(self) -> None:
        self._last_offset = self._read_last_offset()

    @property
    def last_offset(self) -> int:
        return self._last_offset

    def last_entry(self) -> OffsetPosition:
        with self._lock:
            if self._entries == 0 or self._mmap is None:
                return OffsetPosition(self.base_offset, 0)
            return OffsetPosition(*self._parse_key_value(self._mmap, self._entries - 1))

    def entry(self, n: int) -> OffsetPosition:
        with self._lock:
            if n < 0 or n >= self._entries or self._mmap is None:
                raise IndexError(f"Attempt to fetch the {n}th entry from index {self.path}, which has size {self._entries}")
            return OffsetPosition(*self._parse_key_value(self._mmap, n))

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The entry with the largest offset <= target_offset, or (base_offset, 0) if there is none."""
        with self._lock:
            slot = self._largest_lower_bound_slot_for(target_offset, KEY)
            if slot == -1:
                return OffsetPosition(self.base_offset, 0)
            return OffsetPosition(*self._parse_key_value(self._mmap, slot))  # type: ignore[arg-type]

    def lookup_by_position(self, position: int) -> OffsetPosition | None:
        """The entry with the largest position <= `position`, or None (used to find batch boundaries)."""
        with self._lock:
            slot = self._largest_lower_bound_slot_for(position, VALUE)
            if slot == -1:
                return None
            return OffsetPosition(*self._parse_key_value(self._mmap, slot))  # type: ignore[arg-type]

    def fetch_upper_bound_offset(self, start_position: int, fetch_size: int) -> OffsetPosition | None:
        """The first entry whose position is >= start_position + fetch_size (Kafka's fetchUpperBoundOffset)."""
        with self._lock:
            slot = self._smallest_upper_bound_slot_for(start_position + fetch_size, VALUE)
            if slot == -1:
                return None
            return OffsetPosition(*self._parse_key_value(self._mmap, slot))  # type: ignore[arg-type]

    def can_append_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT32_MAX

    def relative_offset(self, offset: int) -> int:
        rel = offset - self.base_offset
        if rel < 0 or rel > INT32_MAX:
            raise LogSegmentOffsetOverflowError(
                f"Integer overflow for offset: {offset} ({self.path}); base offset {self.base_offset}"
            )
        return rel

    def append(self, offset: int, position: int) -> None:
        """Add (offset, position); offsets must strictly increase. Single writer."""
        with self._lock:
            if self.is_full():
                raise ValueError(f"Attempt to append to a full index (size = {self._entries}).")
            if self._entries != 0 and offset <= self._last_offset:
                raise InvalidOffsetError(
                    f"Attempt to append an offset {offset} to position {self._entries} no larger than the last "
                    f"offset appended ({self._last_offset}) to {self.path}."
                )
            _ENTRY.pack_into(self._mmap, self._entries * 8, self.relative_offset(offset), position)  # type: ignore[arg-type]
            self._entries += 1
            self._last_offset = offset

    def truncate_to(self, offset: int) -> None:
        """Remove entries with offset >= `offset`."""
        with self._lock:
            slot = self._largest_lower_bound_slot_for(offset, KEY)
            if slot < 0:
                new_entries = 0
            elif self._parse_key_value(self._mmap, slot)[0] == offset:  # type: ignore[arg-type]
                new_entries = slot
            else:
                new_entries = slot + 1
            self.truncate_to_entries(new_entries)

    def sanity_check(self) -> None:
        if self._entries != 0 and self._last_offset < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file {self.path} has non-zero size but the last offset is "
                f"{self._last_offset} which is less than the base offset {self.base_offset}"
            )
        if self._length % self.ENTRY_SIZE != 0:
            raise CorruptIndexError(
                f"Index file {self.path} is corrupt, found {self._length} bytes which is neither positive nor a "
                f"multiple of {self.ENTRY_SIZE}"
            )


def read_last_entry(path: str, base_offset: int) -> OffsetPosition:
    """The last entry of an index file that is not open, read without mapping it (the log end at load scans
    the active segment from there): the file's whole entries count as valid, as when it is opened.
    (base_offset, 0) when the file is missing or holds no entry."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return OffsetPosition(base_offset, 0)
    try:
        size = os.fstat(fd).st_size
        end = size - size % _ENTRY.size
        if end == 0:
            return OffsetPosition(base_offset, 0)
        rel, position = _ENTRY.unpack(os.pread(fd, _ENTRY.size, end - _ENTRY.size))
    finally:
        os.close(fd)
    return OffsetPosition(base_offset + rel, position)
