"""The Prometheus JMX exporter's Kafka rules (its example_configs/kafka-2_0_0.yml), applied to our MBeans.

Existing Kafka dashboards and alerts are written against the names the JMX exporter derives from Kafka's
MBeans with that configuration, so kafkapy applies the same rules, in the same order, first match wins, to
the same input string the exporter builds: `<domain><<key>=<value>, ...><><Attribute>`, e.g.
`kafka.server<type=BrokerTopicMetrics, name=MessagesInPerSec, topic=orders><>Count` ->
`kafka_server_brokertopicmetrics_messagesin_total{topic="orders"}` (a counter). Output names are lower-cased
(`lowercaseOutputName: true`) and made safe as the exporter does (characters outside [a-zA-Z0-9:_] become `_`,
runs of `_` collapse); label values keep their case. Attributes no rule matches are not exported (Meters'
OneMinuteRate, Histograms' Mean, ...), as with the exporter.

One rule is kafkapy's own, first in the list: consumer lag per group partition (an MBean Kafka does not
have; its three keys would be mangled by the generic rules).

Thread-safety: `map_attribute` caches its answers in a dict (safe under the GIL: a race recomputes).
"""

from __future__ import annotations

import re
from typing import NamedTuple

COUNTER = "counter"
GAUGE = "gauge"


class Rule(NamedTuple):
    pattern: re.Pattern[str]
    name: str  # with $n group references
    type: str
    labels: tuple[tuple[str, str], ...]


class Mapped(NamedTuple):
    name: str
    type: str
    labels: tuple[tuple[str, str], ...]


def _rule(pattern: str, name: str, type_: str, *labels: tuple[str, str]) -> Rule:
    return Rule(re.compile(pattern), name, type_, labels)


_KV2 = (("$4", "$5"), ("$6", "$7"))
_KV1 = (("$4", "$5"),)

RULES: tuple[Rule, ...] = (
    # kafkapy's own: consumer lag where this broker coordinates the group.
    _rule(r"kafka.coordinator.group<type=GroupMetadataManager, name=ConsumerLag, group=(.+), topic=(.+), "
          r"partition=(.*)><>Value", "kafka_coordinator_group_groupmetadatamanager_consumerlag", GAUGE,
          ("group", "$1"), ("topic", "$2"), ("partition", "$3")),
    # Special cases and very specific rules
    _rule(r"kafka.server<type=(.+), name=(.+), clientId=(.+), topic=(.+), partition=(.*)><>Value",
          "kafka_server_$1_$2", GAUGE, ("clientId", "$3"), ("topic", "$4"), ("partition", "$5")),
    _rule(r"kafka.server<type=(.+), name=(.+), clientId=(.+), brokerHost=(.+), brokerPort=(.+)><>Value",
          "kafka_server_$1_$2", GAUGE, ("clientId", "$3"), ("broker", "$4:$5")),
    _rule(r"kafka.coordinator.(\w+)<type=(.+), name=(.+)><>Value", "kafka_coordinator_$1_$2_$3", GAUGE),
    # Generic per-second counters with 0-2 key/value pairs
    _rule(r"kafka.(\w+)<type=(.+), name=(.+)PerSec\w*, (.+)=(.+), (.+)=(.+)><>Count", "kafka_$1_$2_$3_total",
          COUNTER, *_KV2),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+)PerSec\w*, (.+)=(.+)><>Count", "kafka_$1_$2_$3_total", COUNTER, *_KV1),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+)PerSec\w*><>Count", "kafka_$1_$2_$3_total", COUNTER),
    # Quota specific rules
    _rule(r"kafka.server<type=(.+), user=(.+), client-id=(.+)><>([a-z-]+)", "kafka_server_quota_$4", GAUGE,
          ("resource", "$1"), ("user", "$2"), ("clientId", "$3")),
    _rule(r"kafka.server<type=(.+), client-id=(.+)><>([a-z-]+)", "kafka_server_quota_$3", GAUGE,
          ("resource", "$1"), ("clientId", "$2")),
    _rule(r"kafka.server<type=(.+), user=(.+)><>([a-z-]+)", "kafka_server_quota_$3", GAUGE,
          ("resource", "$1"), ("user", "$2")),
    # Generic gauges with 0-2 key/value pairs
    _rule(r"kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+), (.+)=(.+)><>Value", "kafka_$1_$2_$3", GAUGE, *_KV2),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+)><>Value", "kafka_$1_$2_$3", GAUGE, *_KV1),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+)><>Value", "kafka_$1_$2_$3", GAUGE),
    # Emulate Prometheus 'Summary' metrics for the exported 'Histogram's (no _sum, as the exporter).
    _rule(r"kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+), (.+)=(.+)><>Count", "kafka_$1_$2_$3_count", COUNTER,
          *_KV2),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+), (.+)=(.*), (.+)=(.+)><>(\d+)thPercentile", "kafka_$1_$2_$3", GAUGE,
          *_KV2, ("quantile", "0.$8")),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+), (.+)=(.+)><>Count", "kafka_$1_$2_$3_count", COUNTER, *_KV1),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+), (.+)=(.*)><>(\d+)thPercentile", "kafka_$1_$2_$3", GAUGE, *_KV1,
          ("quantile", "0.$6")),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+)><>Count", "kafka_$1_$2_$3_count", COUNTER),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+)><>(\d+)thPercentile", "kafka_$1_$2_$3", GAUGE, ("quantile", "0.$4")),
    # Generic gauges for MeanRate Percent
    _rule(r"kafka.(\w+)<type=(.+), name=(.+)Percent\w*><>MeanRate", "kafka_$1_$2_$3_percent", GAUGE),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+)Percent\w*><>Value", "kafka_$1_$2_$3_percent", GAUGE),
    _rule(r"kafka.(\w+)<type=(.+), name=(.+)Percent\w*, (.+)=(.+)><>Value", "kafka_$1_$2_$3_percent", GAUGE, *_KV1),
)

_UNSAFE = re.compile(r"[^a-zA-Z0-9:_]")
_RUNS = re.compile(r"__+")
_GROUP_REF = re.compile(r"\$(\d+)")


def safe_name(name: str) -> str:
    return _RUNS.sub("_", _UNSAFE.sub("_", name))


def exporter_input(mbean_name: str, attribute: str) -> str:
    """The string the JMX exporter matches: `kafka.server:type=X,name=Y` + `Count` ->
    `kafka.server<type=X, name=Y><>Count`."""
    domain, _, keys = mbean_name.partition(":")
    return f"{domain}<{keys.replace(',', ', ')}><>{attribute}"


def _expand(template: str, match: re.Match[str]) -> str:
    return _GROUP_REF.sub(lambda m: match.group(int(m.group(1))) or "", template)


def apply_rules(text: str) -> Mapped | None:
    for rule in RULES:
        m = rule.pattern.fullmatch(text)
        if m is None:
            continue
        name = safe_name(_expand(rule.name, m).lower())
        labels = tuple((safe_name(_expand(k, m)), _expand(v, m)) for k, v in rule.labels)
        return Mapped(name, rule.type, labels)
    return None


_cache: dict[tuple[str, str], Mapped | None] = {}
_CACHE_LIMIT = 200_000


def map_attribute(mbean_name: str, attribute: str) -> Mapped | None:
    """The Prometheus name, type and labels of one MBean attribute, or None when no rule exports it."""
    key = (mbean_name, attribute)
    try:
        return _cache[key]
    except KeyError:
        pass
    if len(_cache) > _CACHE_LIMIT:
        _cache.clear()
    mapped = _cache[key] = apply_rules(exporter_input(mbean_name, attribute))
    return mapped
