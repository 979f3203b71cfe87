"""LogConfig: Kafka's topic-level configs (names, types, defaults, validators, broker synonyms).

TOPIC_CONFIG_DEFS lists every topic config in Kafka's definition order (LogConfig.CONFIG), each with its
ConfigDef type name (BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD), default, valid
values and the broker configs that supply its default, in Kafka's priority order
(ServerTopicConfigSynonyms: `retention.ms` <- `log.retention.ms`, `log.retention.minutes`,
`log.retention.hours`). BROKER_SYNONYM_DEFS gives each of those broker configs' own type and default,
so DescribeConfigs can report DEFAULT_CONFIG / STATIC_BROKER_CONFIG synonyms.
Values are parsed as Kafka's ConfigDef parses them (strings from properties files, or typed values);
bad names or values raise InvalidConfigurationError. LogConfig is immutable; thread-safe.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkapy.storage.errors import InvalidConfigurationError

__all__ = [
    "ConfigSynonym",
    "TopicConfigDef",
    "BrokerConfigDef",
    "TOPIC_CONFIG_DEFS",
    "BROKER_SYNONYM_DEFS",
    "CONFIG_TYPE_IDS",
    "LogConfig",
    "parse_value",
    "value_to_string",
    "validate_topic_configs",
    "broker_default_for",
]

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
HOURS_TO_MS = 3_600_000
MINUTES_TO_MS = 60_000

# DescribeConfigs ConfigType ids (ConfigEntry.ConfigType).
CONFIG_TYPE_IDS = {
    "UNKNOWN": 0, "BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6,
    "LIST": 7, "CLASS": 8, "PASSWORD": 9,
}

Validator = Callable[[str, Any], None]


@dataclass(frozen=True, slots=True)
class ConfigSynonym:
    """A broker config that supplies a topic config's default; `multiplier` converts hours/minutes to ms."""

    name: str
    multiplier: int = 1


@dataclass(frozen=True, slots=True)
class TopicConfigDef:
    name: str
    type: str
    default: Any
    synonyms: tuple[ConfigSynonym, ...] = ()
    validator: Validator | None = None
    valid_values: str = ""  # Kafka's "Valid Values" column, for describe/docs
    sensitive: bool = False
    internal: bool = False


@dataclass(frozen=True, slots=True)
class BrokerConfigDef:
    name: str
    type: str
    default: Any
    validator: Validator | None = None


# --- validators (messages follow ConfigDef's "Invalid value X for configuration Y: ...") ----------------

def _fail(name: str, value: Any, why: str) -> InvalidConfigurationError:
    return InvalidConfigurationError(f"Invalid value {value_to_string_raw(value)} for configuration {name}: {why}")


def at_least(lo: float) -> Validator:
    def check(name: str, value: Any) -> None:
        if value is None:
            return
        if value < lo:
            raise _fail(name, value, f"Value must be at least {value_to_string_raw(lo)}")

    return check


def between(lo: float, hi: float) -> Validator:
    def check(name: str, value: Any) -> None:
        if value is None:
            return
        if value < lo:
            raise _fail(name, value, f"Value must be at least {value_to_string_raw(lo)}")
        if value > hi:
            raise _fail(name, value, f"Value must be no more than {value_to_string_raw(hi)}")

    return check


def valid_string(*allowed: str) -> Validator:
    def check(name: str, value: Any) -> None:
        if value not in allowed:
            raise _fail(name, value, f"String must be one of: {', '.join(allowed)}")

    return check


def valid_list(*allowed: str) -> Validator:
    def check(name: str, value: Any) -> None:
        for item in value or ():
            if item not in allowed:
                raise _fail(name, item, f"String must be one of: {', '.join(allowed)}")

    return check


def _gzip_level(name: str, value: Any) -> None:
    if value != -1 and not 1 <= value <= 9:
        raise _fail(name, value, "[1,...,9] or -1")


def _throttled_replicas(name: str, value: Any) -> None:
    items = [v.strip() for v in value or ()]
    if items == ["*"]:
        return
    for item in items:
        part, sep, broker = item.partition(":")
        if not (sep and part.strip().isdigit() and broker.strip().isdigit()):
            raise _fail(name, ",".join(value), f"{name} must be the literal '*' or a list of replicas in the "
                        "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


_COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")


def _log(name: str, mult: int = 1) -> ConfigSynonym:
    return ConfigSynonym("log." + name, mult)


def _cleaner(name: str) -> ConfigSynonym:
    return ConfigSynonym("log.cleaner." + name)


def _d(name: str, type_: str, default: Any, validator: Validator | None = None, valid: str = "",
       synonyms: tuple[ConfigSynonym, ...] = (), internal: bool = False) -> TopicConfigDef:
    return TopicConfigDef(name, type_, default, synonyms, validator, valid, False, internal)


# In Kafka's LogConfig definition order.
_TOPIC_DEFS = [
    # Kafka 3.9's floor, LegacyRecord.RECORD_OVERHEAD_V0 (4.0 raised it to 1 MiB; 3.9 is the target).
    _d("segment.bytes", "INT", 1024 * 1024 * 1024, at_least(14), "[14,...]",
       (_log("segment.bytes"),)),
    _d("segment.ms", "LONG", 7 * 24 * HOURS_TO_MS, at_least(1), "[1,...]",
       (_log("roll.ms"), _log("roll.hours", HOURS_TO_MS))),
    _d("segment.jitter.ms", "LONG", 0, at_least(0), "[0,...]",
       (_log("roll.jitter.ms"), _log("roll.jitter.hours", HOURS_TO_MS))),
    _d("segment.index.bytes", "INT", 10 * 1024 * 1024, at_least(4), "[4,...]", (_log("index.size.max.bytes"),)),
    _d("flush.messages", "LONG", LONG_MAX, at_least(1), "[1,...]", (_log("flush.interval.messages"),)),
    _d("flush.ms", "LONG", LONG_MAX, at_least(0), "[0,...]",
       (_log("flush.interval.ms"), _log("flush.scheduler.interval.ms"))),
    _d("retention.bytes", "LONG", -1, None, "", (_log("retention.bytes"),)),
    _d("retention.ms", "LONG", 7 * 24 * HOURS_TO_MS, at_least(-1), "[-1,...]",
       (_log("retention.ms"), _log("retention.minutes", MINUTES_TO_MS), _log("retention.hours", HOURS_TO_MS))),
    _d("max.message.bytes", "INT", 1024 * 1024 + 12, at_least(0), "[0,...]", (ConfigSynonym("message.max.bytes"),)),
    _d("index.interval.bytes", "INT", 4096, at_least(0), "[0,...]", (_log("index.interval.bytes"),)),
    _d("delete.retention.ms", "LONG", 24 * HOURS_TO_MS, at_least(0), "[0,...]", (_cleaner("delete.retention.ms"),)),
    _d("min.compaction.lag.ms", "LONG", 0, at_least(0), "[0,...]", (_cleaner("min.compaction.lag.ms"),)),
    _d("max.compaction.lag.ms", "LONG", LONG_MAX, at_least(1), "[1,...]", (_cleaner("max.compaction.lag.ms"),)),
    _d("file.delete.delay.ms", "LONG", 60000, at_least(0), "[0,...]", (_log("segment.delete.delay.ms"),)),
    _d("min.cleanable.dirty.ratio", "DOUBLE", 0.5, between(0, 1), "[0,...,1]", (_cleaner("min.cleanable.ratio"),)),
    _d("cleanup.policy", "LIST", ["delete"], valid_list("compact", "delete"), "[compact, delete]",
       (_log("cleanup.policy"),)),
    _d("unclean.leader.election.enable", "BOOLEAN", False, None, "",
       (ConfigSynonym("unclean.leader.election.enable"),)),
    _d("min.insync.replicas", "INT", 1, at_least(1), "[1,...]", (ConfigSynonym("min.insync.replicas"),)),
    _d("compression.type", "STRING", "producer", valid_string(*_COMPRESSION_TYPES),
       "[uncompressed, zstd, lz4, snappy, gzip, producer]", (ConfigSynonym("compression.type"),)),
    _d("compression.gzip.level", "INT", -1, _gzip_level, "[1,...,9] or -1", (ConfigSynonym("compression.gzip.level"),)),
    _d("compression.lz4.level", "INT", 9, between(1, 17), "[1,...,17]", (ConfigSynonym("compression.lz4.level"),)),
    _d("compression.zstd.level", "INT", 3, between(-131072, 22), "[-131072,...,22]",
       (ConfigSynonym("compression.zstd.level"),)),
    _d("preallocate", "BOOLEAN", False, None, "", (_log("preallocate"),)),
    _d("message.timestamp.type", "STRING", "CreateTime", valid_string("CreateTime", "LogAppendTime"),
       "[CreateTime, LogAppendTime]", (_log("message.timestamp.type"),)),
    # Deprecated since 3.6 (KIP-937) but still a topic config in 3.9: before/after.max.ms fall back to it.
    _d("message.timestamp.difference.max.ms", "LONG", LONG_MAX, at_least(0), "[0,...]",
       (_log("message.timestamp.difference.max.ms"),)),
    _d("message.timestamp.before.max.ms", "LONG", LONG_MAX, at_least(0), "[0,...]",
       (_log("message.timestamp.before.max.ms"),)),
    _d("message.timestamp.after.max.ms", "LONG", LONG_MAX, at_least(0), "[0,...]",
       (_log("message.timestamp.after.max.ms"),)),
    _d("leader.replication.throttled.replicas", "LIST", [], _throttled_replicas,
       "[partitionId]:[brokerId],[partitionId]:[brokerId],..."),
    _d("follower.replication.throttled.replicas", "LIST", [], _throttled_replicas,
       "[partitionId]:[brokerId],[partitionId]:[brokerId],..."),
    _d("remote.storage.enable", "BOOLEAN", False),
    _d("local.retention.ms", "LONG", -2, at_least(-2), "[-2,...]", (_log("local.retention.ms"),)),
    _d("local.retention.bytes", "LONG", -2, at_least(-2), "[-2,...]", (_log("local.retention.bytes"),)),
    _d("remote.log.copy.disable", "BOOLEAN", False),
    _d("remote.log.delete.on.disable", "BOOLEAN", False),
    # Kafka's test-only override that bypasses segment.bytes' 1 MiB minimum; never described.
    _d("internal.segment.bytes", "INT", None, None, "", (), internal=True),
]
TOPIC_CONFIG_DEFS: dict[str, TopicConfigDef] = {d.name: d for d in _TOPIC_DEFS}

# The broker configs named as synonyms above, with the broker's own type and default (KafkaConfig).
_BROKER_DEFS = [
    BrokerConfigDef("log.segment.bytes", "INT", 1024 * 1024 * 1024, at_least(1024 * 1024)),
    BrokerConfigDef("log.roll.ms", "LONG", None),
    BrokerConfigDef("log.roll.hours", "INT", 168, at_least(1)),
    BrokerConfigDef("log.roll.jitter.ms", "LONG", None),
    BrokerConfigDef("log.roll.jitter.hours", "INT", 0, at_least(0)),
    BrokerConfigDef("log.index.size.max.bytes", "INT", 10 * 1024 * 1024, at_least(4)),
    BrokerConfigDef("log.flush.interval.messages", "LONG", LONG_MAX, at_least(1)),
    BrokerConfigDef("log.flush.interval.ms", "LONG", None),
    BrokerConfigDef("log.flush.scheduler.interval.ms", "LONG", LONG_MAX),
    BrokerConfigDef("log.retention.bytes", "LONG", -1),
    BrokerConfigDef("log.retention.ms", "LONG", None),
    BrokerConfigDef("log.retention.minutes", "INT", None),
    BrokerConfigDef("log.retention.hours", "INT", 168),
    BrokerConfigDef("message.max.bytes", "INT", 1024 * 1024 + 12, at_least(0)),
    BrokerConfigDef("log.index.interval.bytes", "INT", 4096, at_least(0)),
    BrokerConfigDef("log.cleaner.delete.retention.ms", "LONG", 24 * HOURS_TO_MS, at_least(0)),
    BrokerConfigDef("log.cleaner.min.compaction.lag.ms", "LONG", 0, at_least(0)),
    BrokerConfigDef("log.cleaner.max.compaction.lag.ms", "LONG", LONG_MAX, at_least(1)),
    BrokerConfigDef("log.segment.delete.delay.ms", "LONG", 60000, at_least(0)),
    BrokerConfigDef("log.cleaner.min.cleanable.ratio", "DOUBLE", 0.5, between(0, 1)),
    BrokerConfigDef("log.cleanup.policy", "LIST", ["delete"], valid_list("compact", "delete")),
    BrokerConfigDef("unclean.leader.election.enable", "BOOLEAN", False),
    BrokerConfigDef("min.insync.replicas", "INT", 1, at_least(1)),
    BrokerConfigDef("compression.type", "STRING", "producer", valid_string(*_COMPRESSION_TYPES)),
    BrokerConfigDef("compression.gzip.level", "INT", -1, _gzip_level),
    BrokerConfigDef("compression.lz4.level", "INT", 9, between(1, 17)),
    BrokerConfigDef("compression.zstd.level", "INT", 3, between(-131072, 22)),
    BrokerConfigDef("log.preallocate", "BOOLEAN", False),
    BrokerConfigDef("log.message.timestamp.type", "STRING", "CreateTime", valid_string("CreateTime", "LogAppendTime")),
    BrokerConfigDef("log.message.timestamp.difference.max.ms", "LONG", LONG_MAX, at_least(0)),
    BrokerConfigDef("log.message.timestamp.before.max.ms", "LONG", LONG_MAX, at_least(0)),
    BrokerConfigDef("log.message.timestamp.after.max.ms", "LONG", LONG_MAX, at_least(0)),
    BrokerConfigDef("log.local.retention.ms", "LONG", -2, at_least(-2)),
    BrokerConfigDef("log.local.retention.bytes", "LONG", -2, at_least(-2)),
]
BROKER_SYNONYM_DEFS: dict[str, BrokerConfigDef] = {d.name: d for d in _BROKER_DEFS}


# --- parsing -------------------------------------------------------------------------------------------

def parse_value(name: str, type_: str, value: Any) -> Any:
    """Parse a property value as Kafka's ConfigDef.parseType does (strings are trimmed)."""
    if value is None:
        return None
    try:
        if type_ == "BOOLEAN":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("true", "false"):
                return text == "true"
            raise ValueError("Expected value to be either true or false")
        if type_ in ("INT", "SHORT", "LONG"):
            if isinstance(value, bool):
                raise ValueError("Expected value to be a number")
            number = value if isinstance(value, int) else int(str(value).strip())
            bound = {"INT": 2**31, "SHORT": 2**15, "LONG": 2**63}[type_]
            if not -bound <= number < bound:
                raise ValueError(f"Not a number of type {type_}")
            return number
        if type_ == "DOUBLE":
            return float(value) if not isinstance(value, str) else float(value.strip())
        if type_ == "LIST":
            if isinstance(value, (list, tuple)):
                return [str(v).strip() for v in value]
            text = str(value).strip()
            return [] if not text else [item.strip() for item in text.split(",")]
        return str(value).strip() if type_ in ("STRING", "CLASS") else value
    except ValueError as exc:
        raise InvalidConfigurationError(
            f"Invalid value {value} for configuration {name}: {exc if 'Expected' in str(exc) else 'Not a number of type ' + type_}"
        ) from None


def value_to_string_raw(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e7 else f"{value:.1f}"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def value_to_string(value: Any) -> str | None:
    """Kafka's ConfigDef.convertToString: what DescribeConfigs returns (None stays None)."""
    return None if value is None else value_to_string_raw(value)


def _parse_and_check(d: TopicConfigDef | BrokerConfigDef, raw: Any) -> Any:
    value = parse_value(d.name, d.type, raw)
    if d.validator is not None and value is not None:
        d.validator(d.name, value)
    return value


def broker_default_for(name: str, broker_props: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The default a broker gives topic config `name`: (value, broker config it came from or None).

    The first synonym set in `broker_props` wins; else the first synonym with a non-null default;
    hours/minutes synonyms are converted to ms; a negative retention.ms becomes -1 as KafkaConfig does.
    """
    d = TOPIC_CONFIG_DEFS[name]
    chosen: tuple[Any, str | None] | None = None
    for syn in d.synonyms:
        if syn.name in broker_props and broker_props[syn.name] is not None:
            bdef = BROKER_SYNONYM_DEFS.get(syn.name)
            raw = _parse_and_check(bdef, broker_props[syn.name]) if bdef else _parse_and_check(d, broker_props[syn.name])
            chosen = (raw * syn.multiplier if syn.multiplier != 1 else raw, syn.name)
            break
    if chosen is None:
        for syn in d.synonyms:
            bdef = BROKER_SYNONYM_DEFS.get(syn.name)
            if bdef is not None and bdef.default is not None:
                value = bdef.default
                chosen = (value * syn.multiplier if syn.multiplier != 1 else value, None)
                break
    if chosen is None:
        return d.default, None
    value, source = chosen
    if name == "retention.ms" and value < 0:
        value = -1
    return value, source


def validate_topic_configs(overrides: Mapping[str, Any]) -> None:
    """LogConfig.validate: known names, parseable and valid values, min.compaction.lag <= max."""
    for key in overrides:
        if key not in TOPIC_CONFIG_DEFS:
            raise InvalidConfigurationError(f"Unknown topic config name: {key}")
    LogConfig.from_props(overrides, {})


# --- LogConfig -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LogConfig:
    """Effective topic configs: `values` holds every config by Kafka name; attributes are the hot ones."""

    values: dict[str, Any] = field(default_factory=dict)
    overridden_configs: frozenset[str] = frozenset()

    @classmethod
    def from_props(cls, topic_overrides: Mapping[str, Any] | None = None,
                   broker_defaults: Mapping[str, Any] | None = None) -> LogConfig:
        """Topic overrides over broker defaults (broker-named synonyms or topic-named keys) over Kafka's."""
        overrides = dict(topic_overrides or {})
        broker = dict(broker_defaults or {})
        for key in overrides:
            if key not in TOPIC_CONFIG_DEFS:
                raise InvalidConfigurationError(f"Unknown topic config name: {key}")
        values: dict[str, Any] = {}
        for name, d in TOPIC_CONFIG_DEFS.items():
            if name in overrides:
                values[name] = _parse_and_check(d, overrides[name])
            elif name in broker:
                values[name] = _parse_and_check(d, broker[name])
            else:
                values[name] = broker_default_for(name, broker)[0]
        if values["min.compaction.lag.ms"] > values["max.compaction.lag.ms"]:
            raise InvalidConfigurationError(
                f"conflict topic config setting min.compaction.lag.ms ({values['min.compaction.lag.ms']}) > "
                f"max.compaction.lag.ms ({values['max.compaction.lag.ms']})"
            )
        return cls(values, frozenset(overrides))

    def with_overrides(self, overrides: Mapping[str, Any]) -> LogConfig:
        merged = {k: v for k, v in self.values.items() if k in self.overridden_configs}
        merged.update(overrides)
        base = {k: v for k, v in self.values.items() if k not in merged}
        return LogConfig.from_props(merged, base)

    def get(self, name: str) -> Any:
        return self.values[name]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    # Hot attributes, named after Kafka's LogConfig fields.
    @property
    def segment_size(self) -> int:
        internal = self.values.get("internal.segment.bytes")
        return internal if internal is not None else self.values["segment.bytes"]

    @property
    def segment_ms(self) -> int:
        return self.values["segment.ms"]

    @property
    def segment_jitter_ms(self) -> int:
        return self.values["segment.jitter.ms"]

    @property
    def max_index_size(self) -> int:
        return self.values["segment.index.bytes"]

    @property
    def index_interval(self) -> int:
        return self.values["index.interval.bytes"]

    @property
    def flush_interval(self) -> int:
        return self.values["flush.messages"]

    @property
    def flush_ms(self) -> int:
        return self.values["flush.ms"]

    @property
    def retention_size(self) -> int:
        return self.values["retention.bytes"]

    @property
    def retention_ms(self) -> int:
        return self.values["retention.ms"]

    @property
    def max_message_size(self) -> int:
        return self.values["max.message.bytes"]

    @property
    def file_delete_delay_ms(self) -> int:
        return self.values["file.delete.delay.ms"]

    @property
    def compact(self) -> bool:
        return "compact" in (p.lower() for p in self.values["cleanup.policy"])

    @property
    def delete(self) -> bool:
        return "delete" in (p.lower() for p in self.values["cleanup.policy"])

    @property
    def compression_type(self) -> str:
        return self.values["compression.type"]

    @property
    def preallocate(self) -> bool:
        return self.values["preallocate"]

    @property
    def message_timestamp_type(self) -> int:
        """0 CreateTime, 1 LogAppendTime (the batch attribute bit's value)."""
        return 1 if self.values["message.timestamp.type"] == "LogAppendTime" else 0

    @property
    def message_timestamp_before_max_ms(self) -> int:
        """Kafka's LogConfig: message.timestamp.difference.max.ms while this one keeps its default."""
        before = self.values["message.timestamp.before.max.ms"]
        return self.values["message.timestamp.difference.max.ms"] if before == LONG_MAX else before

    @property
    def message_timestamp_after_max_ms(self) -> int:
        """Kafka's LogConfig: message.timestamp.difference.max.ms while this one keeps its default."""
        after = self.values["message.timestamp.after.max.ms"]
        return self.values["message.timestamp.difference.max.ms"] if after == LONG_MAX else after

    @property
    def min_in_sync_replicas(self) -> int:
        return self.values["min.insync.replicas"]

    @property
    def unclean_leader_election_enable(self) -> bool:
        return self.values["unclean.leader.election.enable"]

    @property
    def remote_storage_enable(self) -> bool:
        return self.values["remote.storage.enable"]

    def max_segment_ms(self) -> int:
        if self.compact and self.values["max.compaction.lag.ms"] > 0:
            return min(self.values["max.compaction.lag.ms"], self.segment_ms)
        return self.segment_ms

    def random_segment_jitter(self) -> int:
        jitter = self.segment_jitter_ms
        if jitter == 0:
            return 0
        return random.randrange(0, 2**31) % min(jitter, self.segment_ms)

    def init_file_size(self) -> int:
        return self.segment_size if self.preallocate else 0

    def local_retention_ms(self) -> int:
        value = self.values["local.retention.ms"]
        return self.retention_ms if value == -2 else value

    def local_retention_bytes(self) -> int:
        value = self.values["local.retention.bytes"]
        return self.retention_size if value == -2 else value

    def describe(self) -> list[tuple[str, str | None, bool]]:
        """(name, value as Kafka prints it, is_overridden) for every non-internal config, in Kafka's order."""
        return [
            (name, value_to_string(self.values[name]), name in self.overridden_configs)
            for name, d in TOPIC_CONFIG_DEFS.items()
            if not d.internal
        ]
