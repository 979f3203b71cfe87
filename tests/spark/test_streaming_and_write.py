"""Streaming reads (availableNow, maxOffsetsPerTrigger, a restart from the checkpoint reads only the new
records), batch and streaming writes read back with confluent-kafka, and the sink's wording for bad
input."""

from __future__ import annotations

import time

import pytest
from spark_helpers import consume_all, create_topic, end_offset, produce


def stream(spark, bootstrap: str, topic: str, **options: str):
    r = spark.readStream.format("kafkapy").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def test_archiver_example_restarts_and_archives_each_record_once(spark, kafkapy_broker, tmp_path) -> None:
    """examples/archiver: availableNow in micro-batches of maxOffsetsPerTrigger; run again after more
    records arrive: it reads only the new ones and the Parquet files hold every record exactly once."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "archiver"))
    from topic_to_parquet import archive, parse_args

    bootstrap, topic = kafkapy_broker.bootstrap, "spark-stream"
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, [{"value": b"a%d" % i, "key": b"k%d" % i, "partition": i % 2,
                                "headers": [("i", b"%d" % i)]} for i in range(50)])
    out = str(tmp_path / "out")
    args = parse_args(["--bootstrap-server", bootstrap, "--topics", topic, "--output", out,
                       "--checkpoint", str(tmp_path / "checkpoint"), "--max-offsets-per-trigger", "25"])
    q = archive(spark, args)
    rows = spark.read.parquet(out).collect()
    assert sorted(r.value for r in rows) == sorted(b"a%d" % i for i in range(50))
    assert all(r.headers[0].value == r.value[1:] and r.topic == topic for r in rows)
    assert sorted((r.partition, r.offset) for r in rows) == sorted((p, o) for p in range(2) for o in range(25))
    # maxOffsetsPerTrigger=25 over two partitions of 25: Spark's prorating floors each share (12 + 12).
    assert [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]] == [24, 24, 2]

    produce(bootstrap, topic, [{"value": b"b%d" % i, "partition": i % 2} for i in range(30)])
    q = archive(spark, args)
    assert sum(p["numInputRows"] for p in q.recentProgress) == 30
    rows = spark.read.parquet(out).collect()
    assert sorted(r.value for r in rows) == sorted([b"a%d" % i for i in range(50)] + [b"b%d" % i for i in range(30)])
    assert sorted((r.partition, r.offset) for r in rows) == sorted((p, o) for p in range(2) for o in range(40))


def test_clickstream_streaming_example_watermark_update_mode(spark, kafkapy_broker, tmp_path) -> None:
    """examples/clickstream streaming job (watermark, update mode) to a topic: the last update of each
    (minute, page) equals the count computed from the generator's events."""
    import json
    import sys
    from collections import Counter
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "clickstream"))
    from clicks import click_events, produce_clicks
    from clickstream_streaming import parse_args, run

    bootstrap = kafkapy_broker.bootstrap
    events = click_events(1200, seed=9)
    produce_clicks(bootstrap, "clicks-live", events, partitions=2)
    create_topic(bootstrap, "counts-live", 1)
    run(spark, parse_args(["--bootstrap-server", bootstrap, "--input", "clicks-live", "--output", "counts-live",
                           "--checkpoint", str(tmp_path / "cp"), "--max-offsets-per-trigger", "600"]))
    expected = Counter((ts - ts % 60_000, page) for ts, _, page in events)
    # Update mode emits a window again in each micro-batch that changes it: read every record written.
    written = end_offset(bootstrap, "counts-live", 0)
    assert written >= len(expected)
    got = consume_all(bootstrap, "counts-live", 1, written, timeout_s=10)
    last: dict[tuple[int, str], int] = {}
    for m in got:  # update mode: a window's count is emitted again each time it grows
        doc = json.loads(m.value())
        key = (doc["windowStart"], doc["page"])
        assert doc["count"] >= last.get(key, 0)
        last[key] = doc["count"]
    assert last == dict(expected)


def test_processing_time_trigger_picks_up_new_records(spark, kafkapy_broker) -> None:
    bootstrap, topic = kafkapy_broker.bootstrap, "spark-live"
    create_topic(bootstrap, topic, 1)
    q = (stream(spark, bootstrap, topic, startingOffsets="latest").selectExpr("CAST(value AS STRING) AS v")
         .writeStream.format("memory").queryName("live").trigger(processingTime="1 second").start())
    try:
        deadline = time.monotonic() + 120
        while not q.recentProgress:  # the first micro-batch fixes the starting offsets (latest)
            assert time.monotonic() < deadline
            time.sleep(0.5)
        for wave in range(2):
            produce(bootstrap, topic, [{"value": b"w%d-%d" % (wave, i)} for i in range(10)])
            want = sorted(f"w{w}-{i}" for w in range(wave + 1) for i in range(10))
            while sorted(r.v for r in spark.sql("SELECT v FROM live").collect()) != want:
                assert time.monotonic() < deadline, spark.sql("SELECT v FROM live").collect()
                time.sleep(0.5)
    finally:
        q.stop()


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


def test_install_maps_kafka_and_gives_spark_save_modes(spark, kafkapy_broker) -> None:
    """kafkapy.spark.install(spark) on a session the user built: format("kafka") is kafkapy's source (no JVM
    connector here), a write with no save mode or Append writes, Overwrite / Ignore fail with Spark's text."""
    from pyspark.errors import AnalysisException

    import kafkapy.spark
    from kafkapy.spark.kafka_format import jvm_connector_present

    bootstrap = kafkapy_broker.bootstrap
    create_topic(bootstrap, "installed", 1)
    kafkapy.spark.install(spark)
    assert not jvm_connector_present(spark)
    df = spark.createDataFrame([("k1", "a"), ("k2", "b")], "key string, value string")
    df.write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", "installed").save()
    df.write.mode("append").save(format="kafka", **{"kafka.bootstrap.servers": bootstrap, "topic": "installed"})
    for mode, shown in (("overwrite", "Overwrite"), ("ignore", "Ignore")):
        with pytest.raises(AnalysisException) as e:
            df.write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", "installed") \
                .mode(mode).save()
        assert str(e.value) == (
            f"Save mode {shown} not allowed for Kafka. Allowed save modes are Append and ErrorIfExists (default).")
    got = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", "installed")
           .load().selectExpr("CAST(key AS STRING) k", "CAST(value AS STRING) v", "offset").collect())
    # Two tasks write concurrently: the order across them is not fixed, the content is.
    assert sorted((r.k, r.v) for r in got) == [("k1", "a"), ("k1", "a"), ("k2", "b"), ("k2", "b")]
    assert sorted(r.offset for r in got) == [0, 1, 2, 3]


def test_a_delivery_error_fails_the_write(spark, kafkapy_broker) -> None:
    """As Spark's KafkaWriteTask: the producer's first delivery error fails the task and so the write."""
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = kafkapy_broker.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("tiny", 1, 1, config={"max.message.bytes": "1000"})])["tiny"].result(30)
    df = spark.range(50).selectExpr("repeat('x', 200) AS value").coalesce(1)
    with pytest.raises(Exception) as e:
        (df.write.format("kafkapy").mode("append").option("kafka.bootstrap.servers", bootstrap)
         .option("topic", "tiny").option("kafka.retries", "0").save())
    assert "MESSAGE_TOO_LARGE" in str(e.value)
