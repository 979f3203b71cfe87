"""A pipeline run by tests/spark/test_jvm_connector.py with a stand-in for Spark's JVM Kafka connector on the
classpath: format("kafka") must reach the JVM class (whose relation fails with its marker), format("kafkapy")
must still read through kafkapy's source.

usage: jvm_connector.py BOOTSTRAP TOPIC [STAND_IN_JAR]
With STAND_IN_JAR (run by plain python, not spark-submit) the pipeline builds its own local session with
spark.jars set and calls kafkapy.spark.install(spark), as a user outside spark-submit does.
Prints one `RESULT <name> <json>` line per step.
"""

import json
import sys

from pyspark.sql import SparkSession

bootstrap, topic = sys.argv[1:3]
builder = SparkSession.builder.appName("jvm-connector")
if len(sys.argv) > 3:
    builder = builder.master("local[1]").config("spark.jars", sys.argv[3]).config("spark.ui.enabled", "false")
spark = builder.getOrCreate()
if len(sys.argv) > 3:
    import kafkapy.spark

    kafkapy.spark.install(spark)


def result(name, value):
    print("RESULT", name, json.dumps(value, sort_keys=True), flush=True)


try:
    spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic).load() \
        .collect()
    result("kafka_format", "read through a Python source")
except Exception as e:  # the stand-in's relation fails; its message names it
    result("kafka_format", next((line.strip() for line in str(e).splitlines() if "stand-in" in line), str(e)))

rows = spark.read.format("kafkapy").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic).load() \
    .selectExpr("CAST(value AS STRING) AS value", "offset").orderBy("offset").collect()
result("kafkapy_format", [[r.value, r.offset] for r in rows])
spark.stop()
