"""Java .properties files as Kafka reads them: server.properties, --command-config, --producer.config.

The one home of the loader: kafkapy.server.kafka_config (server.properties), kafkapy.client and the
tools (kafkapy.cli.properties wraps failures into one-line tool errors) all import it from here.

File format read: Java `Properties.load` text: `#`/`!` comments, `key=value`, `key:value` or
`key value`, backslash line continuation, `\\uXXXX` and `\\t\\n\\r\\f` escapes; ISO-8859-1 per Java,
UTF-8 accepted. load_properties() also refuses a file that is not a properties file (first_bad_line).

Stateless pure functions; thread-safe.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

_KEY_CHARS = r"(?:[A-Za-z0-9_.\-]|\\.)+"  # config-style key chars, or a backslash escape (`weird\ key`)
# `key=value` / `key: value`, or Java's `key value` when the key is dotted like a Kafka config
# (`num.io.threads 4`), so prose ("this is not a properties file") is not mistaken for a config line.
_KEY_VALUE = re.compile(rf"{_KEY_CHARS}[ \t\f]*[=:]|{_KEY_CHARS}\.{_KEY_CHARS}[ \t\f]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _logical_lines(text: str) -> Iterable[str]:
    """Join continuation lines (odd number of trailing backslashes) as Properties.load does."""
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f") if pending is not None else raw
        if pending is None:
            stripped = line.lstrip(" \t\f")
            if not stripped or stripped[0] in "#!":
                continue
            line = stripped
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending = (pending or "") + line[:-1]
            continue
        yield (pending or "") + line
        pending = None
    if pending is not None:
        yield pending


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = s[i + 1]
        if nxt == "u" and i + 6 <= n:
            try:
                out.append(chr(int(s[i + 2 : i + 6], 16)))
                i += 6
                continue
            except ValueError:
                pass
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key = line[:i]
    rest = line[i:]
    # The separator is optional whitespace, then at most one '=' or ':', then optional whitespace.
    rest = rest.lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return _unescape(key), _unescape(rest)


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java .properties text into an ordered dict of strings (later keys win)."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        props[key] = value
    return props


def load_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Load a Java .properties file (ISO-8859-1 per Java; UTF-8 accepted as Kafka's tools do).

    Raises OSError for a missing/unreadable file and NotAPropertiesFileError for one that is not a
    properties file (a binary, a JSON document, a shell script...), naming the file and the first bad line.
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    bad = first_bad_line(text)
    if bad is not None:
        raise NotAPropertiesFileError(os.fspath(path), *bad)
    return parse_properties(text)


class NotAPropertiesFileError(ValueError):
    """A file whose lines are not Java properties: `<path> is not a properties file: line N: '...'`."""

    def __init__(self, path: str, line_number: int, line: str) -> None:
        shown = line if len(line) <= 40 else line[:37] + "..."
        super().__init__(
            f"{path} is not a properties file: line {line_number}: {shown!r} (expected key=value)"
        )
        self.path = path
        self.line_number = line_number
        self.line = line


def first_bad_line(text: str) -> tuple[int, str] | None:
    """(1-based number, text) of the first line that cannot be a Kafka config line, else None.

    Every line that is not blank, a comment or a continuation must be `key=value` or `key:value` with a
    config-style key ([A-Za-z0-9._-] and backslash escapes), or `dotted.key value`; no line may hold
    control characters. (Properties.load would
    accept almost anything as `key value`; Kafka then warns per unknown key and runs on defaults, which
    is what a wrong file passed by mistake must not do.)
    """
    continued = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.lstrip(" \t\f")
        was_continued, continued = continued, _continues(raw)
        if _CONTROL.search(raw):
            return number, raw
        if was_continued or not line or line[0] in "#!":
            continue
        if not _KEY_VALUE.match(line):
            return number, raw
    return None


def _continues(line: str) -> bool:
    """An odd number of trailing backslashes joins the next line (Properties.load)."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1
