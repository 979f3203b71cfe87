"""Java .properties files and `k=v` flag values, as Kafka's tools read them.

Owns the tool-facing wrappers: `load_properties(path)` for `--command-config`, `--producer.config`,
`--consumer.config` (the loader itself is kafkapy.common.properties', shared with the client and the
broker's KafkaConfig, and refuses a file that is not a properties file; this module only turns its
failures into one-line tool errors naming the file and the first bad line);
`parse_key_values(["k=v", ...])` for repeated `--config`/`--property`/`--override` flags;
`split_config_list("a=1,b=[x,y]")` for kafka-configs' `--add-config` (brackets group commas).

Stateless pure functions; thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkapy.cli.command import ToolError, UsageError
from kafkapy.common.properties import NotAPropertiesFileError
from kafkapy.common.properties import load_properties as _load


def load_properties(path: str) -> dict[str, str]:
    """Read a .properties file; a missing/unreadable file, or one that is not a properties file, is a
    one-line ToolError."""
    try:
        return _load(path)
    except NotAPropertiesFileError as e:
        raise ToolError(str(e)) from e
    except FileNotFoundError as e:
        raise ToolError(f"{path} (No such file or directory)") from e
    except IsADirectoryError as e:
        raise ToolError(f"{path} (Is a directory)") from e
    except OSError as e:
        raise ToolError(f"{path} ({e.strerror or e})") from e


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
