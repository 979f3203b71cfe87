"""Clickstream, batch: page views per page and minute, from a topic to a topic (run with spark-submit).

    kafkapy spark-submit examples/clickstream/clickstream_batch.py \
        --bootstrap-server 127.0.0.1:9092 --input clicks --output page-counts

Reads every record of the input topic with the kafkapy source (Spark's Kafka options; only the format
name differs from a `format("kafka")` pipeline), windows on the record timestamp (the event time),
and writes one record per (page, minute) to the output topic: key = page, value =
{"windowStart": ms, "windowEnd": ms, "page": ..., "count": n}.
"""

from __future__ import annotations

import argparse
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def page_counts(clicks):
    events = clicks.select(
        F.col("timestamp").alias("ts"),
        F.from_json(F.col("value").cast("string"), "user string, page string").alias("e"),
    ).select("ts", "e.page")
    return events.groupBy(F.window("ts", "1 minute"), "page").count()


def to_records(counts):
    return counts.select(
        F.col("page").cast("binary").alias("key"),
        F.to_json(F.struct(
            F.unix_millis(F.col("window.start")).alias("windowStart"),
            F.unix_millis(F.col("window.end")).alias("windowEnd"),
            "page", "count",
        )).alias("value"),
    )


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bootstrap-server", default="127.0.0.1:9092")
    p.add_argument("--input", default="clicks")
    p.add_argument("--output", default="page-counts")
    a = p.parse_args(argv)
    spark = SparkSession.builder.appName("clickstream-batch").config("spark.sql.session.timeZone", "UTC").getOrCreate()
    clicks = (spark.read.format("kafkapy").option("kafka.bootstrap.servers", a.bootstrap_server)
              .option("subscribe", a.input).option("startingOffsets", "earliest").load())
    out = to_records(page_counts(clicks)).cache()
    n = out.count()
    (out.write.format("kafkapy").mode("append").option("kafka.bootstrap.servers", a.bootstrap_server)
     .option("topic", a.output).option("kafka.acks", "all").save())
    print(f"wrote {n} page counts to {a.output}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
