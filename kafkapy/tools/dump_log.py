"""dump-log: Kafka's DumpLogSegments over offline segment files, as a stream of result dataclasses.

Reads (never writes, never creates) `<base>.log` segments (magic 2 batches and magic 0/1 message
sets), `<base>.index` (8-byte entries: relative offset int32, position int32), `<base>.timeindex`
(12-byte entries: timestamp int64, relative offset int32), `<base>.txnindex` (34-byte entries:
version int16, producerId int64, firstOffset int64, lastOffset int64, lastStableOffset int64) and
`<offset>.snapshot` producer state (version int16 = 1, crc uint32 = CRC-32C of the rest, int32 count,
46-byte entries: producerId int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta
int32, timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64). The `.index` and
`.timeindex` are read through storage's OffsetIndex / TimeIndex opened read-only (their entries and
Kafka's sanityCheck); a preallocated, untrimmed index counts only the entries before its zero tail.
Walks batches the way Kafka's FileLogInputStream does: stop when <= 17 bytes remain or a batch runs
past the end (those bytes are reported as invalid), fail on a size field below 14.

`dump_log_segments(options)` yields, in output order: Dumping, LogStartingOffset, BatchLine,
RecordLine, InvalidBytes, IndexEntryLine, TimeIndexEntryLine, TxnIndexEntryLine,
ProducerSnapshotEntryLine, SnapshotError, Notice, Ignored,
then the end-of-run reports IndexMismatches, TimestampMismatches, OutOfOrderTimestamps,
IndexedOffsetsNotFound, NonConsecutiveOffsets. kafkapy/cli/
dump_log.py renders them in Kafka's exact words. Segment bytes are mmap'd read-only; records are
decoded (per batch, by record/) only for deep iteration and time-index checks.
Thread-safety: a generator over private state; one consumer.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kafkapy.record.batch_header import HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD
from kafkapy.record.compression import CompressionType, decompress
from kafkapy.record.control_record import ControlRecordType, EndTransactionMarker, parse_control_key
from kafkapy.record.crc import crc32
from kafkapy.record.errors import CorruptRecordError, InvalidRecordError
from kafkapy.record.legacy_record import RECORD_OVERHEAD_V0
from kafkapy.record.memory_records import DefaultRecordBatch
from kafkapy.storage.abstract_index import AbstractIndex
from kafkapy.storage.errors import CorruptIndexError
from kafkapy.storage.offset_index import OffsetIndex
from kafkapy.storage.time_index import TimeIndex
from kafkapy.tools import ToolFailure
from kafkapy.tools.dump_log_results import (  # noqa: F401 - re-exported: the results are this module's API  # noqa: F401
    DEFAULT_MAX_MESSAGE_SIZE,
    INT_MAX,
    BatchLine,
    Dumping,
    DumpLogOptions,
    Ignored,
    IndexedOffsetsNotFound,
    IndexEntryLine,
    IndexMismatches,
    InvalidBytes,
    LogStartingOffset,
    NonConsecutiveOffsets,
    Notice,
    OutOfOrderTimestamps,
    ProducerSnapshotEntryLine,
    RecordLine,
    SnapshotError,
    TimeIndexEntryLine,
    TimeIndexErrors,
    TimestampMismatches,
    TxnIndexEntryLine,
)

_OFFSET_SIZE = struct.Struct(">qi")
_TXN_INDEX_ENTRY = struct.Struct(">hqqqq")
_SNAPSHOT_HEAD = struct.Struct(">hIi")  # version, crc (CRC-32C of everything after it), entry count
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")  # pid, epoch, lastSeq, lastOffset, offsetDelta, ts, coordEpoch, txnFirst
PRODUCER_SNAPSHOT_VERSION = 1
_LEGACY_HEAD = struct.Struct(">IBb")  # crc, magic, attributes (after the log overhead)
_INT64 = struct.Struct(">q")
_V2_LAST_OFFSET_DELTA = 23

STRING_DECODERS = {"org.apache.kafka.tools.api.StringDecoder", "kafka.serializer.StringDecoder", "string"}
INTEGER_DECODERS = {"org.apache.kafka.tools.api.IntegerDecoder", "kafka.serializer.IntegerDecoder", "integer"}
LONG_DECODERS = {"org.apache.kafka.tools.api.LongDecoder", "kafka.serializer.LongDecoder", "long"}
BYTES_DECODERS = {"org.apache.kafka.tools.api.DefaultDecoder", "kafka.serializer.DefaultDecoder", "bytes"}
DEFAULT_DECODER = "org.apache.kafka.tools.api.StringDecoder"


# --- record contents -------------------------------------------------------------------------------


def _decoder(name: str | None) -> Callable[[bytes], str]:
    if name is None or name in STRING_DECODERS:
        return lambda b: b.decode("utf-8", errors="replace")
    if name in INTEGER_DECODERS:
        return lambda b: str(int.from_bytes(b[:4], "big", signed=True)) if len(b) >= 4 else ""
    if name in LONG_DECODERS:
        return lambda b: str(int.from_bytes(b[:8], "big", signed=True)) if len(b) >= 8 else ""
    if name in BYTES_DECODERS:
        return lambda b: b.hex()
    raise ToolFailure(f"Failed to load decoder class {name}")


MessageParser = Callable[[object], tuple[str | None, str | None]]


def message_parser(options: DumpLogOptions) -> MessageParser:
    if options.offsets_decoder or options.transaction_log_decoder:
        from kafkapy.tools.dump_log_decoders import coordinator_parser

        return coordinator_parser("transaction" if options.transaction_log_decoder and not options.offsets_decoder
                                  else "group")  # fmt: skip
    key_decoder, value_decoder = _decoder(options.key_decoder), _decoder(options.value_decoder)

    def parse(record) -> tuple[str | None, str | None]:
        key = None if record.key is None else key_decoder(record.key)
        value = None if record.value is None else value_decoder(record.value)
        return key, value

    return parse


# --- files -----------------------------------------------------------------------------------------


def _absolute(path: str) -> str:
    """java.io.File.getAbsolutePath: cwd-joined, not normalised."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _base_offset(path: str) -> int:
    stem = os.path.basename(path).split(".")[0]
    try:
        return int(stem)
    except ValueError:
        raise ToolFailure(f"Cannot parse the base offset from the file name {os.path.basename(path)}") from None


def _sibling(path: str, suffix: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(path)), os.path.basename(path).split(".")[0] + suffix)


class _MappedFile:
    """A read-only view of a whole file (mmap'd; empty files give an empty buffer)."""

    def __init__(self, path: str) -> None:
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        except FileNotFoundError:
            raise ToolFailure(f"{path} (No such file or directory)") from None
        except IsADirectoryError:
            raise ToolFailure(f"{path} (Is a directory)") from None
        self.buf: memoryview = memoryview(self._mm) if self._mm is not None else memoryview(b"")
        self.size = size

    def close(self) -> None:
        self.buf.release()
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:  # a batch view is still referenced; the mapping goes with it
                pass


@dataclass
class _ShallowLegacy:
    """Header fields of a magic 0/1 entry read at fixed positions (works even when its body is corrupt)."""

    offset: int
    size_in_bytes: int
    crc: int
    magic: int
    attributes: int
    timestamp: int
    is_valid: bool


def _shallow_legacy(buf: memoryview, pos: int, size: int) -> _ShallowLegacy:
    offset = _INT64.unpack_from(buf, pos)[0]
    crc, magic, attributes = _LEGACY_HEAD.unpack_from(buf, pos + LOG_OVERHEAD)
    timestamp = _INT64.unpack_from(buf, pos + LOG_OVERHEAD + 6)[0] if magic == 1 and size >= 14 else -1
    valid = crc32(buf[pos + LOG_OVERHEAD + 4 : pos + LOG_OVERHEAD + size]) == crc
    return _ShallowLegacy(offset, LOG_OVERHEAD + size, crc, magic, attributes, timestamp, valid)


def walk_batches(buf: memoryview, start: int, end: int, file: str) -> Iterator[tuple[int, int, int]]:
    """(position, size in bytes, magic) of each complete batch in buf[start:end], as FileLogInputStream."""
    pos = start
    while pos < end - HEADER_SIZE_UP_TO_MAGIC:
        _, size = _OFFSET_SIZE.unpack_from(buf, pos)
        if size < RECORD_OVERHEAD_V0:
            raise ToolFailure(
                f"Found record size {size} smaller than minimum record overhead ({RECORD_OVERHEAD_V0}) in file {file}."
            )
        if pos > end - LOG_OVERHEAD - size:
            return
        yield pos, LOG_OVERHEAD + size, buf[pos + 16]
        pos += LOG_OVERHEAD + size


def _last_offset_at(buf: memoryview, pos: int, magic: int) -> int:
    base = _INT64.unpack_from(buf, pos)[0]
    if magic >= 2:
        return base + struct.unpack_from(">i", buf, pos + _V2_LAST_OFFSET_DELTA)[0]
    return base  # a legacy entry's offset is its (wrapper's) last offset


def _timestamp_type_name(magic: int, attributes: int) -> str:
    if magic == 0:
        return "NoTimestampType"
    return "LogAppendTime" if attributes & 0x08 else "CreateTime"


def _v2_batch(buf: memoryview, pos: int, size: int, file: str) -> DefaultRecordBatch:
    try:
        return DefaultRecordBatch(buf[pos : pos + size])
    except CorruptRecordError as e:
        raise ToolFailure(f"{e} in file {file} at position {pos}") from None


def _batch_line(buf: memoryview, pos: int, size: int, magic: int, file: str) -> BatchLine:
    if magic >= 2:
        b = _v2_batch(buf, pos, size, file)
        return BatchLine(
            position=pos, magic=magic, base_offset=b.base_offset, last_offset=b.last_offset,
            count=b.records_count, base_sequence=b.base_sequence, last_sequence=b.last_sequence,
            producer_id=b.producer_id, producer_epoch=b.producer_epoch,
            partition_leader_epoch=b.partition_leader_epoch, is_transactional=b.is_transactional,
            is_control=b.is_control_batch, delete_horizon_ms=b.delete_horizon_ms,
            timestamp_type=_timestamp_type_name(2, b.attributes), max_timestamp=b.max_timestamp, size=size,
            compress_codec=_codec_name(b.attributes), crc=b.crc, is_valid=b.is_valid(),
        )  # fmt: skip
    s = _shallow_legacy(buf, pos, size - LOG_OVERHEAD)
    return BatchLine(
        position=pos, magic=s.magic, base_offset=s.offset, last_offset=s.offset, count=None,
        base_sequence=-1, last_sequence=-1, producer_id=-1, producer_epoch=-1, partition_leader_epoch=-1,
        is_transactional=False, is_control=False, delete_horizon_ms=None,
        timestamp_type=_timestamp_type_name(s.magic, s.attributes), max_timestamp=s.timestamp, size=size,
        compress_codec=_codec_name(s.attributes), crc=s.crc, is_valid=s.is_valid,
    )  # fmt: skip


def _codec_name(attributes: int) -> str:
    codec = attributes & 0x07
    try:
        return CompressionType(codec).lower_name
    except ValueError:
        return f"unknown({codec})"


def _records(buf: memoryview, pos: int, size: int, magic: int, file: str):
    """(batch view, records) for deep iteration; malformed contents stop the dump as in Kafka."""
    try:
        if magic >= 2:
            batch = _v2_batch(buf, pos, size, file)
            return batch, batch.records()
        from kafkapy.record.legacy_record import LegacyRecordBatch

        legacy = LegacyRecordBatch(buf[pos : pos + size])
        return legacy, legacy.records()
    except (CorruptRecordError, InvalidRecordError) as e:
        raise ToolFailure(f"Failed to read the records of the batch at position {pos} in {file}: {e}") from None


def _legacy_inner_checksums(batch) -> list[tuple[bool, int]]:
    """(isValid, crc) of each message inside a magic 0/1 entry (the entry itself when uncompressed)."""
    if batch.compression == CompressionType.NONE:
        return [(batch.is_valid(), batch.crc)]
    inner = memoryview(decompress(batch.compression, batch.value or b""))
    out: list[tuple[bool, int]] = []
    pos = 0
    while len(inner) - pos >= LOG_OVERHEAD:
        _, size = _OFFSET_SIZE.unpack_from(inner, pos)
        if size < RECORD_OVERHEAD_V0 or pos + LOG_OVERHEAD + size > len(inner):
            break
        crc = _LEGACY_HEAD.unpack_from(inner, pos + LOG_OVERHEAD)[0]
        out.append((crc32(inner[pos + LOG_OVERHEAD + 4 : pos + LOG_OVERHEAD + size]) == crc, crc))
        pos += LOG_OVERHEAD + size
    return out


def _control_fields(record) -> tuple[str, int, int | None]:
    try:
        _, ctype = parse_control_key(record.key)
    except InvalidRecordError as e:
        raise ToolFailure(f"Invalid control record at offset {record.offset}: {e}") from None
    type_id = struct.unpack_from(">h", record.key, 2)[0]
    epoch = None
    if ctype in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        try:
            epoch = EndTransactionMarker.decode(record.key, record.value).coordinator_epoch
        except InvalidRecordError as e:
            raise ToolFailure(f"Invalid end transaction marker at offset {record.offset}: {e}") from None
    return ctype.name, type_id, epoch


def _dump_log(path: str, options: DumpLogOptions, parser: MessageParser | None,
              non_consecutive: dict[str, dict[int, int]]) -> Iterator[object]:  # fmt: skip
    if path.endswith(".log"):
        yield LogStartingOffset(_base_offset(path))
    f = _MappedFile(path)
    try:
        buf = f.buf
        end = min(options.max_bytes, f.size)
        valid_bytes = 0
        last_offset = -1
        print_contents = options.should_print_data_log
        for pos, size, magic in walk_batches(buf, 0, end, path):
            yield _batch_line(buf, pos, size, magic, path)
            if options.is_deep_iteration:
                batch, records = _records(buf, pos, size, magic, path)
                checksums = _legacy_inner_checksums(batch) if magic < 2 else None
                ts_type = _timestamp_type_name(magic, batch.attributes)
                is_control = magic >= 2 and batch.is_control_batch
                for i, record in enumerate(records):
                    if record.offset != last_offset + 1:
                        non_consecutive.setdefault(_absolute(path), {})[last_offset] = record.offset
                    last_offset = record.offset
                    line = RecordLine(
                        offset=record.offset, timestamp_type=ts_type, timestamp=record.timestamp,
                        key_size=-1 if record.key is None else len(record.key),
                        value_size=-1 if record.value is None else len(record.value), magic=magic,
                        print_metadata=not options.skip_record_metadata,
                        print_contents=print_contents and not is_control,
                    )  # fmt: skip
                    if magic >= 2:
                        base_seq = batch.base_sequence
                        line.sequence = -1 if base_seq < 0 else (base_seq + record.offset - batch.base_offset) & INT_MAX
                        line.header_keys = [k for k, _ in record.headers]
                    elif checksums is not None and i < len(checksums):
                        line.legacy_is_valid, line.legacy_crc = checksums[i]
                    if is_control and line.print_metadata:
                        line.control_type, line.control_type_id, line.coordinator_epoch = _control_fields(record)
                    if line.print_contents and parser is not None:
                        line.key, line.payload = parser(record)
                    yield line
            valid_bytes += size
        trailing = end - valid_bytes
        if trailing > 0 and options.max_bytes == INT_MAX:
            yield InvalidBytes(trailing, os.path.basename(path))
    finally:
        f.close()


def _read_entries(path: str, entry: struct.Struct) -> list[tuple[int, ...]]:
    """Every whole entry of a `.txnindex` (its version field is printed, so it is read here, not through
    storage's TransactionIndex, which stops at an unknown version)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    n = len(data) // entry.size
    return [entry.unpack_from(data, i * entry.size) for i in range(n)]


def _written_entries(entries: list[tuple[int, int]], base: int, key: int) -> int:
    """How many of an index's entries come before the zero-filled tail of a preallocated, untrimmed file (an
    entry at the base offset after the first one); a read-only open counts every slot as an entry."""
    for i, entry in enumerate(entries):
        if i > 0 and entry[key] == base:
            return i
    return len(entries)


def _corrupt(index: AbstractIndex) -> None:
    """Kafka's sanityCheck of the index, as a tool failure carrying Kafka's message."""
    try:
        index.sanity_check()
    except CorruptIndexError as e:
        raise ToolFailure(str(e)) from None


def _dump_index(path: str, options: DumpLogOptions, mismatches: dict[str, dict[int, int]]) -> Iterator[object]:
    base = _base_offset(path)
    log = _MappedFile(_sibling(path, ".log"))
    index: OffsetIndex | None = None
    try:
        if not os.path.exists(path):
            raise ToolFailure(f"{path} (No such file or directory)")
        index = OffsetIndex(_absolute(path), base, writable=False)
        entries = index.read_entries()
        if not entries:
            yield Notice(f"{path} is empty.")
            return
        if options.index_sanity_check:
            _corrupt(index)
            problem = _offset_index_disorder(entries, base, log.size)
            if problem:
                raise ToolFailure(f"Corrupt index found, index file {_absolute(path)} {problem}")
            yield Notice(f"{path} passed sanity check.")
            return
        for offset, position in entries[:_written_entries(entries, base, 0)]:
            found = -1
            if 0 <= position <= log.size:
                end = min(log.size, position + options.max_message_size)
                for pos, _size, magic in walk_batches(log.buf, position, end, _sibling(path, ".log")):
                    found = _last_offset_at(log.buf, pos, magic)
                    break
            if found != offset:
                mismatches.setdefault(_absolute(path), {})[offset] = found
            if not options.verify_index_only:
                yield IndexEntryLine(offset, position)
    finally:
        if index is not None:
            index.close()
        log.close()


def _offset_index_disorder(entries: list[tuple[int, int]], base: int, log_size: int) -> str | None:
    """Beyond Kafka's two sanity checks (which pass any index ending in its zero tail): what lookups rely
    on. Up to the zero tail, offsets strictly increase, positions do not decrease and stay inside the
    .log. None when the index is usable."""
    prev: tuple[int, int] | None = None
    for i, (offset, position) in enumerate(entries):
        if offset == base and i > 0:
            break  # the zero-filled tail of a preallocated index
        if position < 0 or position > log_size:
            return f"has entry {i} (offset {offset}, position {position}) beyond the log's {log_size} bytes"
        if prev is not None and (offset <= prev[0] or position < prev[1]):
            return (f"has entry {i} (offset {offset}, position {position}) out of order after "
                    f"(offset {prev[0]}, position {prev[1]})")
        prev = (offset, position)
    return None


def _offset_index_of(path: str, base: int) -> OffsetIndex | None:
    """The segment's `.index` opened read-only and limited to its written entries, or None when missing."""
    try:
        index = OffsetIndex(_absolute(path), base, writable=False)
    except FileNotFoundError:
        return None
    index.truncate_to_entries(_written_entries(index.read_entries(), base, 0))
    return index


def _dump_time_index(path: str, options: DumpLogOptions, errors: dict[str, TimeIndexErrors]) -> Iterator[object]:
    base = _base_offset(path)
    log_path = _sibling(path, ".log")
    log = _MappedFile(log_path)
    offset_index: OffsetIndex | None = None
    time_index: TimeIndex | None = None
    try:
        if not os.path.exists(path):
            raise ToolFailure(f"{path} (No such file or directory)")
        offset_index = _offset_index_of(_sibling(path, ".index"), base)
        time_index = TimeIndex(_absolute(path), base, writable=False)
        if options.index_sanity_check:
            _corrupt(time_index)
            yield Notice(f"{path} passed sanity check.")
            return
        report = errors.setdefault(_absolute(path), TimeIndexErrors(_absolute(path)))
        prev_ts = -1
        entries = time_index.read_entries()
        for timestamp, offset in entries[:_written_entries(entries, base, 1)]:
            position = offset_index.lookup(offset).position if offset_index is not None else 0
            match = None
            if 0 <= position <= log.size:
                for pos, size, magic in walk_batches(log.buf, position, log.size, log_path):
                    last = _last_offset_at(log.buf, pos, magic)
                    if last >= offset:
                        match = (pos, size, magic, last)
                        break
            if match is None:
                report.offsets_not_found.append((offset, -1))
            elif match[3] != offset:
                report.offsets_not_found.append((offset, match[3]))
            else:
                _, records = _records(log.buf, match[0], match[1], match[2], log_path)
                max_ts = max([-1, *(r.timestamp for r in records)])
                if max_ts != timestamp:
                    report.timestamp_mismatches.append((timestamp, max_ts))
                if prev_ts >= timestamp:
                    report.out_of_order.append((timestamp, prev_ts))
            if not options.verify_index_only:
                yield TimeIndexEntryLine(timestamp, offset)
            prev_ts = timestamp
    finally:
        for idx in (offset_index, time_index):
            if idx is not None:
                idx.close()
        log.close()


def _dump_txn_index(path: str) -> Iterator[object]:
    if not os.path.exists(path):
        raise ToolFailure(f"{path} (No such file or directory)")
    for version, pid, first, last, lso in _read_entries(path, _TXN_INDEX_ENTRY):
        yield TxnIndexEntryLine(version, pid, first, last, lso)


def _dump_producer_snapshot(path: str) -> Iterator[object]:
    """ProducerStateManager.readSnapshot: schema first, then version, then the CRC-32C from byte 6 on."""
    from kafkapy.record.crc import crc32c

    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ToolFailure(f"{path} (No such file or directory)") from None
    try:
        version, crc, count = _SNAPSHOT_HEAD.unpack_from(data, 0)
        if count < 0 or len(data) < _SNAPSHOT_HEAD.size + count * _SNAPSHOT_ENTRY.size:
            raise struct.error(f"Error reading array of size {count}, only {len(data) - _SNAPSHOT_HEAD.size} "
                               "bytes available")  # fmt: skip
    except struct.error as e:
        yield SnapshotError(f"Snapshot failed schema validation: {e}")
        return
    if version != PRODUCER_SNAPSHOT_VERSION:
        yield SnapshotError(f"Snapshot contained an unknown file version {version}")
        return
    computed = crc32c(memoryview(data)[6:])
    if computed != crc:
        yield SnapshotError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}")
        return
    for i in range(count):
        pid, epoch, seq, offset, delta, ts, coordinator_epoch, txn_first = _SNAPSHOT_ENTRY.unpack_from(
            data, _SNAPSHOT_HEAD.size + i * _SNAPSHOT_ENTRY.size
        )
        line = ProducerSnapshotEntryLine(pid, epoch, coordinator_epoch, txn_first if txn_first >= 0 else None, ts)
        if offset >= 0:
            # DefaultRecordBatch.decrementSequence: sequences wrap at 2^31 - 1
            line.first_sequence = seq - delta if seq >= delta else INT_MAX - (delta - seq) + 1
            line.last_sequence, line.last_offset, line.offset_delta, line.timestamp = seq, offset, delta, ts
        yield line


def dump_log_segments(options: DumpLogOptions) -> Iterator[object]:
    """Dump each file in order, then yield the accumulated mismatch / non-consecutive reports."""
    parser: MessageParser | None = None
    index_mismatches: dict[str, dict[int, int]] = {}
    time_errors: dict[str, TimeIndexErrors] = {}
    non_consecutive: dict[str, dict[int, int]] = {}
    for path in options.files:
        yield Dumping(path)
        name = os.path.basename(path)
        suffix = name[name.rfind(".") :] if "." in name else ""
        if suffix == ".log":
            if parser is None and options.should_print_data_log:
                parser = message_parser(options)  # after "Dumping", as DumpLogSegments builds it per file
            yield from _dump_log(path, options, parser, non_consecutive)
        elif suffix == ".index":
            yield from _dump_index(path, options, index_mismatches)
        elif suffix == ".timeindex":
            yield from _dump_time_index(path, options, time_errors)
        elif suffix == ".txnindex":
            yield from _dump_txn_index(path)
        elif suffix == ".snapshot":
            yield from _dump_producer_snapshot(path)
        else:
            yield Ignored(path)
    for file, by_offset in index_mismatches.items():
        yield IndexMismatches(file, sorted(by_offset.items(), reverse=True))
    for report in time_errors.values():
        if report.timestamp_mismatches:
            yield TimestampMismatches(report.file, report.timestamp_mismatches)
    for report in time_errors.values():
        if report.out_of_order:
            yield OutOfOrderTimestamps(report.file, report.out_of_order)
    for report in time_errors.values():
        if report.offsets_not_found:
            yield IndexedOffsetsNotFound(report.file, report.offsets_not_found)
    for file, pairs in non_consecutive.items():
        yield NonConsecutiveOffsets(file, sorted(pairs.items()))
