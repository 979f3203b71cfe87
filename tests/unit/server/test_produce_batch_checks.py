"""The Produce handler's header-only checks (Kafka's ProduceRequest.validateRecords and
RequestUtils.hasTransactionalRecords) on real batch bytes, and the legacy up-conversion leaving magic 2 alone."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafkapy.common.errors import InvalidRecordError, UnsupportedCompressionTypeError
from kafkapy.record.compression import CompressionType
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.apis.produce import (
    has_transactional_records,
    up_convert_legacy_records,
    validate_produce_batch_structure,
)


def _batch(compression: int = CompressionType.NONE, transactional: bool = False) -> bytes:
    b = MemoryRecordsBuilder(compression=compression, producer_id=5, producer_epoch=0, base_sequence=0,
                             is_transactional=transactional)
    b.append(1_700_000_000_000, b"k", b"v" * 100)
    return b.build()


def _request(*records: bytes | None) -> SimpleNamespace:
    partitions = [SimpleNamespace(records=r) for r in records]
    return SimpleNamespace(topic_data=[SimpleNamespace(partition_data=partitions)])


def test_zstd_is_refused_before_v7_only() -> None:
    zstd = _batch(CompressionType.ZSTD)
    with pytest.raises(UnsupportedCompressionTypeError, match="not allowed to use ZStandard compression"):
        validate_produce_batch_structure(zstd, 6)
    validate_produce_batch_structure(zstd, 7)
    validate_produce_batch_structure(_batch(CompressionType.LZ4), 6)


def test_one_magic_2_batch_per_partition() -> None:
    one = _batch()
    validate_produce_batch_structure(one, 9)
    with pytest.raises(InvalidRecordError, match="exactly one record batch"):
        validate_produce_batch_structure(one + one, 9)
    magic1 = bytearray(one)
    magic1[16] = 1
    with pytest.raises(InvalidRecordError, match="magic version 2"):
        validate_produce_batch_structure(bytes(magic1), 9)


def test_transactional_records_are_found_by_the_attribute_bit() -> None:
    assert has_transactional_records(_request(None, _batch(), _batch(transactional=True)))
    assert not has_transactional_records(_request(None, _batch(), _batch(CompressionType.GZIP)))


def test_magic_2_records_are_not_converted() -> None:
    one = _batch()
    assert up_convert_legacy_records(one) is one
    assert up_convert_legacy_records(None) is None
