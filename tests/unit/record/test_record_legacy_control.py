import gzip
import struct
import zlib

import pytest

from kafkapy.record.compression import CompressionType
from kafkapy.record.control_record import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_txn_marker_batch,
    encode_control_key,
    parse_control_key,
)
from kafkapy.record.default_record import Record
from kafkapy.record.errors import CorruptRecordError, InvalidRecordError
from kafkapy.record.legacy_record import LegacyRecordBatch, LegacyRecordBatchBuilder
from kafkapy.record.memory_records import DefaultRecordBatch, MemoryRecords, validate_produce_records
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder


def _message(magic, attributes, timestamp, key, value) -> bytes:
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for f in (key, value):
        body += struct.pack(">i", -1) if f is None else struct.pack(">i", len(f)) + f
    return struct.pack(">I", zlib.crc32(body)) + body


def _entry(offset, msg) -> bytes:
    return struct.pack(">qi", offset, len(msg)) + msg


def test_v0_known_bytes():
    body = b"\x00\x00\xff\xff\xff\xff\x00\x00\x00\x03abc"  # magic 0, attrs 0, null key, value "abc"
    expected = struct.pack(">qiI", 5, 4 + len(body), zlib.crc32(body)) + body
    b = LegacyRecordBatchBuilder(0, base_offset=5)
    b.append(123, None, b"abc")
    assert b.build() == expected
    (batch,) = MemoryRecords(expected).batches()
    assert isinstance(batch, LegacyRecordBatch)
    assert (batch.magic, batch.base_offset, batch.last_offset, batch.timestamp, batch.size_in_bytes) == (
        0, 5, 5, -1, 29)
    assert batch.is_valid() and batch.records() == [Record(5, -1, None, b"abc", [])]
    assert batch.producer_id == -1 and batch.records_count is None and not batch.is_control_batch


def test_v1_uncompressed_and_crc():
    b = LegacyRecordBatchBuilder(1, base_offset=10)
    for i in range(3):
        b.append(1000 + i, b"k%d" % i, b"v%d" % i)
    data = b.build()
    assert len(data) == 3 * (12 + 22 + 4)
    recs = list(MemoryRecords(data).records())
    assert recs == [Record(10 + i, 1000 + i, b"k%d" % i, b"v%d" % i, []) for i in range(3)]
    bad = bytearray(data)
    bad[-1] ^= 1
    first_bad = list(MemoryRecords(bytes(bad)).batches())[-1]
    assert not first_bad.is_valid()
    with pytest.raises(CorruptRecordError, match="crc"):
        first_bad.ensure_valid()


@pytest.mark.parametrize("codec", [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4])
@pytest.mark.parametrize("magic", [0, 1])
def test_compressed_wrapper(codec, magic):
    b = LegacyRecordBatchBuilder(magic, codec, base_offset=100)
    for i in range(3):
        b.append(500 + i, None if i == 1 else b"k%d" % i, b"v%d" % i)
    (batch,) = MemoryRecords(b.build()).batches()
    assert batch.is_valid() and batch.compression == codec
    assert batch.last_offset == 102 and batch.base_offset == 100 and batch.next_offset == 103
    ts = [500 + i if magic == 1 else -1 for i in range(3)]
    assert [(r.offset, r.timestamp, r.key) for r in batch.records()] == [
        (100, ts[0], b"k0"), (101, ts[1], None), (102, ts[2], b"k2")]


def test_v1_gzip_wrapper_relative_offsets_by_hand():
    inner = b"".join(_entry(i, _message(1, 0, 70 + i, None, b"m%d" % i)) for i in range(3))
    data = _entry(42, _message(1, 1, 72, None, gzip.compress(inner)))
    (batch,) = MemoryRecords(data).batches()
    assert [(r.offset, r.timestamp, r.value) for r in batch.records()] == [
        (40, 70, b"m0"), (41, 71, b"m1"), (42, 72, b"m2")]


def test_v1_wrapper_offset_zero_and_invalid():
    b = LegacyRecordBatchBuilder(1, CompressionType.GZIP, wrapper_offset=0)
    for _ in range(3):
        b.append(1, None, b"x")
    (batch,) = MemoryRecords(b.build()).batches()
    assert [r.offset for r in batch.records()] == [0, 1, 2]
    b.wrapper_offset = 1
    (batch,) = MemoryRecords(b.build()).batches()
    with pytest.raises(InvalidRecordError, match="wrapper offset"):
        batch.records()


def test_v1_log_append_time_inner_take_wrapper_timestamp():
    b = LegacyRecordBatchBuilder(1, CompressionType.GZIP, timestamp_type=1)
    for ts in (5, 9, 7):
        b.append(ts, None, b"x")
    (batch,) = MemoryRecords(b.build()).batches()
    assert batch.timestamp_type == 1 and [r.timestamp for r in batch.records()] == [9, 9, 9]


def test_inner_compressed_and_empty_wrapper_rejected():
    nested = LegacyRecordBatchBuilder(1, CompressionType.GZIP)
    nested.append(1, None, b"x")
    data = _entry(0, _message(1, 1, 1, None, gzip.compress(nested.build())))
    with pytest.raises(InvalidRecordError, match="Inner messages must not be compressed"):
        next(MemoryRecords(data).batches()).records()
    data = _entry(0, _message(1, 1, 1, None, gzip.compress(b"")))
    with pytest.raises(InvalidRecordError, match="no inner records"):
        next(MemoryRecords(data).batches()).records()


def test_mixed_magics_in_one_buffer_and_produce_rejects_legacy():
    legacy = LegacyRecordBatchBuilder(1, base_offset=0)
    legacy.append(1, None, b"old")
    b = MemoryRecordsBuilder(base_offset=1)
    b.append(2, None, b"new")
    data = legacy.build() + b.build()
    batches = list(MemoryRecords(data).batches())
    assert [type(x) for x in batches] == [LegacyRecordBatch, DefaultRecordBatch]
    assert [r.value for r in MemoryRecords(data).records()] == [b"old", b"new"]
    with pytest.raises(InvalidRecordError, match="magic"):
        validate_produce_records(data)


def test_control_key_and_types():
    assert encode_control_key(ControlRecordType.COMMIT) == b"\x00\x00\x00\x01"
    assert parse_control_key(b"\x00\x00\x00\x00") == (0, ControlRecordType.ABORT)
    assert parse_control_key(b"\x00\x00\x00\x63") == (0, ControlRecordType.UNKNOWN)
    assert parse_control_key(b"\x00\x01\x00\x06") == (1, ControlRecordType.KRAFT_VOTERS)
    assert ControlRecordType.SNAPSHOT_HEADER.name == "SNAPSHOT_HEADER"
    with pytest.raises(InvalidRecordError):
        parse_control_key(b"\x00")
    with pytest.raises(InvalidRecordError):
        parse_control_key(b"\xff\xff\x00\x00")


@pytest.mark.parametrize("ctype", [ControlRecordType.COMMIT, ControlRecordType.ABORT])
def test_end_txn_marker_batch(ctype):
    data = build_end_txn_marker_batch(ctype, producer_id=77, producer_epoch=4, coordinator_epoch=12,
                                      timestamp=5000, base_offset=30, partition_leader_epoch=2)
    (h,) = validate_produce_records(data)
    assert h.attributes == 0x30 and h.base_sequence == -1 and h.records_count == 1
    (batch,) = MemoryRecords(data).batches()
    assert batch.is_control_batch and batch.is_transactional and batch.control_record_type() is ctype
    (rec,) = batch.records()
    assert rec.key == struct.pack(">hh", 0, int(ctype)) and rec.value == struct.pack(">hi", 0, 12)
    assert EndTransactionMarker.decode(rec.key, rec.value) == EndTransactionMarker(ctype, 12)
    assert rec.offset == 30 and rec.timestamp == 5000


def test_end_txn_marker_errors():
    with pytest.raises(InvalidRecordError, match="value size"):
        EndTransactionMarker.decode(encode_control_key(0), b"\x00\x00")
    with pytest.raises(InvalidRecordError, match="type"):
        EndTransactionMarker.decode(encode_control_key(2), b"\x00" * 6)
    with pytest.raises(ValueError):
        build_end_txn_marker_batch(ControlRecordType.LEADER_CHANGE, 1, 0, 0, 0)
    b = MemoryRecordsBuilder()
    b.append(1, None, b"x")
    assert next(MemoryRecords(b.build()).batches()).control_record_type() is None
