"""Log-segment analytics: `dump-log` at cluster scale. Spark reads a broker's log directories offline.

    kafkapy spark-submit examples/log_segments/log_segment_analytics.py /tmp/kafkapy-logs [more dirs]

Input partitions are segment files, decoded in executors with kafkapy's record decoders (the
"kafkapy-log-segments" data source; no broker runs). Prints one line per topic-partition:

    <topic>-<partition> segments=N batches=N records=N bytes=N keys=N first=<ISO time> last=<ISO time> codecs=a,b

(bytes: record batches on disk; keys: distinct non-null keys; first/last: record timestamps, UTC).
`--output json` prints one JSON object per line instead.
"""

from __future__ import annotations

import argparse
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from kafkapy.spark.log_segments import LogSegmentsDataSource


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


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("log_dirs", nargs="+")
    p.add_argument("--output", choices=("text", "json"), default="text")
    a = p.parse_args(argv)
    spark = SparkSession.builder.appName("log-segment-analytics").config("spark.sql.session.timeZone", "UTC").getOrCreate()
    spark.dataSource.register(LogSegmentsDataSource)
    records = spark.read.format("kafkapy-log-segments").load(",".join(a.log_dirs))
    for r in partition_report(records).collect():
        first = r["first"].isoformat(timespec="milliseconds") if r["first"] else None
        last = r["last"].isoformat(timespec="milliseconds") if r["last"] else None
        if a.output == "json":
            print(json.dumps({"topic": r["topic"], "partition": r["partition"], "segments": r["segments"],
                              "batches": r["batches"], "records": r["records"], "bytes": r["bytes"], "keys": r["keys"],
                              "first": first, "last": last, "codecs": r["codecs"]}))
        else:
            print(f"{r['topic']}-{r['partition']} segments={r['segments']} batches={r['batches']} "
                  f"records={r['records']} bytes={r['bytes']} keys={r['keys']} first={first} last={last} "
                  f"codecs={','.join(r['codecs'])}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
