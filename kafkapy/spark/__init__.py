"""kafkapy's PySpark integration: the `kafkapy` data source (Spark's Kafka source and sink options and
schema over kafkapy.client) and the `kafkapy spark-submit` wrapper.

The data source registers itself in every Spark session through the top-level `pyspark_kafkapy` module
(PySpark's discovery of installed `pyspark_*` modules); `register(spark)` does it explicitly, e.g. for
an editable checkout that is not on the workers' PYTHONPATH. `install(spark)` also maps
format("kafka") to it and gives its batch writes Spark's Kafka save modes (what `kafkapy spark-submit`
does before a pipeline runs; spark/kafka_format.py). Importing this package does not import
pyspark (the spark-submit wrapper must run, and explain, without it).
"""

from __future__ import annotations

from typing import Any

from kafkapy.spark.schema import DATA_SOURCE_NAME

__all__ = ["register", "install", "DATA_SOURCE_NAME"]


def register(spark: Any) -> None:
    """Register the kafkapy data sources in `spark` (a SparkSession): "kafkapy" and "kafkapy-log-segments"
    (spark/registration.py)."""
    from kafkapy.spark.registration import register as _register

    _register(spark)


def install(spark: Any = None) -> None:
    """Run pipelines written for Spark's Kafka connector unchanged: format("kafka") is kafkapy's source
    (unless the JVM connector is on the classpath) and its batch writes take Spark's Kafka save modes."""
    from kafkapy.spark.kafka_format import install as _install

    _install(spark)
