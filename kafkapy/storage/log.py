"""Log: a partition's local log (Kafka's UnifiedLog without tiered storage): segments, offsets, epochs.

Owns a partition directory `<topic>-<partition>/` holding `%020d.log/.index/.timeindex` segments,
`leader-epoch-checkpoint` and `partition.metadata` (formats in record-format.md sections 7-10).
Appends: the leader path rewrites each batch's baseOffset and partitionLeaderEpoch in one copy of the
request bytes (per batch, never per record), sets LogAppendTime (attribute bit 3 + maxTimestamp + a new
CRC-32C) when the topic asks for it, and writes all batches with one write; the follower path keeps
offsets. Reads return whole batches as a FileRegion. Retention, log start offset moves (DeleteRecords),
truncation and rolling follow Kafka's rules. Loading and recovery live in log_recovery/log_loader.py;
the retention policy is an operation applied to a Log (log_retention.py; this module never imports it):
the Log offers `delete_old_segments_matching(predicate)`, and deleted segments wait out
file.delete.delay.ms in pending_segment_deletes.py.

Deferred writes: a new log's partition.metadata and a new leadership's epoch entry (at the log end, before any
record of that epoch) are not written when recorded; flush_deferred_writes writes them (fsynced) before the
first append, an OffsetsForLeaderEpoch answer or the close, and the LogManager batches them in the background.

Thread-safety: one RLock per Log serialises appends, truncation, rolls and segment deletion. Readers
take no lock: they read the immutable segment-list snapshot and the log end offset, and segments bound
reads by their committed size, so a reader never sees a half-written batch.
"""

from __future__ import annotations

import bisect
import os
import re
import struct
import threading
import uuid
from collections.abc import Callable
from typing import NamedTuple

from kafkapy.common.atomic_write_batch import PendingReplace
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.metrics.log_flush_stats import LOG_FLUSH_TIMER
from kafkapy.record.batch_header import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    MAX_TIMESTAMP_OFFSET,
    TIMESTAMP_TYPE_MASK,
)
from kafkapy.record.crc import crc32c
from kafkapy.record.memory_records import validate_produce_records
from kafkapy.storage.checkpoint_file import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    PARTITION_METADATA_FILE,
    PartitionMetadataFile,
)
from kafkapy.storage.errors import (
    MessageTooLargeError,
    OffsetOutOfRangeError,
    OffsetsOutOfOrderError,
    RecordListTooLargeError,
    UnexpectedAppendOffsetError,
)
from kafkapy.storage.file_records import LOG_OVERHEAD
from kafkapy.storage.leader_epoch_file_cache import LeaderEpochFileCache
from kafkapy.storage.log_config import LogConfig
from kafkapy.storage.log_segment import (
    DELETED_FILE_SUFFIX,
    FetchDataInfo,
    LogSegment,
    TimestampAndOffset,
)
from kafkapy.storage.log_validator import LogValidator
from kafkapy.storage.pending_segment_deletes import PendingSegmentDeletes
from kafkapy.storage.producer_state import APPEND_ORIGIN_REPLICATION
from kafkapy.storage.producer_state_manager import ProducerStateManager, snapshot_offsets_in
from kafkapy.storage.time_index import NO_TIMESTAMP
from kafkapy.storage.transaction_index import AbortedTxn

__all__ = ["Log", "LogAppendInfo", "EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "MAX_TIMESTAMP"]

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5

_ATTR = struct.Struct(">h")
_INT64 = struct.Struct(">q")
_UINT32 = struct.Struct(">I")
_OFFSET_SIZE = struct.Struct(">qi")
_INT32 = struct.Struct(">i")
_OFFSET_EPOCH_PAIR = struct.Struct(">qii")  # baseOffset, batchLength (rewritten as is), partitionLeaderEpoch


class LogAppendInfo(NamedTuple):
    """What an append did (a NamedTuple: built once per produce request, so it must be cheap)."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int
    log_start_offset: int
    num_batches: int
    valid_bytes: int
    num_records: int = 0


class _HotConfig:
    """The LogConfig values every append reads, resolved once per config object (update_config swaps it)."""

    __slots__ = ("config", "max_message_size", "segment_size", "log_append_time", "max_segment_ms",
                 "flush_interval", "validator")

    def __init__(self, config: LogConfig | None, topic_partition: TopicPartition | None = None) -> None:
        self.config = config
        if config is None:
            return
        self.max_message_size = config.max_message_size
        self.segment_size = config.segment_size
        self.log_append_time = config.message_timestamp_type == 1
        self.max_segment_ms = config.max_segment_ms()
        self.flush_interval = config.flush_interval
        self.validator = LogValidator(topic_partition or TopicPartition("", 0), config)


# Whether a segment (given the next one, None for the active segment) should be deleted.
SegmentPredicate = Callable[[LogSegment, "LogSegment | None"], bool]


_SUFFIXED_DIR = re.compile(r"^(.+)\.[0-9a-f]{32}-(?:delete|future|stray)$")


def parse_log_dir_name(name: str) -> TopicPartition:
    """The partition of a log dir: `<topic>-<partition>`, or Kafka's `<topic>-<partition>.<uuid hex>-future`
    (a replica being moved between log dirs), `-delete` and `-stray` names (UnifiedLog.parseTopicPartitionName)."""
    m = _SUFFIXED_DIR.match(name)
    return TopicPartition.parse(m.group(1) if m else name)


def _empty_append_info(log_start_offset: int) -> LogAppendInfo:
    return LogAppendInfo(-1, -1, NO_TIMESTAMP, -1, -1, log_start_offset, 0, 0, 0)


class Log:
    def __init__(self, dir_: str, config: LogConfig, segments: list[LogSegment], log_start_offset: int,
                 recovery_point: int, next_offset: int, leader_epoch_cache: LeaderEpochFileCache,
                 time: Time = SYSTEM, topic_id: uuid.UUID | None = None) -> None:
        self.dir = dir_
        self.config = config
        self.time = time
        self.topic_partition = parse_log_dir_name(os.path.basename(dir_))
        self.lock = threading.RLock()
        self._segments: tuple[LogSegment, ...] = tuple(segments)
        self._bases: tuple[int, ...] = tuple(s.base_offset for s in segments)
        self._log_start_offset = log_start_offset
        self._recovery_point = recovery_point
        self._next_offset = next_offset
        self._high_watermark: int | None = None
        self._last_flush_time = time.milliseconds()
        self._pending_flush_offset = 0
        self._pending_deletes = PendingSegmentDeletes()
        self.leader_epoch_cache = leader_epoch_cache
        self.topic_id = topic_id
        # A new log's topic id not yet in partition.metadata (Kafka's PartitionMetadataFile.record): written
        # by maybe_flush_metadata_file before the first append, at close, or by the LogManager's background
        # flush, so creating a log waits on no fsync of it.
        self._dirty_topic_id: uuid.UUID | None = None
        self._closed = False
        self._hot = _HotConfig(None)
        self.producer_state_manager = ProducerStateManager(
            self.topic_partition, dir_)  # producer.id.expiration.ms is the broker's, given to each expiry check

    @classmethod
    def open(cls, dir_: str, config: LogConfig, time: Time = SYSTEM, log_start_offset: int = 0,
             recovery_point: int = 0, had_clean_shutdown: bool = True, topic_id: uuid.UUID | None = None) -> Log:
        """Create or load the log in `dir_` (recovering past `recovery_point` after an unclean shutdown)."""
        from kafkapy.storage.log_recovery.log_loader import load_log

        os.makedirs(dir_, exist_ok=True)
        loaded = load_log(dir_, config, time, log_start_offset, recovery_point, had_clean_shutdown)
        log = cls(dir_, config, loaded.segments, loaded.log_start_offset, loaded.recovery_point,
                  loaded.next_offset, loaded.leader_epoch_cache, time, topic_id)
        log.rebuild_producer_state(snapshot_offsets_in(loaded.names))
        metadata = PartitionMetadataFile(os.path.join(dir_, PARTITION_METADATA_FILE))
        has_metadata = PARTITION_METADATA_FILE in loaded.names  # listed by the load: no stat
        if topic_id is not None:
            if not has_metadata:
                log._dirty_topic_id = topic_id
            elif metadata.read() != topic_id:
                metadata.write(topic_id)
        elif has_metadata:
            log.topic_id = metadata.read()
        return log

    @property
    def metadata_file_dirty(self) -> bool:
        return self._dirty_topic_id is not None

    def flush_deferred_writes(self) -> None:
        """Write what creation and a new leadership deferred (partition.metadata, the new leader epoch's
        entry), fsynced: before data reaches the log, an OffsetsForLeaderEpoch answer, or the close."""
        if self._dirty_topic_id is not None:
            self.maybe_flush_metadata_file()
        self.leader_epoch_cache.flush_unflushed()

    def pending_replaces(self) -> list[PendingReplace]:
        """The deferred files as items of one batch write (common/atomic_write_batch) over many logs."""
        items = []
        with self.lock:
            topic_id, dir_ = self._dirty_topic_id, self.dir
            if topic_id is not None and not self._closed:

                def current() -> bool:
                    return self._dirty_topic_id is topic_id and self.dir == dir_ and not self._closed

                def durable() -> None:
                    self._dirty_topic_id = None

                items.append(PendingReplace(os.path.join(dir_, PARTITION_METADATA_FILE),
                                            PartitionMetadataFile.encode(topic_id), self.lock, current, durable))
        epoch_item = self.leader_epoch_cache.pending_replace()
        if epoch_item is not None:
            items.append(epoch_item)
        return items

    def maybe_flush_metadata_file(self) -> None:
        """Write (fsynced) the topic id recorded at creation, once (Kafka's PartitionMetadataFile.maybeFlush):
        before any data reaches the log, so recovered data always has its topic id beside it."""
        if self._dirty_topic_id is None:
            return
        with self.lock:
            topic_id = self._dirty_topic_id
            if topic_id is None or self._closed:
                return
            PartitionMetadataFile(os.path.join(self.dir, PARTITION_METADATA_FILE)).write(topic_id)
            self._dirty_topic_id = None

    # --- offsets and facts ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return os.path.basename(self.dir)

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._next_offset

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

    @property
    def high_watermark(self) -> int:
        """The HW told by the partition (update_high_watermark); the log end offset until then."""
        hw = self._high_watermark
        return self._next_offset if hw is None else min(hw, self._next_offset)

    @property
    def has_high_watermark(self) -> bool:
        """Whether a partition has told this log its HW yet (until then high_watermark reads as the log end)."""
        return self._high_watermark is not None

    def update_high_watermark(self, hw: int) -> int:
        """Record the partition's HW (bounded to [log_start_offset, log_end_offset]); retention respects it."""
        bounded = max(self._log_start_offset, min(hw, self._next_offset))
        self._high_watermark = bounded
        self.producer_state_manager.on_high_watermark_updated(bounded)
        return bounded

    @property
    def last_stable_offset(self) -> int:
        """min(first unstable offset, HW): read_committed consumers read below it."""
        hw = self.high_watermark
        first_unstable = self.producer_state_manager.first_unstable_offset()
        return hw if first_unstable is None else min(first_unstable, hw)

    def rebuild_producer_state(self, snapshot_offsets: list[int] | None = None) -> None:
        """Producer state from the newest snapshot and the batches after it (load and truncation).
        `snapshot_offsets`: the snapshot files present, when the caller just listed the directory."""
        from kafkapy.storage.log_recovery.producer_state_loader import rebuild_producer_state

        with self.lock:
            rebuild_producer_state(self.producer_state_manager, self._segments, self._log_start_offset,
                                   self._next_offset, snapshot_offsets)
            if self._high_watermark is not None:
                self.producer_state_manager.on_high_watermark_updated(self._high_watermark)

    def remove_expired_producers(self, now_ms: int, expiration_ms: int | None = None) -> int:
        with self.lock:
            return self.producer_state_manager.remove_expired_producers(now_ms, expiration_ms)

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping [start_offset, upper_bound_offset) (read_committed fetches)."""
        segments, bases = self._segments, self._bases
        i = max(0, bisect.bisect_right(bases, start_offset) - 1)
        out: list[AbortedTxn] = []
        for segment in segments[i:]:
            result = segment.txn_index.collect_aborted_txns(start_offset, upper_bound_offset)
            out.extend(result.aborted)
            if result.is_complete or segment.base_offset >= upper_bound_offset:
                break
        return out

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        return self._segments

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[-1]

    @property
    def num_segments(self) -> int:
        return len(self._segments)

    @property
    def size_in_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    @property
    def unflushed_messages(self) -> int:
        return self._next_offset - self._recovery_point

    @property
    def last_flush_time(self) -> int:
        return self._last_flush_time

    def latest_epoch(self) -> int | None:
        return self.leader_epoch_cache.latest_epoch()

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetsForLeaderEpoch; (-1, -1) if unknown. A truncation may follow from
        the answer, so a deferred epoch entry is made durable first."""
        if self.leader_epoch_cache.unflushed:
            self.leader_epoch_cache.flush_unflushed()
        return self.leader_epoch_cache.end_offset_for(leader_epoch, self._next_offset)

    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int, flush: bool = True) -> None:
        """flush=False (a new leadership at the log end) defers the checkpoint write: flush_deferred_writes,
        run before the first append, an OffsetsForLeaderEpoch answer and the close, or a batch does it."""
        self.leader_epoch_cache.assign(leader_epoch, start_offset, flush)

    def update_config(self, config: LogConfig) -> None:
        with self.lock:
            self.config = config

    def _set_segments(self, segments: list[LogSegment] | tuple[LogSegment, ...]) -> None:
        # Readers hold the old tuple; swapping whole tuples keeps their snapshot consistent.
        self._segments = tuple(segments)
        self._bases = tuple(s.base_offset for s in segments)

    # --- appends ----------------------------------------------------------------------------------------

    def append_as_leader(self, records: bytes | bytearray | memoryview, leader_epoch: int,
                         now_ms: int | None = None, origin: str = "client") -> LogAppendInfo:
        """Validate, assign offsets from the log end offset, stamp the leader epoch, append with one write.

        origin "client" applies Kafka's client-batch rules (baseOffset 0, no control batches, ...);
        "coordinator" (group/transaction coordinators' own records and markers) skips them.
        """
        if self._dirty_topic_id is not None or self.leader_epoch_cache.unflushed:
            self.flush_deferred_writes()
        headers = validate_produce_records(records, from_client=origin == "client")
        config = self.config
        hot = self._hot
        if hot.config is not config:
            hot = self._hot = _HotConfig(config, self.topic_partition)
        max_message_size = hot.max_message_size
        total = 0
        for h in headers:
            size = h.batch_length + LOG_OVERHEAD
            if size > max_message_size:
                raise MessageTooLargeError(
                    f"The record batch size in the append to {self.topic_partition} is {size} bytes "
                    f"which exceeds the maximum configured value of {max_message_size}."
                )
            total += size
        if not headers:
            return _empty_append_info(self._log_start_offset)
        if total > hot.segment_size:
            raise RecordListTooLargeError(
                f"The total record batch size in the append to {self.topic_partition} is {total} bytes which "
                f"exceeds the maximum configured segment size of {hot.segment_size}."
            )
        now = self.time.milliseconds() if now_ms is None else now_ms
        # Kafka's LogValidator: every record parses (compressed ones streamed, bounded), keys on compacted
        # topics, timestamps, the topic's codec. Outside the lock: it is the append's per-record work.
        records, headers = hot.validator.validate(records, headers, now)
        buf = bytearray(records)  # the one copy: offsets and epochs are written into it
        log_append_time = hot.log_append_time
        with self.lock:
            first_offset = offset = self._next_offset
            max_ts, offset_of_max, num_records, pos = NO_TIMESTAMP, -1, 0, 0
            for h in headers:
                _OFFSET_EPOCH_PAIR.pack_into(buf, pos, offset, h.batch_length, leader_epoch)
                last = offset + h.last_offset_delta
                end = pos + h.batch_length + LOG_OVERHEAD
                if log_append_time:
                    _ATTR.pack_into(buf, pos + ATTRIBUTES_OFFSET, h.attributes | TIMESTAMP_TYPE_MASK)
                    _INT64.pack_into(buf, pos + MAX_TIMESTAMP_OFFSET, now)
                    _UINT32.pack_into(buf, pos + CRC_OFFSET, crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET:end]))
                    batch_max_ts = now
                else:
                    batch_max_ts = h.max_timestamp
                if batch_max_ts > max_ts:
                    max_ts, offset_of_max = batch_max_ts, last
                num_records += h.records_count
                offset = last + 1
                pos = end
            last_offset = offset - 1
            analysis = None
            for h in headers:
                if h.producer_id >= 0:
                    analysis = self.producer_state_manager.analyze_batches(buf, headers, first_offset, origin)
                    if analysis.duplicate is not None:
                        d = analysis.duplicate
                        return LogAppendInfo(d.first_offset, d.last_offset, max_ts, offset_of_max, d.timestamp,
                                             self._log_start_offset, 0, 0, 0)
                    break
            size = len(buf)
            segment = self._segments[-1]
            if segment.should_roll_at(hot.max_segment_ms, hot.segment_size, max_ts, last_offset, size, now):
                segment = self.roll(first_offset)
            segment.append(last_offset, max_ts, offset_of_max, buf)
            if analysis is not None:
                self.producer_state_manager.apply(analysis, offset)
                if analysis.completed:
                    self.producer_state_manager.complete_txns(analysis.completed, segment.txn_index)
            if leader_epoch >= 0:
                self.leader_epoch_cache.assign(leader_epoch, first_offset)
            self._next_offset = offset
            if offset - self._recovery_point >= hot.flush_interval:
                self.flush()
            return LogAppendInfo(first_offset, last_offset, max_ts, offset_of_max, now if log_append_time else -1,
                                 self._log_start_offset, len(headers), size, num_records)

    def append_as_follower(self, records: bytes | bytearray | memoryview) -> LogAppendInfo:
        """Append batches with the leader's offsets and epochs (a partial trailing batch is dropped)."""
        infos, valid_bytes = _analyze_follower_batches(records)
        if not infos:
            return _empty_append_info(self._log_start_offset)
        if self._dirty_topic_id is not None or self.leader_epoch_cache.unflushed:
            self.flush_deferred_writes()
        with self.lock:
            first = infos[0][1]
            if first < self._next_offset:
                raise UnexpectedAppendOffsetError(
                    f"Unexpected offset in append to {self.topic_partition}. First offset {first} is less than "
                    f"the next offset {self._next_offset}.", first, infos[-1][2])
            max_ts, offset_of_max, now = NO_TIMESTAMP, -1, self.time.milliseconds()
            for _pos, _base, last, ts, _epoch, _magic in infos:
                if ts > max_ts:
                    max_ts, offset_of_max = ts, last
            last_offset = infos[-1][2]
            analysis = _analyze_follower_producers(self.producer_state_manager, records, infos)
            segment = self._maybe_roll(valid_bytes, max_ts, first, last_offset, now)
            segment.append(last_offset, max_ts, offset_of_max, memoryview(records)[:valid_bytes])
            if analysis is not None:
                self.producer_state_manager.apply(analysis, last_offset + 1)
                self.producer_state_manager.complete_txns(analysis.completed, segment.txn_index)
            for _pos, base, _last, _ts, epoch, magic in infos:
                if magic >= 2 and epoch >= 0:
                    self.leader_epoch_cache.assign(epoch, base)
            self._next_offset = last_offset + 1
            self._maybe_flush_on_append()
            return LogAppendInfo(first, last_offset, max_ts, offset_of_max, -1, self._log_start_offset,
                                 len(infos), valid_bytes)

    def _maybe_flush_on_append(self) -> None:
        if self.unflushed_messages >= self.config.flush_interval:
            self.flush()

    # --- rolling ------------------------------------------------------------------------------------

    def _maybe_roll(self, messages_size: int, max_ts: int, first_offset: int, last_offset: int, now: int) -> LogSegment:
        segment = self._segments[-1]
        config = self.config
        if segment.should_roll_at(config.max_segment_ms(), config.segment_size, max_ts, last_offset, messages_size, now):
            return self.roll(first_offset)
        return segment

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment at max(expected_next_offset, log end offset)."""
        with self.lock:
            new_offset = max(expected_next_offset or 0, self._next_offset)
            active = self.active_segment
            if active.base_offset == new_offset and active.size == 0:
                return active
            if new_offset in self._bases:
                raise RuntimeError(f"Trying to roll a new log segment for {self.topic_partition} with start offset "
                                   f"{new_offset} while it already exists.")
            active.on_become_inactive_segment()
            # Kafka snapshots the producer state at each new segment's base offset.
            self.producer_state_manager.map_end_offset = new_offset
            self.producer_state_manager.take_snapshot()
            for suffix in (".log", ".index", ".timeindex", ".txnindex"):
                stale = os.path.join(self.dir, f"{new_offset:020d}{suffix}")
                if os.path.exists(stale):
                    os.unlink(stale)
            segment = LogSegment.open(self.dir, new_offset, self.config, self.time,
                                      init_file_size=self.config.init_file_size(), preallocate=self.config.preallocate)
            self._set_segments(self._segments + (segment,))
            # Kafka flushes the rolled segment asynchronously; flush_pending() (LogManager) does it here.
            self._pending_flush_offset = max(self._pending_flush_offset, new_offset)
            return segment

    # --- flush --------------------------------------------------------------------------------------

    def flush(self, offset: int | None = None) -> None:
        """fsync segments holding offsets below `offset` (default: the log end offset); advance the recovery point.

        The fsyncs run outside the Log lock, as Kafka's do, so appends are not blocked by disk flushes.
        """
        target = self._next_offset if offset is None else offset
        if target <= self._recovery_point:
            return
        segments, bases = self._segments, self._bases
        start = max(0, bisect.bisect_right(bases, self._recovery_point) - 1)
        flush_start = self.time.nanoseconds()
        for segment in segments[start:]:
            if segment.base_offset >= target:
                break
            try:
                segment.flush()
            except (ValueError, OSError):
                if not segment.log.closed:
                    raise
        LOG_FLUSH_TIMER.update((self.time.nanoseconds() - flush_start) / 1e6)  # LogFlushRateAndTimeMs
        with self.lock:
            if target > self._recovery_point:
                self._recovery_point = target
                self._last_flush_time = self.time.milliseconds()

    def flush_pending(self) -> None:
        """Flush segments rolled since the last flush (Kafka's flush-on-roll, done by the LogManager)."""
        if self._pending_flush_offset > self._recovery_point:
            self.flush(self._pending_flush_offset)

    # --- reads --------------------------------------------------------------------------------------

    def read(self, start_offset: int, max_bytes: int, max_offset: int | None = None,
             min_one_message: bool = True) -> FetchDataInfo:
        """Whole batches from the batch holding `start_offset`, up to `max_bytes`, below `max_offset` (e.g. the HW)."""
        segments, bases = self._segments, self._bases
        end_offset = self._next_offset
        if start_offset < self._log_start_offset or start_offset > end_offset:
            raise OffsetOutOfRangeError(
                f"Received request for offset {start_offset} for partition {self.topic_partition}, but we only "
                f"have log segments in the range {self._log_start_offset} to {end_offset}.")
        upper = end_offset if max_offset is None else min(max_offset, end_offset)
        if start_offset >= upper:
            return FetchDataInfo(start_offset, None)
        i = max(0, bisect.bisect_right(bases, start_offset) - 1)
        while i < len(segments):
            segment = segments[i]
            if segment.base_offset >= upper:
                break
            next_base = bases[i + 1] if i + 1 < len(bases) else None
            max_position = segment.size
            if upper != end_offset and (next_base is None or upper < next_base):
                found = segment.translate_offset(upper)
                if found is not None:
                    max_position = found.position
            info = segment.read(start_offset, max_bytes, max_position, min_one_message)
            if info is not None:
                return info
            i += 1
        return FetchDataInfo(start_offset, None)

    def fetch_offset_by_timestamp(self, target_timestamp: int) -> TimestampAndOffset | None:
        """ListOffsets: the first offset whose timestamp is >= target, or the special -1/-2/-3/-4 lookups."""
        if target_timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            lso = self._log_start_offset
            earliest = self.leader_epoch_cache.earliest_entry()
            epoch = earliest[0] if earliest is not None and earliest[1] <= lso else -1
            return TimestampAndOffset(lso, NO_TIMESTAMP, epoch)
        if target_timestamp == LATEST_TIMESTAMP:
            latest = self.leader_epoch_cache.latest_epoch()
            return TimestampAndOffset(self._next_offset, NO_TIMESTAMP, -1 if latest is None else latest)
        if target_timestamp == MAX_TIMESTAMP:
            return self.latest_timestamp_offset()
        if target_timestamp == LATEST_TIERED_TIMESTAMP:
            return TimestampAndOffset(-1, NO_TIMESTAMP, -1)
        for segment in self._segments:
            if segment.max_timestamp_so_far >= target_timestamp:
                found = segment.find_offset_by_timestamp(target_timestamp, self._log_start_offset)
                if found is not None:
                    return found
        return None

    def latest_timestamp_offset(self) -> TimestampAndOffset | None:
        """ListOffsets MAX_TIMESTAMP: the record with the largest timestamp (first such), or None."""
        segments = self._segments
        best = max(segments, key=lambda s: s.max_timestamp_so_far)
        if best.max_timestamp_so_far < 0:
            return None
        return best.offset_of_max_timestamp_record()

    # --- log start offset and segment deletion -----------------------------------------------------------

    @property
    def is_closed(self) -> bool:
        return self._closed

    def maybe_increment_log_start_offset(self, new_log_start_offset: int, reason: str = "client") -> bool:
        """Move the log start offset forward (DeleteRecords, retention) and drop whole segments below it.

        Raises OffsetOutOfRangeError beyond the high watermark. True if the start offset moved.
        """
        with self.lock:
            hw = self.high_watermark
            if new_log_start_offset > hw:
                raise OffsetOutOfRangeError(
                    f"Cannot increment the log start offset to {new_log_start_offset} of partition "
                    f"{self.topic_partition} since it is larger than the high watermark {hw}")
            if new_log_start_offset <= self._log_start_offset:
                return False
            self._log_start_offset = new_log_start_offset
            self.leader_epoch_cache.truncate_from_start(new_log_start_offset)
            if self._recovery_point < new_log_start_offset:
                self._recovery_point = new_log_start_offset
            # Snapshots of segments wholly below the new start are useless (Kafka deletes them with their segments).
            bases = self._bases
            floor = bases[max(0, bisect.bisect_right(bases, new_log_start_offset) - 1)] if bases else new_log_start_offset
            self.producer_state_manager.delete_snapshots_before(floor)
            if reason != "segment_deletion":
                self.delete_log_start_offset_breached_segments()
            return True

    def delete_log_start_offset_breached_segments(self) -> int:
        """Drop the segments wholly below the log start offset (every cleanup policy)."""
        lso = self._log_start_offset

        def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            return next_segment is not None and next_segment.base_offset <= lso

        return self.delete_old_segments_matching(breached)

    def delete_old_segments_matching(self, predicate: SegmentPredicate) -> int:
        """Delete the oldest segments while predicate(segment, next segment or None) holds (Kafka's
        deleteOldSegments(predicate)); the log start offset follows. A log always keeps one segment: when
        every segment goes, an empty one is rolled first. Returns how many were deleted."""
        with self.lock:
            segments = self._segments
            deletable: list[LogSegment] = []
            for i, segment in enumerate(segments):
                next_segment = segments[i + 1] if i + 1 < len(segments) else None
                if next_segment is None and segment.size == 0:
                    break
                if not predicate(segment, next_segment):
                    break
                deletable.append(segment)
            if not deletable:
                return 0
            if len(deletable) == len(segments):
                new_segment = self.roll()
                if deletable[-1] is new_segment:
                    deletable.pop()
            remaining = [s for s in self._segments if s not in deletable]
            self._set_segments(remaining)
            self._delete_segment_files(deletable)
            self.maybe_increment_log_start_offset(remaining[0].base_offset, "segment_deletion")
            return len(deletable)

    def _delete_segment_files(self, segments: list[LogSegment]) -> None:
        if segments:
            self._pending_deletes.delete(segments, self.config.file_delete_delay_ms, self.time.milliseconds())

    def process_pending_deletes(self, now_ms: int | None = None) -> int:
        """Remove `.deleted` segments whose file.delete.delay.ms has passed; returns how many."""
        now = self.time.milliseconds() if now_ms is None else now_ms
        with self.lock:
            return self._pending_deletes.finish(now)

    # --- truncation -----------------------------------------------------------------------------------

    def truncate_to(self, target_offset: int) -> bool:
        """Remove every batch at or after `target_offset` (follower truncation). False if nothing to do."""
        if target_offset < 0:
            raise ValueError(f"Cannot truncate partition {self.topic_partition} to a negative offset ({target_offset}).")
        with self.lock:
            if target_offset >= self._next_offset:
                return False
            if self._segments[0].base_offset > target_offset:
                self.truncate_fully_and_start_at(target_offset)
                return True
            keep = [s for s in self._segments if s.base_offset <= target_offset]
            drop = [s for s in self._segments if s.base_offset > target_offset]
            self._set_segments(keep)
            self._delete_segment_files(drop)
            self.active_segment.truncate_to(target_offset)
            self._next_offset = target_offset
            self._log_start_offset = min(self._log_start_offset, target_offset)
            self.leader_epoch_cache.truncate_from_end(target_offset)
            self._recovery_point = min(self._recovery_point, target_offset)
            self._pending_flush_offset = min(self._pending_flush_offset, target_offset)
            if self._high_watermark is not None:
                self._high_watermark = min(self._high_watermark, target_offset)
            self.producer_state_manager.delete_snapshots_after(target_offset)
            self.rebuild_producer_state()
            return True

    def truncate_fully_and_start_at(self, new_offset: int) -> None:
        """Delete every segment and start empty at `new_offset`."""
        with self.lock:
            old = list(self._segments)
            for s in old:
                # Move the old files aside first: the new segment may reuse a base offset's file names.
                s.change_file_suffixes("", DELETED_FILE_SUFFIX)
            segment = LogSegment.open(self.dir, new_offset, self.config, self.time,
                                      init_file_size=self.config.init_file_size(), preallocate=self.config.preallocate)
            self._set_segments([segment])
            self._delete_segment_files(old)
            self.leader_epoch_cache.clear_and_flush()
            self._next_offset = new_offset
            self._log_start_offset = new_offset
            self._recovery_point = new_offset
            self._pending_flush_offset = new_offset
            self._high_watermark = None if self._high_watermark is None else new_offset
            self.producer_state_manager.delete_snapshots_after(-1)
            self.producer_state_manager.reset(new_offset)

    # --- lifecycle ------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close files (trimming indexes); does not flush (LogManager.shutdown flushes first)."""
        with self.lock:
            if self._closed:
                return
            try:
                self.flush_deferred_writes()
            except OSError as e:  # a deleted log's dir is gone: nothing to keep
                import logging

                logging.getLogger("kafka.log.UnifiedLog").debug("No partition.metadata for %s: %s", self.topic_partition, e)
            self._closed = True
            try:
                self.producer_state_manager.map_end_offset = self._next_offset
                self.producer_state_manager.take_snapshot()
            except OSError as e:  # a missing dir (deleted log): nothing to snapshot
                import logging

                logging.getLogger("kafka.log.UnifiedLog").debug("No producer snapshot for %s: %s", self.topic_partition, e)
            for segment in self._segments:
                segment.close()
            self._pending_deletes.finish(force=True)

    def delete(self) -> None:
        """Delete every file and the directory."""
        import shutil

        with self.lock:
            for segment in self._segments:
                segment.delete_if_exists()
            self._pending_deletes.finish(force=True)
            self._closed = True
            self._dirty_topic_id = None
            shutil.rmtree(self.dir, ignore_errors=True)

    def rename_dir(self, new_name: str) -> None:
        with self.lock:
            new_dir = os.path.join(os.path.dirname(self.dir), new_name)
            os.rename(self.dir, new_dir)
            self.dir = new_dir
            self.producer_state_manager.dir = new_dir
            for segment in self._segments:
                segment.update_parent_dir(new_dir)
            self._pending_deletes.update_parent_dir(new_dir)
            checkpoint = self.leader_epoch_cache._checkpoint
            if checkpoint is not None:
                checkpoint.path = os.path.join(new_dir, LEADER_EPOCH_CHECKPOINT_FILE)

    def __repr__(self) -> str:
        return (f"Log(dir={self.dir}, log_start_offset={self._log_start_offset}, "
                f"log_end_offset={self._next_offset}, segments={len(self._segments)})")


def _analyze_follower_batches(records: bytes | bytearray | memoryview) -> tuple[list[tuple[int, int, int, int, int, int]], int]:
    """(position, base, last, max_timestamp, epoch, magic) per complete batch, and the bytes they cover.

    Checks each batch's CRC (CRC-32C for magic 2, CRC-32 for 0/1) and that offsets increase.
    """
    from kafkapy.record.errors import CorruptRecordError
    from kafkapy.storage.file_records import parse_batch_info
    from kafkapy.storage.log_segment import _batch_is_valid

    mv = memoryview(records)
    end = len(mv)
    pos = 0
    out: list[tuple[int, int, int, int, int, int]] = []
    last_seen = -1
    while end - pos >= LOG_OVERHEAD:
        _, size = _OFFSET_SIZE.unpack_from(mv, pos)
        if size < 14:
            raise CorruptRecordError(f"Record size {size} is less than the minimum record overhead (14)")
        if pos + LOG_OVERHEAD + size > end:
            break
        view = mv[pos:pos + LOG_OVERHEAD + size]
        if not _batch_is_valid(view):
            raise CorruptRecordError(f"Record batch at position {pos} is corrupt (CRC mismatch or bad magic)")
        info = parse_batch_info(view, 0, pos)
        first = info.base_offset if info.magic >= 2 else info.last_offset
        if first <= last_seen or info.last_offset < first:
            raise OffsetsOutOfOrderError(f"Out of order offsets found in append: {first} after {last_seen}")
        last_seen = info.last_offset
        out.append((pos, first, info.last_offset, info.max_timestamp, info.partition_leader_epoch, info.magic))
        pos += LOG_OVERHEAD + size
    return out, pos


def _analyze_follower_producers(psm: ProducerStateManager, records: bytes | bytearray | memoryview,
                                infos: list[tuple[int, int, int, int, int, int]]):  # type: ignore[no-untyped-def]
    """Producer-state analysis of a follower append's magic-2 batches with producer ids (None if there are none)."""
    from kafkapy.record.batch_header import read_batch_header

    headers, positions = [], []
    for pos, _base, _last, _ts, _epoch, magic in infos:
        if magic >= 2 and int.from_bytes(records[pos + 43:pos + 51], "big", signed=True) >= 0:
            headers.append(read_batch_header(records, pos))
            positions.append(pos)
    if not headers:
        return None
    return psm.analyze_batches(records, headers, -1, APPEND_ORIGIN_REPLICATION, positions)
