"""LogSegment: one `%020d.log` file with its `.index` and `.timeindex`, as Kafka's LogSegment.

Files (record-format.md sections 7-8): `<baseOffset zero-padded to 20>.log` holds batches;
`.index` and `.timeindex` are sparse indexes (offset_index.py, time_index.py), opened lazily.
Index rule (Kafka's): when more than `index.interval.bytes` were appended since the last entry, the
next append adds an offset-index entry (that append's last offset, its start position) and a time-index
entry (largest timestamp so far, with its batch's last offset) if the timestamp grew. Recovery rebuilds
both indexes from the batches and truncates a torn or corrupt tail.

Thread-safety: append/truncate/recover/roll are called by one writer under the Log lock; read,
translate_offset and find_offset_by_timestamp may run concurrently (bounded by the size snapshot).
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from kafkapy.common.file_region import FileRegion
from kafkapy.common.time import Time
from kafkapy.record.crc import crc32c
from kafkapy.storage.errors import LogSegmentOffsetOverflowError
from kafkapy.storage.file_records import (
    LEGACY_RECORD_OVERHEAD_V0,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    BatchInfo,
    FileRecords,
    parse_batch_info,
)
from kafkapy.storage.lazy_index import LazyIndex
from kafkapy.storage.log_config import LogConfig
from kafkapy.storage.offset_index import OffsetIndex, read_last_entry
from kafkapy.storage.time_index import NO_TIMESTAMP, TimeIndex, TimestampOffset
from kafkapy.storage.transaction_index import TransactionIndex

_INT32_MAX = 2**31 - 1

if TYPE_CHECKING:
    from kafkapy.storage.leader_epoch_file_cache import LeaderEpochFileCache

__all__ = [
    "LogSegment",
    "FetchDataInfo",
    "LogOffsetPosition",
    "OffsetAndTimestamp",
    "TimestampAndOffset",
    "RollParams",
    "log_file_name",
    "offset_index_file_name",
    "time_index_file_name",
    "filename_prefix_from_offset",
    "LOG_FILE_SUFFIX",
    "INDEX_FILE_SUFFIX",
    "TIME_INDEX_FILE_SUFFIX",
    "TXN_INDEX_FILE_SUFFIX",
    "DELETED_FILE_SUFFIX",
    "CLEANED_FILE_SUFFIX",
    "SWAP_FILE_SUFFIX",
]

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"


def filename_prefix_from_offset(offset: int) -> str:
    return f"{offset:020d}"


def log_file_name(dir_: str, offset: int, suffix: str = "") -> str:
    return os.path.join(dir_, filename_prefix_from_offset(offset) + LOG_FILE_SUFFIX + suffix)


def offset_index_file_name(dir_: str, offset: int, suffix: str = "") -> str:
    return os.path.join(dir_, filename_prefix_from_offset(offset) + INDEX_FILE_SUFFIX + suffix)


def time_index_file_name(dir_: str, offset: int, suffix: str = "") -> str:
    return os.path.join(dir_, filename_prefix_from_offset(offset) + TIME_INDEX_FILE_SUFFIX + suffix)


def txn_index_file_name(dir_: str, offset: int, suffix: str = "") -> str:
    return os.path.join(dir_, filename_prefix_from_offset(offset) + TXN_INDEX_FILE_SUFFIX + suffix)


@dataclass(frozen=True, slots=True)
class FetchDataInfo:
    """Result of a read: `records` is None when nothing is returned (no batch, or none fits)."""

    fetch_offset: int
    records: FileRegion | None
    first_entry_incomplete: bool = False
    segment_base_offset: int = -1
    position: int = -1  # the fetch offset's batch position in its segment (Kafka's LogOffsetMetadata)


class LogOffsetPosition(NamedTuple):
    offset: int  # the batch's last offset
    position: int
    size: int


class OffsetAndTimestamp(NamedTuple):
    offset: int
    timestamp: int


class TimestampAndOffset(OffsetAndTimestamp):
    """(offset, timestamp) as INTERNALS.md's contract unpacks it, plus the batch's `leader_epoch`."""

    leader_epoch: int

    def __new__(cls, offset: int, timestamp: int, leader_epoch: int = -1) -> TimestampAndOffset:
        self = super().__new__(cls, offset, timestamp)
        self.leader_epoch = leader_epoch
        return self

    def __repr__(self) -> str:
        return f"TimestampAndOffset(offset={self.offset}, timestamp={self.timestamp}, leader_epoch={self.leader_epoch})"


class RollParams(NamedTuple):
    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now: int


class LogSegment:
    def __init__(self, dir_: str, base_offset: int, config: LogConfig, time: Time,
                 file_already_exists: bool = False, init_file_size: int = 0, preallocate: bool = False,
                 file_suffix: str = "", txn_index_exists: bool | None = None) -> None:
        """`txn_index_exists`: whether the `.txnindex` file exists, when the caller listed the directory
        (None: unknown, looked at on first use)."""
        self.base_offset = base_offset
        self.dir = dir_
        self.log = FileRecords(log_file_name(dir_, base_offset, file_suffix), file_already_exists,
                               init_file_size, preallocate)
        self._offset_index = LazyIndex(OffsetIndex, offset_index_file_name(dir_, base_offset, file_suffix),
                                       base_offset, config.max_index_size)
        self._time_index = LazyIndex(TimeIndex, time_index_file_name(dir_, base_offset, file_suffix),
                                     base_offset, config.max_index_size)
        self._txn_index_path = txn_index_file_name(dir_, base_offset, file_suffix)
        self.txn_index = TransactionIndex(base_offset, self._txn_index_path, txn_index_exists)
        self.index_interval_bytes = config.index_interval
        self.roll_jitter_ms = config.random_segment_jitter()
        self.time = time
        self.created = time.milliseconds()
        self._bytes_since_last_index_entry = 0
        self._rolling_based_timestamp: int | None = None
        self._max_ts_and_offset: TimestampOffset | None = None  # None = not read from the time index yet

    @classmethod
    def open(cls, dir_: str, base_offset: int, config: LogConfig, time: Time, file_already_exists: bool = False,
             init_file_size: int = 0, preallocate: bool = False, file_suffix: str = "",
             txn_index_exists: bool | None = None) -> LogSegment:
        return cls(dir_, base_offset, config, time, file_already_exists, init_file_size, preallocate, file_suffix,
                   txn_index_exists)

    # --- indexes (lazily mapped, as Kafka's LazyIndex) --------------------------------------------------

    @property
    def offset_index(self) -> OffsetIndex:
        return self._offset_index.get()

    @property
    def time_index(self) -> TimeIndex:
        return self._time_index.get()

    @property
    def offset_index_path(self) -> str:
        return self._offset_index.path

    @property
    def time_index_path(self) -> str:
        return self._time_index.path

    @property
    def indexes_loaded(self) -> bool:
        """Whether the offset or the time index has been opened and mapped (not until first used)."""
        return self._offset_index.is_loaded or self._time_index.is_loaded

    def resize_indexes(self, size: int) -> None:
        """Resize both indexes (an index not opened yet is resized when it is)."""
        self._offset_index.resize(size)
        self._time_index.resize(size)

    def sanity_check(self, time_index_newly_created: bool, offset_index_exists: bool | None = None) -> None:
        """Kafka's LogSegment.sanityCheck: the offset index file must exist (FileNotFoundError); a newly
        created time index is sized to no entries. As Kafka's, the indexes' contents are not checked here:
        segments past the recovery point are rebuilt by recovery, and the others are not read (nor mapped)
        until used. `offset_index_exists`: known from a directory listing, else looked up."""
        if offset_index_exists is None:
            offset_index_exists = os.path.exists(self.offset_index_path)
        if not offset_index_exists:
            raise FileNotFoundError(f"Offset index file {self.offset_index_path} does not exist")
        if time_index_newly_created:
            self._time_index.resize(0)

    # --- facts ----------------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self.log.size

    def read_max_timestamp_and_offset_so_far(self) -> TimestampOffset:
        if self._max_ts_and_offset is None:
            self._max_ts_and_offset = self.time_index.last_entry()
        return self._max_ts_and_offset

    @property
    def max_timestamp_so_far(self) -> int:
        return self.read_max_timestamp_and_offset_so_far().timestamp

    @property
    def offset_of_max_timestamp_so_far(self) -> int:
        return self.read_max_timestamp_and_offset_so_far().offset

    @property
    def last_modified(self) -> int:
        try:
            return os.stat(self.log.path).st_mtime_ns // 1_000_000
        except FileNotFoundError:
            return 0

    def set_last_modified(self, ms: int) -> None:
        for path in (self.log.path, self.offset_index_path, self.time_index_path):
            try:
                os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))
            except FileNotFoundError:
                pass

    @property
    def largest_timestamp(self) -> int:
        """The largest record timestamp, or the file's mtime if no batch has one (retention uses this)."""
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else self.last_modified

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        return self.offset_index.can_append_offset(offset)

    # --- append ---------------------------------------------------------------------------------------

    def append(self, largest_offset: int, largest_timestamp: int, shallow_offset_of_max_timestamp: int,
               records: bytes | bytearray | memoryview) -> None:
        """Append batches (already offset-assigned) with one write; add index entries per Kafka's rule."""
        size = len(records)
        if size == 0:
            return
        log = self.log
        physical_position = log.size
        if physical_position == 0:
            self._rolling_based_timestamp = largest_timestamp
        # Same bound as OffsetIndex.can_append_offset (the index shares this base offset).
        if not 0 <= largest_offset - self.base_offset <= _INT32_MAX:
            raise LogSegmentOffsetOverflowError(
                f"Detected offset overflow at offset {largest_offset} in segment {log.path}")
        # What may open a lazy index (take a descriptor) runs before the write: at the descriptor limit the
        # append then fails with nothing written, so a retry cannot put the same offsets in the file twice.
        mts = self._max_ts_and_offset
        if mts is None:
            mts = self.read_max_timestamp_and_offset_so_far()
        index_due = self._bytes_since_last_index_entry > self.index_interval_bytes
        if index_due:
            offset_index, time_index = self.offset_index, self.time_index
        log.append(records)
        if largest_timestamp > mts.timestamp:
            mts = self._max_ts_and_offset = TimestampOffset(largest_timestamp, shallow_offset_of_max_timestamp)
        if index_due:
            offset_index.append(largest_offset, physical_position)
            time_index.maybe_append(mts.timestamp, mts.offset)
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += size

    # --- lookups --------------------------------------------------------------------------------------

    def translate_offset(self, offset: int, starting_position: int = 0) -> LogOffsetPosition | None:
        """Position of the first batch whose last offset is >= `offset`, or None if there is none."""
        mapping = self.offset_index.lookup(offset)
        for b in self.log.batches_from(max(mapping.position, starting_position)):
            if b.last_offset >= offset:
                return LogOffsetPosition(b.last_offset, b.position, b.size)
        return None

    def _batch_boundary_at_or_below(self, start: int, limit: int) -> int:
        """End of the last whole batch in [start, limit]; uses the index to skip most of the scan."""
        entry = self.offset_index.lookup_by_position(limit)
        scan_from = entry.position if entry is not None and entry.position > start else start
        end = scan_from
        for b in self.log.batches_from(scan_from, limit):
            end = b.position + b.size
        return end

    def read(self, start_offset: int, max_size: int, max_position: int | None = None,
             min_one_message: bool = False) -> FetchDataInfo | None:
        """Whole batches from the one holding `start_offset`, at most `max_size` bytes, ending by max_position.

        With min_one_message the first batch is returned even if larger than max_size. Returns None
        when no batch in this segment reaches `start_offset`.
        """
        if max_size < 0:
            raise ValueError(f"Invalid max size {max_size} for log read from segment {self.log.path}")
        if max_position is None:
            max_position = self.log.size
        found = self.translate_offset(start_offset)
        if found is None:
            return None
        start = found.position
        adjusted = max(max_size, found.size) if min_one_message else max_size
        if adjusted == 0 or start >= max_position:
            return FetchDataInfo(start_offset, None, False, self.base_offset, start)
        limit = start + min(max_position - start, adjusted)
        end = max_position if limit >= max_position else self._batch_boundary_at_or_below(start, limit)
        if end <= start:
            return FetchDataInfo(start_offset, None, adjusted < found.size, self.base_offset, start)
        return FetchDataInfo(start_offset, FileRegion(self.log, start, end - start), False, self.base_offset, start)

    def read_next_offset(self) -> int:
        """The offset after the last batch (scans from the last index entry)."""
        next_offset = self.base_offset
        if self.log.size == 0:
            return next_offset  # nothing to scan: the index is not opened
        lazy = self._offset_index
        last = lazy.get().last_entry() if lazy.is_loaded else read_last_entry(lazy.path, self.base_offset)
        for b in self.log.batches_from(last.position):
            next_offset = b.last_offset + 1
        return next_offset

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int = 0) -> TimestampAndOffset | None:
        """The first record with timestamp >= `timestamp` and offset >= starting_offset (ListOffsets)."""
        ts_offset = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(ts_offset.offset, starting_offset)).position
        for b in self.log.batches_from(position):
            if b.max_timestamp >= timestamp and b.last_offset >= starting_offset:
                found = self._search_batch_for_timestamp(b, timestamp, starting_offset)
                if found is not None:
                    return found
        return None

    def _search_batch_for_timestamp(self, b: BatchInfo, timestamp: int, starting_offset: int) -> TimestampAndOffset | None:
        from kafkapy.record.memory_records import MemoryRecords  # decoding only for this rare lookup

        epoch = b.partition_leader_epoch if b.partition_leader_epoch >= 0 else -1
        for batch in MemoryRecords(self.log.read(b.position, b.size)).batches():
            for record in batch.records():
                if record.timestamp >= timestamp and record.offset >= starting_offset:
                    return TimestampAndOffset(record.offset, record.timestamp, epoch)
        return None

    def offset_of_max_timestamp_record(self) -> TimestampAndOffset | None:
        """The record holding this segment's largest timestamp (ListOffsets MAX_TIMESTAMP)."""
        mts = self.read_max_timestamp_and_offset_so_far()
        if mts.timestamp < 0:
            return None
        position = self.offset_index.lookup(mts.offset).position
        for b in self.log.batches_from(position):
            if b.max_timestamp == mts.timestamp:
                return self._search_batch_for_timestamp(b, mts.timestamp, 0)
        return None

    # --- rolling --------------------------------------------------------------------------------------

    def _load_first_batch_timestamp(self) -> None:
        if self._rolling_based_timestamp is None:
            for b in self.log.batches_from(0):
                self._rolling_based_timestamp = b.max_timestamp
                break

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        self._load_first_batch_timestamp()
        ts = self._rolling_based_timestamp if self._rolling_based_timestamp is not None else -1
        if ts >= 0:
            return message_timestamp - ts
        return now - self.created

    def first_batch_timestamp(self) -> int:
        self._load_first_batch_timestamp()
        ts = self._rolling_based_timestamp
        return ts if ts is not None and ts >= 0 else 2**63 - 1

    def should_roll(self, p: RollParams) -> bool:
        return self.should_roll_at(p.max_segment_ms, p.max_segment_bytes, p.max_timestamp_in_messages,
                                   p.max_offset_in_messages, p.messages_size, p.now)

    def should_roll_at(self, max_segment_ms: int, max_segment_bytes: int, max_timestamp_in_messages: int,
                       max_offset_in_messages: int, messages_size: int, now: int) -> bool:
        """Kafka's shouldRoll: size, segment.ms (by batch timestamps, minus jitter), full indexes, or an
        offset the index cannot store relative to this segment's base. Positional: called per append."""
        size = self.log.size
        if size > max_segment_bytes - messages_size:
            return True
        if size > 0 and self.time_waited_for_roll(now, max_timestamp_in_messages) > max_segment_ms - self.roll_jitter_ms:
            return True
        if self._offset_index.get().is_full() or self._time_index.get().is_full():
            return True
        return not 0 <= max_offset_in_messages - self.base_offset <= _INT32_MAX

    def on_become_inactive_segment(self) -> None:
        mts = self.read_max_timestamp_and_offset_so_far()
        self.time_index.maybe_append(mts.timestamp, mts.offset, skip_full_check=True)
        self.offset_index.trim_to_valid_size()
        self.time_index.trim_to_valid_size()
        self.log.trim()

    # --- recovery and truncation ----------------------------------------------------------------------

    def recover(self, max_message_size: int | None = None,
                leader_epoch_cache: LeaderEpochFileCache | None = None) -> int:
        """Rebuild the indexes from the batches; truncate at the first torn or corrupt one. Returns bytes cut.

        Each batch must be complete, at least the minimum size, of a known magic and pass its CRC
        (CRC-32C for magic 2, CRC-32 for magic 0/1). `max_message_size`, if given, also rejects larger ones.
        """
        file_size = os.fstat(self.log.fileno()).st_size
        self.log.size = file_size
        if file_size == 0:
            # Nothing to scan (a crash with an empty active segment: most of a broker's idle partitions): the
            # indexes are emptied by path, not opened and mapped.
            self._offset_index.truncate_all()
            self._time_index.truncate_all()
            self._max_ts_and_offset = None
            self._bytes_since_last_index_entry = 0
            return 0
        self.offset_index.reset()
        self.time_index.reset()
        self._max_ts_and_offset = TimestampOffset(NO_TIMESTAMP, self.base_offset)
        valid_bytes = 0
        last_index_entry = 0
        for batch, info in self._valid_batches(file_size, max_message_size):
            if not self.can_convert_to_relative_offset(info.last_offset):
                raise LogSegmentOffsetOverflowError(
                    f"Detected offset overflow at offset {info.last_offset} in segment {self.log.path}")
            if info.max_timestamp > self._max_ts_and_offset.timestamp:
                self._max_ts_and_offset = TimestampOffset(info.max_timestamp, info.last_offset)
            if valid_bytes - last_index_entry > self.index_interval_bytes:
                self.offset_index.append(info.last_offset, valid_bytes)
                self.time_index.maybe_append(self._max_ts_and_offset.timestamp, self._max_ts_and_offset.offset)
                last_index_entry = valid_bytes
            valid_bytes += info.size
            epoch = info.partition_leader_epoch
            if leader_epoch_cache is not None and info.magic >= 2 and epoch >= 0:
                latest = leader_epoch_cache.latest_epoch()
                if latest is None or epoch > latest:
                    leader_epoch_cache.assign(epoch, info.base_offset)
            del batch
        truncated = self.log.size - valid_bytes
        self.log.truncate_to(valid_bytes)
        self.offset_index.trim_to_valid_size()
        mts = self._max_ts_and_offset
        self.time_index.maybe_append(mts.timestamp, mts.offset, skip_full_check=True)
        self.time_index.trim_to_valid_size()
        self._bytes_since_last_index_entry = valid_bytes - last_index_entry
        return truncated

    def _valid_batches(self, file_size: int, max_message_size: int | None):  # type: ignore[no-untyped-def]
        """Yield (batch bytes, BatchInfo) for each complete, valid batch from the start of the file."""
        chunk = b""
        chunk_start = 0
        pos = 0
        fd = self.log.fileno()
        while file_size - pos >= LOG_OVERHEAD:
            off = pos - chunk_start
            if off + LOG_OVERHEAD > len(chunk):
                chunk = os.pread(fd, min(1 << 20, file_size - pos), pos)
                chunk_start, off = pos, 0
            size = int.from_bytes(chunk[off + 8:off + 12], "big", signed=True)
            total = size + LOG_OVERHEAD
            if size < LEGACY_RECORD_OVERHEAD_V0 or pos + total > file_size:
                return
            if max_message_size is not None and size > max_message_size:
                return
            if off + total > len(chunk):
                chunk = os.pread(fd, max(total, min(1 << 20, file_size - pos)), pos)
                chunk_start, off = pos, 0
                if len(chunk) < total:
                    return
            view = memoryview(chunk)[off:off + total]
            if not _batch_is_valid(view):
                return
            yield view, parse_batch_info(view, 0, pos)
            pos += total

    def truncate_to(self, offset: int) -> int:
        """Remove batches with offsets >= `offset` (the batch holding it too) and their index entries."""
        mapping = self.translate_offset(offset)
        self.offset_index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        self.offset_index.resize(self.offset_index.max_index_size)
        self.time_index.resize(self.time_index.max_index_size)
        truncated = 0 if mapping is None else self.log.truncate_to(mapping.position)
        if self.log.size == 0:
            self.created = self.time.milliseconds()
            self._rolling_based_timestamp = None
        self._bytes_since_last_index_entry = 0
        if self.max_timestamp_so_far >= 0:
            self._max_ts_and_offset = self._read_largest_timestamp()
        return truncated

    def _read_largest_timestamp(self) -> TimestampOffset:
        last = self.time_index.last_entry()
        position = self.offset_index.lookup(last.offset).position
        best = last
        for b in self.log.batches_from(position):
            if b.max_timestamp > best.timestamp:
                best = TimestampOffset(b.max_timestamp, b.last_offset)
        return best

    # --- files ----------------------------------------------------------------------------------------

    def flush(self) -> None:
        self.log.flush()
        self._offset_index.flush()  # an index never opened has nothing to flush
        self._time_index.flush()
        self.txn_index.flush()

    def close(self) -> None:
        if self._max_ts_and_offset is not None:
            try:
                mts = self._max_ts_and_offset
                self.time_index.maybe_append(mts.timestamp, mts.offset, skip_full_check=True)
            except (ValueError, OSError):
                pass
        self._offset_index.close()
        self._time_index.close()
        self.log.close()

    def close_handlers(self) -> None:
        self._offset_index.close_handler()
        self._time_index.close_handler()
        self.log.close()

    def delete_if_exists(self) -> None:
        self.log.delete_if_exists()
        self._offset_index.delete_if_exists()
        self._time_index.delete_if_exists()
        self.txn_index.delete_if_exists()

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        def renamed(path: str) -> str:
            base = path[: -len(old_suffix)] if old_suffix and path.endswith(old_suffix) else path
            return base + new_suffix

        self.log.rename_to(renamed(self.log.path))
        self._offset_index.rename_to(renamed(self._offset_index.path))
        self._time_index.rename_to(renamed(self._time_index.path))
        self._txn_index_path = renamed(self._txn_index_path)
        self.txn_index.rename_to(self._txn_index_path)

    def has_suffix(self, suffix: str) -> bool:
        return self.log.path.endswith(suffix)

    def update_parent_dir(self, dir_: str) -> None:
        self.dir = dir_
        self.log.path = os.path.join(dir_, os.path.basename(self.log.path))
        self._offset_index.update_parent_dir(dir_)
        self._time_index.update_parent_dir(dir_)
        self._txn_index_path = os.path.join(dir_, os.path.basename(self._txn_index_path))
        self.txn_index.path = self._txn_index_path

    def __repr__(self) -> str:
        return f"LogSegment(baseOffset={self.base_offset}, size={self.size})"


def _batch_is_valid(view: memoryview) -> bool:
    magic = view[16]
    if magic == 2:
        if len(view) < RECORD_BATCH_OVERHEAD:
            return False
        return crc32c(view[21:]) == int.from_bytes(view[17:21], "big")
    if magic in (0, 1):
        return zlib.crc32(view[16:]) & 0xFFFFFFFF == int.from_bytes(view[12:16], "big")
    return False
