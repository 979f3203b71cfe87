"""With Spark's JVM Kafka connector on the classpath, format("kafka") is left to it and kafkapy says so in one
line; format("kafkapy") still reads through kafkapy's source.

The connector's jar (spark-sql-kafka-0-10) is not shipped by any package registry these tests can install
from, so the JVM side is a STAND-IN compiled here (tests/spark/jvm_standin, javac from the Makefile's
test-deps, against the pip-installed pyspark's jars): a class named as the real connector,
org.apache.spark.sql.kafka010.KafkaSourceProvider, registering the short name "kafka" through
META-INF/services/org.apache.spark.sql.sources.DataSourceRegister, whose relation fails with a marker
message. It stands for the real jar only in what Spark's lookup and kafkapy's detection see; it reads
nothing. Two runs of tests/spark/pipelines/jvm_connector.py, each its own driver JVM (the jar must be on
the classpath the JVM starts with): under `kafkapy spark-submit --jars`, and as plain python building its
own session with spark.jars and calling kafkapy.spark.install(spark). Without the jar, format("kafka") is
kafkapy's source (tests/spark/test_kafka_guide.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from spark_helpers import create_topic, produce

from kafkapy.spark.kafka_format import JVM_NOTICE, JVM_PROVIDER

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PIPELINE = HERE / "pipelines" / "jvm_connector.py"
SOURCE = HERE / "jvm_standin" / "org" / "apache" / "spark" / "sql" / "kafka010" / "KafkaSourceProvider.java"
MARKER = "kafkapy test stand-in for Spark's JVM KafkaSourceProvider"
TOPIC = "jvm-connector"


@pytest.fixture(scope="module")
def stand_in_jar(tmp_path_factory: pytest.TempPathFactory) -> str:
    from kafkapy.spark.submit import pyspark_home

    out = tmp_path_factory.mktemp("stand-in")
    classes = out / "classes"
    compiled = subprocess.run(["javac", "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC",  # a short compile: no C2
                               "-d", str(classes), "-cp", str(pyspark_home() / "jars" / "*"), str(SOURCE)],
                              capture_output=True, text=True, timeout=120)
    assert compiled.returncode == 0, compiled.stderr
    jar = out / "kafka-connector-stand-in.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        z.writestr("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister", JVM_PROVIDER + "\n")
        for f in classes.rglob("*.class"):
            z.write(f, f.relative_to(classes).as_posix())
    return str(jar)


@pytest.fixture(scope="module")
def topic_values(kafkapy_broker) -> list[list]:
    create_topic(kafkapy_broker.bootstrap, TOPIC, 1)
    produce(kafkapy_broker.bootstrap, TOPIC, [{"value": b"r%d" % i, "partition": 0} for i in range(3)])
    return [[f"r{i}", i] for i in range(3)]


def _results(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr[-4000:]
    return {name: json.loads(value) for _, name, value in
            (line.split(" ", 2) for line in done.stdout.splitlines() if line.startswith("RESULT "))}


def _env() -> dict[str, str]:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _check(done: subprocess.CompletedProcess, values: list[list]) -> None:
    results = _results(done)
    assert results["kafka_format"].startswith(f'{MARKER} resolved format("kafka"), subscribe={TOPIC}'), results
    assert results["kafkapy_format"] == values
    # One line, on the driver's stderr (which spark-submit's PythonRunner merges into its stdout).
    assert (done.stdout + done.stderr).count(JVM_NOTICE) == 1, (done.stdout, done.stderr[-4000:])


def test_spark_submit_leaves_kafka_to_the_jvm_connector(kafkapy_broker, stand_in_jar, topic_values, tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kafkapy.cli.main", "spark-submit", "--master", "local[1]", "--driver-memory", "512m",
         "--conf", "spark.ui.enabled=false", "--jars", stand_in_jar, str(PIPELINE), kafkapy_broker.bootstrap, TOPIC],
        capture_output=True, text=True, timeout=300, env=_env(), cwd=tmp_path)
    _check(done, topic_values)


def test_install_in_a_user_session_leaves_kafka_to_the_jvm_connector(kafkapy_broker, stand_in_jar, topic_values,
                                                                       tmp_path) -> None:
    done = subprocess.run([sys.executable, str(PIPELINE), kafkapy_broker.bootstrap, TOPIC, stand_in_jar],
                          capture_output=True, text=True, timeout=300, env=_env(), cwd=tmp_path)
    _check(done, topic_values)
