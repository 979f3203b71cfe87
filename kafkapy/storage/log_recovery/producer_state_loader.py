"""Rebuild a partition's producer state: the newest snapshot, then the batches after it (Kafka's
UnifiedLog.rebuildProducerState).

Replays magic-2 batch headers from the snapshot offset (or the log start offset) to the log end offset,
as replicated appends (no sequence checks), re-writing the `.txnindex` entries of the aborted
transactions found on the way (entries at or past the replay start are dropped first, so a torn tail or
a truncation leaves no stale entry). Reads headers in 1 MiB chunks; only control batches have their one
record decoded. Runs under the Log lock or before the Log is shared; not thread-safe by itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from kafkapy.record.batch_header import RECORD_BATCH_OVERHEAD, BatchHeader, read_batch_header
from kafkapy.storage.log_segment import LogSegment
from kafkapy.storage.producer_state import APPEND_ORIGIN_REPLICATION
from kafkapy.storage.producer_state_manager import ProducerStateManager

__all__ = ["rebuild_producer_state", "iter_producer_batches"]

_CHUNK = 1 << 20


def iter_producer_batches(segment: LogSegment, start_offset: int) -> Iterator[tuple[bytes, int, BatchHeader]]:
    """(buffer, position in it, header) of each magic-2 batch with a producer id ending at or after start_offset."""
    records = segment.log
    fd = records.fileno()
    end = records.size
    pos = segment.offset_index.lookup(start_offset).position if start_offset > segment.base_offset else 0
    buf = b""
    buf_start = pos
    while end - pos >= RECORD_BATCH_OVERHEAD:
        off = pos - buf_start
        if off + RECORD_BATCH_OVERHEAD > len(buf):
            buf = os.pread(fd, min(_CHUNK, end - pos), pos)
            buf_start, off = pos, 0
        size = int.from_bytes(buf[off + 8:off + 12], "big", signed=True) + 12
        if size < 14 or pos + size > end:
            return
        if buf[off + 16] < 2:
            pos += size
            continue
        h = read_batch_header(buf, off)
        if h.producer_id >= 0 and h.base_offset + h.last_offset_delta >= start_offset:
            if off + size > len(buf):
                buf = os.pread(fd, max(size, min(_CHUNK, end - pos)), pos)
                buf_start, off = pos, 0
                if len(buf) < size:
                    return
            yield buf, off, h
        pos += size


def rebuild_producer_state(psm: ProducerStateManager, segments: Sequence[LogSegment], log_start_offset: int,
                           log_end_offset: int, snapshot_offsets: list[int] | None = None) -> None:
    """`snapshot_offsets`: the snapshot files present, when the caller just listed the directory."""
    # Batches below the log start offset but still in the first segment count too (Kafka keeps that
    # segment's snapshot): replay from the first segment's base when there is no snapshot.
    start = psm.load_latest_snapshot(segments[0].base_offset if segments else log_start_offset, log_end_offset,
                                     snapshot_offsets)
    for segment in segments:
        segment.txn_index.truncate_to(start)
    if start >= log_end_offset:  # the snapshot is at the log end (a clean stop): no batch to replay
        segments = ()
    for i, segment in enumerate(segments):
        next_base = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if next_base is not None and next_base <= start:
            continue
        for buf, off, h in iter_producer_batches(segment, start):
            analysis = psm.analyze_batches(buf, [h], -1, APPEND_ORIGIN_REPLICATION, positions=[off])
            psm.apply(analysis, h.base_offset + h.last_offset_delta + 1)
            psm.complete_txns(analysis.completed, segment.txn_index)
    psm.map_end_offset = log_end_offset
