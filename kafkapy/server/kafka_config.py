"""KafkaConfig: the broker's static configuration (server.properties + --override k=v).

Owns Kafka's broker config keys verbatim with their types and defaults (ConfigDef semantics:
values are trimmed, parsed per type, validated; errors are one-line ConfigErrors naming the key),
the listener grammar `NAME://host:port[,...]`, effective values of synonym keys (log.retention.ms >
.minutes > .hours, ...) and the per-key facts DescribeConfigs reports (value, default, source,
type, sensitive). Unknown keys are kept in `originals` and logged as unused, as Kafka does.

File format read: Java .properties text (kafkapy.common.properties.load_properties: a file that is not
a properties file is refused, naming the first bad line).
Thread-safety: immutable after construction; share freely.
"""

from __future__ import annotations

import base64
import logging
import os
import re
import socket
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkapy.cluster.broker import EndPoint
from kafkapy.common.config_types import ConfigSource, ConfigType
from kafkapy.common.properties import load_properties
from kafkapy.server.kafka_config_defs import (
    CONFIG_DEFS,
    DEFAULT_SECURITY_PROTOCOL_MAP,
    EMBEDDED_DEFAULTS,
    INT_MAX,
    LONG_MAX,
    SYNONYMS,
    ConfigError,
    ConfigKey,
)

log = logging.getLogger("kafka.server.KafkaConfig")

_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_RANGES = {ConfigType.INT: (-(2**31), INT_MAX), ConfigType.SHORT: (-(2**15), 2**15 - 1),
           ConfigType.LONG: (-(2**63), LONG_MAX)}  # fmt: skip


def parse_value(key: ConfigKey, raw: Any) -> Any:
    """Parse a raw value (string from a file, or a Python value) per the key's type."""
    if raw is None:
        return None
    t = key.type
    if isinstance(raw, str):
        s = raw.strip()
    elif isinstance(raw, bool):
        s = "true" if raw else "false"
    elif isinstance(raw, list | tuple):
        s = ",".join(str(x) for x in raw)
    else:
        s = str(raw)
    if t is ConfigType.BOOLEAN:
        if s.lower() in ("true", "false"):
            return s.lower() == "true"
        raise ConfigError(f"Invalid value {s} for configuration {key.name}: Expected value to be either true or false")
    if t in _RANGES:
        lo, hi = _RANGES[t]
        if not _INT_RE.match(s) or not lo <= int(s) <= hi:
            raise ConfigError(f"Invalid value {s} for configuration {key.name}: Not a number of type {t.name}")
        return int(s)
    if t is ConfigType.DOUBLE:
        try:
            return float(s)
        except ValueError:
            raise ConfigError(
                f"Invalid value {s} for configuration {key.name}: Not a number of type DOUBLE"
            ) from None
    if t is ConfigType.LIST:
        return [item.strip() for item in s.split(",")] if s else []
    return s


def to_config_string(value: Any) -> str | None:
    """Kafka's string form of a typed value (what DescribeConfigs shows)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


_LISTENER_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


def parse_security_protocol_map(value: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in (x.strip() for x in value.split(",")):
        if not item:
            continue
        name, sep, proto = item.partition(":")
        if not sep or not name.strip() or not proto.strip():
            raise ConfigError(f"Invalid value {value} for configuration listener.security.protocol.map")
        out[name.strip().upper()] = proto.strip().upper()
    return out


def parse_listeners(value: str, protocol_map: Mapping[str, str] | None = None, key: str = "listeners") -> list[EndPoint]:
    """Parse `NAME://host:port[,NAME2://host:port]`; names must be unique and mapped to a protocol."""
    pmap = dict(protocol_map) if protocol_map is not None else parse_security_protocol_map(DEFAULT_SECURITY_PROTOCOL_MAP)
    endpoints: list[EndPoint] = []
    for item in (x.strip() for x in (value or "").split(",")):
        if not item:
            continue
        m = _LISTENER_RE.match(item)
        if not m:
            raise ConfigError(f"Invalid value {value} for configuration {key}: Unable to parse {item} to a broker endpoint")
        name, host, port = m.group(1).upper(), m.group(2), int(m.group(3))
        if not 0 <= port <= 65535:
            raise ConfigError(f"Invalid value {value} for configuration {key}: port {port} out of range")
        if name not in pmap:
            raise ConfigError(f"Invalid value {value} for configuration {key}: No security protocol defined for listener {name}")
        endpoints.append(EndPoint(name, host, port, pmap[name]))
    names = [e.listener_name for e in endpoints]
    if len(set(names)) != len(names):
        raise ConfigError(f"Invalid value {value} for configuration {key}: Each listener must have a different name")
    return endpoints


@dataclass(frozen=True)
class ConfigEntry:
    """One broker config as DescribeConfigs reports it (sensitive values are None)."""

    name: str
    value: str | None
    default_value: str | None
    source: ConfigSource
    type: ConfigType
    sensitive: bool
    read_only: bool = True
    synonyms: list[tuple[str, str | None, ConfigSource]] = field(default_factory=list)

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG


class KafkaConfig:
    """Typed view of the broker configuration.

    `config.get_int("num.io.threads")` and `config.num_io_threads` (dots become underscores) return
    the typed value; `originals` holds the raw strings as supplied (including unknown keys).
    """

    def __init__(self, props: Mapping[str, Any] | None = None, defaults: Mapping[str, str] | None = None) -> None:
        self.originals: dict[str, str] = {}
        for k, v in (props or {}).items():
            self.originals[str(k)] = to_config_string(v if not isinstance(v, tuple) else list(v)) or ""
        self._default_overrides = dict(defaults or {})
        self._values: dict[str, Any] = {}
        for name, key in CONFIG_DEFS.items():
            if name in self.originals:
                value = parse_value(key, self.originals[name])
            else:
                value = parse_value(key, self.default_string(name))
            if key.validator is not None:
                key.validator(name, value)
            self._values[name] = value
        for name in self.originals:
            # listener.name.<listener>.<key>: per-listener security settings (server/network/listener_security.py)
            if name not in CONFIG_DEFS and not name.startswith("listener.name."):
                log.warning("The configuration '%s' was supplied but isn't a known config.", name)
        self._validate()

    @classmethod
    def from_properties(cls, path_or_none: str | os.PathLike[str] | None, overrides: Mapping[str, Any] | None = None) -> KafkaConfig:
        """Load server.properties (or the embedded defaults when None) and apply --override k=v."""
        props: dict[str, Any] = {}
        if path_or_none is not None:
            try:
                props.update(load_properties(path_or_none))
            except OSError as e:
                raise ConfigError(f"Cannot read config file {os.fspath(path_or_none)}: {e.strerror or e}") from None
        props.update(overrides or {})
        return cls(props, defaults=EMBEDDED_DEFAULTS if path_or_none is None else None)

    # -- generic typed access -------------------------------------------------------------------

    def get(self, name: str, default: Any = None) -> Any:
        if name in self._values:
            return self._values[name]
        return self.originals.get(name, default)

    def get_int(self, name: str) -> int:
        return self._typed(name, (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG))

    get_long = get_int
    get_short = get_int

    def get_bool(self, name: str) -> bool:
        return self._typed(name, (ConfigType.BOOLEAN,))

    get_boolean = get_bool

    def get_double(self, name: str) -> float:
        return self._typed(name, (ConfigType.DOUBLE,))

    def get_string(self, name: str) -> str | None:
        return self._typed(name, (ConfigType.STRING, ConfigType.CLASS, ConfigType.PASSWORD))

    def get_list(self, name: str) -> list[str]:
        return self._typed(name, (ConfigType.LIST,))

    def is_set(self, name: str) -> bool:
        """True when the key was supplied (file or override), not defaulted."""
        return name in self.originals

    def values(self) -> dict[str, Any]:
        """Typed values of every defined key."""
        return dict(self._values)

    def default_string(self, name: str) -> str | None:
        if name in self._default_overrides:
            return self._default_overrides[name]
        return CONFIG_DEFS[name].default

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        name = attr.replace("_", ".")
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"KafkaConfig has no config {name!r}")

    def _typed(self, name: str, types: tuple[ConfigType, ...]) -> Any:
        key = CONFIG_DEFS.get(name)
        if key is None:
            raise KeyError(f"Unknown broker config {name}")
        if key.type not in types:
            raise TypeError(f"{name} is of type {key.type.name}")
        return self._values[name]

    # -- effective values -----------------------------------------------------------------------

    @property
    def broker_id(self) -> int:
        """broker.id, else node.id, else 0 (embedded single broker; Kafka would auto-generate)."""
        bid, nid = self._values["broker.id"], self._values["node.id"]
        if bid >= 0:
            return bid
        return nid if nid >= 0 else 0

    node_id = broker_id

    @property
    def log_dirs(self) -> list[str]:
        value = self._values["log.dirs"] or self._values["log.dir"] or ""
        return [d.strip() for d in value.split(",") if d.strip()]

    @property
    def log_retention_time_ms(self) -> int:
        ms, minutes = self._values["log.retention.ms"], self._values["log.retention.minutes"]
        if ms is not None:
            return -1 if ms < 0 else ms
        if minutes is not None:
            return -1 if minutes < 0 else minutes * 60_000
        hours = self._values["log.retention.hours"]
        return -1 if hours < 0 else hours * 3_600_000

    @property
    def log_roll_time_ms(self) -> int:
        ms = self._values["log.roll.ms"]
        return ms if ms is not None else self._values["log.roll.hours"] * 3_600_000

    @property
    def log_roll_time_jitter_ms(self) -> int:
        ms = self._values["log.roll.jitter.ms"]
        return ms if ms is not None else self._values["log.roll.jitter.hours"] * 3_600_000

    @property
    def log_flush_interval_ms(self) -> int:
        ms = self._values["log.flush.interval.ms"]
        return ms if ms is not None else self._values["log.flush.scheduler.interval.ms"]

    @property
    def uses_zookeeper(self) -> bool:
        return bool(self._values["zookeeper.connect"])

    def internal_topic_replication_factor(self, name: str, live_brokers: int) -> int:
        """offsets.topic.replication.factor / transaction.state.log.replication.factor. The embedded single
        node caps it by the live brokers (it needs no setup, as Kafka's quick-start properties set 1); a ZooKeeper
        cluster uses the configured factor, and creation waits until that many brokers are alive."""
        if self.uses_zookeeper:
            return self.get_int(name)
        return max(1, min(self.get_int(name), live_brokers))

    # -- listeners ------------------------------------------------------------------------------

    def listener_security_protocol_map(self) -> dict[str, str]:
        return parse_security_protocol_map(self._values["listener.security.protocol.map"])

    def listener_endpoints(self) -> list[EndPoint]:
        return parse_listeners(self._values["listeners"], self.listener_security_protocol_map())

    def advertised_listener_endpoints(self) -> list[EndPoint]:
        adv = self._values["advertised.listeners"]
        if adv is None:
            return self.listener_endpoints()
        return parse_listeners(adv, self.listener_security_protocol_map(), "advertised.listeners")

    def inter_broker_listener_name(self) -> str:
        name = self._values["inter.broker.listener.name"]
        if name:
            return name.upper()
        return self._values["security.inter.broker.protocol"].upper()

    def advertised_address(self, listener_name: str, bound_port: int) -> tuple[str, int]:
        """The (host, port) clients are told for a listener once it is bound: port 0 becomes the
        bound port; an empty host becomes this machine's canonical host name (as Kafka does)."""
        for ep in self.advertised_listener_endpoints():
            if ep.listener_name == listener_name.upper():
                host = ep.host or socket.getfqdn()
                return host, bound_port if ep.port == 0 else ep.port
        raise ConfigError(f"No advertised listener named {listener_name}")

    # -- DescribeConfigs ------------------------------------------------------------------------

    def source_of(self, name: str) -> ConfigSource:
        return ConfigSource.STATIC_BROKER_CONFIG if name in self.originals else ConfigSource.DEFAULT_CONFIG

    def config_entries(self) -> dict[str, ConfigEntry]:
        """Every defined key with its value, default, source, type and sensitivity."""
        entries: dict[str, ConfigEntry] = {}
        for name, key in CONFIG_DEFS.items():
            sensitive = key.type is ConfigType.PASSWORD
            synonyms = []
            for syn in SYNONYMS.get(name, [name]):
                if syn in self.originals or syn == name or self.default_string(syn) is not None:
                    synonyms.append((syn, None if sensitive else self._string_value(syn), self.source_of(syn)))
            entries[name] = ConfigEntry(
                name=name,
                value=None if sensitive else self._string_value(name),
                default_value=None if sensitive else self.default_string(name),
                source=self.source_of(name),
                type=key.type,
                sensitive=sensitive,
                synonyms=synonyms,
            )
        return entries

    def _string_value(self, name: str) -> str | None:
        if CONFIG_DEFS[name].type is ConfigType.DOUBLE and name in self.originals:
            return self.originals[name].strip()  # keep Java's spelling of doubles
        return to_config_string(self._values[name])

    def __repr__(self) -> str:
        shown = {
            k: ("[hidden]" if k in CONFIG_DEFS and CONFIG_DEFS[k].type is ConfigType.PASSWORD else v)
            for k, v in self.originals.items()
        }
        return f"KafkaConfig({shown})"

    def values_log_string(self) -> str:
        """The 'KafkaConfig values:' block Kafka logs at startup (sorted, passwords hidden)."""
        lines = ["KafkaConfig values: "]
        for name in sorted(CONFIG_DEFS):
            hidden = CONFIG_DEFS[name].type is ConfigType.PASSWORD and self._values[name] is not None
            lines.append(f"\t{name} = {'[hidden]' if hidden else to_config_string(self._values[name])}")
        return "\n".join(lines)

    # -- cross-key validation -------------------------------------------------------------------

    def _validate(self) -> None:
        bid, nid = self._values["broker.id"], self._values["node.id"]
        if bid >= 0 and nid >= 0 and bid != nid:
            raise ConfigError(f"Invalid value {nid} for configuration node.id: must be the same value as broker.id ({bid})")
        if not self.log_dirs:
            raise ConfigError("Invalid value for configuration log.dirs: at least one log directory is required")
        listeners = self.listener_endpoints()
        if not listeners:
            raise ConfigError("Invalid value for configuration listeners: at least one listener is required")
        advertised = self.advertised_listener_endpoints()
        for ep in advertised:
            if ep.host == "0.0.0.0":
                raise ConfigError(
                    "Invalid value for configuration advertised.listeners: cannot use the nonroutable "
                    "meta-address 0.0.0.0. Use a routable IP address."
                )
        names = {ep.listener_name for ep in listeners}
        for ep in advertised:
            if ep.listener_name not in names:
                raise ConfigError(
                    f"Invalid value for configuration advertised.listeners: listener {ep.listener_name} "
                    "is not in listeners"
                )
        if self.inter_broker_listener_name() not in names and not self.is_set("controller.listener.names"):
            raise ConfigError(
                f"Invalid value {self.inter_broker_listener_name()} for configuration inter.broker.listener.name: "
                "must be a listener name defined in listeners"
            )
        if self._values["group.min.session.timeout.ms"] > self._values["group.max.session.timeout.ms"]:
            raise ConfigError(
                "Invalid value for configuration group.min.session.timeout.ms: must not exceed group.max.session.timeout.ms"
            )


def parse_override(text: str) -> tuple[str, str]:
    """Parse one `--override k=v` argument."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"Invalid override {text!r}: expected property=value")
    return key.strip(), value


def generate_cluster_id() -> str:
    """A new cluster id in Kafka's form: a random UUID as 22 chars of URL-safe base64, no padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")


def validate_cluster_id(cluster_id: str) -> str:
    """Return cluster_id if it is a Kafka cluster id (base64url of 16 bytes), else raise ConfigError."""
    try:
        raw = base64.urlsafe_b64decode(cluster_id + "==")
    except (ValueError, TypeError):
        raw = b""
    if len(cluster_id) != 22 or len(raw) != 16:
        raise ConfigError(f"Invalid cluster.id {cluster_id!r}: expected 22 characters of URL-safe base64")
    return cluster_id
