"""Fixtures for Spark pipelines in local mode against an in-process kafkapy broker.

- `spark` (module scope): one SparkSession, local[2], UI off, quiet logs, Python workers running this
  interpreter with this checkout first on PYTHONPATH (so they import this kafkapy and PySpark's
  discovery of `pyspark_*` modules finds `pyspark_kafkapy`: no registration call). Stopped at teardown.
- `spark_env`: the environment a Spark process needs (SPARK_LOCAL_IP, PYSPARK_PYTHON, PYTHONPATH).
- `quick_jvms` (module scope, autouse): every Spark JVM a test starts (this session's driver, `kafkapy
  spark-submit` drivers, standalone masters and workers) runs with C1 only and the serial collector
  (SPARK_SUBMIT_OPTS / SPARK_DAEMON_JAVA_OPTS, read by Spark's launcher): the tests' jobs are short, so the
  JIT's C2 threads only take CPU from them (the guide pipelines under spark-submit: 35 s -> 21 s of CPU).
Helpers (`create_topic`, `produce`, `consume_all`) live in tests/spark/spark_helpers.py.
The broker is the module-scoped `kafkapy_broker` from tests/conftest.py (127.0.0.1, port 0): Spark's
Python workers are separate processes and connect to it over loopback.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_MISSING = [m for m in ("pyspark", "pyarrow") if importlib.util.find_spec(m) is None]
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    _MISSING.append("java (Debian: openjdk-17-jre-headless)")
if _MISSING:  # `make test` installs all of them; a checkout without them does not collect tests/spark
    collect_ignore_glob = ["test_*.py"]

REPO = str(Path(__file__).resolve().parents[2])
QUICK_JVM_FLAGS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def spark_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = REPO + (os.pathsep + path if path else "")
    return env


@pytest.fixture(scope="module", autouse=True)
def quick_jvms() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for name in ("SPARK_SUBMIT_OPTS", "SPARK_DAEMON_JAVA_OPTS"):
            mp.setenv(name, f"{os.environ.get(name, '')} {QUICK_JVM_FLAGS}".strip())
        yield


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    os.environ.update(spark_env())
    from pyspark.sql import SparkSession

    tmp = tmp_path_factory.mktemp("spark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kafkapy-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.local.dir", str(tmp / "local"))
        .config("spark.sql.warehouse.dir", str(tmp / "warehouse"))
        .config("spark.driver.extraJavaOptions", "-Dlog4j2.level=ERROR")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
