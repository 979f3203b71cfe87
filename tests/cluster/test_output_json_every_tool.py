"""`--output json` on every tool of the TOOLS table (issue 17 item 11): each runs a representative command and
its stdout is valid JSON (one document, or one object per line for the streaming tools). Left out: spark-submit
(its stdout is the Spark pipeline's own, README says so) and zookeeper-security-migration (it needs a SASL
ZooKeeper; tests/cluster/test_zookeeper_security.py runs its --output json).

One in-process broker serves everything: a PLAINTEXT listener (AclAuthorizer, everyone allowed when no ACL
matches) and a SASL_PLAINTEXT/PLAIN listener for delegation tokens, a Prometheus endpoint for jmx; the
ZooKeeper tools use the cluster fixtures' ZooKeeper. server-start runs with -daemon and is stopped with
server-stop --node-id of its own (server-stop never signals anything else)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkapy.cli.main import TOOLS, app

NOT_JSON = {"spark-submit"}  # documented in README: its stdout is the Spark pipeline's
# needs a SASL-enabled ZooKeeper (Kafka's precondition); its --output json is run by test_zookeeper_security.py
ELSEWHERE = {"zookeeper-security-migration"}
NODE_ID = 90417  # server-start's broker; server-stop --node-id never reaches another broker
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw" '
        'user_admin="admin-pw";')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    server = KafkaServer(KafkaConfig.from_properties(None, {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "log.dirs": str(tmp_path_factory.mktemp("json-data")), "num.network.threads": "1", "num.io.threads": "2",
        "sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "delegation.token.secret.key": "json-secret", "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found": "true", "super.users": "User:admin",
        "prometheus.listener": "http://127.0.0.1:0", "group.initial.rebalance.delay.ms": "0"}))
    server.startup()
    try:
        yield server
    finally:
        server.shutdown()


def run(*argv: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(argv), input=stdin, env=env, catch_exceptions=False, prog_name="kafkapy")
    return r.exit_code, r.stdout_bytes.decode(), r.stderr_bytes.decode(errors="replace")


def run_until_signal(argv: list[str], wait_s: float, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "kafkapy.cli.main", *argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    try:
        time.sleep(wait_s)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        return proc.returncode, out.decode(), err.decode(errors="replace")
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def json_values(text: str) -> list[Any]:
    """One JSON document, or one per line; fails the test when stdout is not JSON."""
    assert text.strip(), "nothing on stdout"
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_every_tool_prints_json(broker, zookeeper, tmp_path: Path) -> None:
    b = f"127.0.0.1:{broker.bound_port('PLAINTEXT')}"
    sasl = tmp_path / "admin.properties"
    sasl.write_text(f"bootstrap.servers=127.0.0.1:{broker.bound_port('SASL_PLAINTEXT')}\n"
                    "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username=admin\n"
                    "sasl.password=admin-pw\n")
    rc, _, err = run("topics", "--bootstrap-server", b, "--create", "--topic", "js", "--partitions", "1")
    assert rc == 0, err
    rc, _, err = run("console-producer", "--bootstrap-server", b, "--topic", "js", stdin=b"a\nb\nc\n")
    assert rc == 0, err
    segment = next(Path(broker.config.log_dirs[0]).glob("js-0/*.log"))
    offsets = tmp_path / "offsets.json"
    offsets.write_text('{"partitions": [{"topic": "js", "partition": 0, "offset": 1}], "version": 1}')
    zk_props = tmp_path / "zookeeper.properties"
    zk_props.write_text(f"dataDir={tmp_path / 'zk-data'}\nclientPort={free_port()}\nclientPortAddress=127.0.0.1\n"
                        "admin.enableServer=false\n")
    run_env = {"KAFKAPY_RUN_DIR": str(tmp_path / "run"), "LOG_DIR": str(tmp_path / "logs")}
    metrics = f"http://127.0.0.1:{broker.broker_metrics.endpoint.port}"
    mm_consumer = tmp_path / "mm-consumer.properties"
    mm_consumer.write_text(f"bootstrap.servers={b}\ngroup.id=json-mm\n")
    mm_producer = tmp_path / "mm-producer.properties"
    mm_producer.write_text(f"bootstrap.servers={b}\n")
    server_argv = ["--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}", "--override",
                   f"log.dirs={tmp_path / 'daemon-data'}", "--override", f"broker.id={NODE_ID}",
                   "--override", f"node.id={NODE_ID}"]

    commands: dict[str, list[str]] = {
        "server-start": ["server-start", "-daemon", *server_argv],
        "server-stop": ["server-stop", "--node-id", str(NODE_ID), "--wait"],
        "topics": ["topics", "--bootstrap-server", b, "--describe", "--topic", "js"],
        "configs": ["configs", "--bootstrap-server", b, "--describe", "--entity-type", "topics", "--entity-name", "js"],
        "console-producer": ["console-producer", "--bootstrap-server", b, "--topic", "js"],
        "console-consumer": ["console-consumer", "--bootstrap-server", b, "--topic", "js", "--from-beginning",
                             "--max-messages", "2"],
        "consumer-groups": ["consumer-groups", "--bootstrap-server", b, "--list"],
        "reassign-partitions": ["reassign-partitions", "--bootstrap-server", b, "--list"],
        "leader-election": ["leader-election", "--bootstrap-server", b, "--election-type", "preferred",
                            "--all-topic-partitions"],
        "preferred-replica-election": ["preferred-replica-election", "--bootstrap-server", b],
        "producer-perf-test": ["producer-perf-test", "--topic", "js", "--num-records", "5", "--record-size", "10",
                               "--throughput", "-1", "--producer-props", f"bootstrap.servers={b}"],
        "consumer-perf-test": ["consumer-perf-test", "--topic", "js", "--messages", "3", "--bootstrap-server", b],
        "dump-log": ["dump-log", "--files", str(segment), "--print-data-log"],
        "log-dirs": ["log-dirs", "--bootstrap-server", b, "--describe", "--topic-list", "js"],
        "delete-records": ["delete-records", "--bootstrap-server", b, "--offset-json-file", str(offsets)],
        "get-offsets": ["get-offsets", "--bootstrap-server", b, "--topic", "js"],
        "acls": ["acls", "--bootstrap-server", b, "--list"],
        "delegation-tokens": ["delegation-tokens", "--bootstrap-server",
                              f"127.0.0.1:{broker.bound_port('SASL_PLAINTEXT')}", "--command-config", str(sasl),
                              "--describe"],
        "transactions": ["transactions", "--bootstrap-server", b, "list"],
        "broker-api-versions": ["broker-api-versions", "--bootstrap-server", b],
        "verifiable-producer": ["verifiable-producer", "--bootstrap-server", b, "--topic", "js", "--max-messages", "2"],
        "verifiable-consumer": ["verifiable-consumer", "--bootstrap-server", b, "--topic", "js", "--group-id",
                                "json-vc", "--max-messages", "2"],
        "zookeeper-shell": ["zookeeper-shell", zookeeper.connect, "ls", "/"],
        "zookeeper-server-start": ["zookeeper-server-start", "-daemon", str(zk_props)],
        "zookeeper-server-stop": ["zookeeper-server-stop"],
        "jmx": ["jmx", "--jmx-url", metrics, "--object-name", "kafka.server:type=BrokerTopicMetrics,*", "--one-time"],
        "e2e-latency": ["e2e-latency", b, "js", "3", "1", "100"],
        "cluster": ["cluster", "cluster-id", "--bootstrap-server", b],
        "top": ["top", "--bootstrap-server", b, "--once"],
        "features": ["features", "--bootstrap-server", b, "describe"],
        "streams-application-reset": ["streams-application-reset", "--bootstrap-server", b, "--application-id",
                                      "json-app", "--dry-run"],
        "run-class": ["run-class", "kafka.tools.GetOffsetShell", "--bootstrap-server", b, "--topic", "js"],
    }
    long_running = {
        "replica-verification": ["replica-verification", "--broker-list", b, "--report-interval-ms", "200"],
        "mirror-maker": ["mirror-maker", "--consumer.config", str(mm_consumer), "--producer.config",
                         str(mm_producer), "--include", "js-mirror-none"],
    }
    assert set(commands) | set(long_running) | NOT_JSON | ELSEWHERE == set(TOOLS)

    failures = {}
    for tool, argv in commands.items():
        env = run_env if tool.startswith(("server-", "zookeeper-server-")) else None
        rc, out, err = run(*argv, "--output", "json", stdin=b"d\n", env=env)
        try:
            values = json_values(out)
        except (AssertionError, ValueError) as e:
            failures[tool] = f"rc={rc} {e}: stdout={out[:200]!r} stderr={err[:300]!r}"
            continue
        if rc != 0:
            failures[tool] = f"rc={rc} stderr={err[:300]!r}"
        assert values
    for tool, argv in long_running.items():
        rc, out, err = run_until_signal([*argv, "--output", "json"], 2.5)
        try:
            json_values(out)
        except (AssertionError, ValueError) as e:
            failures[tool] = f"rc={rc} {e}: stdout={out[:200]!r} stderr={err[:300]!r}"
    assert not failures, json.dumps(failures, indent=1)


def test_zookeeper_shell_keeps_output_flag_away_from_zkcli(zookeeper) -> None:
    rc, out, err = run("zookeeper-shell", zookeeper.connect, "ls", "/", "--output", "json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["command"] == ["ls", "/"] and doc["exitCode"] == 0 and doc["errors"] == []
    assert doc["output"][0].startswith("[") and "zookeeper" in doc["output"][0]
    rc, out, _ = run("zookeeper-shell", zookeeper.connect, "get", "/no-such-znode", "--output=json")
    doc = json.loads(out)
    assert (rc, doc["exitCode"], doc["errors"]) == (1, 1, ["Node does not exist: /no-such-znode"])
