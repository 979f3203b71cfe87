"""TimeIndex: the `.timeindex` file, mapping timestamps to offsets.

Byte format (record-format.md section 8): 12-byte entries, big-endian `timestamp int64` and
`relativeOffset int32`. An entry (T, O) means every record with a timestamp greater than T comes after
offset O. Timestamps and offsets never decrease; an entry is added only when the timestamp grows. As in
Kafka, the last slot is reserved for the entry written when the segment becomes inactive, so the index
reports full one entry early.
Thread-safety: see abstract_index.py (single writer, concurrent lookups under the index lock).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kafkapy.storage.abstract_index import KEY, VALUE, AbstractIndex
from kafkapy.storage.errors import CorruptIndexError, LogSegmentOffsetOverflowError
from kafkapy.storage.offset_index import INT32_MAX, InvalidOffsetError

__all__ = ["TimeIndex", "TimestampOffset", "NO_TIMESTAMP"]

_ENTRY = struct.Struct(">qi")
NO_TIMESTAMP = -1


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


class TimeIndex(AbstractIndex):
    ENTRY_SIZE = 12

    def __init__(self, path: str, base_offset: int, max_index_size: int = -1, writable: bool = True) -> None:
        super().__init__(path, base_offset, max_index_size, writable)
        self._last_entry = self._last_entry_from_file()

    def _parse_key_value(self, mm: memoryview, slot: int) -> tuple[int, int]:
        ts, rel = _ENTRY.unpack_from(mm, slot * 12)
        return ts, self.base_offset + rel

    def _last_entry_from_file(self) -> TimestampOffset:
        with self._lock:
            if self._entries == 0 or self._mmap is None:
                return TimestampOffset(NO_TIMESTAMP, self.base_offset)
            return TimestampOffset(*self._parse_key_value(self._mmap, self._entries - 1))

    def _on_truncated(self) -> None:
        self._last_entry = self._last_entry_from_file()

    def is_full(self) -> bool:
        # The last slot is kept for the entry appended when the segment rolls.
        return self._entries >= self._max_entries - 1

    def last_entry(self) -> TimestampOffset:
        return self._last_entry

    def entry(self, n: int) -> TimestampOffset:
        with self._lock:
            if n < 0 or n >= self._entries or self._mmap is None:
                raise IndexError(f"Attempt to fetch the {n}th entry from time index {self.path}, which has size {self._entries}")
            return TimestampOffset(*self._parse_key_value(self._mmap, n))

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= target, or (-1, base_offset) if there is none."""
        with self._lock:
            slot = self._largest_lower_bound_slot_for(target_timestamp, KEY)
            if slot == -1:
                return TimestampOffset(NO_TIMESTAMP, self.base_offset)
            return TimestampOffset(*self._parse_key_value(self._mmap, slot))  # type: ignore[arg-type]

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Add (timestamp, offset) if the timestamp is larger than the last entry's. Single writer."""
        with self._lock:
            if not skip_full_check and self.is_full():
                raise ValueError(f"Attempt to append to a full time index (size = {self._entries}).")
            last = self._last_entry
            if self._entries != 0 and offset < last.offset:
                raise InvalidOffsetError(
                    f"Attempt to append an offset ({offset}) to slot {self._entries} no larger than the last "
                    f"offset appended ({last.offset}) to {self.path}."
                )
            if self._entries != 0 and timestamp < last.timestamp:
                raise ValueError(
                    f"Attempt to append a timestamp ({timestamp}) to slot {self._entries} no larger than the last "
                    f"timestamp appended ({last.timestamp}) to {self.path}."
                )
            if timestamp > last.timestamp:
                rel = offset - self.base_offset
                if rel < 0 or rel > INT32_MAX:
                    raise LogSegmentOffsetOverflowError(f"Integer overflow for offset: {offset} ({self.path})")
                if self._entries >= self._max_entries:
                    raise ValueError(f"Time index {self.path} has no room for another entry")
                _ENTRY.pack_into(self._mmap, self._entries * 12, timestamp, rel)  # type: ignore[arg-type]
                self._entries += 1
                self._last_entry = TimestampOffset(timestamp, offset)

    def truncate_to(self, offset: int) -> None:
        """Remove entries whose offset is >= `offset`."""
        with self._lock:
            slot = self._largest_lower_bound_slot_for(offset, VALUE)
            if slot < 0:
                new_entries = 0
            elif self._parse_key_value(self._mmap, slot)[1] == offset:  # type: ignore[arg-type]
                new_entries = slot
            else:
                new_entries = slot + 1
            self.truncate_to_entries(new_entries)

    def sanity_check(self) -> None:
        last = self._last_entry
        with self._lock:
            first_ts = self._parse_key_value(self._mmap, 0)[0] if self._entries and self._mmap else NO_TIMESTAMP
        if self._entries != 0 and last.timestamp < first_ts:
            raise CorruptIndexError(
                f"Corrupt time index found, time index file ({self.path}) has non-zero size but the last timestamp "
                f"is {last.timestamp} which is less than the first timestamp {first_ts}"
            )
        if self._entries != 0 and last.offset < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt time index found, time index file ({self.path}) has non-zero size but the last offset "
                f"is {last.offset} which is less than the first offset {self.base_offset}"
            )
        if self._length % self.ENTRY_SIZE != 0:
            raise CorruptIndexError(
                f"Time index file {self.path} is corrupt, found {self._length} bytes which is neither positive nor "
                f"a multiple of {self.ENTRY_SIZE}"
            )
