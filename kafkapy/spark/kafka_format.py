"""`install(spark)`: pipelines written for Spark's Kafka integration run unchanged on kafkapy's source.

PySpark reserves the name "kafka" for the JVM connector (spark-sql-kafka), and a Python data source
refuses the ErrorIfExists save mode that Spark's Kafka sink treats as its default. `install` patches
the driver's four builders once per process:

- `DataFrameReader.format`, `DataStreamReader.format`, `DataFrameWriter.format`,
  `DataStreamWriter.format` (and so `load(format=...)`, `save(format=...)`, `start(format=...)`, which
  call them): "kafka" becomes "kafkapy" and the data source is registered in that session, unless the
  JVM connector's `org.apache.spark.sql.kafka010.KafkaSourceProvider` loads in the session's JVM; then
  one line on stderr says so and "kafka" stays the JVM connector's.
- `DataFrameWriter.mode` / `save`: for a writer whose format is kafkapy's, the save mode follows
  Spark's KafkaSourceProvider.createRelation: ErrorIfExists (the default) and Append write (as Append,
  the mode a Python data source takes), Overwrite and Ignore raise AnalysisException with Spark's text.

`kafkapy spark-submit` installs the patches before the pipeline runs (spark/pipeline_runner.py); a user
building a session calls `kafkapy.spark.install(spark)`. Nothing here touches executors.
Thread-safety: patching is guarded by a lock and idempotent; the per-session resolution cache is a
dict written under the same lock.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from kafkapy.spark.schema import DATA_SOURCE_NAME

KAFKA = "kafka"
JVM_PROVIDER = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
JVM_NOTICE = (
    "kafkapy: Spark's JVM Kafka connector (spark-sql-kafka) is on the classpath; format(\"kafka\") is left "
    "to it (format(\"kafkapy\") selects kafkapy's source)\n"
)
_ALLOWED_MODES = {None: "append", "error": "append", "errorifexists": "append", "default": "append",
                  "append": "append"}
_REFUSED_MODES = {"overwrite": "Overwrite", "ignore": "Ignore"}

_lock = threading.Lock()
_patched = False
_sessions: dict[object, str] = {}  # session identity -> the name "kafka" resolves to in it


def install(spark: Any = None) -> None:
    """Map format("kafka") to kafkapy's source and give its batch writes Spark's Kafka save modes.
    With a session, resolve it now (register the source, or report the JVM connector)."""
    _patch()
    if spark is not None:
        _resolve(spark)


def jvm_connector_present(spark: Any) -> bool:
    """True if the session's JVM can load Spark's own Kafka connector."""
    try:
        jvm = spark.sparkContext._jvm
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(JVM_PROVIDER, False, loader)
        return True
    except Exception:  # py4j wraps ClassNotFoundException; any failure means we cannot use it
        return False


def _session_key(spark: Any) -> object:
    """The JVM session's UUID (a new session after stop() may reuse the Python object's id)."""
    try:
        return str(spark._jsparkSession.sessionUUID())
    except Exception:  # not a classic session: fall back to the Python object
        return id(spark)


def _resolve(spark: Any) -> str:
    key = _session_key(spark)
    with _lock:
        name = _sessions.get(key)
    if name is not None:
        return name
    if jvm_connector_present(spark):
        sys.stderr.write(JVM_NOTICE)
        name = KAFKA
    else:
        from kafkapy.spark.registration import register

        register(spark)
        name = DATA_SOURCE_NAME
    with _lock:
        _sessions[key] = name
    return name


def _map_format(original: Callable[..., Any]) -> Callable[..., Any]:
    def format(self: Any, source: str) -> Any:
        lowered = source.lower() if isinstance(source, str) else source
        if lowered in (KAFKA, DATA_SOURCE_NAME):
            target = _resolve(self._spark) if lowered == KAFKA else DATA_SOURCE_NAME
            self._kafkapy_sink = target == DATA_SOURCE_NAME
            source = target
        else:
            self._kafkapy_sink = False
        return original(self, source)

    format.__doc__ = original.__doc__
    return format


def save_mode_for_kafka(mode: str | None) -> str:
    """The mode a kafkapy batch write runs in; Spark's AnalysisException for Overwrite / Ignore."""
    key = None if mode is None else mode.strip().lower()
    if key in _ALLOWED_MODES:
        return _ALLOWED_MODES[key]
    from pyspark.errors import AnalysisException

    shown = _REFUSED_MODES.get(key or "", mode)
    raise AnalysisException(
        f"Save mode {shown} not allowed for Kafka. Allowed save modes are Append and ErrorIfExists (default)."
    )


def _record_mode(original: Callable[..., Any]) -> Callable[..., Any]:
    def mode(self: Any, saveMode: str | None) -> Any:
        if saveMode is not None:
            self._kafkapy_mode = saveMode
        return original(self, saveMode)

    mode.__doc__ = original.__doc__
    return mode


def _kafka_save(original: Callable[..., Any], set_mode: Callable[..., Any]) -> Callable[..., Any]:
    def save(self: Any, path: str | None = None, format: str | None = None, mode: str | None = None,
             partitionBy: Any = None, **options: Any) -> None:
        if format is not None:
            self.format(format)
        if mode is not None:
            self.mode(mode)
        if getattr(self, "_kafkapy_sink", False):
            set_mode(self, save_mode_for_kafka(getattr(self, "_kafkapy_mode", None)))
        return original(self, path, None, None, partitionBy, **options)

    save.__doc__ = original.__doc__
    return save


def _patch() -> None:
    global _patched
    with _lock:
        if _patched:
            return
        from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter
        from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

        for cls in (DataFrameReader, DataStreamReader, DataFrameWriter, DataStreamWriter):
            cls.format = _map_format(cls.format)  # type: ignore[method-assign]
        original_mode = DataFrameWriter.mode
        DataFrameWriter.mode = _record_mode(original_mode)  # type: ignore[method-assign]
        DataFrameWriter.save = _kafka_save(DataFrameWriter.save, original_mode)  # type: ignore[method-assign]
        _patched = True
