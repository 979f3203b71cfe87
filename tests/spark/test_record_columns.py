"""The columnar decoder (record_columns) against kafkapy's record decoder, and the pure planning logic:
Spark's JSON offsets, option validation, minPartitions splitting, maxOffsetsPerTrigger prorating.
No SparkSession: these run in milliseconds."""

from __future__ import annotations

import random

import pytest

pa = pytest.importorskip("pyarrow")

from kafkapy.common.topic_partition import TopicPartition  # noqa: E402
from kafkapy.record.compression import CompressionType  # noqa: E402
from kafkapy.record.errors import CorruptRecordError  # noqa: E402
from kafkapy.record.legacy_record import LegacyRecordBatchBuilder  # noqa: E402
from kafkapy.record.memory_records import MemoryRecords  # noqa: E402
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder  # noqa: E402
from kafkapy.spark.errors import KafkaSourceError  # noqa: E402
from kafkapy.spark.offset_reader import OffsetRange, offset_ranges, rate_limit  # noqa: E402
from kafkapy.spark.options import parse_source_options  # noqa: E402
from kafkapy.spark.record_columns import RecordColumns  # noqa: E402
from kafkapy.spark.schema import arrow_schema, struct_type  # noqa: E402

SCHEMA = arrow_schema(struct_type(True))


def build_log(codec: str, log_append_time: bool = False, seed: int = 5) -> bytes:
    rng = random.Random(seed)
    out = []
    base = 0
    for _ in range(4):
        b = MemoryRecordsBuilder(compression=CompressionType.from_name(codec), base_offset=base,
                                 timestamp_type=1 if log_append_time else 0)
        for i in range(rng.randrange(1, 300)):
            key = None if i % 7 == 0 else rng.randbytes(rng.randrange(0, 300))
            value = None if i % 11 == 0 else rng.randbytes(rng.choice((0, 5, 100, 20000)))
            headers = [(f"h{j}", None if j == 1 else rng.randbytes(j * 3)) for j in range(i % 3)]
            b.append(1_700_000_000_000 + rng.randrange(-(1 << 40), 1 << 40), key, value, headers)
        blob = b.build()
        out.append(blob)
        base += next(MemoryRecords(blob).batches()).records_count
    return b"".join(out)


def decode(buf: bytes, start: int = 0, end: int | None = None) -> list[tuple]:
    cols = RecordColumns("t", 3, True, SCHEMA)
    for batch in MemoryRecords(buf).batches():
        cols.add_batch(batch)
    rows = []
    for rb in cols.build(start, end):
        for r in rb.to_pylist():
            assert (r["topic"], r["partition"]) == ("t", 3)
            hs = [(h["key"], h["value"]) for h in r["headers"]]
            rows.append((r["offset"], round(r["timestamp"].timestamp() * 1000), r["timestampType"], r["key"], r["value"], hs))
    return rows


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_columns_equal_the_record_decoder(codec: str) -> None:
    buf = build_log(codec)
    want = [(r.offset, r.timestamp, 0, r.key, r.value, r.headers) for r in MemoryRecords(buf).records()]
    assert decode(buf) == want
    assert decode(buf, 10, 200) == [w for w in want if 10 <= w[0] < 200]


def test_log_append_time_batches_carry_max_timestamp() -> None:
    buf = build_log("none", log_append_time=True)
    batches = list(MemoryRecords(buf).batches())
    want = [(r.offset, b.max_timestamp, 1) for b in batches for r in b.records()]
    assert [row[:3] for row in decode(buf)] == want


def test_legacy_message_sets_and_magic_2_together() -> None:
    legacy = LegacyRecordBatchBuilder(1, CompressionType.GZIP, base_offset=0)
    for i in range(5):
        legacy.append(1000 + i, b"k%d" % i, b"v%d" % i)
    v2 = MemoryRecordsBuilder(base_offset=5)
    v2.append(2000, b"k5", b"v5")
    rows = decode(legacy.build() + v2.build())
    assert sorted((o, ts, k, v) for o, ts, _, k, v, _ in rows) == (
        [(i, 1000 + i, b"k%d" % i, b"v%d" % i) for i in range(5)] + [(5, 2000, b"k5", b"v5")])


@pytest.mark.parametrize("codec,log_append_time", [("none", False), ("zstd", False), ("lz4", True)])
def test_compiled_build_equals_the_arrow_kernels(codec: str, log_append_time: bool, monkeypatch) -> None:
    """Without headers, spark/_arrow_columns.c builds the columns; the same batches through the Arrow
    kernels (walked_fields) give equal Arrow batches, null keys and values, offset ranges and LogAppendTime
    included, and both equal the record decoder."""
    from kafkapy.spark import record_columns

    if record_columns._compiled_columns is None:
        pytest.fail("kafkapy.spark._arrow_columns is not built (pip install -e .)")
    schema = arrow_schema(struct_type(False))
    buf = build_log(codec, log_append_time)
    batches = list(MemoryRecords(buf).batches())
    want = [(r.offset, b.max_timestamp if log_append_time else r.timestamp, int(log_append_time), r.key, r.value)
            for b in batches for r in b.records()]

    def build(compiled: bool, start: int, end: int | None) -> list:
        monkeypatch.setattr(record_columns, "use_compiled", compiled)
        cols = RecordColumns("t", 3, False, schema)
        for batch in batches:
            cols.add_batch(batch)
        return cols.build(start, end)

    for start, end in ((0, None), (10, 200), (5, 6), (10_000, None)):
        compiled, kernels = build(True, start, end), build(False, start, end)
        assert [b.schema for b in compiled] == [schema] * len(compiled)
        assert pa.Table.from_batches(compiled, schema).equals(pa.Table.from_batches(kernels, schema))
        rows = [(r["offset"], round(r["timestamp"].timestamp() * 1000), r["timestampType"], r["key"], r["value"])
                for b in compiled for r in b.to_pylist()]
        assert rows == [w for w in want if start <= w[0] < (end if end is not None else 1 << 62)]
        assert all((r["topic"], r["partition"]) == ("t", 3) for b in compiled for r in b.to_pylist())


@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_a_reused_arena_gives_the_columns_of_a_fresh_one(codec: str) -> None:
    """RecordColumns(arena=...) written over a buffer longer than its records (a previous response's) and
    one shorter (grown in place) builds the same batches as with a fresh arena."""
    schema = arrow_schema(struct_type(False))
    batches = list(MemoryRecords(build_log(codec)).batches())

    def build(parts: list, arena: bytearray | None) -> pa.Table:
        cols = RecordColumns("t", 3, False, schema, arena=arena)
        for batch in parts:
            cols.add_batch(batch)
        return pa.Table.from_batches(cols.build(5, None), schema)

    arena = bytearray(b"\xee" * 100)
    for parts in (batches, batches[:2], batches[1:], batches):
        assert build(parts, arena).equals(build(parts, None))
    assert len(arena) > 100_000  # grown in place to hold the records, then written over


def test_corrupt_record_lengths_raise_corrupt_record() -> None:
    b = MemoryRecordsBuilder()
    b.append(1, b"k", b"value")
    buf = bytearray(b.build())
    buf[61] = 0x7E  # first record's length varint: 63, past the batch end
    batch = next(MemoryRecords(bytes(buf)).batches())
    with pytest.raises(CorruptRecordError):
        RecordColumns("t", 0, False, arrow_schema(struct_type(False))).add_batch(batch)


def test_options_validation_wording() -> None:
    base = {"kafka.bootstrap.servers": "h:9092"}
    with pytest.raises(KafkaSourceError, match="Only one of the following options can be specified"):
        parse_source_options({**base, "subscribe": "a", "assign": '{"a":[0]}'}, streaming=False)
    with pytest.raises(KafkaSourceError, match="ending offset not valid in streaming queries"):
        parse_source_options({**base, "subscribe": "a", "endingOffsets": "latest"}, streaming=True)
    with pytest.raises(KafkaSourceError, match="Kafka option 'auto.offset.reset' is not supported"):
        parse_source_options({**base, "subscribe": "a", "kafka.auto.offset.reset": "earliest"}, streaming=True)
    with pytest.raises(KafkaSourceError, match=r'Expected e.g. \{"topicA":\{"0":23'):
        parse_source_options({**base, "subscribe": "a", "startingOffsets": "{bad"}, streaming=False)
    opts = parse_source_options({**base, "SUBSCRIBE": "a, b", "StartingOffsets": '{"a":{"0":5}}',
                                 "kafka.isolation.level": "read_committed"}, streaming=False)
    assert opts.subscription.topics == ("a", "b")
    assert opts.starting.partition_values == {TopicPartition("a", 0): 5}
    assert opts.kafka == {"bootstrap.servers": "h:9092", "isolation.level": "read_committed"}


def test_min_partitions_and_rate_limit() -> None:
    a, b = TopicPartition("t", 0), TopicPartition("t", 1)
    # Spark's KafkaOffsetRangeCalculator: round(90 / 100 * 4) = 4 pieces and max(round(0.4), 1) = 1.
    ranges = offset_ranges([OffsetRange(a, 0, 90), OffsetRange(b, 10, 20)], 4)
    assert [(r.tp.partition, r.from_offset, r.until_offset) for r in ranges] == [
        (0, 0, 22), (0, 22, 45), (0, 45, 67), (0, 67, 90), (1, 10, 20)]
    assert offset_ranges([OffsetRange(a, 0, 90)], None) == [OffsetRange(a, 0, 90)]
    # 100 over backlogs of 900 and 100: 90 and 10; a backlog of 1 is never starved.
    assert rate_limit(100, {a: 0, b: 0}, {a: 900, b: 100}) == {a: 90, b: 10}
    assert rate_limit(10, {a: 0, b: 0}, {a: 1000, b: 1}) == {a: 9, b: 1}


def test_reader_consumer_config_defaults_and_overrides() -> None:
    """The reader's client fetches 4 MiB per partition into a 1 MiB socket buffer unless `kafka.*` says otherwise."""
    from kafkapy.spark.partition_reader import consumer_config

    config = consumer_config({"bootstrap.servers": "h:9092"}, "reader")
    assert int(config["receive.buffer.bytes"]) == 1024 * 1024
    assert int(config["max.partition.fetch.bytes"]) == 4 * 1024 * 1024
    assert config["client.id"] == "kafkapy-spark-reader"
    config = consumer_config({"bootstrap.servers": "h:9092", "receive.buffer.bytes": "65536",
                              "max.partition.fetch.bytes": "1048576"}, "reader")
    assert int(config["receive.buffer.bytes"]) == 65536
    assert int(config["max.partition.fetch.bytes"]) == 1048576
