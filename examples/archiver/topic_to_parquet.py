"""Topic-to-Parquet archiver: a streaming query that copies every record of topics into Parquet files,
exactly once across restarts (the kafkapy source's offsets and Spark's file sink log share the
checkpoint, so a restarted query writes each record once, however it was stopped).

    kafkapy spark-submit examples/archiver/topic_to_parquet.py --bootstrap-server 127.0.0.1:9092 \
        --topics clicks --output /tmp/archive --checkpoint /tmp/archive-checkpoint [--processing-time "30 seconds"]

Without --processing-time it archives what the topics hold now (trigger availableNow) and stops: run it
from cron. Files are partitioned by topic and date (UTC) of the record timestamp; every column of
Spark's Kafka schema is kept (key, value, topic, partition, offset, timestamp, timestampType, headers).
Input for a try: examples/clickstream/clicks.py.
"""

from __future__ import annotations

import argparse
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--bootstrap-server", default="127.0.0.1:9092")
    p.add_argument("--topics", required=True, help="comma-separated topics")
    p.add_argument("--output", required=True)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--processing-time", default=None)
    p.add_argument("--max-offsets-per-trigger", default="200000")
    return p.parse_args(argv)


def archive(spark, a: argparse.Namespace):
    """Run the archiving query until it stops (availableNow) or is stopped; returns the query."""
    records = (spark.readStream.format("kafkapy").option("kafka.bootstrap.servers", a.bootstrap_server)
               .option("subscribe", a.topics).option("startingOffsets", "earliest").option("includeHeaders", "true")
               .option("maxOffsetsPerTrigger", a.max_offsets_per_trigger).load())
    writer = (records.withColumn("date", F.to_date("timestamp")).writeStream.format("parquet")
              .partitionBy("topic", "date").option("path", a.output).option("checkpointLocation", a.checkpoint))
    writer = writer.trigger(processingTime=a.processing_time) if a.processing_time else writer.trigger(availableNow=True)
    query = writer.start()
    query.awaitTermination()
    return query


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    spark = SparkSession.builder.appName("topic-to-parquet").config("spark.sql.session.timeZone", "UTC").getOrCreate()
    query = archive(spark, a)
    rows = sum(p["numInputRows"] for p in query.recentProgress)
    print(f"archived {rows} records to {a.output}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
