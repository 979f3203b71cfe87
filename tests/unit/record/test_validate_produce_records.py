import struct

import pytest

from kafkapy.record.batch_header import CRC_OFFSET, write_base_offset
from kafkapy.record.crc import crc32c
from kafkapy.record.memory_records import (
    CorruptRecordError,
    InvalidRecordError,
    validate_produce_records,
)
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder


def _batch(n=3, **kw) -> bytes:
    b = MemoryRecordsBuilder(**kw)
    for i in range(n):
        b.append(1_000 + i, b"k%d" % i, b"v%d" % i)
    return b.build()


def _recrc(buf: bytearray) -> bytes:
    struct.pack_into(">I", buf, CRC_OFFSET, crc32c(memoryview(buf)[21:]))
    return bytes(buf)


def test_good_single_and_multiple_batches():
    one = _batch()
    hs = validate_produce_records(one, require_single_batch=True, from_client=True)
    assert len(hs) == 1
    assert (hs[0].records_count, hs[0].last_offset_delta, hs[0].base_timestamp, hs[0].max_timestamp) == (
        3, 2, 1000, 1002)
    assert hs[0].size_in_bytes == len(one)
    hs = validate_produce_records(one + _batch(2))
    assert [h.records_count for h in hs] == [3, 2]


def test_empty_buffer():
    assert validate_produce_records(b"") == []
    with pytest.raises(InvalidRecordError, match="at least one"):
        validate_produce_records(b"", require_single_batch=True)


def test_require_single_batch():
    with pytest.raises(InvalidRecordError, match="exactly one") as ei:
        validate_produce_records(_batch() + _batch(), require_single_batch=True)
    assert ei.value.code == 87


@pytest.mark.parametrize("cut", [1, 11, 12, 60, 61, 70])
def test_truncated(cut):
    data = _batch()
    with pytest.raises(CorruptRecordError) as ei:
        validate_produce_records(data[:cut])
    assert ei.value.code == 2
    assert isinstance(ei.value, ValueError)


@pytest.mark.parametrize("garbage", [b"\x00", b"x" * 11, b"\x00" * 12, _batch()[:40]])
def test_trailing_garbage(garbage):
    with pytest.raises(CorruptRecordError):
        validate_produce_records(_batch() + garbage)


def test_bad_crc_every_covered_byte_region():
    data = _batch()
    for pos in (21, 30, 57, 61, len(data) - 1):
        bad = bytearray(data)
        bad[pos] ^= 0x01
        with pytest.raises(CorruptRecordError, match="crc"):
            validate_produce_records(bytes(bad))


def test_offset_and_epoch_not_covered_by_crc():
    data = bytearray(_batch())
    write_base_offset(data, 0, 12345)
    struct.pack_into(">i", data, 12, 7)
    assert validate_produce_records(bytes(data))[0].base_offset == 12345
    with pytest.raises(InvalidRecordError, match="baseOffset"):
        validate_produce_records(bytes(data), from_client=True)


def test_magic_1_rejected():
    data = bytearray(_batch())
    data[16] = 1
    with pytest.raises(InvalidRecordError, match="magic"):
        validate_produce_records(bytes(data))


def test_size_below_minimum():
    data = bytearray(_batch())
    struct.pack_into(">i", data, 8, 13)
    with pytest.raises(CorruptRecordError, match="minimum"):
        validate_produce_records(bytes(data))
    struct.pack_into(">i", data, 8, 40)
    with pytest.raises(CorruptRecordError):
        validate_produce_records(bytes(data[:52]))


def test_negative_count_and_delta():
    data = bytearray(_batch())
    struct.pack_into(">i", data, 57, -1)
    with pytest.raises(InvalidRecordError, match="count"):
        validate_produce_records(_recrc(data))
    data = bytearray(_batch())
    struct.pack_into(">i", data, 23, -2)
    with pytest.raises(InvalidRecordError, match="lastOffsetDelta"):
        validate_produce_records(_recrc(data))


def test_client_rules():
    data = bytearray(_batch())
    struct.pack_into(">i", data, 57, 5)  # count disagrees with lastOffsetDelta
    good = _recrc(data)
    validate_produce_records(good)
    with pytest.raises(InvalidRecordError, match="Inconsistent"):
        validate_produce_records(good, from_client=True)
    ctrl = _batch(1, is_control=True, is_transactional=True, producer_id=5, producer_epoch=0)
    validate_produce_records(ctrl)
    with pytest.raises(InvalidRecordError, match="control"):
        validate_produce_records(ctrl, from_client=True)
    noseq = _batch(1, producer_id=5, producer_epoch=0, base_sequence=-1)
    with pytest.raises(InvalidRecordError, match="sequence"):
        validate_produce_records(noseq, from_client=True)
    validate_produce_records(_batch(1, producer_id=5, producer_epoch=0, base_sequence=0), from_client=True)


def test_unknown_codec():
    data = bytearray(_batch())
    struct.pack_into(">h", data, 21, 5)
    with pytest.raises(InvalidRecordError, match="compression"):
        validate_produce_records(_recrc(data))


def test_accepts_memoryview_slices():
    data = b"xx" + _batch() + b"yy"
    assert len(validate_produce_records(memoryview(data)[2:-2])) == 1


def test_kafka_order_single_batch_checked_before_crc():
    bad = bytearray(_batch())
    bad[-1] ^= 1
    with pytest.raises(InvalidRecordError, match="exactly one"):
        validate_produce_records(bytes(bad) + _batch(), require_single_batch=True)
    with pytest.raises(CorruptRecordError, match="crc"):
        validate_produce_records(bytes(bad) + _batch())


def test_partial_first_batch_with_single_batch_rule():
    with pytest.raises(InvalidRecordError, match="at least one"):
        validate_produce_records(_batch()[:50], require_single_batch=True)
    with pytest.raises(CorruptRecordError, match="trailing"):
        validate_produce_records(_batch() + b"\x00" * 5, require_single_batch=True)


def test_produce_version_in_messages_and_zstd_rule():
    from kafkapy.record.compression import CompressionType
    from kafkapy.record.errors import UnsupportedCompressionTypeError

    data = bytearray(_batch())
    data[16] = 0
    with pytest.raises(InvalidRecordError, match="Produce requests with version 3 are only allowed to contain record"):
        validate_produce_records(bytes(data), produce_version=3)
    z = _batch(compression=CompressionType.ZSTD)
    with pytest.raises(UnsupportedCompressionTypeError, match="ZStandard") as ei:
        validate_produce_records(z, produce_version=6)
    assert ei.value.code == 76
    assert validate_produce_records(z, produce_version=7)[0].compression_codec == 4


def test_errors_are_kafka_errors_and_value_errors():
    from kafkapy.common.errors import CorruptMessageError, KafkaError
    from kafkapy.common.errors import InvalidRecordError as KafkaInvalidRecord
    from kafkapy.record.errors import RecordValidationError

    with pytest.raises(CorruptMessageError) as ei:
        validate_produce_records(_batch()[:-1])
    e = ei.value
    assert isinstance(e, KafkaError) and isinstance(e, ValueError) and isinstance(e, RecordValidationError)
    assert (e.code, e.name, e.retriable) == (2, "CORRUPT_MESSAGE", True) and "truncated" in e.message
    with pytest.raises(KafkaInvalidRecord) as ei2:
        validate_produce_records(b"", require_single_batch=True)
    assert (ei2.value.code, ei2.value.name, ei2.value.retriable) == (87, "INVALID_RECORD", False)
