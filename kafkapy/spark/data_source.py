"""`KafkaDataSource`: the PySpark Python data source named "kafkapy" (Spark's Kafka source and sink).

`spark.read/readStream.format("kafkapy").option("kafka.bootstrap.servers", ...).option("subscribe", ...)`
and `df.write/writeStream.format("kafkapy")` take Spark's Kafka options (kafkapy.spark.options) and
produce/consume Spark's Kafka schema (kafkapy.spark.schema). Spark refuses to register a Python data
source named "kafka" (its own JVM source holds the name), so "kafkapy" is the one word a pipeline
written for Spark's Kafka integration changes.

Options are validated when the reader or writer is created (on the driver) so a bad option fails the
query before any task runs. Thread-safety: Spark creates one instance per query plan.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import DataSource

from kafkapy.spark.errors import spark_facing
from kafkapy.spark.options import parse_sink_options, parse_source_options
from kafkapy.spark.schema import DATA_SOURCE_NAME, schema_ddl


def _include_headers(options: Any) -> bool:
    return str(options.get("includeHeaders", options.get("includeheaders", "false"))).strip().lower() == "true"


class KafkaDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return DATA_SOURCE_NAME

    def schema(self) -> str:
        return schema_ddl(_include_headers(self.options))

    @spark_facing
    def reader(self, schema: Any) -> Any:
        from kafkapy.spark.batch_reader import KafkaBatchReader

        return KafkaBatchReader(parse_source_options(self.options, streaming=False), schema)

    @spark_facing
    def streamReader(self, schema: Any) -> Any:
        from kafkapy.spark.stream_reader import KafkaStreamReader

        return KafkaStreamReader(parse_source_options(self.options, streaming=True), schema)

    @spark_facing
    def writer(self, schema: Any, overwrite: bool) -> Any:
        from kafkapy.spark.writer import KafkaBatchWriter

        return KafkaBatchWriter(parse_sink_options(self.options), schema)

    @spark_facing
    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        from kafkapy.spark.writer import KafkaStreamWriter

        return KafkaStreamWriter(parse_sink_options(self.options), schema)
