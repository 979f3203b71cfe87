"""AbstractIndex: the shared machinery of Kafka's memory-mapped, sparse, fixed-entry-size index files.

`writable=False` opens an existing file read-only (O_RDONLY, a read-only mapping; tools such as dump-log);
closing it leaves the file untouched. A new index file is preallocated to `max_index_size` rounded down to a multiple of the entry size and
zero-filled; an existing file is taken to be entirely valid entries (entries = length / entry size), as
Kafka's AbstractIndex does. `trim_to_valid_size()` (on roll and close) shrinks the file to the entries
written; `resize()` grows it again for an active segment. Lookups binary-search for the largest entry
whose key (or value) is <= the target. Subclasses define the entry layout (offset_index.py, time_index.py).

Mapping: through FileMapping (file_mapping.py), so a mapped index holds no file descriptor; the file is
opened only to create, size and map it (Kafka's indexes are MappedByteBuffers, which hold none either).
LogSegment maps a segment's indexes on first use (Kafka's LazyIndex).

Thread-safety: one writer (the Log, under its lock) appends/truncates/resizes; lookups may come from any
thread. Every access to the mapping takes the index's own lock, because a resize or trim remaps the
file and a reader must never touch a mapping past the file's end.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from kafkapy.storage.file_mapping import FileMapping

__all__ = ["AbstractIndex", "KEY", "VALUE", "round_down_to_exact_multiple"]

KEY = 0
VALUE = 1


def round_down_to_exact_multiple(number: int, factor: int) -> int:
    return factor * (number // factor)


class AbstractIndex:
    ENTRY_SIZE = 0

    def __init__(self, path: str, base_offset: int, max_index_size: int = -1, writable: bool = True) -> None:
        self._path = path
        self.base_offset = base_offset
        self._max_index_size = max_index_size
        self._writable = writable
        self._lock = threading.RLock()
        newly_created = not os.path.exists(path)
        flags = (os.O_RDWR | os.O_CREAT) if writable else os.O_RDONLY
        fd = os.open(path, flags, 0o644)
        try:
            if newly_created:
                if max_index_size < self.ENTRY_SIZE:
                    raise ValueError(f"Invalid max index size: {max_index_size}")
                os.ftruncate(fd, round_down_to_exact_multiple(max_index_size, self.ENTRY_SIZE))
            self._length = os.fstat(fd).st_size
            self._mapping = self._map(fd, self._length)
        finally:
            os.close(fd)
        self._max_entries = self._length // self.ENTRY_SIZE
        # A pre-existing index is assumed valid up to its last whole entry.
        self._entries = 0 if newly_created else self._max_entries
        if max_index_size < 0:
            self._max_index_size = self._length

    def _map(self, fd: int, length: int) -> FileMapping | None:
        if length == 0:
            self._mmap: memoryview | None = None
            return None  # an empty file cannot be mapped; an empty index simply has no mapping
        mapping = FileMapping(fd, length, self._writable, self._path)
        # Appends touch one page per 512 entries and lookups binary-search: both are random access. Without
        # this hint the first fault reads around it by the device's read-ahead (8 MiB here: ~2 ms of a produce
        # request's time per fresh index, for pages of zeros).
        mapping.advise_random()
        # The entries' bytes, read and written with struct; valid only while `_mapping` is (under the lock).
        self._mmap = mapping.view
        return mapping

    # --- facts --------------------------------------------------------------------------------------

    @property
    def path(self) -> str:
        return self._path

    @property
    def entries(self) -> int:
        return self._entries

    @property
    def max_entries(self) -> int:
        return self._max_entries

    @property
    def max_index_size(self) -> int:
        return self._max_index_size

    @property
    def length(self) -> int:
        return self._length

    def is_full(self) -> bool:
        return self._entries >= self._max_entries

    def size_in_bytes(self) -> int:
        return self.ENTRY_SIZE * self._entries

    # --- to be provided by subclasses -----------------------------------------------------------------

    def _parse_key_value(self, mm: memoryview, slot: int) -> tuple[int, int]:
        """(key, value) of entry `slot` as absolute numbers (offset index: offset, position)."""
        raise NotImplementedError

    def _on_truncated(self) -> None:
        """Refresh cached last-entry state after the entry count changed."""

    def sanity_check(self) -> None:
        raise NotImplementedError

    # --- search ---------------------------------------------------------------------------------------

    def _largest_lower_bound_slot_for(self, target: int, search_type: int) -> int:
        """Slot of the largest entry whose key (or value) is <= target, or -1. Caller holds the lock."""
        entries = self._entries
        mm = self._mmap
        if entries == 0 or mm is None:
            return -1
        parse: Callable[[memoryview, int], tuple[int, int]] = self._parse_key_value
        if parse(mm, 0)[search_type] > target:
            return -1
        lo, hi = 0, entries - 1
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if parse(mm, mid)[search_type] <= target:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _smallest_upper_bound_slot_for(self, target: int, search_type: int) -> int:
        """Slot of the smallest entry whose key (or value) is >= target, or -1. Caller holds the lock."""
        entries = self._entries
        mm = self._mmap
        if entries == 0 or mm is None:
            return -1
        parse = self._parse_key_value
        if parse(mm, entries - 1)[search_type] < target:
            return -1
        lo, hi = 0, entries - 1
        while lo < hi:
            mid = (lo + hi) >> 1
            if parse(mm, mid)[search_type] >= target:
                hi = mid
            else:
                lo = mid + 1
        return lo

    # --- mutation (single writer) ---------------------------------------------------------------------

    def truncate_to_entries(self, entries: int) -> None:
        """Keep the first `entries` entries (Kafka's truncateToEntries). Only the entry count changes, so on a
        read-only index it restricts the view, e.g. to the written part of a preallocated, untrimmed file."""
        with self._lock:
            self._entries = entries
            self._on_truncated()

    def truncate(self) -> None:
        """Remove all entries."""
        self.truncate_to_entries(0)

    def reset(self) -> None:
        """Remove all entries and grow the file back to its maximum size (used before a rebuild)."""
        with self._lock:
            self.truncate()
            self.resize(self._max_index_size)

    def resize(self, new_size: int) -> bool:
        """Set the file length to `new_size` rounded down to whole entries; keeps the entries. True if changed."""
        with self._lock:
            rounded = round_down_to_exact_multiple(new_size, self.ENTRY_SIZE)
            if rounded == self._length:
                return False
            if rounded < self._entries * self.ENTRY_SIZE:
                raise ValueError(f"Cannot resize index {self._path} to {rounded} below its {self._entries} entries")
            old = self._mapping
            self._mmap = self._mapping = None
            if old is not None:
                old.close()
            fd = os.open(self._path, os.O_RDWR)
            try:
                os.ftruncate(fd, rounded)
                self._mapping = self._map(fd, rounded)
            finally:
                os.close(fd)
            self._length = rounded
            self._max_entries = rounded // self.ENTRY_SIZE
            return True

    def trim_to_valid_size(self) -> bool:
        with self._lock:
            return self.resize(self.ENTRY_SIZE * self._entries)

    def flush(self) -> None:
        with self._lock:
            if self._mapping is not None:
                self._mapping.flush()

    def close(self) -> None:
        """Trim to the entries written and unmap."""
        with self._lock:
            if self._writable and os.path.exists(self._path):
                self.trim_to_valid_size()
            self.close_handler()

    def close_handler(self) -> None:
        with self._lock:
            mapping = self._mapping
            self._mmap = self._mapping = None
            if mapping is not None:
                mapping.close()

    def delete_if_exists(self) -> bool:
        with self._lock:
            self.close_handler()
            try:
                os.unlink(self._path)
                return True
            except FileNotFoundError:
                return False

    def rename_to(self, new_path: str) -> None:
        with self._lock:
            try:
                os.rename(self._path, new_path)
            finally:
                self._path = new_path

    def update_parent_dir(self, parent_dir: str) -> None:
        self._path = os.path.join(parent_dir, os.path.basename(self._path))

    def read_entries(self) -> list[tuple[int, int]]:
        """All entries as (key, value); for tests and tools."""
        with self._lock:
            if self._mmap is None:
                return []
            return [self._parse_key_value(self._mmap, slot) for slot in range(self._entries)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(path={self._path}, entries={self._entries}, max_entries={self._max_entries})"
