"""Cleaner: one compaction pass over one log (Kafka's LogCleaner.Cleaner), and the crash-safe segment swap.

A pass (1) builds the SkimpyOffsetMap over the dirty section [first dirty offset, first uncleanable
offset): key -> latest offset, skipping control batches and aborted transactional batches, stopping at
the map's load factor; (2) groups the segments below the map's end by `segment.bytes` (and the int32
relative-offset limit) and rewrites each group into one `<base>.log.cleaned` segment: a record is kept if
its offset is past the map's end, or it is its key's latest and is not a tombstone whose batch's delete
horizon has passed; aborted transactional batches and markers whose transaction has no data left (past
their delete horizon) go; a producer's last batch is kept as an empty header so its sequence survives;
(3) swaps each group in as Kafka's Log.replaceSegments does: `.cleaned` -> `.swap`, the old segments to
`.deleted`, `.swap` -> final name. LogLoader finishes or rolls back a swap interrupted at any file
operation. Batches are read in `log.cleaner.io.buffer.size` chunks and written a chunk at a time; reads
are throttled to `log.cleaner.io.max.bytes.per.second`.

Thread-safety: a Cleaner belongs to one cleaner thread. It reads a log's inactive segments without the
Log lock (appends only touch the active segment) and swaps under the Log lock, abandoning a group whose
segments were deleted or truncated meanwhile.
"""

from __future__ import annotations

import logging
import os
import struct
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kafkapy.common.time import Time
from kafkapy.record.batch_header import (
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    BatchHeader,
    read_batch_header,
)
from kafkapy.record.control_record import ControlRecordType, read_end_txn_marker
from kafkapy.record.record_walker import COLUMNS, KEY_LEN, KEY_POS, OFFSET_DELTA, VALUE_LEN
from kafkapy.storage.file_records import LEGACY_RECORD_OVERHEAD_V0
from kafkapy.storage.log import Log
from kafkapy.storage.log_cleaner_records import (
    CLEANER_MIN_PAYLOAD_CAP,
    FilteredBatchWriter,
    build_empty_batch,
    has_delete_horizon,
    record_chunks,
)
from kafkapy.storage.log_cleaner_txn import CleanedTransactionMetadata
from kafkapy.storage.log_segment import CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX, LogSegment
from kafkapy.storage.offset_map import SkimpyOffsetMap

__all__ = ["Cleaner", "CleanerStats", "LogToClean", "LogCleaningAbortedError", "replace_segments",
           "group_segments_by_size"]

log = logging.getLogger("kafka.log.LogCleaner")  # Kafka's Cleaner: loggerName = LogCleaner

_INT32_MAX = 2**31 - 1
_OFFSET_SIZE = struct.Struct(">qi")
_MAX_TS = struct.Struct(">q")


class LogCleaningAbortedError(Exception):
    """The pass was abandoned (log deleted/truncated, cleaning aborted, shutdown)."""


@dataclass
class LogToClean:
    log: Log
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool = False

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        total = self.total_bytes
        return self.cleanable_bytes / total if total else 0.0


@dataclass
class CleanerStats:
    bytes_read: int = 0
    bytes_written: int = 0
    map_bytes_read: int = 0
    map_messages_read: int = 0
    messages_read: int = 0
    messages_written: int = 0
    batches_discarded: int = 0
    start_ms: int = 0
    end_ms: int = 0


def group_segments_by_size(segments: list[LogSegment], max_size: int,
                           first_uncleanable_offset: int) -> list[list[LogSegment]]:
    """Consecutive segments whose total size fits one segment and whose offsets fit int32 deltas."""
    groups: list[list[LogSegment]] = []
    i = 0
    while i < len(segments):
        group = [segments[i]]
        size = segments[i].size
        i += 1
        while i < len(segments):
            nxt = segments[i]
            next_end = segments[i + 1].base_offset if i + 1 < len(segments) else first_uncleanable_offset
            if size + nxt.size > max_size or next_end - 1 - group[0].base_offset > _INT32_MAX:
                break
            group.append(nxt)
            size += nxt.size
            i += 1
        groups.append(group)
    return groups


def _iter_batches(segment: LogSegment, chunk_size: int, end: int | None = None):  # type: ignore[no-untyped-def]
    """(chunk, offset in chunk, size) for each complete batch of the segment, read `chunk_size` at a time."""
    fd = segment.log.fileno()
    limit = segment.size if end is None else end
    pos = 0
    while limit - pos >= LOG_OVERHEAD:
        chunk = os.pread(fd, min(chunk_size, limit - pos), pos)
        off = 0
        n = len(chunk)
        while n - off >= LOG_OVERHEAD:
            _, length = _OFFSET_SIZE.unpack_from(chunk, off)
            size = length + LOG_OVERHEAD
            if length < LEGACY_RECORD_OVERHEAD_V0 or pos + off + size > limit:
                return
            if off + size > n:
                if off == 0:  # one batch larger than the chunk
                    chunk = os.pread(fd, size, pos)
                    n = len(chunk)
                    if n < size:
                        return
                else:
                    break
            yield chunk, off, size
            off += size
        if off == 0:
            return
        pos += off


class Cleaner:
    def __init__(self, offset_map: SkimpyOffsetMap, io_buffer_size: int, time: Time,
                 throttle: Callable[[int], None] | None = None,
                 check_done: Callable[[Log], None] | None = None) -> None:
        self.offset_map = offset_map
        self.io_buffer_size = max(io_buffer_size, 4096)
        self.time = time
        self._throttle = throttle or (lambda n: None)
        self._check_done = check_done or (lambda lg: None)
        # Decompressed bytes one batch may stream (set per log in clean()).
        self._payload_cap = CLEANER_MIN_PAYLOAD_CAP

    # --- the pass -------------------------------------------------------------------------------------

    def clean(self, cleanable: LogToClean) -> tuple[int, CleanerStats]:
        """Clean the log; returns (the new first dirty offset, stats)."""
        lg = cleanable.log
        stats = CleanerStats(start_ms=self.time.milliseconds())
        self._payload_cap = max(lg.config.max_message_size, CLEANER_MIN_PAYLOAD_CAP)
        offset_map = self.offset_map
        offset_map.clear()
        self._build_offset_map(lg, cleanable.first_dirty_offset, cleanable.first_uncleanable_offset, stats)
        end_offset = offset_map.latest_offset + 1
        if end_offset <= 0:
            stats.end_ms = self.time.milliseconds()
            return cleanable.first_dirty_offset, stats
        now = self.time.milliseconds()
        delete_horizon_ms = now + lg.config.values["delete.retention.ms"]
        active = {e.producer_id: (e.last_data_offset, e.producer_epoch)
                  for e in lg.producer_state_manager.active_producers()}
        segments = [s for s in lg.segments[:-1] if s.base_offset < end_offset]
        for group in group_segments_by_size(segments, lg.config.segment_size, end_offset):
            self._check_done(lg)
            self._clean_segments(lg, group, now, delete_horizon_ms, active, stats)
        stats.end_ms = self.time.milliseconds()
        return end_offset, stats

    def _build_offset_map(self, lg: Log, start: int, end: int, stats: CleanerStats) -> None:
        offset_map = self.offset_map
        all_segments = lg.segments
        segments = [s for s in all_segments[:-1] if s.base_offset < end]
        next_bases = [s.base_offset for s in all_segments[1:]]
        aborted = lg.collect_aborted_transactions(start, end)
        txn = CleanedTransactionMetadata(aborted)
        for i, segment in enumerate(segments):
            if next_bases[i] <= start:
                continue
            self._check_done(lg)
            for chunk, off, size in _iter_batches(segment, self.io_buffer_size):
                stats.map_bytes_read += size
                if chunk[off + 16] < 2:
                    continue  # legacy batches are not compacted (kept as written)
                h = read_batch_header(chunk, off)
                if h.base_offset >= end:
                    return
                if h.is_control_batch:
                    txn.on_control_batch_read(h.producer_id, h.last_offset, _marker_is_abort(chunk, off, h))
                elif not txn.on_batch_read(h.producer_id, h.last_offset, h.is_transactional):
                    base = h.base_offset
                    for data, cols in record_chunks(memoryview(chunk)[off:off + size], h, self._payload_cap):
                        for row in range(0, len(cols), COLUMNS):
                            stats.map_messages_read += 1
                            offset = base + cols[row + OFFSET_DELTA]
                            klen = cols[row + KEY_LEN]
                            if klen >= 0 and start <= offset < end:
                                if offset_map.is_full:
                                    return
                                kpos = cols[row + KEY_POS]
                                offset_map.put(data[kpos:kpos + klen], offset)
                if start <= h.last_offset < end:
                    offset_map.latest_offset = max(offset_map.latest_offset, h.last_offset)
                self._throttle(size)

    def _clean_segments(self, lg: Log, group: list[LogSegment], now: int, delete_horizon_ms: int,
                        active: dict[int, tuple[int, int]], stats: CleanerStats) -> None:
        base = group[0].base_offset
        sizes = [s.size for s in group]
        for suffix in (".log", ".index", ".timeindex", ".txnindex"):
            stale = os.path.join(lg.dir, f"{base:020d}{suffix}{CLEANED_FILE_SUFFIX}")
            if os.path.exists(stale):
                os.unlink(stale)
        cleaned = LogSegment.open(lg.dir, base, lg.config, self.time, file_suffix=CLEANED_FILE_SUFFIX)
        try:
            all_bases = [s.base_offset for s in lg.segments]
            last = group[-1]
            idx = all_bases.index(last.base_offset) if last.base_offset in all_bases else -1
            group_end = all_bases[idx + 1] if 0 <= idx < len(all_bases) - 1 else lg.log_end_offset
            txn = CleanedTransactionMetadata(lg.collect_aborted_transactions(base, group_end), cleaned.txn_index)
            for segment in group:
                self._check_done(lg)
                self._clean_into(lg, segment, cleaned, txn, now, delete_horizon_ms, active, stats)
            cleaned.on_become_inactive_segment()
            cleaned.set_last_modified(last.last_modified)
            cleaned.flush()
            replace_segments(lg, cleaned, group, sizes)
        except BaseException:
            cleaned.close()
            cleaned.delete_if_exists()
            raise

    def _clean_into(self, lg: Log, source: LogSegment, dest: LogSegment, txn: CleanedTransactionMetadata, now: int,
                    delete_horizon_ms: int, active: dict[int, tuple[int, int]], stats: CleanerStats) -> None:
        offset_map = self.offset_map
        latest = offset_map.latest_offset
        out = bytearray()
        out_max_ts, out_max_ts_offset, out_last = -1, -1, -1

        def write() -> None:
            nonlocal out, out_max_ts, out_max_ts_offset, out_last
            if out:
                dest.append(out_last, out_max_ts, out_max_ts_offset, out)
                stats.bytes_written += len(out)
                out = bytearray()
                out_max_ts, out_max_ts_offset = -1, -1

        for chunk, off, size in _iter_batches(source, self.io_buffer_size):
            stats.bytes_read += size
            self._throttle(size)
            view = memoryview(chunk)[off:off + size]
            if chunk[off + 16] < 2:
                kept_bytes: bytes | memoryview | None = view
                last_offset = _OFFSET_SIZE.unpack_from(chunk, off)[0]
                max_ts = -1
            else:
                h = read_batch_header(chunk, off)
                last_offset = h.last_offset
                stats.messages_read += h.records_count
                kept_bytes = self._filter_batch(view, h, txn, now, delete_horizon_ms, active, latest, stats)
                max_ts = -1 if kept_bytes is None else _MAX_TS.unpack_from(kept_bytes, 35)[0]
            if kept_bytes is None:
                stats.batches_discarded += 1
                continue
            out += kept_bytes
            out_last = last_offset
            if max_ts > out_max_ts:
                out_max_ts, out_max_ts_offset = max_ts, last_offset
            if len(out) >= self.io_buffer_size:
                write()
                self._check_done(lg)  # per chunk, as Kafka's cleanInto: an abort or shutdown is not held up
        write()

    def _filter_batch(self, view: memoryview, h: BatchHeader, txn: CleanedTransactionMetadata, now: int,
                      delete_horizon_ms: int, active: dict[int, tuple[int, int]], latest: int,
                      stats: CleanerStats) -> bytes | memoryview | None:
        """The batch to write for `h` (its own bytes when nothing changes), or None to drop it."""
        pid = h.producer_id
        is_last_of_producer = False
        if pid >= 0 and pid in active:
            last_data_offset, epoch = active[pid]
            is_last_of_producer = (last_data_offset == h.last_offset if last_data_offset >= 0
                                   else h.is_control_batch and h.producer_epoch == epoch)
        if h.is_control_batch:
            can_discard = txn.on_control_batch_read(pid, h.last_offset, _marker_is_abort(view, 0, h))
            horizon_set = has_delete_horizon(h)
            if can_discard and horizon_set and h.base_timestamp <= now:
                return build_empty_batch(h) if is_last_of_producer else None
            if not horizon_set and h.records_count:
                stats.messages_written += h.records_count
                writer = FilteredBatchWriter(h, delete_horizon_ms)
                for data, cols in record_chunks(view, h, self._payload_cap):
                    writer.add(data, cols, range(0, len(cols), COLUMNS))
                return writer.build()
            stats.messages_written += h.records_count
            return view
        if txn.on_batch_read(pid, h.last_offset, h.is_transactional):
            return build_empty_batch(h) if is_last_of_producer else None
        if h.records_count == 0:
            return view
        offset_map = self.offset_map
        retain_deletes = not has_delete_horizon(h) or now < h.base_timestamp
        base = h.base_offset

        def kept_rows(data: bytes, cols: array[int]) -> Iterator[tuple[int, bool]]:
            """(row, is a tombstone) of each record of a piece that stays (Kafka's shouldRetainRecord)."""
            get = offset_map.get
            for row in range(0, len(cols), COLUMNS):
                offset = base + cols[row + OFFSET_DELTA]
                has_value = cols[row + VALUE_LEN] >= 0
                if offset > latest:
                    yield row, not has_value
                    continue
                klen = cols[row + KEY_LEN]
                if klen >= 0 and (has_value or retain_deletes):
                    kpos = cols[row + KEY_POS]
                    if offset >= get(data[kpos:kpos + klen]):
                        yield row, not has_value

        # First pass: what stays (nothing held but one piece); most batches stay whole and are copied as they are.
        kept = 0
        tombstones = False
        for data, cols in record_chunks(view, h, self._payload_cap):
            for _row, tombstone in kept_rows(data, cols):
                kept += 1
                tombstones = tombstones or tombstone
        stats.messages_written += kept
        set_horizon = tombstones and not has_delete_horizon(h)
        if kept == h.records_count and not set_horizon:
            return view
        if not kept:
            return build_empty_batch(h) if is_last_of_producer else None
        # Second pass: the kept records' bytes, compressed as they come (the decisions are the same: the offset
        # map and `latest` do not change during a pass).
        writer = FilteredBatchWriter(h, delete_horizon_ms if set_horizon else None)
        for data, cols in record_chunks(view, h, self._payload_cap):
            writer.add(data, cols, [row for row, _tombstone in kept_rows(data, cols)])
        return writer.build()


def _marker_is_abort(buf: bytes | memoryview, pos: int, h: BatchHeader) -> bool | None:
    if h.records_count == 0 or h.batch_length + LOG_OVERHEAD <= RECORD_BATCH_OVERHEAD:
        return None
    marker = read_end_txn_marker(buf, pos, h)
    if marker is None:
        return None
    return marker.control_type == ControlRecordType.ABORT


def replace_segments(lg: Log, cleaned: LogSegment, old: list[LogSegment], old_sizes: list[int]) -> None:
    """Swap `cleaned` (files `*.cleaned`) in for `old`, crash-safely (Kafka's Log.replaceSegments).

    Steps: the cleaned files become `.swap`; the segment list changes at once for readers; the old
    segments' files become `.deleted` (removed after file.delete.delay.ms); the `.swap` files take their
    final names. LogLoader completes a swap whose `.log.swap` exists and drops one with `.cleaned` left.
    """
    with lg.lock:
        current = lg.segments
        if (lg.is_closed or cleaned.dir != lg.dir or any(s not in current for s in old)
                or [s.size for s in old] != old_sizes):
            raise LogCleaningAbortedError(f"Segments of {lg.topic_partition} changed during cleaning")
        cleaned.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        old_set = set(map(id, old))
        remaining = [s for s in current if id(s) not in old_set]
        remaining.append(cleaned)
        remaining.sort(key=lambda s: s.base_offset)
        lg._set_segments(remaining)
        lg._delete_segment_files(list(old))
        cleaned.change_file_suffixes(SWAP_FILE_SUFFIX, "")
