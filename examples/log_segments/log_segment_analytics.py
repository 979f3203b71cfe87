"""Log-segment analytics: `dump-log` at cluster scale. Spark reads a broker's log directories offline.

    kafkapy spark-submit examples/log_segments/log_segment_analytics.py /tmp/kafkapy-logs [more dirs]
        [--report partitions|hourly|keys|producers] [--topic T] [--since ISO-TIME] [--top N]

Answers the ops questions asked of a copied broker log dir: what each partition holds, per-topic bytes
and records per hour, the largest keys, which producers wrote what. Input partitions are segment files,
decoded in executors with kafkapy's record decoders (the "kafkapy-log-segments" data source; no broker
runs); `--topic` and `--since` become filters Spark pushes down to the source, which then reads only
that topic's directories and, with the segments' indexes, only the segments and byte ranges from that
time on.

--report partitions (default) prints one line per topic-partition:

    <topic>-<partition> segments=N batches=N records=N bytes=N keys=N first=<ISO time> last=<ISO time> codecs=a,b

(bytes: record batches on disk; keys: distinct non-null keys; first/last: record timestamps, UTC).
--report hourly: `<topic> <hour> records=N bytes=N` (bytes: the batches whose last record falls in the hour);
--report keys: `<topic> key=<key> records=N valueBytes=N` for the N largest keys by value bytes;
--report producers: `producerId=N records=N batches=N topics=a,b first=<ISO> last=<ISO>`.
`--output json` prints one JSON object per line instead.
"""

from __future__ import annotations

import argparse
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import kafkapy.spark


def partition_report(records):
    batches = records.groupBy("topic", "partition", "batchBaseOffset").agg(F.first("batchBytes").alias("bytes"))
    sizes = batches.groupBy("topic", "partition").agg(F.count("*").alias("batches"), F.sum("bytes").alias("bytes"))
    stats = records.groupBy("topic", "partition").agg(
        F.countDistinct("segment").alias("segments"),
        F.count("*").alias("records"),
        F.countDistinct("key").alias("keys"),
        F.min("timestamp").alias("first"),
        F.max("timestamp").alias("last"),
        F.array_sort(F.collect_set("codec")).alias("codecs"),
    )
    return stats.join(sizes, ["topic", "partition"]).orderBy("topic", "partition")


def hourly_report(records):
    batches = records.groupBy("topic", "partition", "batchBaseOffset").agg(
        F.first("batchBytes").alias("bytes"), F.max("timestamp").alias("ts"), F.count("*").alias("records"))
    return (batches.withColumn("hour", F.date_trunc("hour", "ts")).groupBy("topic", "hour")
            .agg(F.sum("records").alias("records"), F.sum("bytes").alias("bytes")).orderBy("topic", "hour"))


def largest_keys(records, top):
    return (records.where(F.col("key").isNotNull()).groupBy("topic", "key")
            .agg(F.count("*").alias("records"), F.sum(F.greatest("valueSize", F.lit(0))).alias("valueBytes"))
            .orderBy(F.desc("valueBytes"), "topic", "key").limit(top))


def producers_report(records):
    return (records.groupBy("producerId").agg(
        F.count("*").alias("records"), F.countDistinct("topic", "partition", "batchBaseOffset").alias("batches"),
        F.array_sort(F.collect_set("topic")).alias("topics"), F.min("timestamp").alias("first"),
        F.max("timestamp").alias("last")).orderBy("producerId"))


def _iso(t):
    return t.isoformat(timespec="milliseconds") if t else None


def _line(report, r):
    if report == "hourly":
        return {"topic": r["topic"], "hour": _iso(r["hour"]), "records": r["records"], "bytes": r["bytes"]}, (
            f"{r['topic']} {_iso(r['hour'])} records={r['records']} bytes={r['bytes']}")
    if report == "keys":
        key = r["key"].decode("utf-8", "replace")
        return {"topic": r["topic"], "key": key, "records": r["records"], "valueBytes": r["valueBytes"]}, (
            f"{r['topic']} key={key} records={r['records']} valueBytes={r['valueBytes']}")
    if report == "producers":
        doc = {"producerId": r["producerId"], "records": r["records"], "batches": r["batches"],
               "topics": r["topics"], "first": _iso(r["first"]), "last": _iso(r["last"])}
        return doc, (f"producerId={r['producerId']} records={r['records']} batches={r['batches']} "
                     f"topics={','.join(r['topics'])} first={doc['first']} last={doc['last']}")
    doc = {"topic": r["topic"], "partition": r["partition"], "segments": r["segments"], "batches": r["batches"],
           "records": r["records"], "bytes": r["bytes"], "keys": r["keys"], "first": _iso(r["first"]),
           "last": _iso(r["last"]), "codecs": r["codecs"]}
    return doc, (f"{r['topic']}-{r['partition']} segments={r['segments']} batches={r['batches']} "
                 f"records={r['records']} bytes={r['bytes']} keys={r['keys']} first={doc['first']} "
                 f"last={doc['last']} codecs={','.join(r['codecs'])}")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("log_dirs", nargs="+")
    p.add_argument("--report", choices=("partitions", "hourly", "keys", "producers"), default="partitions")
    p.add_argument("--topic")
    p.add_argument("--since", help="only records at or after this ISO time (UTC)")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--output", choices=("text", "json"), default="text")
    a = p.parse_args(argv)
    spark = SparkSession.builder.appName("log-segment-analytics").config("spark.sql.session.timeZone", "UTC").getOrCreate()
    kafkapy.spark.register(spark)
    records = spark.read.format("kafkapy-log-segments").load(",".join(a.log_dirs))
    if a.topic:
        records = records.where(F.col("topic") == a.topic)
    if a.since:
        records = records.where(F.col("timestamp") >= F.to_timestamp(F.lit(a.since)))
    report = {"partitions": partition_report, "hourly": hourly_report, "producers": producers_report,
              "keys": lambda r: largest_keys(r, a.top)}[a.report](records)
    for r in report.collect():
        doc, text = _line(a.report, r)
        print(json.dumps(doc) if a.output == "json" else text)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
