"""kafkapy.testing: the README's pytest example run as written (in a pytest subprocess, with the plugin loaded
the way users get it: the `pytest11` entry point), and the KafkaBroker context manager with kafka-python.

The users' test files (the README's, and one checking the fixture's teardown) run in ONE pytest subprocess
per module (`users_run`: one interpreter and plugin start-up instead of one per file); each test checks its
own file's outcomes from its JUnit report."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from kafkapy.testing import KafkaBroker

ROOT = Path(__file__).resolve().parents[2]
README_MARKER = "<!-- test: tests/integration/test_pytest_plugin.py runs this block -->"


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    after = text.split(README_MARKER, 1)[1]
    match = re.match(r"\s*```python\n(.*?)```", after, re.S)
    assert match, "README's plugin example block is missing"
    return match.group(1)


def test_pyproject_registers_the_plugin() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"kafkapy": "kafkapy.testing.pytest_plugin"}


DIRS_TEST = """
    import os, socket
    seen = {}

    def test_a(kafka_broker):
        seen["dir"], seen["port"] = kafka_broker.log_dir, kafka_broker.port
        assert os.path.isdir(seen["dir"])
        socket.create_connection(("127.0.0.1", seen["port"]), 5).close()

    def test_b():
        assert not os.path.exists(seen["dir"])
        try:
            socket.create_connection(("127.0.0.1", seen["port"]), 2).close()
        except OSError:
            return
        raise AssertionError("broker still listening")
"""


@pytest.fixture(scope="module")
def users_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, str]], str]:
    """Both users' files through one `python -m pytest` in an empty directory: ({file: {test: outcome}}, output)."""
    root = tmp_path_factory.mktemp("plugin-users")
    (root / "test_readme.py").write_text(readme_example())
    (root / "test_dirs.py").write_text(textwrap.dedent(DIRS_TEST))
    report = root.parent / f"{root.name}-report.xml"
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
            f"--basetemp={root.parent / (root.name + '-basetemp')}", f"--rootdir={root}", "test_readme.py", "test_dirs.py"]
    if not any(ep.value == "kafkapy.testing.pytest_plugin" for ep in entry_points(group="pytest11")):
        args += ["-p", "kafkapy.testing.pytest_plugin"]  # editable install not refreshed yet
    done = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=240)
    if not report.exists():
        pytest.fail(f"the users' pytest run wrote no report (rc {done.returncode}):\n{done.stdout}{done.stderr}")
    outcomes: dict[str, dict[str, str]] = {}
    for case in ET.parse(report).iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes.setdefault(case.get("classname", ""), {})[case.get("name", "")] = kinds[0] if kinds else "passed"
    return outcomes, done.stdout + done.stderr


def test_readme_example_runs(users_run: tuple[dict[str, dict[str, str]], str]) -> None:
    assert "def test_roundtrip(kafka_broker):" in readme_example()
    outcomes, output = users_run
    assert outcomes.get("test_readme") == {"test_roundtrip": "passed"}, output


def test_fixture_stops_broker_and_removes_log_dir(users_run: tuple[dict[str, dict[str, str]], str]) -> None:
    outcomes, output = users_run
    assert outcomes.get("test_dirs") == {"test_a": "passed", "test_b": "passed"}, output


def test_context_manager_with_kafka_python() -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    with KafkaBroker(overrides={"num.partitions": 2}) as broker:
        broker.create_topic("events", partitions=2, config={"cleanup.policy": "delete"})
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
        for i in range(5):
            producer.send("events", key=b"k%d" % i, value=b"v%d" % i, partition=i % 2)
        producer.flush(10)
        producer.close()
        consumer = KafkaConsumer("events", bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                 consumer_timeout_ms=5000)
        got = []
        for m in consumer:  # stop at the fifth record rather than after consumer_timeout_ms of silence
            got.append((m.partition, m.offset, m.key, m.value))
            if len(got) == 5:
                break
        got.sort()
        ends = consumer.end_offsets([TopicPartition("events", 0), TopicPartition("events", 1)])
        consumer.close()
        log_dir = broker.log_dir
    assert got == [(0, 0, b"k0", b"v0"), (0, 1, b"k2", b"v2"), (0, 2, b"k4", b"v4"),
                   (1, 0, b"k1", b"v1"), (1, 1, b"k3", b"v3")]
    assert {tp.partition: offset for tp, offset in ends.items()} == {0: 3, 1: 2}  # and nothing after them
    assert log_dir is not None and not Path(log_dir).exists()
