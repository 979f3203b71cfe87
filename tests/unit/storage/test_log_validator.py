"""LogValidator through Log.append_as_leader: recompression keeps every record byte for byte, a compressed
batch past max.message.bytes of decompressed records is MESSAGE_TOO_LARGE, corrupt codec bytes are
CORRUPT_MESSAGE, and nothing refused reaches the log."""

from __future__ import annotations

import pytest
from storage_helpers import START_MS, batch, config, open_log

from kafkapy.common.errors import CorruptMessageError, InvalidRecordError, MessageTooLargeError
from kafkapy.record.batch_header import BatchHeader, read_batch_header, write_batch
from kafkapy.record.compression import CompressionType, compress
from kafkapy.record.default_record import encode_record
from kafkapy.record.memory_records import MemoryRecords


def records_of(log) -> list[tuple[int, int, bytes | None, bytes | None]]:
    data = log.read(0, 10_000_000).records.read_bytes()
    return [(r.offset, r.timestamp, r.key, r.value) for r in MemoryRecords(bytes(data)).records()]


@pytest.mark.parametrize("source", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("target", ["gzip", "snappy", "lz4", "zstd", "uncompressed"])
def test_recompression_keeps_the_records(tmp_path, source: int, target: str) -> None:
    log = open_log(tmp_path / "t-0", cfg=config(compression_type=target))
    raw = batch(20, value_size=200, compression=source, producer_id=7, producer_epoch=1, base_sequence=0)
    log.append_as_leader(raw, 0)
    stored = log.read(0, 10_000_000).records.read_bytes()
    h = read_batch_header(bytes(stored))
    assert h.compression_codec == CompressionType.from_name(target)
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.records_count) == (7, 1, 0, 20)
    assert records_of(log) == [(i, START_MS + i, b"k", bytes([65 + i % 26]) * 200) for i in range(20)]


def _one_record_batch(codec: int, value_size: int) -> bytes:
    record = encode_record(0, 0, b"key", bytes(value_size))
    header = BatchHeader(0, 0, -1, 2, 0, codec, 0, START_MS, START_MS, -1, -1, -1, 1)
    return write_batch(header, codec, START_MS, START_MS, 1, compress(codec, record))


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_decompressed_records_past_max_message_bytes_are_refused(tmp_path, codec: int) -> None:
    log = open_log(tmp_path / "t-0", cfg=config(max_message_bytes=100_000))
    log.append_as_leader(_one_record_batch(codec, 90_000), 0)
    with pytest.raises(MessageTooLargeError):
        log.append_as_leader(_one_record_batch(codec, 200_000), 0)
    assert log.log_end_offset == 1


def test_compacted_and_recompressed_topic_refuses_a_bomb(tmp_path) -> None:
    log = open_log(tmp_path / "t-0", cfg=config(cleanup_policy="compact", compression_type="lz4"))
    with pytest.raises(MessageTooLargeError):
        log.append_as_leader(_one_record_batch(4, 50 << 20), 0)  # 50 MiB of zeros in a few KB of zstd
    assert log.log_end_offset == 0


def test_codec_bytes_that_are_not_the_codec(tmp_path) -> None:
    log = open_log(tmp_path / "t-0")
    record = encode_record(0, 0, b"k", b"v")
    for codec in (1, 2, 3, 4):
        header = BatchHeader(0, 0, -1, 2, 0, codec, 0, START_MS, START_MS, -1, -1, -1, 1)
        with pytest.raises(CorruptMessageError):
            log.append_as_leader(write_batch(header, codec, START_MS, START_MS, 1, record), 0)
    header = BatchHeader(0, 0, -1, 2, 0, 0, 1, START_MS, START_MS, -1, -1, -1, 2)
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(write_batch(header, 0, START_MS, START_MS, 2, record), 0)  # count 2, one record
    assert log.log_end_offset == 0


def test_difference_max_ms_bounds_timestamps_until_before_and_after_are_set(tmp_path) -> None:
    from kafkapy.common.errors import InvalidTimestampError
    from kafkapy.common.time import MockTime

    cfg = config(message_timestamp_difference_max_ms=1000)
    assert (cfg.message_timestamp_before_max_ms, cfg.message_timestamp_after_max_ms) == (1000, 1000)
    cfg2 = config(message_timestamp_difference_max_ms=1000, message_timestamp_after_max_ms=5000)
    assert (cfg2.message_timestamp_before_max_ms, cfg2.message_timestamp_after_max_ms) == (1000, 5000)
    log = open_log(tmp_path / "t-0", MockTime(START_MS), cfg)
    log.append_as_leader(batch(1, START_MS - 1000), 0)
    with pytest.raises(InvalidTimestampError) as info:
        log.append_as_leader(batch(3, START_MS - 1001, step_ms=1000), 0)  # only the first record is too old
    assert info.value.record_errors == [(0, f"Timestamp {START_MS - 1001} of message with offset 0 is out of range. "
                                            f"The timestamp should be within [{START_MS - 1000}, {START_MS + 1000}]")]
    assert log.log_end_offset == 1


def test_key_and_timestamp_errors_combine_as_kafkas_process_record_errors(tmp_path) -> None:
    from kafkapy.common.errors import InvalidTimestampError
    from kafkapy.common.time import MockTime

    log = open_log(tmp_path / "t-0", MockTime(START_MS), config(cleanup_policy="compact",
                                                               message_timestamp_before_max_ms=1000))
    records = (encode_record(0, 0, None, b"a") + encode_record(1, -5000, b"k", b"b")
               + encode_record(2, -5000, None, b"c") + encode_record(3, 0, b"k", b"d"))
    header = BatchHeader(0, 0, -1, 2, 0, 0, 3, START_MS, START_MS, -1, -1, -1, 4)
    with pytest.raises(InvalidTimestampError) as info:
        log.append_as_leader(write_batch(header, 0, START_MS, START_MS, 4, records), 0)
    key_msg = "Compacted topic cannot accept message without key in topic partition t-0"
    errors = info.value.record_errors
    assert [i for i, _ in errors] == [0, 1, 2] and errors[0] == (0, key_msg) and errors[2] == (2, key_msg)
    # after.max.ms is Long.MAX_VALUE: Kafka prints now + it as the Java long it overflows to.
    assert errors[1][1] == (f"Timestamp {START_MS - 5000} of message with offset 1 is out of range. The timestamp "
                            f"should be within [{START_MS - 1000}, {START_MS + 2**63 - 1 - 2**64}]")
    assert str(info.value) == "One or more records have been rejected due to invalid timestamp"


def test_client_batch_with_log_append_time_on_a_log_append_time_topic(tmp_path) -> None:
    from kafkapy.common.errors import InvalidTimestampError

    log = open_log(tmp_path / "t-0", cfg=config(message_timestamp_type="LogAppendTime"))
    header = BatchHeader(0, 0, -1, 2, 0, 0x08, 0, START_MS, START_MS + 7, -1, -1, -1, 1)
    raw = write_batch(header, 0x08, START_MS, START_MS + 7, 1, encode_record(0, 0, b"key", b"value"))
    with pytest.raises(InvalidTimestampError) as info:
        log.append_as_leader(raw, 0)
    assert info.value.record_errors == [(0, f"Invalid timestamp type in message DefaultRecord(offset=0, timestamp="
                                            f"{START_MS + 7}, key=3 bytes, value=5 bytes). Producer should not set "
                                            "timestamp type to LogAppendTime.")]


@pytest.mark.parametrize("target", ["gzip", "snappy", "lz4", "zstd"])
def test_large_batches_stream_through_validation_and_recompression(tmp_path, monkeypatch, target: str) -> None:
    from kafkapy.record import record_walker
    from kafkapy.storage.log_recompress import Recompressor

    monkeypatch.setattr(Recompressor, "ONE_SHOT_BYTES", 100_000)  # stream past 100 KB
    monkeypatch.setattr(record_walker, "BIG_RECORD_BYTES", 50_000)  # records past 50 KB walked as they stream
    log = open_log(tmp_path / "t-0", cfg=config(compression_type=target, max_message_bytes=10_000_000))
    values = [bytes([i]) * (i * 40_000) for i in range(1, 8)]  # 40 KB .. 280 KB values
    source = CompressionType.ZSTD if target != "zstd" else CompressionType.GZIP
    log.append_as_leader(batch_of(values, source), 0)
    got = records_of(log)
    assert [(o, v) for o, _ts, _k, v in got] == list(enumerate(values))


def batch_of(values: list[bytes], codec: int) -> bytes:
    records = b"".join(encode_record(i, i, b"k%d" % i, v) for i, v in enumerate(values))
    header = BatchHeader(0, 0, -1, 2, 0, codec, len(values) - 1, START_MS, START_MS + len(values) - 1, -1, -1, -1,
                         len(values))
    return write_batch(header, codec, START_MS, START_MS + len(values) - 1, len(values), compress(codec, records))
