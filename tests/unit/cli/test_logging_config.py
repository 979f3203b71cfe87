"""Kafka's logging: the log4j layout, DailyRollingFileAppender's hourly roll, Kafka's default log4j.properties
as shipped in config/logging.yaml, and configuration files named at start (INI, YAML; KAFKA_LOG4J_OPTS)."""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kafkapy.cli.daily_rolling_file_handler import DailyRollingFileHandler, next_period_start, strftime_of
from kafkapy.cli.logging_config import (
    KafkaLogFormatter,
    apply_config_file,
    apply_default_config,
    config_file_from_environment,
    default_config,
)

REPO = Path(__file__).resolve().parents[3]
LAYOUT = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) .* \([\w.$]+\)$")


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """dictConfig/fileConfig change process-wide loggers: put root and every touched logger back afterwards."""
    root = logging.getLogger()
    saved_root = (list(root.handlers), root.level)
    before = {name: (lg.level, list(lg.handlers), lg.propagate)
              for name, lg in logging.root.manager.loggerDict.items() if isinstance(lg, logging.Logger)}
    yield
    for name, lg in list(logging.root.manager.loggerDict.items()):
        if not isinstance(lg, logging.Logger):
            continue
        for h in lg.handlers:
            if h not in before.get(name, (0, [], True))[1]:
                h.close()
        level, handlers, propagate = before.get(name, (logging.NOTSET, [], True))
        lg.setLevel(level)
        lg.handlers[:] = handlers
        lg.propagate = propagate
        lg.disabled = False
    for h in root.handlers:
        if h not in saved_root[0]:
            h.close()
    root.handlers[:] = saved_root[0]
    root.setLevel(saved_root[1])


def record(name: str, level: int, msg: str, created: float) -> logging.LogRecord:
    r = logging.LogRecord(name, level, __file__, 1, msg, None, None)
    r.created = created
    r.msecs = (created - int(created)) * 1000
    return r


def test_layout_is_log4js() -> None:
    line = KafkaLogFormatter().format(record("kafka.controller.KafkaController", logging.WARNING, "hello", 1e9))
    assert LAYOUT.match(line)
    assert line.endswith("] WARN hello (kafka.controller.KafkaController)")
    assert KafkaLogFormatter().format(record("x", logging.CRITICAL, "m", 1e9)).endswith("] FATAL m (x)")


def test_date_patterns() -> None:
    assert strftime_of("'.'yyyy-MM-dd-HH") == (".%Y-%m-%d-%H", "%H")
    assert strftime_of("'.'yyyy-MM-dd") == (".%Y-%m-%d", "%d")
    assert strftime_of("'.'yyyy-MM-dd-HH-mm") == (".%Y-%m-%d-%H-%M", "%M")


def test_hourly_roll_names_the_hour_that_ended(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "server.log"
    handler = DailyRollingFileHandler(str(path), "'.'yyyy-MM-dd-HH")
    handler.setFormatter(KafkaLogFormatter())
    try:
        assert path.exists() and path.read_text() == ""  # created at start, as log4j's activateOptions
        boundary = handler.rollover_at
        assert time.localtime(boundary).tm_min == 0 and time.localtime(boundary).tm_sec == 0
        handler.emit(record("a", logging.INFO, "first", boundary - 1))
        handler.emit(record("a", logging.INFO, "second", boundary + 1))
        handler.emit(record("a", logging.INFO, "third", boundary + 3601))
    finally:
        handler.close()
    hour1 = time.strftime(".%Y-%m-%d-%H", time.localtime(boundary - 1))
    hour2 = time.strftime(".%Y-%m-%d-%H", time.localtime(boundary + 1))
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(["server.log", "server.log" + hour1,
                                                                     "server.log" + hour2])
    assert (path.parent / ("server.log" + hour1)).read_text().endswith(" INFO first (a)\n")
    assert (path.parent / ("server.log" + hour2)).read_text().endswith(" INFO second (a)\n")
    assert path.read_text().endswith(" INFO third (a)\n") and path.read_text().count("\n") == 1
    assert next_period_start(boundary, "%H") == boundary + 3600
    assert next_period_start(boundary - 1, "%H") == boundary


def test_shipped_logging_yaml_is_kafkas_default() -> None:
    shipped = yaml.safe_load((REPO / "config" / "logging.yaml").read_text())
    assert shipped == default_config()
    loggers = shipped["loggers"]
    assert loggers["kafka.controller"] == {"level": "TRACE", "handlers": ["controllerAppender"], "propagate": False}
    assert loggers["kafka.request.logger"]["level"] == "WARN"
    assert shipped["root"] == {"level": "INFO", "handlers": ["stdout", "kafkaAppender"]}


def test_default_config_writes_kafkas_six_files(tmp_path: Path, restore_logging: None) -> None:
    apply_default_config(str(tmp_path))
    logging.getLogger("kafka.server.KafkaServer").info("server line")
    logging.getLogger("kafka.controller.KafkaController").debug("controller line")
    logging.getLogger("state.change.logger").info("state line")
    logging.getLogger("kafka.request.logger").info("not at WARN")
    logging.getLogger("kafka.log.LogCleaner").info("cleaner line")
    logging.getLogger("kafka.authorizer.logger").info("authorizer line")
    for h in logging.getLogger().handlers:
        h.flush()
    assert sorted(os.listdir(tmp_path)) == ["controller.log", "kafka-authorizer.log", "kafka-request.log",
                                            "log-cleaner.log", "server.log", "state-change.log"]
    for name, expected in [("server.log", "INFO server line (kafka.server.KafkaServer)"),
                           ("controller.log", "DEBUG controller line (kafka.controller.KafkaController)"),
                           ("state-change.log", "INFO state line (state.change.logger)"),
                           ("log-cleaner.log", "INFO cleaner line (kafka.log.LogCleaner)"),
                           ("kafka-authorizer.log", "INFO authorizer line (kafka.authorizer.logger)")]:
        text = (tmp_path / name).read_text().splitlines()
        assert len(text) == 1 and text[0].endswith(expected) and LAYOUT.match(text[0]), (name, text)
    assert (tmp_path / "kafka-request.log").read_text() == ""


INI = """\
[loggers]
keys=root,controller

[handlers]
keys=file

[formatters]
keys=kafka

[logger_root]
level=WARNING
handlers=file

[logger_controller]
level=DEBUG
handlers=
qualname=kafka.controller

[handler_file]
class=FileHandler
formatter=kafka
args=('${kafka.logs.dir}/broker.log',)

[formatter_kafka]
class=kafkapy.cli.logging_config.KafkaLogFormatter
"""


def test_ini_file_is_applied_with_the_logs_dir(tmp_path: Path, restore_logging: None) -> None:
    cfg = tmp_path / "logging.ini"
    cfg.write_text(INI)
    apply_config_file(str(cfg), str(tmp_path / "out"))
    assert logging.getLogger("kafka.controller").level == logging.DEBUG
    logging.getLogger("kafka.controller.KafkaController").debug("d")
    logging.getLogger("kafka.server.KafkaServer").info("hidden at WARNING")
    for h in logging.getLogger().handlers:
        h.flush()
    assert (tmp_path / "out" / "broker.log").read_text().splitlines()[-1].endswith(
        "] DEBUG d (kafka.controller.KafkaController)")
    assert "hidden" not in (tmp_path / "out" / "broker.log").read_text()


def test_yaml_file_and_a_bad_one(tmp_path: Path, restore_logging: None) -> None:
    cfg = tmp_path / "logging.yaml"
    cfg.write_text("loggers:\n  kafka.request.logger:\n    level: DEBUG\n")
    apply_config_file(str(cfg))
    assert logging.getLogger("kafka.request.logger").level == logging.DEBUG
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n")
    with pytest.raises(ValueError, match=f"^Invalid logging configuration {bad}: not a mapping$"):
        apply_config_file(str(bad))
    with pytest.raises(ValueError, match="^Cannot read logging configuration "):
        apply_config_file(str(tmp_path / "missing.ini"))


def test_config_file_from_environment() -> None:
    assert config_file_from_environment({}) is None
    assert config_file_from_environment(
        {"KAFKA_LOG4J_OPTS": "-Dlog4j.configuration=file:/etc/kafka/logging.yaml -Dx=y"}) == "/etc/kafka/logging.yaml"
    assert config_file_from_environment({"KAFKA_LOG4J_OPTS": "-Dlog4j2.configurationFile=/a.ini"}) == "/a.ini"
    assert config_file_from_environment({"KAFKAPY_LOG_CONFIG": "/b.yaml",
                                         "KAFKA_LOG4J_OPTS": "-Dlog4j.configuration=file:/a.ini"}) == "/b.yaml"


LOG4J = """\
# a log4j 1.x file as Kafka's config/log4j.properties is written
log4j.rootLogger=INFO, stdout, main
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.Target=System.err
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=%-5p [%t] %m%n
log4j.appender.main=org.apache.log4j.DailyRollingFileAppender
log4j.appender.main.DatePattern='.'yyyy-MM-dd-HH
log4j.appender.main.File=${kafka.logs.dir}/server.log
log4j.appender.main.layout=org.apache.log4j.PatternLayout
log4j.appender.main.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.appender.sc=org.apache.log4j.RollingFileAppender
log4j.appender.sc.File=${kafka.logs.dir}/state-change.log
log4j.appender.sc.MaxFileSize=5MB
log4j.appender.sc.MaxBackupIndex=3
log4j.appender.sc.Threshold=WARN
log4j.logger.kafka=INFO
log4j.logger.state.change.logger=TRACE, sc
log4j.additivity.state.change.logger=false
"""


def test_log4j_properties_translation() -> None:
    from kafkapy.cli.log4j_properties import python_format

    assert python_format("[%d] %p %m (%c)%n") == KafkaLogFormatter.LAYOUT
    assert python_format("%-5p [%t] %c{1}: %m (line %L) 100%%%n") == \
        "%(kafka_level)-5s [%(threadName)s] %(name)s: %(message)s (line %(lineno)d) 100%%"


def test_log4j_properties_file_is_applied(tmp_path: Path, restore_logging: None,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "log4j.properties"
    cfg.write_text(LOG4J)
    apply_config_file(str(cfg), str(tmp_path / "logs"))
    sc = logging.getLogger("state.change.logger")
    assert (sc.level, sc.propagate, logging.getLogger("kafka").level) == (5, False, logging.INFO)
    rotating = sc.handlers[0]
    assert isinstance(rotating, logging.handlers.RotatingFileHandler)
    assert (rotating.maxBytes, rotating.backupCount, rotating.level) == (5 * 1024 * 1024, 3, logging.WARNING)
    logging.getLogger("kafka.server.KafkaServer").info("to the root's appenders")
    sc.info("below the appender's threshold")
    sc.error("state error")
    for h in [*logging.getLogger().handlers, rotating]:
        h.flush()
    server = (tmp_path / "logs" / "server.log").read_text().splitlines()
    assert len(server) == 1 and LAYOUT.match(server[0]) and server[0].endswith(
        "] INFO to the root's appenders (kafka.server.KafkaServer)")
    # An appender without a layout writes Kafka's.
    assert (tmp_path / "logs" / "state-change.log").read_text().endswith("] ERROR state error (state.change.logger)\n")
    assert capsys.readouterr().err == "INFO  [MainThread] to the root's appenders\n"


def test_server_stop_does_not_take_the_logging_config_for_the_properties_file(tmp_path: Path) -> None:
    from kafkapy.cli import server as srv

    (tmp_path / "s.properties").write_text("broker.id=6\n")
    args = ["--logging-config", "logging.yaml", "s.properties", "--daemon-child"]
    assert srv._node_info(args, str(tmp_path)) == (6, [], str(tmp_path / "s.properties"))
    parsed = srv.build_start_parser().parse_args(args)
    assert (parsed.config, parsed.logging_config, parsed.daemon_child) == ("s.properties", "logging.yaml", True)
