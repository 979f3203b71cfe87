"""ProducerStateManager: a partition's producers, open transactions and `.snapshot` files (Kafka's).

Tracks every producer's ProducerStateEntry, the transactions still open (`ongoing`, by first offset) and
those completed above the high watermark (`unreplicated`): the first unstable offset is the smallest
first offset of either, and the last stable offset min(first unstable offset, HW). Appends are analysed
per batch (`analyze_batches`): the result is applied after the bytes are written (`apply`), or is a
duplicate of one of the producer's last five batches and nothing is written.

Snapshot file `<offset %020d>.snapshot` (record-format.md section 9, storage/ProducerSnapshot.json v1):
`version int16` (1), `crc uint32` (CRC-32C of every byte after it), `entryCount int32`, then 46-byte
entries `producerId int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32,
timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64`. The offset in the name is the
log offset the state covers, exclusive. Snapshots are taken on roll and on close; loading reads the
newest one at or below the log end offset and replays the batches after it.

Thread-safety: called under the Log lock; `first_unstable_offset` and `active_producers` may be read
from other threads (they read whole-object snapshots of the dicts).
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from kafkapy.common.atomic_file import read_whole_file
from kafkapy.record.batch_header import CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK, BatchHeader
from kafkapy.record.control_record import read_end_txn_marker
from kafkapy.record.crc import crc32c
from kafkapy.storage.errors import CorruptSnapshotError
from kafkapy.storage.producer_state import (
    APPEND_ORIGIN_CLIENT,
    BatchMetadata,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateEntry,
    TxnMetadata,
)
from kafkapy.storage.transaction_index import AbortedTxn, TransactionIndex

__all__ = ["ProducerStateManager", "AppendAnalysis", "SNAPSHOT_FILE_SUFFIX", "read_snapshot", "write_snapshot",
           "snapshot_file_name", "list_snapshot_offsets", "snapshot_offsets_in"]

log = logging.getLogger("org.apache.kafka.storage.internals.log.ProducerStateManager")

SNAPSHOT_FILE_SUFFIX = ".snapshot"
PRODUCER_SNAPSHOT_VERSION = 1
_HEADER = struct.Struct(">hIi")  # version, crc, entry count
_ENTRY = struct.Struct(">qhiqiqiq")


def snapshot_file_name(dir_: str, offset: int) -> str:
    return os.path.join(dir_, f"{offset:020d}{SNAPSHOT_FILE_SUFFIX}")


def snapshot_offsets_in(names: Iterable[str]) -> list[int]:
    """The offsets of the `%020d.snapshot` files among a directory's file names, ascending."""
    out = []
    for name in names:
        if name.endswith(SNAPSHOT_FILE_SUFFIX):
            prefix = name[: -len(SNAPSHOT_FILE_SUFFIX)]
            if len(prefix) == 20 and prefix.isdigit():
                out.append(int(prefix))
    return sorted(out)


def list_snapshot_offsets(dir_: str) -> list[int]:
    return snapshot_offsets_in(os.listdir(dir_))


def write_snapshot(path: str, entries: Iterable[ProducerStateEntry]) -> None:
    body = bytearray()
    n = 0
    for e in entries:
        body += _ENTRY.pack(e.producer_id, e.producer_epoch, e.last_seq, e.last_data_offset, e.last_offset_delta,
                            e.last_timestamp, e.coordinator_epoch, e.current_txn_first_offset)
        n += 1
    after_crc = struct.pack(">i", n) + bytes(body)
    data = struct.pack(">hI", PRODUCER_SNAPSHOT_VERSION, crc32c(after_crc)) + after_crc
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_snapshot(path: str) -> list[ProducerStateEntry]:
    """Entries of a snapshot file; CorruptSnapshotError on a bad version, CRC or length."""
    data = read_whole_file(path)
    if len(data) < _HEADER.size:
        raise CorruptSnapshotError(f"Snapshot {path} is truncated")
    version, crc, count = _HEADER.unpack_from(data, 0)
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
    if crc32c(memoryview(data)[6:]) != crc:
        raise CorruptSnapshotError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}")
    if count < 0 or len(data) != _HEADER.size + count * _ENTRY.size:
        raise CorruptSnapshotError(f"Snapshot {path} has a bad entry count {count}")
    out = []
    for i in range(count):
        pid, epoch, seq, offset, delta, ts, coord_epoch, txn_first = _ENTRY.unpack_from(data, _HEADER.size + i * _ENTRY.size)
        entry = ProducerStateEntry(pid, epoch, coord_epoch, ts, txn_first)
        if offset >= 0:
            entry.batch_metadata.append(BatchMetadata(seq, offset, delta, ts))
        out.append(entry)
    return out


class AppendAnalysis(NamedTuple):
    """What a batch list does to the producer state; `duplicate` set: nothing must be written. `fast` is the
    common case of one in-sequence data batch from a known producer: (entry, its new BatchMetadata, the first
    offset of a transaction it starts or -1), applied to the entry in place after the write."""

    updated: dict[int, ProducerAppendInfo]
    completed: list[CompletedTxn]
    duplicate: BatchMetadata | None = None
    fast: tuple[ProducerStateEntry, BatchMetadata, int] | None = None


class ProducerStateManager:
    def __init__(self, topic_partition: object, dir_: str, producer_id_expiration_ms: int = 86_400_000) -> None:
        self.topic_partition = topic_partition
        self.dir = dir_
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self.producers: dict[int, ProducerStateEntry] = {}
        self.ongoing_txns: dict[int, TxnMetadata] = {}  # by first offset, in offset order
        self.unreplicated_txns: dict[int, TxnMetadata] = {}
        self.map_end_offset = 0

    # --- reads ----------------------------------------------------------------------------------------

    def first_unstable_offset(self) -> int | None:
        candidates = [next(iter(d)) for d in (self.ongoing_txns.copy(), self.unreplicated_txns.copy()) if d]
        return min(candidates) if candidates else None

    def active_producers(self) -> list[ProducerStateEntry]:
        return list(self.producers.copy().values())

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """The LSO written with an ABORT's txnindex entry: the first other open transaction, or past the marker."""
        for txn in self.ongoing_txns.values():
            if txn.producer_id != completed.producer_id:
                return txn.first_offset
        return completed.last_offset + 1

    # --- appends ---------------------------------------------------------------------------------------

    def analyze_batches(self, buf: bytes | bytearray | memoryview, headers: Sequence[BatchHeader],
                        first_offset: int, origin: str, positions: Sequence[int] | None = None) -> AppendAnalysis:
        """Validate the producer batches among `headers` (buf holds them back to back from position 0, or at
        `positions`), whose offsets start at `first_offset` (headers' own base offsets when None)."""
        if len(headers) == 1 and origin == APPEND_ORIGIN_CLIENT:
            fast = self._fast_path(headers[0], first_offset)
            if fast is not None:
                return AppendAnalysis(_NO_UPDATES, _NO_COMPLETED, None, fast)
        updated: dict[int, ProducerAppendInfo] = {}
        completed: list[CompletedTxn] = []
        offset = first_offset
        pos = 0
        for i, h in enumerate(headers):
            if positions is not None:
                pos = positions[i]
            base = h.base_offset if first_offset < 0 else offset
            last = base + h.last_offset_delta
            pid = h.producer_id
            if pid >= 0:
                info = updated.get(pid)
                if info is None:
                    entry = self.producers.get(pid)
                    if (origin == APPEND_ORIGIN_CLIENT and entry is not None and len(headers) == 1
                            and not h.attributes & CONTROL_FLAG_MASK):
                        dup = entry.find_duplicate_batch(h.producer_epoch, h.base_sequence,
                                                         _last_seq(h.base_sequence, h.last_offset_delta))
                        if dup is not None:
                            return AppendAnalysis({}, [], dup)
                    info = updated[pid] = ProducerAppendInfo(self.topic_partition, pid, entry, origin)
                if h.attributes & CONTROL_FLAG_MASK:
                    marker = read_end_txn_marker(buf, pos, h)
                    if marker is not None:
                        done = info.append_end_txn_marker(marker, h.producer_epoch, base, h.max_timestamp)
                        if done is not None:
                            completed.append(done)
                else:
                    info.append_data_batch(h.producer_epoch, h.base_sequence,
                                           _last_seq(h.base_sequence, h.last_offset_delta), h.max_timestamp,
                                           base, last, bool(h.attributes & TRANSACTIONAL_FLAG_MASK))
            offset = last + 1
            pos += h.batch_length + 12
        return AppendAnalysis(updated, completed)

    def _fast_path(self, h: BatchHeader, first_offset: int) -> tuple[ProducerStateEntry, BatchMetadata, int] | None:
        """One client data batch that follows its producer's last one in the same epoch (no duplicate search
        needed: a retry repeats an earlier sequence); None sends it down the general path."""
        attributes = h.attributes
        if attributes & CONTROL_FLAG_MASK:
            return None
        entry = self.producers.get(h.producer_id)
        if entry is None or entry.producer_epoch != h.producer_epoch or not entry.batch_metadata:
            return None
        seq = h.base_sequence
        last_seq = entry.batch_metadata[-1].last_seq
        if seq != last_seq + 1 and not (seq == 0 and last_seq == 2**31 - 1):
            return None
        transactional = bool(attributes & TRANSACTIONAL_FLAG_MASK)
        in_txn = entry.current_txn_first_offset >= 0
        if in_txn and not transactional:
            return None  # INVALID_TXN_STATE, raised by the general path
        delta = h.last_offset_delta
        metadata = BatchMetadata(_last_seq(seq, delta), first_offset + delta, delta, h.max_timestamp)
        return entry, metadata, first_offset if transactional and not in_txn else -1

    def apply(self, analysis: AppendAnalysis, map_end_offset: int) -> None:
        """Commit an analysed append (after its bytes were written); completed transactions are left to the
        caller (`complete_txns`, after it wrote the txnindex entry)."""
        fast = analysis.fast
        if fast is not None:
            entry, metadata, txn_first = fast
            entry.batch_metadata.append(metadata)
            entry.last_timestamp = metadata.timestamp
            if txn_first >= 0:
                entry.current_txn_first_offset = txn_first
                self.ongoing_txns[txn_first] = TxnMetadata(entry.producer_id, txn_first)
            self.map_end_offset = map_end_offset
            return
        for pid, info in analysis.updated.items():
            self.producers[pid] = info.updated_entry
            for txn in info.started_txns:
                self.ongoing_txns[txn.first_offset] = txn
        self.map_end_offset = map_end_offset

    def complete_txn(self, completed: CompletedTxn) -> None:
        txn = self.ongoing_txns.pop(completed.first_offset, None)
        if txn is None:
            log.warning("Attempted to complete transaction %s on partition %s which was not started",
                        completed, self.topic_partition)
            return
        txn.last_offset = completed.last_offset
        self.unreplicated_txns[txn.first_offset] = txn

    def complete_txns(self, completed: Iterable[CompletedTxn], txn_index: TransactionIndex) -> None:
        """Index the aborted ones in the marker's segment (with the LSO they leave), then complete them."""
        for c in completed:
            if c.is_aborted:
                txn_index.append(AbortedTxn(c.producer_id, c.first_offset, c.last_offset, self.last_stable_offset(c)))
            self.complete_txn(c)

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        if not self.unreplicated_txns:
            return
        done = [first for first, t in self.unreplicated_txns.items() if t.last_offset < high_watermark]
        for first in done:
            del self.unreplicated_txns[first]

    def remove_expired_producers(self, now_ms: int, expiration_ms: int | None = None) -> int:
        """Forget producers without an open transaction idle for producer.id.expiration.ms (Kafka's rule)."""
        limit = self.producer_id_expiration_ms if expiration_ms is None else expiration_ms
        expired = [pid for pid, e in self.producers.items()
                   if e.current_txn_first_offset < 0 and now_ms - e.last_timestamp >= limit]
        for pid in expired:
            del self.producers[pid]
        return len(expired)

    # --- snapshots --------------------------------------------------------------------------------------

    def take_snapshot(self) -> None:
        path = snapshot_file_name(self.dir, self.map_end_offset)
        if not os.path.exists(path):
            write_snapshot(path, self.producers.values())

    def delete_snapshots_before(self, offset: int) -> None:
        for o in list_snapshot_offsets(self.dir):
            if o < offset:
                _unlink_quietly(snapshot_file_name(self.dir, o))

    def delete_snapshots_after(self, offset: int) -> None:
        for o in list_snapshot_offsets(self.dir):
            if o > offset:
                _unlink_quietly(snapshot_file_name(self.dir, o))

    def reset(self, map_end_offset: int = 0) -> None:
        self.producers = {}
        self.ongoing_txns = {}
        self.unreplicated_txns = {}
        self.map_end_offset = map_end_offset

    def load_latest_snapshot(self, log_start_offset: int, log_end_offset: int,
                             snapshot_offsets: list[int] | None = None) -> int:
        """Load the newest readable snapshot in [log_start_offset, log_end_offset]; returns the offset to replay
        from (log_start_offset when there is none). Snapshots past the log end are stale and removed.
        `snapshot_offsets`: the snapshots present, when the caller just listed the directory."""
        self.reset(log_start_offset)
        if snapshot_offsets is None:
            snapshot_offsets = list_snapshot_offsets(self.dir)
        for offset in reversed(snapshot_offsets):
            path = snapshot_file_name(self.dir, offset)
            if offset > log_end_offset:
                _unlink_quietly(path)
                continue
            if offset < log_start_offset:
                break
            try:
                entries = read_snapshot(path)
            except (CorruptSnapshotError, OSError) as e:
                log.warning("Failed to load producer snapshot %s: %s; deleting it", path, e)
                _unlink_quietly(path)
                continue
            for entry in entries:
                self.producers[entry.producer_id] = entry
                if entry.current_txn_first_offset >= 0:
                    self.ongoing_txns[entry.current_txn_first_offset] = TxnMetadata(entry.producer_id,
                                                                                   entry.current_txn_first_offset)
            self.ongoing_txns = dict(sorted(self.ongoing_txns.items()))
            self.map_end_offset = offset
            return offset
        return log_start_offset


_NO_UPDATES: dict[int, ProducerAppendInfo] = {}
_NO_COMPLETED: list[CompletedTxn] = []


def _last_seq(base_sequence: int, delta: int) -> int:
    if base_sequence < 0:
        return base_sequence
    seq = base_sequence + delta
    return seq - 2**31 if seq > 2**31 - 1 else seq


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
