"""LogLoader: open a partition directory's segments and recover them after an unclean shutdown.

Follows Kafka's LogLoader: remove leftover `.deleted`/`.cleaned` files, finish `.swap` renames, drop
index files without a `.log`, and open each `%020d.log` segment, all from one listing of the directory.
As Kafka's sanity check, a segment whose offset index is missing has its indexes rebuilt, and index
contents are not read at load: indexes are opened and mapped on first use (lazy_index.py), so an empty
segment's may not exist yet. When the log dir had no clean-shutdown marker, every segment from the one
holding the recovery point is recovered: each batch's length and CRC are checked, indexes are rebuilt,
and the first torn/corrupt batch ends the log (later segments are deleted). Then the log end offset is
read from the last segment, the active segment's indexes are to be grown back to segment.index.bytes
(when they are opened), and the leader-epoch cache is trimmed to [log start offset, log end offset].
Runs before the Log is shared; not thread-safe by itself.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from kafkapy.common.time import Time
from kafkapy.storage.checkpoint_file import LEADER_EPOCH_CHECKPOINT_FILE, LeaderEpochCheckpointFile
from kafkapy.storage.errors import CorruptIndexError
from kafkapy.storage.file_records import FileRecords
from kafkapy.storage.leader_epoch_file_cache import LeaderEpochFileCache
from kafkapy.storage.log_config import LogConfig
from kafkapy.storage.log_segment import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    TIME_INDEX_FILE_SUFFIX,
    TXN_INDEX_FILE_SUFFIX,
    LogSegment,
    filename_prefix_from_offset,
)

__all__ = ["load_log", "LoadedLog"]

log = logging.getLogger("kafka.log.LogLoader")

_INDEX_SUFFIXES = (INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX)
_TEMP_SUFFIXES = (DELETED_FILE_SUFFIX, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)


@dataclass
class LoadedLog:
    segments: list[LogSegment]
    log_start_offset: int
    recovery_point: int
    next_offset: int
    leader_epoch_cache: LeaderEpochFileCache
    # The dir's file names as listed at load (after temp files were removed): what else the Log reads at open
    # (producer snapshots, partition.metadata) is looked up here rather than stat'ed or listed again.
    names: frozenset[str] = frozenset()


def _base_offset(name: str) -> int | None:
    prefix = name.split(".", 1)[0]
    return int(prefix) if len(prefix) == 20 and prefix.isdigit() else None


def _swap_next_offset(path: str, base: int) -> int:
    """The offset after the last complete batch of a `.log.swap` file (its base when it has none)."""
    records = FileRecords(path, file_already_exists=True)
    try:
        next_offset = base
        for b in records.batches_from(0):
            next_offset = b.last_offset + 1
        return next_offset
    finally:
        records.close()


def _remove_temp_files_and_finish_swaps(dir_: str) -> None:
    """Kafka's LogLoader.removeTempFilesAndCollectSwapFiles + the swap completion of loadSegments.

    A `.cleaned` file means a cleaner swap never reached its first rename for that group: swap files at
    or above the smallest `.cleaned` base offset are dropped with it (the old segments are intact). A
    `.log.swap` is a complete cleaned segment: the old segments inside its offset range are deleted and
    the swap files take their final names (offset and time indexes are rebuilt on open).
    """
    names = sorted(os.listdir(dir_))
    cleaned = [b for n in names if n.endswith(CLEANED_FILE_SUFFIX) and (b := _base_offset(n)) is not None]
    min_cleaned = min(cleaned, default=None)
    swaps: list[str] = []
    for name in names:
        path = os.path.join(dir_, name)
        if name.endswith(DELETED_FILE_SUFFIX) or name.endswith(CLEANED_FILE_SUFFIX):
            os.unlink(path)
        elif name.endswith(SWAP_FILE_SUFFIX):
            base = _base_offset(name)
            if min_cleaned is not None and base is not None and base >= min_cleaned:
                log.info("Deleting swap file %s of an interrupted cleaning", path)
                os.unlink(path)
            else:
                swaps.append(name)
    for name in swaps:
        base = _base_offset(name)
        if base is None or not name.endswith(LOG_FILE_SUFFIX + SWAP_FILE_SUFFIX):
            continue
        next_offset = _swap_next_offset(os.path.join(dir_, name), base)
        for other in os.listdir(dir_):
            other_base = _base_offset(other)
            if (other_base is not None and base <= other_base < max(next_offset, base + 1)
                    and other.endswith((LOG_FILE_SUFFIX, *_INDEX_SUFFIXES))):
                log.info("Deleting %s replaced by the swap segment %s", other, name)
                os.unlink(os.path.join(dir_, other))
    for name in swaps:
        path = os.path.join(dir_, name)
        target = path[: -len(SWAP_FILE_SUFFIX)]
        if target.endswith((INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX)):
            os.unlink(path)  # rebuilt from the swapped-in log on open
        else:
            os.replace(path, target)


def _open_segments(dir_: str, names: frozenset[str], config: LogConfig, time: Time,
                   epoch_cache: LeaderEpochFileCache) -> list[LogSegment]:
    """Open each `.log` of the listing `names` (the dir's files): no file is stat'ed and no index opened."""
    logs = {b for n in names if n.endswith(LOG_FILE_SUFFIX) and (b := _base_offset(n)) is not None}
    for name in names:
        if name.endswith(_INDEX_SUFFIXES):
            base = _base_offset(name)
            if base is not None and base not in logs:
                log.warning("Found an orphaned index file %s, with no corresponding log file.", name)
                os.unlink(os.path.join(dir_, name))
    segments = []
    for base in sorted(logs):
        prefix = filename_prefix_from_offset(base)
        segment = LogSegment.open(dir_, base, config, time, file_already_exists=True,
                                  txn_index_exists=prefix + TXN_INDEX_FILE_SUFFIX in names)
        offset_index_exists = prefix + INDEX_FILE_SUFFIX in names
        if not offset_index_exists and segment.size == 0:
            # A segment never written: its indexes were never opened, so never created (LazyIndex); they are
            # created empty on first use, and there is nothing to rebuild them from.
            segments.append(segment)
            continue
        try:
            segment.sanity_check(prefix + TIME_INDEX_FILE_SUFFIX not in names, offset_index_exists)
        except (FileNotFoundError, CorruptIndexError) as exc:
            log.warning("Rebuilding indexes of segment %s of %s: %s", base, dir_, exc)
            segment.recover(leader_epoch_cache=epoch_cache)
        segments.append(segment)
    return segments


def load_log(dir_: str, config: LogConfig, time: Time, log_start_offset_checkpoint: int = 0,
             recovery_point_checkpoint: int = 0, had_clean_shutdown: bool = True) -> LoadedLog:
    names = os.listdir(dir_)
    if any(name.endswith(_TEMP_SUFFIXES) for name in names):
        _remove_temp_files_and_finish_swaps(dir_)
        names = os.listdir(dir_)
    listing = frozenset(names)
    epoch_cache = LeaderEpochFileCache(LeaderEpochCheckpointFile(os.path.join(dir_, LEADER_EPOCH_CHECKPOINT_FILE)))
    segments = _open_segments(dir_, listing, config, time, epoch_cache)

    if not had_clean_shutdown and segments:
        first = max(0, max((i for i, s in enumerate(segments) if s.base_offset <= recovery_point_checkpoint),
                           default=0))
        for i in range(first, len(segments)):
            truncated = segments[i].recover(leader_epoch_cache=epoch_cache)
            if truncated > 0:
                log.warning("Corruption found in segment %s of %s, truncated %s bytes; deleting later segments",
                            segments[i].base_offset, dir_, truncated)
                for later in segments[i + 1:]:
                    later.delete_if_exists()
                segments = segments[: i + 1]
                break

    if not segments:
        segments = [LogSegment.open(dir_, log_start_offset_checkpoint, config, time,
                                    init_file_size=config.init_file_size(), preallocate=config.preallocate)]

    next_offset = segments[-1].read_next_offset()
    # Empty trailing segments (e.g. rolled just before a crash) report their base offset.
    next_offset = max(next_offset, segments[-1].base_offset)
    if next_offset < log_start_offset_checkpoint:
        log.warning("Deleting all segments of %s because logEndOffset (%s) is smaller than logStartOffset %s",
                    dir_, next_offset, log_start_offset_checkpoint)
        for segment in segments:
            segment.delete_if_exists()
        epoch_cache.clear_and_flush()
        segments = [LogSegment.open(dir_, log_start_offset_checkpoint, config, time)]
        next_offset = log_start_offset_checkpoint

    if had_clean_shutdown:
        recovery_point = next_offset
    else:
        recovery_point = min(recovery_point_checkpoint, next_offset)
    log_start_offset = max(log_start_offset_checkpoint, segments[0].base_offset)
    segments[-1].resize_indexes(config.max_index_size)
    # Not written now, as Kafka's LogLoader (truncateFrom*AsyncFlush): the next write of the cache (an assign,
    # fsynced) carries it, and until then the next load truncates the same entries again.
    epoch_cache.truncate_from_end(next_offset, sync=False)
    epoch_cache.truncate_from_start(log_start_offset, sync=False)
    return LoadedLog(segments, log_start_offset, recovery_point, next_offset, epoch_cache, listing)
