"""Streaming reads (availableNow, maxOffsetsPerTrigger, a restart from the checkpoint reads only the new
records), batch and streaming writes read back with confluent-kafka, and the sink's wording for bad
input."""

from __future__ import annotations

import pytest
from spark_helpers import consume_all, create_topic, produce


def stream(spark, bootstrap: str, topic: str, **options: str):
    r = spark.readStream.format("kafkapy").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def run_available_now(df, path: str, checkpoint: str):
    """Append the stream to Parquet files (Spark's exactly-once file sink) until caught up; the query."""
    q = (df.writeStream.format("parquet").option("path", path).option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start())
    assert q.awaitTermination(120)
    return q


def test_available_now_then_restart_reads_only_new_records(spark, kafkapy_broker, tmp_path) -> None:
    bootstrap, topic = kafkapy_broker.bootstrap, "spark-stream"
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, [{"value": b"a%d" % i, "key": b"k%d" % i, "partition": i % 2} for i in range(50)])
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    df = stream(spark, bootstrap, topic, startingOffsets="earliest", maxOffsetsPerTrigger="20")
    df = df.selectExpr("CAST(value AS STRING) AS v", "partition", "offset")
    q = run_available_now(df, out, checkpoint)
    rows = spark.read.parquet(out).collect()
    assert sorted(r.v for r in rows) == sorted(f"a{i}" for i in range(50))
    assert sorted((r.partition, r.offset) for r in rows) == sorted((p, o) for p in range(2) for o in range(25))
    # maxOffsetsPerTrigger=20 over 50 records: three micro-batches of at most 20 rows.
    batches = [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]
    assert sum(batches) == 50 and max(batches) <= 20 and len(batches) == 3

    produce(bootstrap, topic, [{"value": b"b%d" % i, "partition": i % 2} for i in range(30)])
    q = run_available_now(df, out, checkpoint)
    assert sum(p["numInputRows"] for p in q.recentProgress) == 30
    rows = spark.read.parquet(out).collect()
    assert sorted(r.v for r in rows) == sorted([f"a{i}" for i in range(50)] + [f"b{i}" for i in range(30)])
    assert sorted((r.partition, r.offset) for r in rows) == sorted((p, o) for p in range(2) for o in range(40))


def test_batch_write_then_read_back_with_confluent_kafka(spark, kafkapy_broker) -> None:
    bootstrap, topic = kafkapy_broker.bootstrap, "spark-write"
    create_topic(bootstrap, topic, 3)
    rows = [(f"k{i}" if i % 5 else None, f"value-{i}", i % 3, [("h", b"%d" % i)] if i % 2 else []) for i in range(300)]
    df = spark.createDataFrame(rows, "key string, value string, partition int, headers array<struct<key:string,value:binary>>")
    df = df.coalesce(1)  # one writer task, so each partition holds its rows in DataFrame order
    (df.write.format("kafkapy").mode("append").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
     .option("kafka.acks", "all").option("kafka.compression.type", "zstd").option("kafka.linger.ms", "5").save())
    got = consume_all(bootstrap, topic, 3, 300)
    assert len(got) == 300
    want = {f"value-{i}": (f"k{i}".encode() if i % 5 else None, i % 3, [("h", b"%d" % i)] if i % 2 else None)
            for i in range(300)}
    for m in got:
        key, part, hdrs = want.pop(m.value().decode())
        assert (m.key(), m.partition(), m.headers()) == (key, part, hdrs)
    assert not want
    per_partition = {p: [int(m.value()[6:]) for m in got if m.partition() == p] for p in range(3)}
    assert all(v == sorted(v) for v in per_partition.values())


def test_streaming_write_topic_to_topic(spark, kafkapy_broker, tmp_path) -> None:
    bootstrap = kafkapy_broker.bootstrap
    create_topic(bootstrap, "spark-in", 2)
    create_topic(bootstrap, "spark-out", 1)
    produce(bootstrap, "spark-in", [{"value": b"m%d" % i, "key": b"%d" % i} for i in range(40)])
    df = stream(spark, bootstrap, "spark-in", startingOffsets="earliest")
    out = df.selectExpr("key", "upper(CAST(value AS STRING)) AS value", "'spark-out' AS topic")
    q = (out.writeStream.format("kafkapy").option("kafka.bootstrap.servers", bootstrap)
         .option("checkpointLocation", str(tmp_path / "cp")).trigger(availableNow=True).start())
    assert q.awaitTermination(120)
    got = consume_all(bootstrap, "spark-out", 1, 40)
    assert sorted((m.key(), m.value()) for m in got) == sorted((b"%d" % i, b"M%d" % i) for i in range(40))


@pytest.mark.parametrize("columns, options, wording", [
    ("CAST(value AS STRING) AS v", {"topic": "x"}, "Required attribute 'value' not found"),
    ("value", {}, "topic option required when no 'topic' attribute is present"),
    ("value, 7 AS key", {"topic": "x"}, "key attribute type must be a string or binary"),
])
def test_bad_writes_fail_with_sparks_wording(spark, kafkapy_broker, columns, options, wording) -> None:
    df = spark.createDataFrame([(b"v",)], "value binary").selectExpr(*columns.split(", "))
    w = df.write.format("kafkapy").mode("append").option("kafka.bootstrap.servers", kafkapy_broker.bootstrap)
    for k, v in options.items():
        w = w.option(k, v)
    with pytest.raises(Exception) as info:
        w.save()
    assert wording in str(info.value)
