"""MetricName: a metric's identity as Kafka's MBean name (`kafka.server:type=BrokerTopicMetrics,name=...`).

Kafka's Yammer metrics are named `<group>:type=<type>,name=<name>[,<tag>=<value>...]`, the tags in the order
the broker gives them (topic before partition, request before version). That string is the metric's key in
the registry, what `kafkapy jmx` matches its --object-name patterns against, and what the Prometheus
collector rewrites with the JMX exporter's rules. No byte format. Thread-safety: immutable.
"""

from __future__ import annotations

import fnmatch
import re
from typing import NamedTuple


class MetricName(NamedTuple):
    group: str  # the JMX domain: kafka.server, kafka.network, kafka.controller, kafka.log, ...
    type: str
    name: str  # "" for Kafka-metrics style MBeans that have no name key (quota sensors)
    tags: tuple[tuple[str, str], ...] = ()

    @property
    def mbean_name(self) -> str:
        keys = [f"type={self.type}"]
        if self.name:
            keys.append(f"name={self.name}")
        keys.extend(f"{k}={v}" for k, v in self.tags)
        return f"{self.group}:{','.join(keys)}"

    def tag(self, key: str) -> str | None:
        for k, v in self.tags:
            if k == key:
                return v
        return None

    def __str__(self) -> str:
        return self.mbean_name


def metric_name(group: str, type_: str, name: str, /, **tags: object) -> MetricName:
    """Build a MetricName; tags keep their keyword order. Empty-valued tags are dropped, as Kafka's
    KafkaMetricsGroup drops them (so the all-topics BrokerTopicMetrics carry no topic key)."""
    return MetricName(group, type_, name, tuple((k, str(v)) for k, v in tags.items() if v is not None and v != ""))


_QUOTE = re.compile(r"[,=:*?\"\n]")


def quote_tag_value(value: str) -> str:
    """JMX quotes a key property value holding a reserved character; Kafka's sanitizer avoids it, so do we
    by replacing them (client ids and group names may hold anything)."""
    return _QUOTE.sub("_", value)


def parse_mbean_name(text: str) -> MetricName:
    """The inverse of `mbean_name` (for tools reading a metrics endpoint)."""
    group, _, rest = text.partition(":")
    type_ = name = ""
    tags: list[tuple[str, str]] = []
    for part in rest.split(","):
        key, _, value = part.partition("=")
        if key == "type" and not type_:
            type_ = value
        elif key == "name" and not name:
            name = value
        else:
            tags.append((key, value))
    return MetricName(group, type_, name, tuple(tags))


def mbean_matches(mbean: str, pattern: str) -> bool:
    """JMX ObjectName pattern matching: same domain (wildcards allowed), every key=value of the pattern present
    (values may hold `*`/`?`), and a trailing `,*` (or only `*`) allowing other keys."""
    if pattern in ("*", "*:*"):
        return True
    domain, _, keys = mbean.partition(":")
    pdomain, _, pkeys = pattern.partition(":")
    if not fnmatch.fnmatchcase(domain, pdomain or "*"):
        return False
    have = dict(kv.partition("=")[::2] for kv in keys.split(",") if kv)
    parts = [kv for kv in pkeys.split(",") if kv]
    open_ended = "*" in parts
    want = [kv.partition("=")[::2] for kv in parts if kv != "*"]
    for key, value in want:
        if key not in have or not fnmatch.fnmatchcase(have[key], value):
            return False
    return open_ended or len(want) == len(have)
