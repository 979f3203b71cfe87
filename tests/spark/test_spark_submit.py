"""`kafkapy spark-submit`: the clickstream batch example end to end on a standalone master and worker
started from the pip-installed pyspark, against a broker started here (output read back with
confluent-kafka, checked against counts computed from the generator); the one-line messages without
pyspark or Java; the default master and environment."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from spark_helpers import consume_all

from kafkapy.cli import spark_submit

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
sys.path.insert(0, str(EXAMPLES / "clickstream"))
from clicks import click_events, produce_clicks  # noqa: E402


def submit_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def spark_submit_run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "kafkapy.cli.main", "spark-submit", "--driver-memory", "512m", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=submit_env(), cwd=REPO)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_clickstream_batch_example_on_a_standalone_master_and_worker(kafkapy_broker, tmp_path) -> None:
    """The clickstream batch example through `kafkapy spark-submit --master spark://...`, on a master and a
    worker started from the pip-installed pyspark; its output topic checked exactly against the counts
    computed from the generator's events."""
    from kafkapy.spark.submit import pyspark_home

    bootstrap = kafkapy_broker.bootstrap
    events = click_events(3000, seed=3)
    produce_clicks(bootstrap, "clicks-e2e", events, partitions=3)
    spark_class = str(pyspark_home() / "bin" / "spark-class")
    port, master_ui, worker_ui = _free_port(), _free_port(), _free_port()
    env = submit_env()
    env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m", PYSPARK_PYTHON=sys.executable,
               SPARK_LOG_DIR=str(tmp_path / "spark-logs"), SPARK_WORKER_DIR=str(tmp_path / "work"))
    master_log, worker_log = tmp_path / "master.out", tmp_path / "worker.out"
    procs: list[subprocess.Popen] = []
    try:
        with open(master_log, "wb") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                 "--webui-port", str(master_ui)], stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True))
        with open(worker_log, "wb") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host",
                 "127.0.0.1", "--webui-port", str(worker_ui), "--cores", "2", "--memory", "1g", "--work-dir",
                 str(tmp_path / "work")], stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True))
        deadline = time.monotonic() + 120
        while "Successfully registered with master" not in worker_log.read_text(errors="replace"):
            assert time.monotonic() < deadline, worker_log.read_text(errors="replace")[-3000:]
            assert all(p.poll() is None for p in procs), master_log.read_text(errors="replace")[-3000:]
            time.sleep(0.5)
        done = spark_submit_run("--master", f"spark://127.0.0.1:{port}", "--executor-memory", "512m",
                                "--conf", "spark.sql.shuffle.partitions=2",
                                str(EXAMPLES / "clickstream" / "clickstream_batch.py"),
                                "--bootstrap-server", bootstrap, "--input", "clicks-e2e", "--output", "counts-e2e")
        assert done.returncode == 0, done.stderr[-3000:]
        expected = Counter((ts - ts % 60_000, page) for ts, _, page in events)
        assert done.stdout.strip().splitlines()[-1] == f"wrote {len(expected)} page counts to counts-e2e"
        assert " INFO " not in done.stderr  # quiet by default
        # The job ran on the standalone worker (an application directory under its work dir), not locally.
        assert any(re.match(r"app-", p.name) for p in (tmp_path / "work").iterdir())
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
    got = consume_all(bootstrap, "counts-e2e", 1, len(expected))
    records = {}
    for m in got:
        doc = json.loads(m.value())
        assert m.key() == doc["page"].encode()
        assert doc["windowEnd"] - doc["windowStart"] == 60_000
        records[(doc["windowStart"], doc["page"])] = doc["count"]
    assert records == dict(expected)


def test_without_pyspark_says_how_to_install(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)
    assert spark_submit.main(["pipeline.py"]) == 1
    assert capsys.readouterr().err == (
        "kafkapy spark-submit: pyspark is not installed; install kafkapy's Spark extra: pip install 'kafkapy[spark]'\n"
    )


def test_without_java_says_so(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert spark_submit.main(["pipeline.py"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kafkapy spark-submit: Spark needs Java") and err.count("\n") == 1


def test_no_pipeline_is_a_usage_error(capsys) -> None:
    assert spark_submit.main([]) == 2
    assert capsys.readouterr().err.startswith("kafkapy spark-submit: error: a pipeline (.py file) is required")


def test_default_master_and_environment() -> None:
    from kafkapy.spark.submit import build_command

    runner = str(REPO / "kafkapy" / "spark" / "pipeline_runner.py")
    pushdown = "spark.sql.python.filterPushdown.enabled=true"
    cmd = build_command(["--conf", "a=b", "p.py", "x"], {"PATH": os.environ["PATH"]})
    assert cmd.argv[1:] == ["--master", "local[*]", "--conf", "a=b", "--name", "p.py", "--conf", pushdown, runner,
                            "p.py", "x"]
    assert cmd.env["PYSPARK_PYTHON"] == sys.executable and cmd.env["SPARK_LOCAL_IP"] == "127.0.0.1"
    assert cmd.quiet
    cmd = build_command(["--master=spark://h:7077", "--verbose", "p.py"], {"PATH": os.environ["PATH"]})
    assert cmd.argv[1:] == ["--master=spark://h:7077", "--verbose", "--name", "p.py", "--conf", pushdown, runner,
                            "p.py"]
    assert not cmd.quiet
    cmd = build_command(["--name", "job", "--py-files", "dep.py", "dir/p.py"], {"PATH": os.environ["PATH"]})
    assert cmd.argv[1:] == ["--master", "local[*]", "--name", "job", "--py-files", "dep.py", "--conf", pushdown,
                            runner, "dir/p.py"]


