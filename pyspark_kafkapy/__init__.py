"""PySpark's discovery hook for the kafkapy data source.

PySpark (4.x) registers, in every session, the `DefaultSource` of each installed top-level module whose
name starts with `pyspark_` (pyspark/sql/worker/lookup_data_sources.py walks `pkgutil.iter_modules()`
in a Python worker); it has no entry-point group for data sources. Installing kafkapy installs this
module, so `spark.read.format("kafkapy")` works without any registration call. (An editable install
is not on `iter_modules()`'s path: there, put the checkout on PYTHONPATH, use `kafkapy spark-submit`,
or call `kafkapy.spark.register(spark)`.)
"""

from kafkapy.spark.data_source import KafkaDataSource as DefaultSource

__all__ = ["DefaultSource"]
