"""Java .properties files and `k=v` flag values, as Kafka's tools read them.

Owns: `load_properties(path)` for `--command-config`, `--producer.config`, `--consumer.config`,
server.properties; `parse_properties(text)` (java.util.Properties.load rules: `#`/`!` comments,
`=`, `:` or whitespace separators, backslash line continuation, `\\t \\n \\r \\f \\uXXXX` escapes, later
keys win); `parse_key_values(["k=v", ...])` for repeated `--config`/`--property`/`--override` flags;
`split_config_list("a=1,b=[x,y]")` for kafka-configs' `--add-config` (brackets group commas).

Stateless pure functions; thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkapy.cli.command import ToolError, UsageError

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_SEPARATORS = "=:"
_WHITESPACE = " \t\f"


def _logical_lines(text: str) -> Iterable[str]:
    """Join continuation lines (odd number of trailing backslashes); leading whitespace of the
    continued line is dropped, as java.util.Properties does."""
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.lstrip(_WHITESPACE) if pending is not None else raw
        if pending is None and line.lstrip(_WHITESPACE)[:1] in ("#", "!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending = (pending or "") + line[:-1]
            continue
        yield (pending or "") + line
        pending = None
    if pending is not None:
        yield pending


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i, n = 0, len(s)
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
            except ValueError as e:
                raise ValueError(f"Malformed \\uxxxx encoding: {s[i:i + 6]}") from e
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    line = line.lstrip(_WHITESPACE)
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in _SEPARATORS or c in _WHITESPACE:
            break
        i += 1
    key = line[:i]
    rest = line[i:].lstrip(_WHITESPACE)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_WHITESPACE)
    return _unescape(key), _unescape(rest)


def parse_properties(text: str) -> dict[str, str]:
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        if not line.strip(_WHITESPACE):
            continue
        key, value = _split_key_value(line)
        props[key] = value
    return props


def load_properties(path: str) -> dict[str, str]:
    """Read a .properties file (ISO-8859-1 per Java, but UTF-8 is what people write: try that first)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError as e:
        raise ToolError(f"{path} (No such file or directory)") from e
    except OSError as e:
        raise ToolError(f"{path} ({e.strerror})") from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return parse_properties(text)


def parse_key_values(items: Iterable[str] | None, flag: str = "--property") -> dict[str, str]:
    """`["a=1", "b=x=y"]` -> {"a": "1", "b": "x=y"} (split on the first '='; later flags win)."""
    result: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"Invalid {flag} value '{item}': expected key=value")
        result[key.strip()] = value
    return result


def split_config_list(spec: str) -> dict[str, str]:
    """kafka-configs `--add-config 'k1=v1,k2=[v1,v2],k3=v3'`: commas inside [...] belong to the value,
    and the brackets are dropped."""
    result: dict[str, str] = {}
    depth = 0
    start = 0
    parts: list[str] = []
    for i, c in enumerate(spec):
        if c == "[":
            depth += 1
        elif c == "]":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            parts.append(spec[start:i])
            start = i + 1
    parts.append(spec[start:])
    for part in parts:
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise UsageError(f"Invalid entity config: all configs to be added must be in the format \"key=val\": {part}")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            value = value[1:-1]
        result[key.strip()] = value
    return result


def merge_client_properties(
    config_file: str | None, properties: Iterable[str] | None = None, flag: str = "--command-property"
) -> dict[str, str]:
    """Client properties for a tool: the --command-config file, then repeated k=v flags on top."""
    props = load_properties(config_file) if config_file else {}
    props.update(parse_key_values(properties, flag))
    return props
