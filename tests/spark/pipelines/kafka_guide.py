"""Pipelines shaped as in Spark's Structured Streaming + Kafka Integration Guide, with format("kafka") and
no save mode, exactly as a user writes them for Spark's JVM connector; run by tests/spark/test_kafka_guide.py
through `kafkapy spark-submit` (which maps "kafka" to kafkapy's source) in one driver.

usage: kafka_guide.py BOOTSTRAP PREFIX CHECKPOINT_DIR
Topics (created by the test): PREFIX-events (2 partitions), PREFIX-upper, PREFIX-fb (1 partition).
Prints one `RESULT <name> <json>` line per step.
"""

import json
import sys

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

bootstrap, prefix, checkpoints = sys.argv[1:4]
events, upper, fb = f"{prefix}-events", f"{prefix}-upper", f"{prefix}-fb"
spark = SparkSession.builder.appName("kafka-guide").getOrCreate()


def result(name, value):
    print("RESULT", name, json.dumps(value, sort_keys=True), flush=True)


# Write key-value data from a DataFrame to Kafka using a topic specified in the data (batch, no mode).
rows = [(events, f"k{i}", f"v{i}") for i in range(40)]
df = spark.createDataFrame(rows, "topic string, key string, value string")
df.selectExpr("topic", "CAST(key AS STRING)", "CAST(value AS STRING)") \
    .write \
    .format("kafka") \
    .option("kafka.bootstrap.servers", bootstrap) \
    .save()

# Subscribe to 1 topic, with specific starting and ending offsets (batch read).
df = spark \
    .read \
    .format("kafka") \
    .option("kafka.bootstrap.servers", bootstrap) \
    .option("subscribe", events) \
    .option("startingOffsets", json.dumps({events: {"0": 2, "1": -2}})) \
    .option("endingOffsets", json.dumps({events: {"0": 5, "1": -1}})) \
    .load()
got = df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)", "partition", "offset").collect()
result("batch_read", sorted([r.key, r.value, r.partition, r.offset] for r in got))

# Subscribe to 1 topic (streaming) into the memory sink, and to the console.
df = spark \
    .readStream \
    .format("kafka") \
    .option("kafka.bootstrap.servers", bootstrap) \
    .option("subscribe", events) \
    .option("startingOffsets", "earliest") \
    .load()
query = df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)") \
    .writeStream \
    .format("memory") \
    .queryName("guide_events") \
    .start()
query.processAllAvailable()
query.stop()
result("stream_memory", sorted(r.value for r in spark.sql("SELECT value FROM guide_events").collect()))
query = df.groupBy("partition").count() \
    .writeStream \
    .outputMode("complete") \
    .format("console") \
    .start()
query.processAllAvailable()
query.stop()

# Write key-value data from a DataFrame to a specific Kafka topic specified in an option (streaming).
ds = df \
    .selectExpr("CAST(key AS STRING)", "UPPER(CAST(value AS STRING)) AS value") \
    .writeStream \
    .format("kafka") \
    .option("kafka.bootstrap.servers", bootstrap) \
    .option("topic", upper) \
    .option("checkpointLocation", f"{checkpoints}/upper") \
    .start()
ds.processAllAvailable()
ds.stop()
result("stream_write", ds.lastProgress["numInputRows"] if ds.lastProgress else None)


# foreachBatch: each micro-batch written with the batch Kafka sink.
def write_batch(batch_df, batch_id):
    batch_df.selectExpr("key", f"CONCAT(CAST(value AS STRING), '-', CAST({batch_id} AS STRING)) AS value") \
        .write \
        .format("kafka") \
        .option("kafka.bootstrap.servers", bootstrap) \
        .option("topic", fb) \
        .save()


q = df.writeStream.foreachBatch(write_batch).option("checkpointLocation", f"{checkpoints}/fb").start()
q.processAllAvailable()
q.stop()

# The save modes Spark's Kafka sink refuses.
for mode in ("overwrite", "ignore"):
    try:
        spark.createDataFrame([("x",)], "value string").write.format("kafka") \
            .option("kafka.bootstrap.servers", bootstrap).option("topic", fb).mode(mode).save()
        result(f"mode_{mode}", "written")
    except AnalysisException as e:
        result(f"mode_{mode}", str(e))
spark.stop()
