"""Clickstream, streaming: page views per page and minute with a watermark, topic to topic.

    kafkapy spark-submit examples/clickstream/clickstream_streaming.py \
        --bootstrap-server 127.0.0.1:9092 --input clicks --output page-counts-live \
        --checkpoint /tmp/clickstream-checkpoint [--processing-time "10 seconds"] [--mode update|append]

Without --processing-time the query runs with trigger(availableNow=True): it processes what the topic
holds now, in micro-batches of at most --max-offsets-per-trigger records, then stops; run it again and
it continues from its checkpoint. With a processing time it runs until interrupted. Update mode emits
a window's count each time it changes; append mode emits each window once, after the watermark
(--watermark, default 2 minutes) has passed its end.
"""

from __future__ import annotations

import argparse
import sys

from clickstream_batch import to_records
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--bootstrap-server", default="127.0.0.1:9092")
    p.add_argument("--input", default="clicks")
    p.add_argument("--output", default="page-counts-live")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--mode", choices=("update", "append"), default="update")
    p.add_argument("--watermark", default="2 minutes")
    p.add_argument("--processing-time", default=None)
    p.add_argument("--max-offsets-per-trigger", default="50000")
    return p.parse_args(argv)


def run(spark, a: argparse.Namespace):
    """Start the query and wait until it stops (availableNow) or is stopped; returns the query."""
    clicks = (spark.readStream.format("kafkapy").option("kafka.bootstrap.servers", a.bootstrap_server)
              .option("subscribe", a.input).option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", a.max_offsets_per_trigger).load())
    events = clicks.select(
        F.col("timestamp").alias("ts"),
        F.from_json(F.col("value").cast("string"), "user string, page string").alias("e"),
    ).select("ts", "e.page").withWatermark("ts", a.watermark)
    counts = events.groupBy(F.window("ts", "1 minute"), "page").count()
    if a.mode == "append":
        writer = (to_records(counts).writeStream.format("kafkapy").outputMode("append")
                  .option("kafka.bootstrap.servers", a.bootstrap_server).option("topic", a.output))
    else:
        # PySpark's Python streaming sinks accept append mode only (Spark's JVM Kafka sink also takes
        # update); each micro-batch's updated windows are written with the batch sink instead.
        def write_updates(batch, _batch_id: int) -> None:
            (to_records(batch).write.format("kafkapy").mode("append")
             .option("kafka.bootstrap.servers", a.bootstrap_server).option("topic", a.output).save())

        writer = counts.writeStream.outputMode("update").foreachBatch(write_updates)
    writer = writer.option("checkpointLocation", a.checkpoint)
    writer = writer.trigger(processingTime=a.processing_time) if a.processing_time else writer.trigger(availableNow=True)
    query = writer.start()
    query.awaitTermination()
    return query


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    spark = SparkSession.builder.appName("clickstream-streaming").config("spark.sql.session.timeZone", "UTC").getOrCreate()
    query = run(spark, a)
    rows = sum(p["numInputRows"] for p in query.recentProgress)
    print(f"read {rows} click events; page counts in {a.output}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
