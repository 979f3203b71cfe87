"""ConfigHelper: what DescribeConfigs reports per config (Kafka's ConfigHelper) and how IncrementalAlterConfigs
turns operations into a new set of overrides.

Per config: value, read_only, source (DYNAMIC_TOPIC_CONFIG=1, DYNAMIC_BROKER_CONFIG=2,
DYNAMIC_DEFAULT_BROKER_CONFIG=3, STATIC_BROKER_CONFIG=4, DEFAULT_CONFIG=5), is_sensitive, config_type and
synonyms in Kafka's order: the topic override first, then every broker synonym found in the dynamic
per-broker configs, then the dynamic cluster defaults, then server.properties, then the built-in defaults.
As Kafka does, the list is cut before the first entry named like the config's primary broker synonym, so
`retention.ms` reports no synonym when `log.retention.ms` is unset (Kafka 4 prints `synonyms={}` there too).

The broker side keeps Kafka's four maps (DynamicBrokerConfig): current per-broker dynamic configs, current
cluster-wide dynamic defaults, static (server.properties + overrides, as written) and static defaults
(built-in defaults that are not null). No byte format. Immutable inputs; thread-safe.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkapy.common.errors import InvalidConfigError, InvalidRequestError
from kafkapy.server.kafka_config import (
    CONFIG_DEFS,
    ConfigError,
    ConfigSource,
    ConfigType,
    KafkaConfig,
    parse_value,
    to_config_string,
)
from kafkapy.storage.log_config import (
    BROKER_SYNONYM_DEFS,
    CONFIG_TYPE_IDS,
    TOPIC_CONFIG_DEFS,
    LogConfig,
    value_to_string,
)
from kafkapy.storage.log_config import parse_value as parse_topic_value

# IncrementalAlterConfigs ConfigOperation ids.
OP_SET, OP_DELETE, OP_APPEND, OP_SUBTRACT = 0, 1, 2, 3

# Kafka's DynamicBrokerConfig.AllDynamicConfigs, restricted to the keys KafkaConfig defines; only these are
# described with read_only=false.
_DYNAMIC_LOG_CONFIGS = frozenset(BROKER_SYNONYM_DEFS) | {"log.message.timestamp.difference.max.ms"}
_DYNAMIC_OTHER = frozenset({
    "log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms",
    "num.network.threads", "num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
    "background.threads", "max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
    "metric.reporters", "producer.id.expiration.ms", "listeners", "advertised.listeners",
    "listener.security.protocol.map", "sasl.enabled.mechanisms", "sasl.jaas.config", "ssl.keystore.password",
    "ssl.key.password", "ssl.truststore.password",
})
# Kafka's DynamicReplicationConfig: per-broker throttle rates (bytes/s, LONG >= 0) that kafka-reassign-partitions
# sets; they exist only as dynamic configs, with no static key in KafkaConfig.
REPLICATION_QUOTA_CONFIGS = frozenset({
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
})
DYNAMIC_BROKER_CONFIGS = _DYNAMIC_LOG_CONFIGS | _DYNAMIC_OTHER | REPLICATION_QUOTA_CONFIGS
# What kafkapy can store and hand to the broker as a dynamic update today: configs that are only read
# when used (log defaults for new segments/retention passes, cleaner and quota knobs). Listener and
# security changes need a live reconfiguration that kafkapy does not do yet.
ALTERABLE_BROKER_CONFIGS = DYNAMIC_BROKER_CONFIGS - {
    "listeners", "advertised.listeners", "listener.security.protocol.map", "sasl.enabled.mechanisms",
    "sasl.jaas.config", "ssl.keystore.password", "ssl.key.password", "ssl.truststore.password",
    "num.network.threads", "num.io.threads", "metric.reporters",
}

_LOG4J_LEVELS = {logging.CRITICAL: "FATAL", logging.ERROR: "ERROR", logging.WARNING: "WARN",
                 logging.INFO: "INFO", logging.DEBUG: "DEBUG", 5: "TRACE"}


@dataclass(frozen=True, slots=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: int


@dataclass(frozen=True, slots=True)
class DescribedConfig:
    """One DescribeConfigs entry (Kafka's DescribeConfigsResourceResult)."""

    name: str
    value: str | None
    read_only: bool
    source: int
    is_sensitive: bool
    synonyms: tuple[ConfigSynonym, ...] = ()
    config_type: int = ConfigType.UNKNOWN
    documentation: str | None = None

    @property
    def is_default(self) -> bool:
        """DescribeConfigs v0's IsDefault."""
        return self.source == ConfigSource.DEFAULT_CONFIG


def broker_synonyms(name: str) -> list[str]:
    """Kafka's DynamicBrokerConfig.brokerConfigSynonyms: the broker configs that set the same value."""
    if name in ("log.roll.ms", "log.roll.hours"):
        return ["log.roll.ms", "log.roll.hours"]
    if name in ("log.roll.jitter.ms", "log.roll.jitter.hours"):
        return ["log.roll.jitter.ms", "log.roll.jitter.hours"]
    if name == "log.flush.interval.ms":
        return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    if name in ("log.retention.ms", "log.retention.minutes", "log.retention.hours"):
        return ["log.retention.ms", "log.retention.minutes", "log.retention.hours"]
    return [name]


def _static_defaults(config: KafkaConfig) -> dict[str, str]:
    out = {name: d for name in CONFIG_DEFS if (d := config.default_string(name)) is not None}
    for name, bdef in BROKER_SYNONYM_DEFS.items():
        if name not in out and bdef.default is not None:
            out[name] = value_to_string(bdef.default) or ""
    return out


@dataclass
class ConfigHelper:
    """Describes topic and broker configs of this broker. dynamic_broker / dynamic_default are the stored
    dynamic overrides (per this broker / cluster-wide '<default>')."""

    config: KafkaConfig
    dynamic_broker: Mapping[str, str] = field(default_factory=dict)
    dynamic_default: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.static = dict(self.config.originals)
        self.static_default = _static_defaults(self.config)

    # -- the broker's effective properties (what a topic's defaults come from) ---------------------------

    def broker_props(self) -> dict[str, Any]:
        props: dict[str, Any] = dict(self.static)
        props.update(self.dynamic_default)
        props.update(self.dynamic_broker)
        return props

    def topic_log_config(self, overrides: Mapping[str, str]) -> LogConfig:
        # Kafka's extractLogConfigMap: only the broker configs that are some topic config's synonym.
        broker = {k: v for k, v in self.broker_props().items() if k in BROKER_SYNONYM_DEFS}
        return LogConfig.from_props(overrides, broker)

    # -- synonyms -----------------------------------------------------------------------------------------

    def _config_synonyms(self, name: str, synonyms: list[str], sensitive: bool) -> list[ConfigSynonym]:
        out: list[ConfigSynonym] = []
        for source, values in ((ConfigSource.DYNAMIC_BROKER_CONFIG, self.dynamic_broker),
                               (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, self.dynamic_default),
                               (ConfigSource.STATIC_BROKER_CONFIG, self.static),
                               (ConfigSource.DEFAULT_CONFIG, self.static_default)):
            for syn in synonyms:
                if syn in values:
                    out.append(ConfigSynonym(syn, None if sensitive else values[syn], int(source)))
        # Kafka drops every entry before the first one named `name` (listener overrides, and, as a side
        # effect, hours/minutes fallbacks of an unset primary synonym).
        for i, s in enumerate(out):
            if s.name == name:
                return out[i:]
        return []

    # -- topics -------------------------------------------------------------------------------------------

    def describe_topic(self, overrides: Mapping[str, str], keys: Iterable[str] | None = None,
                       include_synonyms: bool = False, include_documentation: bool = False) -> list[DescribedConfig]:
        log_config = self.topic_log_config(overrides)
        wanted = set(keys) if keys else None
        out = []
        for name in sorted(n for n, d in TOPIC_CONFIG_DEFS.items() if not d.internal):
            if wanted is not None and name not in wanted:
                continue
            out.append(self._topic_entry(log_config, overrides, name, include_synonyms, include_documentation))
        return out

    def _topic_entry(self, log_config: LogConfig, overrides: Mapping[str, str], name: str, include_synonyms: bool,
                     include_documentation: bool) -> DescribedConfig:
        d = TOPIC_CONFIG_DEFS[name]
        sensitive = d.type == "PASSWORD"
        value = None if sensitive else value_to_string(log_config.get(name))
        synonyms: list[ConfigSynonym] = []
        if d.synonyms:
            primary = d.synonyms[0].name
            synonyms = self._config_synonyms(primary, broker_synonyms(primary), sensitive)
        if name in overrides:
            synonyms.insert(0, ConfigSynonym(name, value, int(ConfigSource.DYNAMIC_TOPIC_CONFIG)))
        source = synonyms[0].source if synonyms else int(ConfigSource.DEFAULT_CONFIG)
        doc = _topic_documentation(name) if include_documentation else None
        return DescribedConfig(name, value, False, source, sensitive, tuple(synonyms) if include_synonyms else (),
                               CONFIG_TYPE_IDS.get(d.type, 0), doc)

    # -- brokers ------------------------------------------------------------------------------------------

    def describe_broker(self, per_broker: bool, keys: Iterable[str] | None = None, include_synonyms: bool = False,
                        include_documentation: bool = False) -> list[DescribedConfig]:
        """per_broker: resource name = this broker's id (every config); else '' (the cluster-wide dynamic
        defaults only)."""
        if per_broker:
            names = set(CONFIG_DEFS) | {k for k, v in self.static.items() if v is not None} | set(self.dynamic_broker)
            names |= set(self.dynamic_default)
        else:
            names = set(self.dynamic_default)
        wanted = set(keys) if keys else None
        out = []
        for name in sorted(names):
            if wanted is not None and name not in wanted:
                continue
            out.append(self._broker_entry(name, per_broker, include_synonyms, include_documentation))
        return out

    def _broker_value(self, name: str, per_broker: bool) -> str | None:
        if not per_broker:
            return self.dynamic_default.get(name)
        if name in self.dynamic_broker:
            return self.dynamic_broker[name]
        if name in self.dynamic_default:
            return self.dynamic_default[name]
        key = CONFIG_DEFS.get(name)
        if key is None or (key.type is ConfigType.DOUBLE and name in self.static):
            return self.static.get(name)  # unknown keys as written; doubles keep their Java spelling
        return to_config_string(self.config.get(name))

    def _broker_entry(self, name: str, per_broker: bool, include_synonyms: bool,
                      include_documentation: bool) -> DescribedConfig:
        key = CONFIG_DEFS.get(name)
        if key is not None:
            config_type = key.type
        elif name in BROKER_SYNONYM_DEFS:
            config_type = ConfigType[BROKER_SYNONYM_DEFS[name].type]
        elif name in REPLICATION_QUOTA_CONFIGS:
            config_type = ConfigType.LONG
        else:
            config_type = ConfigType.UNKNOWN
        # Kafka's KafkaConfig.maybeSensitive: passwords, and keys it has no type for (custom configs).
        sensitive = config_type in (ConfigType.PASSWORD, ConfigType.UNKNOWN)
        value = None if sensitive else self._broker_value(name, per_broker)
        synonyms = self._config_synonyms(name, broker_synonyms(name), sensitive)
        if not per_broker:
            synonyms = [s for s in synonyms if s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        source = synonyms[0].source if synonyms else int(ConfigSource.DEFAULT_CONFIG)
        doc = _broker_documentation(name, config_type) if include_documentation else None
        return DescribedConfig(name, value, name not in DYNAMIC_BROKER_CONFIGS, source, sensitive,
                               tuple(synonyms) if include_synonyms else (), int(config_type), doc)

    # -- broker loggers -----------------------------------------------------------------------------------

    @staticmethod
    def describe_loggers(keys: Iterable[str] | None = None) -> list[DescribedConfig]:
        """Python loggers, their parents included (kafka, kafka.controller), with their effective level in
        log4j's names (Kafka's Log4jController.resolveLevel); 'root' is the root logger."""
        names = ["root"] + sorted(logging.root.manager.loggerDict)
        wanted = set(keys) if keys else None
        out = []
        for name in names:
            if wanted is not None and name not in wanted:
                continue
            logger = logging.getLogger() if name == "root" else logging.getLogger(name)
            level = _LOG4J_LEVELS.get(logger.getEffectiveLevel(), logging.getLevelName(logger.getEffectiveLevel()))
            out.append(DescribedConfig(name, level, False, int(ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG), False))
        return out


def _topic_documentation(name: str) -> str:
    d = TOPIC_CONFIG_DEFS[name]
    parts = [f"Topic config {name} ({d.type})."]
    if d.synonyms:
        parts.append("Default from broker config " + " / ".join(s.name for s in d.synonyms) + ".")
    if d.valid_values:
        parts.append(f"Valid values: {d.valid_values}.")
    return " ".join(parts)


def _broker_documentation(name: str, config_type: ConfigType) -> str:
    key = CONFIG_DEFS.get(name)
    default = key.default if key is not None else None
    text = f"Broker config {name} ({config_type.name})."
    return text + (f" Default: {default}." if default is not None else "")


# -- alter support --------------------------------------------------------------------------------------------

def prepare_incremental_configs(ops: Iterable[tuple[str, int, str | None]], current: Mapping[str, str],
                                type_of: Mapping[str, str], defaults: Mapping[str, str | None],
                                unknown_message: str) -> dict[str, str]:
    """Apply IncrementalAlterConfigs operations (name, op, value) to the current overrides.

    type_of gives each known config's type name ('LIST', ...); APPEND/SUBTRACT start from the current
    override or else the default, add values not yet present / remove given ones (Kafka's KRaft rules)."""
    props = dict(current)
    for name, op, value in ops:
        if op == OP_SET:
            if value is None:
                raise InvalidRequestError(f"Null value not supported for : {name}")
            props[name] = value
        elif op == OP_DELETE:
            props.pop(name, None)
        elif op in (OP_APPEND, OP_SUBTRACT):
            if name not in type_of:
                raise InvalidConfigError(f"{unknown_message}{name}")
            if type_of[name] not in ("LIST", ConfigType.LIST.name):
                verb = "APPEND" if op == OP_APPEND else "SUBTRACT"
                raise InvalidConfigError(f"Can't {verb} to key {name} because its type is not LIST.")
            base = props[name] if name in props else defaults.get(name)
            parts = [p.strip() for p in (base or "").split(",") if p.strip()]
            for item in (value or "").split(","):
                item = item.strip()
                if op == OP_APPEND and item and item not in parts:
                    parts.append(item)
                elif op == OP_SUBTRACT and item in parts:
                    parts.remove(item)
            props[name] = ",".join(parts)
        else:
            raise InvalidRequestError(f"Unknown config operation {op} for config {name}")
    return props


def topic_config_types() -> dict[str, str]:
    return {n: d.type for n, d in TOPIC_CONFIG_DEFS.items() if not d.internal}


def topic_config_defaults() -> dict[str, str | None]:
    return {n: value_to_string(d.default) for n, d in TOPIC_CONFIG_DEFS.items()}


def broker_config_types() -> dict[str, str]:
    return {n: k.type.name for n, k in CONFIG_DEFS.items()}


def broker_config_defaults(config: KafkaConfig) -> dict[str, str | None]:
    return {n: config.default_string(n) for n in CONFIG_DEFS}


def validate_dynamic_broker_configs(props: Mapping[str, str], per_broker: bool) -> None:
    """Kafka's DynamicBrokerConfig.validate, for the configs kafkapy can update dynamically."""
    not_dynamic = sorted(k for k in props if k not in ALTERABLE_BROKER_CONFIGS)
    if not_dynamic:
        raise InvalidRequestError(f"Cannot update these configs dynamically: {set_repr(not_dynamic)}")
    for name, raw in props.items():
        key = CONFIG_DEFS.get(name)
        try:
            if name in REPLICATION_QUOTA_CONFIGS:
                if raw is not None and (not raw.strip().lstrip("-").isdigit() or int(raw) < 0):
                    raise ValueError(f"Invalid value {raw} for configuration {name}: Value must be at least 0")
            elif key is not None:
                value = parse_value(key, raw)
                if key.validator is not None:
                    key.validator(name, value)
            else:
                bdef = BROKER_SYNONYM_DEFS[name]
                value = parse_topic_value(name, bdef.type, raw)
                if bdef.validator is not None and value is not None:
                    bdef.validator(name, value)
        except (ConfigError, ValueError, InvalidConfigError) as e:
            raise InvalidRequestError((e.message if isinstance(e, InvalidConfigError) else None) or str(e)) from None


def set_repr(names: Iterable[str]) -> str:
    """Scala's Set(...) rendering, which Kafka's messages embed."""
    return "Set(" + ", ".join(names) + ")"

