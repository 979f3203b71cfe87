"""Kafka's log files and loggers on a broker process: `server-start -daemon` writes Kafka's six log4j files
(plus kafkaServer.out) in Kafka's layout to $LOG_DIR (default logs/ in the working directory);
`configs --entity-type broker-loggers` lists and changes Kafka's logger names, parents included, at once;
kafka.request.logger at DEBUG writes RequestChannel's "Completed request:{json}" lines; a logging
configuration file named at start is applied.

Two broker subprocesses for the module: one started with -daemon, one in the foreground with --logging-config.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkapy.cli.main import app
from kafkapy.protocol.messages import (
    ApiVersionsRequest,
    FetchRequest,
    MetadataRequest,
    ProduceRequest,
    StopReplicaRequest,
)
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

LAYOUT = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) .* \([\w.$]+\)$")
KAFKA_FILES = ["controller.log", "kafka-authorizer.log", "kafka-request.log", "kafkaServer.out", "log-cleaner.log",
               "server.log", "state-change.log"]
OVERRIDES = ["listeners=PLAINTEXT://127.0.0.1:0", "num.network.threads=1", "num.io.threads=2",
             "log.retention.check.interval.ms=300000"]
START_S = 60.0


@dataclass
class Broker:
    pid: int
    port: int
    logs: Path
    popen: subprocess.Popen | None = None

    @property
    def bootstrap(self) -> list[str]:
        return ["--bootstrap-server", f"127.0.0.1:{self.port}"]

    def stop(self) -> None:
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        if self.popen is not None:
            try:
                self.popen.wait(30)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
            return
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and os.path.exists(f"/proc/{self.pid}"):
            time.sleep(0.05)
        if os.path.exists(f"/proc/{self.pid}"):
            os.kill(self.pid, signal.SIGKILL)


def _await_record(run_dir: Path, popen: subprocess.Popen | None = None) -> tuple[int, int]:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if popen is not None and popen.poll() is not None:
            raise RuntimeError(f"broker exited with {popen.returncode}")
        for rec in run_dir.glob("server-*.json"):
            try:
                doc = json.loads(rec.read_text())
                return int(doc["pid"]), int(doc["boundPort"])
            except (OSError, ValueError, KeyError, TypeError):
                pass
        time.sleep(0.05)
    raise TimeoutError("broker did not start")


def _overrides(node_id: int, data: Path) -> list[str]:
    out = []
    for o in [*OVERRIDES, f"log.dirs={data}", f"node.id={node_id}", f"broker.id={node_id}"]:
        out += ["--override", o]
    return out


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    cwd = tmp_path_factory.mktemp("daemon-cwd")
    env = {k: v for k, v in os.environ.items() if k not in ("LOG_DIR", "KAFKAPY_LOG_CONFIG", "KAFKA_LOG4J_OPTS")}
    env["KAFKAPY_RUN_DIR"] = str(cwd / "run")
    rc = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "server-start", "-daemon",
                         *_overrides(3, cwd / "data")], cwd=cwd, env=env, timeout=START_S + 10).returncode
    assert rc == 0
    pid, port = _await_record(cwd / "run")
    broker = Broker(pid, port, cwd / "logs")  # $LOG_DIR unset: logs/ in the working directory
    try:
        yield broker
    finally:
        broker.stop()


CONFIG_YAML = """\
formatters:
  kafka:
    (): kafkapy.cli.logging_config.KafkaLogFormatter
handlers:
  server:
    class: kafkapy.cli.daily_rolling_file_handler.DailyRollingFileHandler
    filename: ${kafka.logs.dir}/broker-server.log
    formatter: kafka
  controller:
    class: kafkapy.cli.daily_rolling_file_handler.DailyRollingFileHandler
    filename: ${kafka.logs.dir}/broker-controller.log
    formatter: kafka
root:
  level: INFO
  handlers: [server]
loggers:
  kafka.controller:
    level: INFO
    handlers: [controller]
    propagate: false
"""


@pytest.fixture(scope="module")
def configured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    cwd = tmp_path_factory.mktemp("configured")
    (cwd / "logging.yaml").write_text(CONFIG_YAML)
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKAPY_LOG_CONFIG", "KAFKA_LOG4J_OPTS")}
    env.update(KAFKAPY_RUN_DIR=str(cwd / "run"), LOG_DIR=str(cwd / "mylogs"))
    with open(cwd / "stdout", "wb") as out:
        popen = subprocess.Popen([sys.executable, "-m", "kafkapy.cli.main", "server-start", "--logging-config",
                                  str(cwd / "logging.yaml"), *_overrides(4, cwd / "data")],
                                 cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        pid, port = _await_record(cwd / "run", popen)
        broker = Broker(pid, port, cwd / "mylogs", popen)
        yield broker
    finally:
        if popen.poll() is None:
            Broker(popen.pid, 0, cwd, popen).stop()


@pytest.fixture
def cli() -> Callable[..., tuple[int, str]]:
    runner = CliRunner()

    def run(*argv: str) -> tuple[int, str]:
        r = runner.invoke(app, list(argv), catch_exceptions=False, prog_name="kafkapy")
        return r.exit_code, r.stdout

    return run


def wait_for_line(path: Path, predicate: Callable[[str], bool], timeout_s: float = 10.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_text().splitlines():
                if predicate(line):
                    return line
        time.sleep(0.05)
    raise AssertionError(f"no such line in {path}:\n{path.read_text() if path.exists() else '(missing)'}")


def loggers(cli, broker: Broker, node_id: int) -> dict[str, str]:
    rc, out = cli("configs", "--describe", "--entity-type", "broker-loggers", "--entity-name", str(node_id),
                  *broker.bootstrap)
    assert rc == 0 and out.splitlines()[0] == f"Dynamic configs for broker-logger {node_id} are:"
    found = {}
    for line in out.splitlines()[1:]:
        m = re.match(r"^  (\S+)=(\w+) sensitive=false synonyms=\{\}$", line)
        assert m, line
        found[m.group(1)] = m.group(2)
    return found


def test_daemon_writes_kafkas_log_files(daemon: Broker, cli) -> None:
    b = daemon.bootstrap
    assert cli("topics", "--create", "--topic", "lf", "--partitions", "2", *b) == (0, "Created topic lf.\n")
    assert cli("topics", "--delete", "--topic", "lf", *b)[0] == 0
    wait_for_line(daemon.logs / "controller.log", lambda s: "Deletion of topic lf successfully completed" in s)
    assert sorted(os.listdir(daemon.logs)) == KAFKA_FILES
    for name in KAFKA_FILES:
        for line in (daemon.logs / name).read_text().splitlines():
            assert LAYOUT.match(line) or not line.startswith("["), (name, line)
    state = (daemon.logs / "state-change.log").read_text().splitlines()
    assert state[0].endswith("INFO [Controller id=3 epoch=1] Changed partition lf-0 state from NonExistentPartition"
                             " to NewPartition with assigned replicas 3 (state.change.logger)")
    assert any(s.endswith("INFO [Controller id=3 epoch=1] Changed partition lf-1 from NewPartition to "
                          "OnlinePartition with state LeaderAndIsr(leader=3, leaderEpoch=0, isrWithBrokerEpoch="
                          "List(BrokerState(brokerId=3, brokerEpoch=-1)), leaderRecoveryState=RECOVERED, "
                          "partitionEpoch=0) (state.change.logger)") for s in state)
    controller = (daemon.logs / "controller.log").read_text()
    # kafka.controller is at TRACE in Kafka's log4j.properties: its DEBUG lines are written too.
    assert "DEBUG [Controller id=3] Delete topics listener fired for topics lf to be deleted " \
           "(kafka.controller.KafkaController)" in controller
    assert "INFO [Topic Deletion Manager 3] Handling deletion for topics lf (kafka.controller.TopicDeletionManager)" \
           in controller
    cleaner = (daemon.logs / "log-cleaner.log").read_text()
    assert "] INFO Starting the log cleaner (kafka.log.LogCleaner)\n" in cleaner
    assert "] INFO [kafka-log-cleaner-thread-0]: Starting (kafka.log.LogCleaner)\n" in cleaner
    server = (daemon.logs / "server.log").read_text()
    assert "INFO [KafkaServer id=3] started; listening on PLAINTEXT://127.0.0.1:" in server
    assert "kafka.log.LogCleaner" not in server
    assert "state.change.logger" not in server and "kafka.controller" not in server  # not additive
    assert "[KafkaServer id=3] started" in (daemon.logs / "kafkaServer.out").read_text()  # the stdout appender


def test_broker_side_state_change_lines(daemon: Broker, wire_client) -> None:
    # A single broker's controller reaches its own ReplicaManager directly; a controller request on the wire (as
    # in a cluster) is logged as Kafka's ReplicaManager does. Controller epoch 0 is stale (the broker is at 1).
    SR = StopReplicaRequest
    client = wire_client(daemon.port, client_id="stale-controller")
    response = client.request(SR(controller_id=3, controller_epoch=0, broker_epoch=-1, topic_states=[
        SR.StopReplicaTopicState(topic_name="gone", partition_states=[
            SR.StopReplicaPartitionState(partition_index=0, leader_epoch=1, delete_partition=False)])]), 3)
    assert response.error_code == 11  # STALE_CONTROLLER_EPOCH
    path = daemon.logs / "state-change.log"
    wait_for_line(path, lambda s: s.endswith("] INFO [Broker id=3] Handling StopReplica request correlationId 1 from "
                                             "controller 3 for 1 partitions (state.change.logger)"))
    wait_for_line(path, lambda s: s.endswith("] WARN [Broker id=3] Ignoring StopReplica request from controller 3 with "
                                             "correlation id 1 since its controller epoch 0 is old. Latest known "
                                             "controller epoch is 1 (state.change.logger)"))


def test_broker_loggers_lists_kafkas_names_with_parents(daemon: Broker, cli) -> None:
    found = loggers(cli, daemon, 3)
    assert found["root"] == "INFO"
    for name, level in [("kafka", "INFO"), ("kafka.controller", "TRACE"), ("kafka.controller.KafkaController",
                        "TRACE"), ("state.change.logger", "INFO"), ("kafka.request.logger", "WARN"),
                        ("kafka.server.KafkaServer", "INFO"), ("kafka.network", "INFO"), ("kafka.log.LogCleaner",
                        "INFO"), ("kafka.authorizer.logger", "INFO"), ("kafka.coordinator.group", "INFO"),
                        ("kafka.coordinator.transaction", "INFO")]:
        assert found.get(name) == level, name
    # A parent that only exists through its children (no logger of its own yet) can be set, and its children
    # follow at once; deleting its level makes them inherit again.
    b = daemon.bootstrap
    alter = ["configs", "--alter", "--entity-type", "broker-loggers", "--entity-name", "3", *b]
    assert cli(*alter, "--add-config", "kafka.coordinator=DEBUG")[0] == 0
    found = loggers(cli, daemon, 3)
    assert (found["kafka.coordinator"], found["kafka.coordinator.group.GroupCoordinator"]) == ("DEBUG", "DEBUG")
    assert cli(*alter, "--delete-config", "kafka.coordinator")[0] == 0
    assert loggers(cli, daemon, 3)["kafka.coordinator.group.GroupCoordinator"] == "INFO"
    rc, _ = cli(*alter, "--add-config", "kafka.nosuchlogger=DEBUG")
    assert rc == 1


def test_request_logger_at_debug_logs_completed_requests(daemon: Broker, cli, wire_client) -> None:
    b = daemon.bootstrap
    assert cli("topics", "--create", "--topic", "rl", *b)[0] == 0
    rc, out = cli("configs", "--alter", "--entity-type", "broker-loggers", "--entity-name", "3", "--add-config",
                  "kafka.request.logger=DEBUG", *b)
    assert (rc, out) == (0, "Completed updating config for broker-logger 3.\n")
    assert loggers(cli, daemon, 3)["kafka.request.logger"] == "DEBUG"
    client = wire_client(daemon.port, client_id="request-log-test")
    client.request(ApiVersionsRequest(client_software_name="wire-test-client", client_software_version="1.2.3"), 3)
    md = client.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="rl")],
                                        allow_auto_topic_creation=False), 9)
    assert md.topics[0].error_code == 0
    builder = MemoryRecordsBuilder()
    builder.append(1_700_000_000_000, b"k", b"v")
    records = builder.build()
    PR = ProduceRequest
    produced = client.request(PR(acks=1, timeout_ms=5000, topic_data=[PR.TopicProduceData(
        name="rl", partition_data=[PR.PartitionProduceData(index=0, records=records)])]), 9)
    assert produced.responses[0].partition_responses[0].error_code == 0

    path = daemon.logs / "kafka-request.log"

    def completed(api: str) -> Callable[[str], bool]:
        return lambda s: " DEBUG Completed request:" in s and '"clientId":"request-log-test"' in s and \
            f'"requestApiKeyName":"{api}"' in s

    line = wait_for_line(path, completed("METADATA"))
    assert LAYOUT.match(line) and line.endswith(" (kafka.request.logger)")
    doc = json.loads(line.split(" DEBUG Completed request:", 1)[1].rsplit(" (kafka.request.logger)", 1)[0])
    assert doc["isForwarded"] is False
    assert doc["requestHeader"] == {"requestApiKey": 3, "requestApiVersion": 9, "correlationId": 2,
                                    "clientId": "request-log-test", "requestApiKeyName": "METADATA"}
    assert doc["request"] == {"topics": [{"name": "rl"}], "allowAutoTopicCreation": False,
                              "includeClusterAuthorizedOperations": False,
                              "includeTopicAuthorizedOperations": False}
    assert doc["response"]["brokers"] == [{"nodeId": 3, "host": "127.0.0.1", "port": daemon.port, "rack": None}]
    assert [t["name"] for t in doc["response"]["topics"]] == ["rl"]
    assert re.fullmatch(rf"127\.0\.0\.1:{daemon.port}-127\.0\.0\.1:\d+-\d+", doc["connection"])
    assert (doc["securityProtocol"], doc["principal"], doc["listener"]) == ("PLAINTEXT", "User:ANONYMOUS",
                                                                           "PLAINTEXT")
    assert doc["clientInformation"] == {"softwareName": "wire-test-client", "softwareVersion": "1.2.3"}
    times = ["totalTimeMs", "requestQueueTimeMs", "localTimeMs", "remoteTimeMs", "responseQueueTimeMs", "sendTimeMs"]
    assert all(isinstance(doc[k], float) and doc[k] >= 0 for k in times) and doc["throttleTimeMs"] == 0
    assert doc["totalTimeMs"] >= doc["localTimeMs"]

    produce_line = wait_for_line(path, completed("PRODUCE"))
    produce = json.loads(produce_line.split("Completed request:", 1)[1].rsplit(" (kafka.request.logger)", 1)[0])
    partition = produce["request"]["topicData"][0]["partitionData"][0]
    assert partition == {"index": 0, "recordsSizeInBytes": len(records)}  # KIP-673: sizes, never records
    assert produce["response"]["responses"][0]["partitionResponses"][0]["baseOffset"] == 0

    # A Fetch answer's records are sent from the segment file: the line gives their size.
    FR = FetchRequest
    fetched = client.request(FR(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                                session_id=0, session_epoch=-1, topics=[FR.FetchTopic(topic="rl", partitions=[
                                    FR.FetchPartition(partition=0, fetch_offset=0,
                                                      partition_max_bytes=1 << 20)])]), 11)
    assert fetched.responses[0].partitions[0].error_code == 0
    fetch_line = wait_for_line(path, completed("FETCH"))
    fetch = json.loads(fetch_line.split("Completed request:", 1)[1].rsplit(" (kafka.request.logger)", 1)[0])
    answered = fetch["response"]["responses"][0]["partitions"][0]
    assert (answered["highWatermark"], answered["recordsSizeInBytes"]) == (1, len(records))
    assert "records" not in answered

    # Back to WARN: no more lines.
    assert cli("configs", "--alter", "--entity-type", "broker-loggers", "--entity-name", "3", "--add-config",
               "kafka.request.logger=WARN", *b)[0] == 0
    before = path.read_text()
    client.request(MetadataRequest(topics=None, allow_auto_topic_creation=False), 9)
    client.request(MetadataRequest(topics=None, allow_auto_topic_creation=False), 9)
    assert path.read_text() == before


def test_logging_config_file_and_controller_debug_at_once(configured: Broker, cli) -> None:
    b = configured.bootstrap
    controller_log = configured.logs / "broker-controller.log"
    assert sorted(os.listdir(configured.logs)) == ["broker-controller.log", "broker-server.log"]
    assert cli("topics", "--create", "--topic", "c1", *b)[0] == 0
    assert cli("topics", "--delete", "--topic", "c1", *b)[0] == 0
    wait_for_line(controller_log, lambda s: "INFO [Controller id=4] Starting topic deletion for topics c1" in s)
    assert " DEBUG " not in controller_log.read_text()  # kafka.controller at INFO, as the file says
    found = loggers(cli, configured, 4)
    assert (found["kafka.controller"], found["kafka.controller.KafkaController"]) == ("INFO", "INFO")

    rc, out = cli("configs", "--alter", "--entity-type", "broker-loggers", "--entity-name", "4", "--add-config",
                  "kafka.controller=DEBUG", *b)
    assert (rc, out) == (0, "Completed updating config for broker-logger 4.\n")
    found = loggers(cli, configured, 4)
    assert (found["kafka.controller"], found["kafka.controller.KafkaController"]) == ("DEBUG", "DEBUG")
    assert cli("topics", "--create", "--topic", "c2", *b)[0] == 0
    assert cli("topics", "--delete", "--topic", "c2", *b)[0] == 0
    line = wait_for_line(controller_log, lambda s: "Delete topics listener fired for topics c2" in s)
    assert LAYOUT.match(line) and line.endswith(
        "] DEBUG [Controller id=4] Delete topics listener fired for topics c2 to be deleted "
        "(kafka.controller.KafkaController)")
    server = (configured.logs / "broker-server.log").read_text()
    assert "INFO [KafkaServer id=4] started; listening on" in server and "kafka.controller" not in server
