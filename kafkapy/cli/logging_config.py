"""The broker's logging configuration: Kafka's layout, Kafka's config/log4j.properties, and config files.

Layout: log4j's `[%d] %p %m (%c)%n`, i.e. `[2026-11-27 02:15:00,123] INFO message (kafka.server.KafkaServer)`
(KafkaLogFormatter; WARNING is written WARN, CRITICAL FATAL; level 5 is TRACE).

DEFAULT_CONFIG is Kafka 3.9's config/log4j.properties as a logging.config.dictConfig dict: root at INFO to
stdout and ${kafka.logs.dir}/server.log; kafka.controller (TRACE) to controller.log, state.change.logger to
state-change.log, kafka.request.logger (WARN) and kafka.network.RequestChannel$ to kafka-request.log,
kafka.log.LogCleaner to log-cleaner.log, kafka.authorizer.logger to kafka-authorizer.log, none of them
additive; every file a DailyRollingFileHandler rolled hourly ('.'yyyy-MM-dd-HH). config/logging.yaml
ships the same configuration as a file to copy and edit.

A configuration file (server-start --logging-config, $KAFKAPY_LOG_CONFIG, or
$KAFKA_LOG4J_OPTS="-Dlog4j.configuration=file:PATH" as kafka-run-class.sh passes it) is read by its
extension: .yaml/.yml/.json are dictConfig documents, .properties a log4j 1.x file such as Kafka's own
config/log4j.properties (translated by log4j_properties.py), anything else (.ini, .conf, .cfg) a
logging.config.fileConfig INI file. In both, `${kafka.logs.dir}` is replaced by $LOG_DIR (as log4j
substitutes the system property kafka-run-class.sh sets), before parsing.

Thread-safety: configuration runs once at start-up on the main thread; the formatter is stateless.
"""

from __future__ import annotations

import io
import json
import logging
import os
import shlex
from typing import Any

from kafkapy.cli.log_classes import DAILY_HANDLER_CLASS, FORMATTER_CLASS

TRACE = 5
logging.addLevelName(TRACE, "TRACE")  # so "TRACE" is a level name in config files, as in log4j

LOG_CONFIG_ENV = "KAFKAPY_LOG_CONFIG"
LOG4J_OPTS_ENV = "KAFKA_LOG4J_OPTS"
LOGS_DIR_VARIABLE = "${kafka.logs.dir}"
HOURLY = "'.'yyyy-MM-dd-HH"

_KAFKA_LEVELS = {logging.WARNING: "WARN", logging.CRITICAL: "FATAL", TRACE: "TRACE"}


class KafkaLogFormatter(logging.Formatter):
    """log4j's `[%d] %p %m (%c)%n`: `[2026-11-21 20:15:00,123] INFO message (logger.name)`."""

    LAYOUT = "[%(asctime)s] %(kafka_level)s %(message)s (%(name)s)"

    def __init__(self, fmt: str | None = None, datefmt: str | None = None, style: str = "%",
                 validate: bool = True, **kwargs: Any) -> None:
        # fileConfig passes its format/datefmt/style; without a format this is Kafka's layout. Any format
        # may use %(kafka_level)s (log4j's %p).
        super().__init__(fmt or self.LAYOUT, datefmt, style, validate, **kwargs)  # type: ignore[arg-type]

    def format(self, record: logging.LogRecord) -> str:
        record.kafka_level = _KAFKA_LEVELS.get(record.levelno, record.levelname)
        return super().format(record)



# (appender name in Kafka's log4j.properties, file name)
APPENDERS = (
    ("kafkaAppender", "server.log"),
    ("stateChangeAppender", "state-change.log"),
    ("requestAppender", "kafka-request.log"),
    ("cleanerAppender", "log-cleaner.log"),
    ("controllerAppender", "controller.log"),
    ("authorizerAppender", "kafka-authorizer.log"),
)

# (logger, level, appender or None): log4j.logger.* lines of Kafka's log4j.properties; with an appender the
# logger is not additive (log4j.additivity.*=false).
LOGGERS = (
    ("org.apache.zookeeper", "INFO", None),
    ("kafka", "INFO", None),
    ("org.apache.kafka", "INFO", None),
    ("kafka.request.logger", "WARN", "requestAppender"),
    ("kafka.network.RequestChannel$", "WARN", "requestAppender"),
    ("org.apache.kafka.controller", "INFO", "controllerAppender"),
    ("kafka.controller", "TRACE", "controllerAppender"),
    ("kafka.log.LogCleaner", "INFO", "cleanerAppender"),
    ("state.change.logger", "INFO", "stateChangeAppender"),
    ("kafka.authorizer.logger", "INFO", "authorizerAppender"),
)


def default_config() -> dict[str, Any]:
    """Kafka's config/log4j.properties as a dictConfig dict, with ${kafka.logs.dir} left in file names."""
    handlers: dict[str, Any] = {
        "stdout": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout", "formatter": "kafka"},
    }
    for name, file_name in APPENDERS:
        handlers[name] = {"class": DAILY_HANDLER_CLASS, "filename": f"{LOGS_DIR_VARIABLE}/{file_name}",
                          "date_pattern": HOURLY, "formatter": "kafka"}
    loggers: dict[str, Any] = {}
    for name, level, appender in LOGGERS:
        loggers[name] = {"level": level}
        if appender is not None:
            loggers[name].update(handlers=[appender], propagate=False)
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"kafka": {"()": FORMATTER_CLASS}},
        "handlers": handlers,
        "root": {"level": "INFO", "handlers": ["stdout", "kafkaAppender"]},
        "loggers": loggers,
    }


def logs_dir() -> str:
    """$LOG_DIR, else logs/ in the working directory (kafka-run-class.sh's rule, our base dir being the cwd)."""
    return os.path.abspath(os.environ.get("LOG_DIR") or "logs")


def _substitute(value: Any, directory: str) -> Any:
    if isinstance(value, str):
        return value.replace(LOGS_DIR_VARIABLE, directory)
    if isinstance(value, dict):
        return {k: _substitute(v, directory) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, directory) for v in value]
    return value


def apply_default_config(directory: str | None = None) -> None:
    """Configure logging as Kafka's config/log4j.properties does, with the files in `directory` ($LOG_DIR)."""
    import logging.config  # here, not at import: it loads logging.handlers, pickle, socket (start-up time)

    logging.config.dictConfig(_substitute(default_config(), directory or logs_dir()))


def config_file_from_environment(environ: dict[str, str] | None = None) -> str | None:
    """$KAFKAPY_LOG_CONFIG, else the file named by -Dlog4j.configuration=file:PATH (or
    -Dlog4j2.configurationFile=PATH) in $KAFKA_LOG4J_OPTS."""
    env = os.environ if environ is None else environ
    explicit = env.get(LOG_CONFIG_ENV)
    if explicit:
        return explicit
    for arg in shlex.split(env.get(LOG4J_OPTS_ENV, "")):
        for prop in ("-Dlog4j.configuration=", "-Dlog4j2.configurationFile="):
            if arg.startswith(prop):
                value = arg[len(prop):]
                return value[len("file:"):] if value.startswith("file:") else value
    return None


def apply_config_file(path: str, directory: str | None = None) -> None:
    """Configure logging from a YAML/JSON dictConfig document or an INI fileConfig file (by extension).
    Raises ValueError with one line naming the file when it cannot be read or applied."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ValueError(f"Cannot read logging configuration {path}: {e.strerror or e}") from e
    if LOGS_DIR_VARIABLE in text:
        directory = directory or logs_dir()
        os.makedirs(directory, exist_ok=True)  # log4j's file appenders create their directory
        text = text.replace(LOGS_DIR_VARIABLE, directory)
    ext = os.path.splitext(path)[1].lower()
    import logging.config  # start-up time: only with a logging configuration

    try:
        if ext == ".properties":  # Kafka's own log4j.properties
            from kafkapy.cli.log4j_properties import to_dict_config

            logging.config.dictConfig(to_dict_config(text, {"kafka.logs.dir": directory or logs_dir()}))
        elif ext in (".yaml", ".yml", ".json"):
            document = json.loads(text) if ext == ".json" else _yaml_load(text)
            if not isinstance(document, dict):
                raise ValueError("not a mapping")
            document.setdefault("version", 1)
            document.setdefault("disable_existing_loggers", False)
            logging.config.dictConfig(document)
        else:
            import configparser

            parser = configparser.ConfigParser(interpolation=None)
            parser.read_file(io.StringIO(text), path)
            logging.config.fileConfig(parser, disable_existing_loggers=False)
    except ValueError as e:
        raise ValueError(f"Invalid logging configuration {path}: {e}") from e
    except Exception as e:  # noqa: BLE001 - fileConfig/yaml raise KeyError, TypeError, YAMLError, ...
        raise ValueError(f"Invalid logging configuration {path}: {type(e).__name__}: {e}") from e


def _yaml_load(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)
