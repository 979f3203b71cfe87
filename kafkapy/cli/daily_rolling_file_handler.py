"""DailyRollingFileHandler: log4j 1.x's DailyRollingFileAppender as a Python logging handler.

Kafka's config/log4j.properties writes server.log, controller.log, state-change.log, ... through
DailyRollingFileAppender with DatePattern '.'yyyy-MM-dd-HH: the file always has its plain name, and at
the first record of a new period (calendar-aligned: the top of the hour, midnight) the current file is
renamed to `<name><date pattern of the period that ended>` (server.log.2026-11-27-01) and a new one
opened. Old files are never deleted (log4j keeps them; cron or logrotate clean up). The period is the
finest unit the pattern names (minute, hour, half-day is not supported, day, week, month).

Files: plain text, one formatted record per line, appended; the file is created (with its directory) at
construction, as log4j's activateOptions does, so every configured log exists from start-up on.
Thread-safety: logging.Handler's lock serialises emit and rollover.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import re
import time

DEFAULT_DATE_PATTERN = "'.'yyyy-MM-dd"

# SimpleDateFormat letters to strftime, and the rollover unit each one implies (finest wins).
_LETTERS = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ww": "%W"}
_UNIT_RANK = {"%M": 0, "%H": 1, "%d": 2, "%W": 3, "%m": 4, "%Y": 5, "%y": 5}
_TOKEN = re.compile(r"'([^']*)'|yyyy|yy|MM|dd|HH|mm|ww|.", re.S)


def strftime_of(date_pattern: str) -> tuple[str, str]:
    """('.%Y-%m-%d-%H', '%H') for "'.'yyyy-MM-dd-HH": the strftime suffix and its rollover unit."""
    out: list[str] = []
    unit = "%Y"
    for m in _TOKEN.finditer(date_pattern):
        if m.group(1) is not None:
            out.append(m.group(1).replace("%", "%%"))
            continue
        token = m.group(0)
        conv = _LETTERS.get(token)
        if conv is None:
            out.append(token.replace("%", "%%"))
            continue
        out.append(conv)
        if _UNIT_RANK[conv] < _UNIT_RANK[unit]:
            unit = conv
    return "".join(out), unit


def period_start(t: float, unit: str) -> float:
    """The local-time start of the period holding t."""
    lt = time.localtime(t)
    y, mo, d, h, mi = lt.tm_year, lt.tm_mon, lt.tm_mday, lt.tm_hour, lt.tm_min
    if unit == "%M":
        fields = (y, mo, d, h, mi)
    elif unit == "%H":
        fields = (y, mo, d, h, 0)
    elif unit == "%d":
        fields = (y, mo, d, 0, 0)
    elif unit == "%W":
        fields = (y, mo, d - lt.tm_wday, 0, 0)  # Monday, as %W counts weeks
    elif unit == "%m":
        fields = (y, mo, 1, 0, 0)
    else:
        fields = (y, 1, 1, 0, 0)
    return time.mktime((*fields, 0, 0, 0, -1))


def next_period_start(t: float, unit: str) -> float:
    start = period_start(t, unit)
    # Step just past the end and snap back to the period's start, so DST changes (days longer or shorter by
    # an hour) and month lengths land on the real boundary.
    step, margin = {"%M": (60, 1), "%H": (3600, 60), "%d": (86400, 3 * 3600),
                    "%W": (7 * 86400, 3 * 3600), "%m": (28 * 86400, 4 * 86400)}.get(unit, (365 * 86400, 2 * 86400))
    return period_start(start + step + margin, unit)


class DailyRollingFileHandler(logging.handlers.BaseRotatingHandler):
    def __init__(self, filename: str, date_pattern: str = DEFAULT_DATE_PATTERN, encoding: str | None = "utf-8",
                 delay: bool = False) -> None:
        filename = os.path.abspath(filename)
        os.makedirs(os.path.dirname(filename), exist_ok=True)
        self.suffix, self.unit = strftime_of(date_pattern)
        # log4j names the period of an existing file by its last modification (a restart within the hour
        # appends; a restart in a later hour rolls the old content away at the first record).
        try:
            opened = os.stat(filename).st_mtime
        except OSError:
            opened = time.time()
        self.rollover_at = next_period_start(opened, self.unit)
        self.period_name = time.strftime(self.suffix, time.localtime(opened))
        super().__init__(filename, "a", encoding=encoding, delay=delay)

    def shouldRollover(self, record: logging.LogRecord) -> bool:  # noqa: N802 - logging's name
        return record.created >= self.rollover_at

    def doRollover(self) -> None:  # noqa: N802 - logging's name
        if self.stream is not None:
            self.stream.close()
            self.stream = None  # type: ignore[assignment]
        target = self.baseFilename + self.period_name
        if os.path.exists(self.baseFilename) and not os.path.exists(target):
            os.replace(self.baseFilename, target)
        now = time.time()
        self.rollover_at = next_period_start(now, self.unit)
        self.period_name = time.strftime(self.suffix, time.localtime(now))
        self.stream = self._open()

    def emit(self, record: logging.LogRecord) -> None:
        # BaseRotatingHandler.emit, with the period of the new file taken from the record (testable
        # with records of any time, no clock to patch).
        try:
            if self.shouldRollover(record):
                self.doRollover()
                self.rollover_at = next_period_start(record.created, self.unit)
                self.period_name = time.strftime(self.suffix, time.localtime(record.created))
            logging.FileHandler.emit(self, record)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)
