"""TransactionIndex: a segment's `.txnindex` file, the aborted transactions whose ABORT marker is in it.

Byte format (record-format.md section 8): append-only, not preallocated, 34-byte entries of
`version int16` (0), `producerId int64`, `firstOffset int64`, `lastOffset int64` (the ABORT marker's
offset) and `lastStableOffset int64` (the LSO when the marker was written: every transaction still open
below it started before it). read_committed fetches return the entries overlapping the fetched range
(`collect_aborted_txns`), so consumers can drop the aborted batches; the log cleaner drops them later.

Thread-safety: one appender under the Log lock; readers take the index's lock briefly to copy the
entries (they are kept in memory once loaded: aborts are rare next to data batches).
"""

from __future__ import annotations

import os
import struct
import threading
from typing import NamedTuple

__all__ = ["AbortedTxn", "TransactionIndex", "TxnIndexSearchResult", "TXN_INDEX_ENTRY_SIZE"]

_ENTRY = struct.Struct(">hqqqq")
TXN_INDEX_ENTRY_SIZE = _ENTRY.size  # 34
_CURRENT_VERSION = 0


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def encode(self) -> bytes:
        return _ENTRY.pack(_CURRENT_VERSION, self.producer_id, self.first_offset, self.last_offset,
                           self.last_stable_offset)


class TxnIndexSearchResult(NamedTuple):
    aborted: list[AbortedTxn]
    is_complete: bool  # an entry's LSO reached the upper bound: later segments cannot add more


class TransactionIndex:
    def __init__(self, start_offset: int, path: str, exists: bool | None = None) -> None:
        """`exists=False`: the caller knows the file is absent (a directory listing), so there is nothing to load."""
        self.start_offset = start_offset
        self.path = path
        self._lock = threading.Lock()
        self._entries: list[AbortedTxn] | None = [] if exists is False else None  # loaded lazily

    def _load(self) -> list[AbortedTxn]:
        entries = self._entries
        if entries is not None:
            return entries
        entries = []
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        usable = len(data) - len(data) % TXN_INDEX_ENTRY_SIZE
        for pos in range(0, usable, TXN_INDEX_ENTRY_SIZE):
            version, pid, first, last, lso = _ENTRY.unpack_from(data, pos)
            if version != _CURRENT_VERSION:
                break
            entries.append(AbortedTxn(pid, first, last, lso))
        self._entries = entries
        return entries

    def append(self, txn: AbortedTxn) -> None:
        with self._lock:
            entries = self._load()
            if entries and txn.last_offset <= entries[-1].last_offset:
                raise ValueError(f"The last offset of appended transactions must increase sequentially, but "
                                 f"{txn.last_offset} is not greater than current last offset "
                                 f"{entries[-1].last_offset} of index {self.path}")
            with open(self.path, "ab") as f:
                f.write(txn.encode())
            entries.append(txn)

    def all_aborted_txns(self) -> list[AbortedTxn]:
        with self._lock:
            return list(self._load())

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """Entries overlapping [fetch_offset, upper_bound_offset)."""
        out = []
        with self._lock:
            for txn in self._load():
                if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                    out.append(txn)
                if txn.last_stable_offset >= upper_bound_offset:
                    return TxnIndexSearchResult(out, True)
        return TxnIndexSearchResult(out, False)

    def truncate_to(self, offset: int) -> None:
        """Drop the entries whose marker is at or after `offset` (rewrites the file)."""
        with self._lock:
            entries = self._load()
            keep = [t for t in entries if t.last_offset < offset]
            if len(keep) == len(entries):
                return
            self._rewrite(keep)

    def reset(self) -> None:
        with self._lock:
            self._rewrite([])

    def _rewrite(self, entries: list[AbortedTxn]) -> None:
        if not entries:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
        else:
            tmp = self.path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(b"".join(t.encode() for t in entries))
            os.replace(tmp, self.path)
        self._entries = entries

    def flush(self) -> None:
        if os.path.exists(self.path):
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def rename_to(self, path: str) -> None:
        with self._lock:
            if os.path.exists(self.path):
                os.rename(self.path, path)
            self.path = path

    def delete_if_exists(self) -> None:
        with self._lock:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            self._entries = []
