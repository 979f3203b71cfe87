"""producer-perf-test --print-metrics prints the Java producer's whole metric list (issue 17 item 9): the names
(group, name, tags) are compared with those Apache Kafka's own KafkaProducer (kafka-clients 3.9.1, the test
extra's jars; javac from the Makefile's test-deps) reports after sending to the same kafkapy broker."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkapy.cli.main import app

HERE = Path(__file__).resolve().parent
JARS = ("kafka-clients", "slf4j-api", "lz4-java", "snappy-java", "zstd-jni")
CLIENT_ID = "perf-producer-client"


@pytest.fixture(scope="module")
def java_classpath(compile_java) -> str:
    return compile_java(HERE / "ProducerMetricNames.java", JARS)


def test_print_metrics_names_are_the_java_producers(kafkapy_broker, java_classpath) -> None:
    bs = kafkapy_broker.bootstrap
    created = CliRunner().invoke(app, ["topics", "--bootstrap-server", bs, "--create", "--topic", "perf-metrics"])
    assert created.exit_code == 0, created.stderr
    java = subprocess.run(["java", "-cp", java_classpath, "ProducerMetricNames", bs, "perf-metrics"],
                          capture_output=True, text=True, timeout=120)
    assert java.returncode == 0, java.stderr
    java_metrics = dict(line.split(" = ", 1) for line in java.stdout.splitlines() if " = " in line)

    r = CliRunner().invoke(app, ["producer-perf-test", "--topic", "perf-metrics", "--num-records", "10",
                                 "--record-size", "10", "--throughput", "-1", "--producer-props",
                                 f"bootstrap.servers={bs}", "--print-metrics"], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    table = lines[lines.index(next(line for line in lines if line.startswith("Metric Name"))) + 1:]
    ours = {name.rstrip(): value.strip() for name, value in (line.split(" : ", 1) for line in table)}

    assert len(java_metrics) > 100
    assert set(ours) == set(java_metrics)
    tags = "{client-id=" + CLIENT_ID + "}"
    for name in ("record-send-total", "record-error-total"):
        assert float(ours[f"producer-metrics:{name}:{tags}"]) == float(java_metrics[f"producer-metrics:{name}:{tags}"])
    assert ours[f"producer-topic-metrics:record-send-total:{{client-id={CLIENT_ID}, topic=perf-metrics}}"] == "10.000"
    assert ours[f"kafka-metrics-count:count:{tags}"] == f"{len(ours) - 1}.000"
