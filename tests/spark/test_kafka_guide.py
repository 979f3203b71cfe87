"""Pipelines shaped as in Spark's Kafka integration guide (tests/spark/pipelines/kafka_guide.py: format("kafka"),
no save mode) run unedited through ONE `kafkapy spark-submit`: batch write with topic/key/value columns,
batch read with JSON offsets, streaming read to the memory and console sinks, streaming write with a
checkpoint, foreachBatch with the batch sink, and Spark's refusal of Overwrite / Ignore. Every output is
read back with confluent-kafka and compared with what was written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from spark_helpers import consume_all, create_topic

REPO = Path(__file__).resolve().parents[1].parent
PIPELINE = Path(__file__).resolve().parent / "pipelines" / "kafka_guide.py"


def test_guide_pipelines_run_unchanged_under_kafkapy_spark_submit(kafkapy_broker, tmp_path) -> None:
    bootstrap = kafkapy_broker.bootstrap
    create_topic(bootstrap, "guide-events", 2)
    create_topic(bootstrap, "guide-upper", 1)
    create_topic(bootstrap, "guide-fb", 1)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run(
        [sys.executable, "-m", "kafkapy.cli.main", "spark-submit", "--master", "local[2]", "--driver-memory", "512m",
         "--conf", "spark.sql.shuffle.partitions=2", "--conf", "spark.ui.enabled=false",
         str(PIPELINE), bootstrap, "guide", str(tmp_path / "cp")],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            _, name, value = line.split(" ", 2)
            results[name] = json.loads(value)

    # The batch write placed each keyed record by murmur2 (read back with librdkafka).
    written = consume_all(bootstrap, "guide-events", 2, 40)
    assert sorted(m.value() for m in written) == sorted(b"v%d" % i for i in range(40))
    assert all(m.key() == b"k" + m.value()[1:] for m in written)
    by_tp = {(m.partition(), m.offset()): m for m in written}
    # startingOffsets {"0": 2, "1": -2}, endingOffsets {"0": 5, "1": -1}
    expected = sorted([m.key().decode(), m.value().decode(), p, o] for (p, o), m in by_tp.items()
                      if (p == 0 and 2 <= o < 5) or p == 1)
    assert results["batch_read"] == expected
    assert results["stream_memory"] == sorted(f"v{i}" for i in range(40))
    assert "Batch: 0" in done.stdout and "|partition|count|" in done.stdout

    upper = consume_all(bootstrap, "guide-upper", 1, 40)
    assert sorted((m.key(), m.value()) for m in upper) == sorted((b"k%d" % i, b"V%d" % i) for i in range(40))
    fb = consume_all(bootstrap, "guide-fb", 1, 40)
    assert sorted((m.key(), m.value()) for m in fb) == sorted((b"k%d" % i, b"v%d-0" % i) for i in range(40))

    for mode, shown in (("overwrite", "Overwrite"), ("ignore", "Ignore")):
        assert results[f"mode_{mode}"] == (
            f"Save mode {shown} not allowed for Kafka. Allowed save modes are Append and ErrorIfExists (default).")
    assert "Traceback" not in done.stderr
