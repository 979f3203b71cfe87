"""Log4j 1.x properties files (Kafka's config/log4j.properties) read as a Python logging configuration.

So that KAFKA_LOG4J_OPTS="-Dlog4j.configuration=file:/opt/kafka/config/log4j.properties" works unchanged, a
`.properties` logging configuration is translated into a logging.config.dictConfig dict:

  log4j.rootLogger=LEVEL, appender...          -> root level and handlers
  log4j.logger.NAME=LEVEL[, appender...]       -> loggers[NAME]
  log4j.additivity.NAME=false                  -> loggers[NAME].propagate = False
  log4j.appender.A=ConsoleAppender             -> StreamHandler (Target System.out, or System.err)
  log4j.appender.A=DailyRollingFileAppender    -> DailyRollingFileHandler (File, DatePattern)
  log4j.appender.A=RollingFileAppender         -> RotatingFileHandler (File, MaxFileSize, MaxBackupIndex)
  log4j.appender.A=FileAppender                -> FileHandler (File, Append)
  log4j.appender.A.Threshold=LEVEL             -> the handler's level
  log4j.appender.A.layout.ConversionPattern    -> the format: %d %p %m %c %t %n %L %F %% (with widths such
                                                  as %-5p); %d{pattern} keeps ISO8601's date (the layout
                                                  Kafka ships).
Class names may be written in full (org.apache.log4j.ConsoleAppender). `${name}` is replaced by the caller's
variables (kafka.logs.dir) or the environment, as log4j substitutes system properties. Anything else an
appender names (SocketAppender, a custom class) is refused with one line naming it.

Thread-safety: pure functions.
"""

from __future__ import annotations

import os
import re
from typing import Any

from kafkapy.cli.log_classes import DAILY_HANDLER_CLASS, FORMATTER_CLASS
from kafkapy.common.properties import parse_properties

_CONVERSIONS = {"d": "asctime", "p": "kafka_level", "m": "message", "c": "name", "t": "threadName",
                "L": "lineno", "F": "filename", "M": "funcName", "r": "relativeCreated"}
_PATTERN = re.compile(r"%(-?\d*(?:\.\d+)?)([a-zA-Z%])(\{[^}]*\})?")
_VARIABLE = re.compile(r"\$\{([^}]+)\}")
_SIZE = re.compile(r"^\s*(\d+)\s*(KB|MB|GB)?\s*$", re.I)


def python_format(conversion_pattern: str) -> str:
    """A log4j PatternLayout ConversionPattern as a %-style logging format."""
    out: list[str] = []
    pos = 0
    for m in _PATTERN.finditer(conversion_pattern):
        out.append(conversion_pattern[pos:m.start()].replace("%", "%%"))
        pos = m.end()
        width, letter = m.group(1), m.group(2)
        if letter == "%":
            out.append("%%")
        elif letter == "n":
            continue  # the handler ends each record with a newline
        elif letter in _CONVERSIONS:
            kind = "d" if letter in ("L",) else "s"
            out.append(f"%({_CONVERSIONS[letter]}){width.split('.')[0]}{kind}")
        else:
            out.append(m.group(0).replace("%", "%%"))
    out.append(conversion_pattern[pos:].replace("%", "%%"))
    return "".join(out).rstrip("\n")


def _substitute(text: str, variables: dict[str, str]) -> str:
    def value(m: re.Match[str]) -> str:
        name = m.group(1)
        return variables.get(name, os.environ.get(name, m.group(0)))

    return _VARIABLE.sub(value, text)


def _level_and_appenders(spec: str) -> tuple[str | None, list[str]]:
    parts = [p.strip() for p in spec.split(",")]
    level = parts[0].upper() or None
    if level == "INHERITED" or level == "NULL":
        level = None
    return level, [p for p in parts[1:] if p]


def _size(text: str) -> int:
    m = _SIZE.match(text)
    if m is None:
        raise ValueError(f"bad MaxFileSize {text!r}")
    return int(m.group(1)) * {None: 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[(m.group(2) or "").upper() or None]


def _handler(name: str, props: dict[str, str]) -> dict[str, Any]:
    prefix = f"log4j.appender.{name}"
    cls = props.get(prefix, "").strip().rsplit(".", 1)[-1]

    def option(key: str) -> str | None:
        return props.get(f"{prefix}.{key}")

    if cls == "ConsoleAppender":
        target = (option("Target") or "System.out").strip()
        handler: dict[str, Any] = {"class": "logging.StreamHandler",
                                   "stream": "ext://sys.stderr" if target == "System.err" else "ext://sys.stdout"}
    elif cls in ("DailyRollingFileAppender", "RollingFileAppender", "FileAppender"):
        path = option("File")
        if not path:
            raise ValueError(f"appender {name} has no File")
        path = path.strip()
        if cls == "DailyRollingFileAppender":
            handler = {"class": DAILY_HANDLER_CLASS, "filename": path,
                       "date_pattern": (option("DatePattern") or "'.'yyyy-MM-dd").strip()}
        elif cls == "RollingFileAppender":
            handler = {"class": "logging.handlers.RotatingFileHandler", "filename": path,
                       "maxBytes": _size(option("MaxFileSize") or "10MB"),
                       "backupCount": int((option("MaxBackupIndex") or "1").strip())}
        else:
            append = (option("Append") or "true").strip().lower() != "false"
            handler = {"class": "logging.FileHandler", "filename": path, "mode": "a" if append else "w"}
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    else:
        raise ValueError(f"appender {name}: {props.get(prefix) or 'no class'} is not supported")
    threshold = option("Threshold")
    if threshold:
        handler["level"] = threshold.strip().upper()
    pattern = option("layout.ConversionPattern")
    handler["formatter"] = f"{name}-layout" if pattern is not None else "kafka"
    return handler


def to_dict_config(text: str, variables: dict[str, str]) -> dict[str, Any]:
    """The dictConfig dict of a log4j.properties text, `${name}` replaced from `variables` or the environment."""
    props = parse_properties(_substitute(text, variables))
    root_level, root_appenders = _level_and_appenders(props.get("log4j.rootLogger", "DEBUG"))
    loggers: dict[str, dict[str, Any]] = {}
    used = list(root_appenders)
    for key, value in props.items():
        if key.startswith("log4j.logger."):
            name = key[len("log4j.logger."):]
            level, appenders = _level_and_appenders(value)
            entry = loggers.setdefault(name, {})
            if level is not None:
                entry["level"] = level
            if appenders:
                entry["handlers"] = appenders
                used += appenders
    for key, value in props.items():
        if key.startswith("log4j.additivity."):
            loggers.setdefault(key[len("log4j.additivity."):], {})["propagate"] = value.strip().lower() != "false"
    handlers: dict[str, Any] = {}
    formatters: dict[str, Any] = {"kafka": {"()": FORMATTER_CLASS}}
    for name in dict.fromkeys(used):
        handlers[name] = _handler(name, props)
        pattern = props.get(f"log4j.appender.{name}.layout.ConversionPattern")
        if pattern is not None:
            formatters[f"{name}-layout"] = {"()": FORMATTER_CLASS, "fmt": python_format(pattern)}
    root: dict[str, Any] = {"handlers": root_appenders}
    if root_level is not None:
        root["level"] = root_level
    return {"version": 1, "disable_existing_loggers": False, "formatters": formatters, "handlers": handlers,
            "root": root, "loggers": loggers}
