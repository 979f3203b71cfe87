"""spark/batch_sink + spark/record_encoder without a Spark session: Arrow batches written column-wise
through kafkapy's producer to the in-process broker, read back with confluent-kafka (librdkafka):
exact keys, values, headers, partitions (murmur2 per key, sticky for null keys, the partition column),
every compression codec, batch.size cuts, linger.ms holding a partial batch, and a delivery error
failing the write."""

from __future__ import annotations

import pyarrow as pa
import pytest
from spark_helpers import consume_all, create_topic

from kafkapy.client.partitioner import partition_for_key
from kafkapy.client.producer import KafkaProducer
from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.record.varint import encode_unsigned_varint
from kafkapy.spark.batch_sink import ArrowBatchSink
from kafkapy.spark.errors import KafkaSinkError
from kafkapy.spark.record_encoder import unsigned_varints


def test_varints_match_the_scalar_encoder() -> None:
    values = [0, 1, 63, 64, 127, 128, 300, 16383, 16384, 16385, 1 << 20, (1 << 21) + 5, (1 << 28) - 1]
    got = unsigned_varints(pa.array(values, pa.int64())).to_pylist()
    assert got == [encode_unsigned_varint(v) for v in values]


def _batch(rows: list[dict], with_headers: bool = False) -> pa.RecordBatch:
    cols = {"key": pa.array([r.get("key") for r in rows], pa.string()),
            "value": pa.array([r["value"] for r in rows], pa.binary())}
    if any("topic" in r for r in rows):
        cols["topic"] = pa.array([r.get("topic") for r in rows], pa.string())
    if any("partition" in r for r in rows):
        cols["partition"] = pa.array([r.get("partition") for r in rows], pa.int32())
    if with_headers:
        t = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
        cols["headers"] = pa.array([r.get("headers") or [] for r in rows], t)
    return pa.RecordBatch.from_pydict(cols)


def _write(bootstrap: str, batches: list[pa.RecordBatch], topic: str | None, **config: str) -> int:
    producer = KafkaProducer({"bootstrap.servers": bootstrap, **config})
    try:
        sink = ArrowBatchSink(producer, topic)
        for b in batches:
            sink.add(b)
        return sink.close()
    finally:
        producer.close()


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_keyed_rows_land_on_murmur2_partitions_in_order(kafkapy_broker, codec: str) -> None:
    bootstrap, topic = kafkapy_broker.bootstrap, f"sink-{codec}"
    create_topic(bootstrap, topic, 3)
    rows = [{"key": f"k{i % 17}", "value": b"v%05d" % i + b"x" * (i % 300)} for i in range(3000)]
    written = _write(bootstrap, [_batch(rows[:1000]), _batch(rows[1000:])], topic, **{
        "compression.type": codec, "batch.size": "4096", "linger.ms": "5"})
    assert written == 3000
    got = consume_all(bootstrap, topic, 3, 3000)
    assert len(got) == 3000
    for p in range(3):
        mine = [m for m in got if m.partition() == p]
        assert [m.offset() for m in mine] == list(range(len(mine)))
        expected = [r for r in rows if partition_for_key(r["key"].encode(), 3) == p]
        assert [(m.key(), m.value()) for m in sorted(mine, key=lambda m: m.offset())] == [
            (r["key"].encode(), r["value"]) for r in expected]


def test_topic_and_partition_columns_headers_and_null_keys(kafkapy_broker) -> None:
    bootstrap = kafkapy_broker.bootstrap
    create_topic(bootstrap, "sink-a", 2)
    create_topic(bootstrap, "sink-b", 4)
    rows = [{"topic": "sink-a" if i % 3 else "sink-b", "value": b"%d" % i,
             "partition": 1 if i % 5 == 0 else None, "key": None if i % 2 else f"k{i}",
             "headers": [{"key": "h", "value": b"%d" % i}, {"key": "n", "value": None}] if i % 7 == 0 else []}
            for i in range(600)]
    assert _write(bootstrap, [_batch(rows, with_headers=True)], None, **{"batch.size": "1024"}) == 600
    for topic, parts in (("sink-a", 2), ("sink-b", 4)):
        mine = [r for r in rows if r["topic"] == topic]
        got = consume_all(bootstrap, topic, parts, len(mine))
        assert sorted(m.value() for m in got) == sorted(r["value"] for r in mine)
        by_value = {r["value"]: r for r in mine}
        for m in got:
            r = by_value[m.value()]
            assert m.key() == (r["key"].encode() if r["key"] else None)
            if r["partition"] is not None:
                assert m.partition() == 1
            elif r["key"]:
                assert m.partition() == partition_for_key(r["key"].encode(), parts)
            want = [(h["key"], h["value"]) for h in r["headers"]] or None
            assert m.headers() == want
        # Null keys without a partition are spread batch by batch (sticky), not all on one partition.
        assert len({m.partition() for m in got if m.key() is None and int(m.value()) % 5}) > 1


def test_null_topic_and_delivery_errors_fail_the_write(kafkapy_broker) -> None:
    bootstrap = kafkapy_broker.bootstrap
    with pytest.raises(KafkaSinkError, match="Null topic present in the data"):
        _write(bootstrap, [_batch([{"topic": None, "value": b"x"}])], None)
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("sink-small", 1, 1, config={"max.message.bytes": "2000"})])["sink-small"].result(30)
    rows = [{"value": b"y" * 500} for _ in range(20)]
    with pytest.raises(KafkaError) as e:
        _write(bootstrap, [_batch(rows)], "sink-small", **{"batch.size": "100000", "retries": "0"})
    assert e.value.code == ErrorCode.MESSAGE_TOO_LARGE


def test_tasks_in_one_worker_share_a_producer_and_a_failure_drops_it(kafkapy_broker) -> None:
    from kafkapy.spark import writer
    from kafkapy.spark.options import parse_sink_options

    bootstrap = kafkapy_broker.bootstrap
    create_topic(bootstrap, "sink-reuse", 1)
    options = parse_sink_options({"kafka.bootstrap.servers": bootstrap, "topic": "sink-reuse"})
    rows = [{"value": b"r%d" % i} for i in range(10)]
    try:
        _reuse_and_drop(writer, options, rows, bootstrap)
    finally:  # the worker cache outlives a task, not this test's broker
        for p in writer._producers.values():
            p.close(0)
        writer._producers.clear()


def _reuse_and_drop(writer, options, rows, bootstrap) -> None:
    from kafkapy.spark.options import parse_sink_options

    assert writer.write_batches(options, iter([_batch(rows)])) == 10
    key = tuple(sorted(options.kafka.items()))
    first = writer._producers[key]
    assert writer.write_batches(options, iter([_batch(rows)])) == 10
    assert writer._producers[key] is first
    assert [m.value() for m in consume_all(bootstrap, "sink-reuse", 1, 20)] == [r["value"] for r in rows] * 2
    with pytest.raises(KafkaSinkError):
        writer.write_batches(parse_sink_options({"kafka.bootstrap.servers": bootstrap}),
                             iter([_batch([{"topic": None, "value": b"x"}])]))
    assert tuple(sorted(parse_sink_options({"kafka.bootstrap.servers": bootstrap}).kafka.items())) \
        not in writer._producers
