"""The schema of Spark's Kafka source, as a Spark DDL string and as the Arrow schema Spark expects.

Columns (KafkaRecordToRowConverter): key binary, value binary, topic string, partition int, offset
long, timestamp timestamp, timestampType int, and headers array<struct<key: string, value: binary>>
when includeHeaders=true. Readers must yield Arrow batches equal to `arrow_schema(...)` (Spark checks
the Arrow schema before loading a batch). Pure values; thread-safe.
"""

from __future__ import annotations

from typing import Any

DATA_SOURCE_NAME = "kafkapy"  # the short name Spark knows the source by (format("kafkapy"))

BASE_DDL = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
    "timestampType int"
)
HEADERS_DDL = "headers array<struct<key: string, value: binary>>"


def schema_ddl(include_headers: bool) -> str:
    return f"{BASE_DDL}, {HEADERS_DDL}" if include_headers else BASE_DDL


def struct_type(include_headers: bool) -> Any:
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
        fields.append(StructField("headers", ArrayType(header)))
    return StructType(fields)


def arrow_schema(spark_schema: Any) -> Any:
    """The Arrow schema Spark checks a Python data source's batches against (UTC timestamps)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(spark_schema, timezone="UTC")
