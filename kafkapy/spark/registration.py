"""Registering kafkapy's data sources in a SparkSession ("kafkapy" and "kafkapy-log-segments").

A source the session already has (PySpark finds "kafkapy" through the installed `pyspark_kafkapy`
module) is not registered again: Spark logs a WARN line for that. The log-segments source pushes filters
down, which Spark allows only with PUSHDOWN_CONF set; it is turned on unless the application's
configuration sets it. Thread-safety: call from the driver's thread that owns the session.
"""

from __future__ import annotations

from typing import Any

PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def _registered(spark: Any, name: str) -> bool:
    """Whether the session already knows a data source `name` (e.g. found through pyspark_kafkapy)."""
    try:
        return bool(spark._jsparkSession.sessionState().dataSourceManager().dataSourceExists(name))
    except Exception:  # not a classic session: registering again is harmless
        return False


def register(spark: Any) -> None:
    """Register the kafkapy data sources in `spark` (a SparkSession): "kafkapy" and
    "kafkapy-log-segments" (whose filter push-down needs PUSHDOWN_CONF, turned on unless set)."""
    from kafkapy.spark.data_source import KafkaDataSource
    from kafkapy.spark.log_segments import LogSegmentsDataSource

    for source in (KafkaDataSource, LogSegmentsDataSource):
        if not _registered(spark, source.name()):  # re-registering logs a WARN line
            spark.dataSource.register(source)
    if spark.conf.get(PUSHDOWN_CONF, None) in (None, "false") and not spark.sparkContext.getConf().contains(
        PUSHDOWN_CONF
    ):
        spark.conf.set(PUSHDOWN_CONF, "true")
