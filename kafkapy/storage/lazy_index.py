"""LazyIndex: a segment's offset or time index, not opened or mapped until first used (Kafka's LazyIndex).

Holds the path of a `.index` / `.timeindex` file (formats in offset_index.py / time_index.py) and makes the
OffsetIndex or TimeIndex over it on the first `get()`. Until then the file is not opened, stat'ed or
mapped, so loading a broker's partitions touches none of their indexes, and a partition costs no mapping
until it is read or written. A resize asked for before that (the active segment's indexes grown back to
segment.index.bytes at load) is remembered and applied when the index is made. Renaming, deleting,
flushing and closing an index never made work on its path alone: nothing was written to it, so there is
nothing to flush or trim.

Thread-safety: `get()` makes the index once under a lock (a double-checked fast path after that); the other
operations are the owning LogSegment's single writer's, under the Log lock, as the index's own mutations are.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from kafkapy.storage.abstract_index import AbstractIndex

__all__ = ["LazyIndex"]

IndexT = TypeVar("IndexT", bound=AbstractIndex)


class LazyIndex(Generic[IndexT]):
    __slots__ = ("_path", "_type", "_base_offset", "_max_index_size", "_index", "_pending_size", "_lock")

    def __init__(self, index_type: Callable[[str, int, int], IndexT], path: str, base_offset: int,
                 max_index_size: int) -> None:
        """`index_type(path, base_offset, max_index_size)` makes the index (OffsetIndex or TimeIndex)."""
        self._path = path
        self._type = index_type
        self._base_offset = base_offset
        self._max_index_size = max_index_size
        self._index: IndexT | None = None
        self._pending_size: int | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> str:
        index = self._index
        return index.path if index is not None else self._path

    @property
    def is_loaded(self) -> bool:
        return self._index is not None

    def get(self) -> IndexT:
        """The index, opened (created when its file does not exist) and mapped on the first call."""
        index = self._index
        if index is not None:
            return index
        with self._lock:
            index = self._index
            if index is None:
                index = self._type(self._path, self._base_offset, self._max_index_size)
                if self._pending_size is not None:
                    index.resize(self._pending_size)
                    self._pending_size = None
                self._index = index
            return index

    def resize(self, size: int) -> None:
        """Resize now when made, else when first made (the file keeps its size until then)."""
        with self._lock:
            index = self._index
            if index is None:
                self._pending_size = size
                return
        index.resize(size)

    def truncate_all(self) -> None:
        """No entries left and the file trimmed to nothing (recovery of an empty segment); an index not opened
        yet is trimmed by path, without opening or mapping it."""
        index = self._index
        if index is not None:
            index.truncate()
            index.trim_to_valid_size()
            return
        try:
            os.truncate(self._path, 0)
        except FileNotFoundError:
            pass

    def flush(self) -> None:
        if self._index is not None:
            self._index.flush()

    def close(self) -> None:
        """Trim to the entries written and unmap (an index never made is left as it was found)."""
        if self._index is not None:
            self._index.close()

    def close_handler(self) -> None:
        if self._index is not None:
            self._index.close_handler()

    def delete_if_exists(self) -> bool:
        if self._index is not None:
            return self._index.delete_if_exists()
        try:
            os.unlink(self._path)
            return True
        except FileNotFoundError:
            return False

    def rename_to(self, new_path: str) -> None:
        if self._index is not None:
            self._index.rename_to(new_path)
        else:
            try:
                os.rename(self._path, new_path)
            except FileNotFoundError:
                pass
        self._path = new_path

    def update_parent_dir(self, parent_dir: str) -> None:
        self._path = os.path.join(parent_dir, os.path.basename(self._path))
        if self._index is not None:
            self._index.update_parent_dir(parent_dir)

    def __repr__(self) -> str:
        return f"LazyIndex({self._index!r})" if self._index is not None else f"LazyIndex(path={self._path}, unloaded)"
