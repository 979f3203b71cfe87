"""kafka-python's record code used only as an independent oracle: its batches decode with ours and back."""

import os

import pytest

kafka_records = pytest.importorskip("kafka.record.default_records")
from kafka.record.legacy_records import LegacyRecordBatchBuilder as KpLegacyBuilder  # noqa: E402
from kafka.record.memory_records import MemoryRecords as KpMemoryRecords  # noqa: E402

from kafkapy.record.compression import CompressionType  # noqa: E402
from kafkapy.record.legacy_record import LegacyRecordBatch, LegacyRecordBatchBuilder  # noqa: E402
from kafkapy.record.memory_records import MemoryRecords, validate_produce_records  # noqa: E402
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder  # noqa: E402

# kafka-python here has no snappy library; snappy interop is covered by raw/xerial tests instead.
CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4, CompressionType.ZSTD]
ROWS = [
    (1_700_000_000_000, b"k0", b"v0", [("h", b"1"), ("n", None)]),
    (1_700_000_000_010, None, b"v1" * 5000, []),
    (1_699_999_999_990, b"k2", None, []),
    (1_700_000_000_000, b"k3", os.urandom(3000), [("x", b"")]),
]


def _kp_rows(batch):
    return [(r.offset, r.timestamp, r.key, r.value, [(k, v) for k, v in r.headers]) for r in batch]


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_batch_decodes_with_ours(codec):
    kb = kafka_records.DefaultRecordBatchBuilder(2, int(codec), False, 1234, 5, 77, 10**8)
    for i, (ts, k, v, hs) in enumerate(ROWS):
        kb.append(i, ts, k, v, hs)
    data = bytes(kb.build())
    h = validate_produce_records(data, require_single_batch=True, from_client=True)[0]
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.records_count) == (1234, 5, 77, 4)
    batch = next(MemoryRecords(data).batches())
    assert batch.is_valid() and batch.compression == codec
    assert [tuple(r) for r in batch.records()] == [(i, *row) for i, row in enumerate(ROWS)]
    assert batch.max_timestamp == max(r[0] for r in ROWS)


@pytest.mark.parametrize("codec", CODECS)
def test_our_batch_decodes_with_kafka_python(codec):
    b = MemoryRecordsBuilder(compression=codec, producer_id=9, producer_epoch=1, base_sequence=3,
                             is_transactional=True)
    for ts, k, v, hs in ROWS:
        b.append(ts, k, v, hs)
    kbatch = KpMemoryRecords(b.build()).next_batch()
    assert kbatch.validate_crc()
    assert (kbatch.producer_id, kbatch.producer_epoch, kbatch.base_sequence, kbatch.is_transactional) == (
        9, 1, 3, True)
    assert kbatch.max_timestamp == max(r[0] for r in ROWS)
    assert _kp_rows(kbatch) == [(i, *row) for i, row in enumerate(ROWS)]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4])
def test_legacy_kafka_python_decodes_with_ours(magic, codec):
    if magic == 0 and codec == CompressionType.LZ4:
        pytest.skip("kafka-python needs xxhash to write magic-0 lz4 (broken checksum covered elsewhere)")
    kb = KpLegacyBuilder(magic, int(codec), 10**7)
    for i in range(5):
        kb.append(i, 1000 + i, b"k%d" % i if i != 2 else None, b"v%d" % i if i != 3 else None)
    data = bytes(kb.build())
    batches = list(MemoryRecords(data).batches())
    assert all(isinstance(bt, LegacyRecordBatch) and bt.is_valid() and bt.magic == magic for bt in batches)
    recs = [r for bt in batches for r in bt.records()]
    ts = [1000 + i if magic == 1 else -1 for i in range(5)]
    assert [(r.offset, r.timestamp, r.key, r.value) for r in recs] == [
        (i, ts[i], b"k%d" % i if i != 2 else None, b"v%d" % i if i != 3 else None) for i in range(5)
    ]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP])
def test_legacy_ours_decodes_with_kafka_python(magic, codec):
    b = LegacyRecordBatchBuilder(magic, codec)
    for i in range(4):
        b.append(2000 + i, b"k%d" % i, b"v%d" % i)
    kmr = KpMemoryRecords(b.build())
    rows = []
    while kmr.has_next():
        bt = kmr.next_batch()
        assert bt.validate_crc()
        rows += [(r.offset, r.timestamp, r.key, r.value) for r in bt]
    ts = [2000 + i if magic == 1 else None for i in range(4)]
    assert rows == [(i, ts[i], b"k%d" % i, b"v%d" % i) for i in range(4)]
