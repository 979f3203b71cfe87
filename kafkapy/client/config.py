"""Client configuration: Kafka's client config keys, types and defaults.

Owns the Java-client config surface used by the producer, consumer and admin client. Keys are Kafka's
verbatim (`bootstrap.servers`, `linger.ms`, ...); values may come from a dict (Python values or strings)
or from a Java `.properties` file (`--command-config`, `--producer.config`). Unknown keys are kept but
ignored, with a debug log, because the tools pass `--producer-property k=v` straight through.

File format read: Java .properties text, through kafkapy.common.properties (the one loader).

Thread-safety: a built ClientConfig is treated as immutable after construction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

log = logging.getLogger(__name__)

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1


def parse_key_value_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """Parse `k=v` strings as given to --producer-property / --consumer-property / --config."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"Invalid property: {pair!r} (expected key=value)")
        out[key.strip()] = value.strip()
    return out


# ---------------------------------------------------------------------------------------------------
# Typed config definitions


def _to_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("true", "false"):
            return s == "true"
    raise ValueError(f"Expected value to be either true or false, got {v!r}")


def _to_int(v: Any) -> int:
    if isinstance(v, bool):
        raise ValueError(f"Expected an integer, got {v!r}")
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return int(str(v).strip())


def _to_float(v: Any) -> float:
    return float(str(v).strip()) if not isinstance(v, int | float) else float(v)


def _to_list(v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [p.strip() for p in v.split(",") if p.strip()]
    return [str(p).strip() for p in v]


def _to_str(v: Any) -> str | None:
    if v is None:
        return None
    return v.strip() if isinstance(v, str) else str(v)


def _to_acks(v: Any) -> int:
    """Kafka accepts "all", "-1", "0", "1"; the wire value for all is -1."""
    s = str(v).strip().lower()
    if s == "all":
        return -1
    n = int(s)
    if n not in (-1, 0, 1):
        raise ValueError(f"Invalid value {v} for configuration acks: String must be one of: all, -1, 0, 1")
    return n


_PARSERS: dict[str, Callable[[Any], Any]] = {
    "bool": _to_bool,
    "int": _to_int,
    "long": _to_int,
    "double": _to_float,
    "list": _to_list,
    "string": _to_str,
    "password": _to_str,
    "class": lambda v: v,
    "acks": _to_acks,
}

# key -> (type, default)
COMMON_CONFIGS: dict[str, tuple[str, Any]] = {
    "bootstrap.servers": ("list", []),
    "client.id": ("string", ""),
    "client.dns.lookup": ("string", "use_all_dns_ips"),
    "request.timeout.ms": ("int", 30000),
    "retries": ("int", INT_MAX),
    "retry.backoff.ms": ("long", 100),
    "retry.backoff.max.ms": ("long", 1000),
    "reconnect.backoff.ms": ("long", 50),
    "reconnect.backoff.max.ms": ("long", 1000),
    "metadata.max.age.ms": ("long", 300000),
    "connections.max.idle.ms": ("long", 540000),
    "socket.connection.setup.timeout.ms": ("long", 10000),
    "socket.connection.setup.timeout.max.ms": ("long", 30000),
    "send.buffer.bytes": ("int", 131072),
    "receive.buffer.bytes": ("int", 65536),
    "security.protocol": ("string", "PLAINTEXT"),
    "sasl.mechanism": ("string", "GSSAPI"),
    "sasl.jaas.config": ("password", None),
    "ssl.protocol": ("string", "TLSv1.3"),
    "ssl.enabled.protocols": ("list", ["TLSv1.2", "TLSv1.3"]),
    "ssl.cipher.suites": ("list", None),
    "ssl.endpoint.identification.algorithm": ("string", "https"),
    "ssl.keystore.type": ("string", None),
    "ssl.keystore.location": ("string", None),
    "ssl.keystore.password": ("password", None),
    "ssl.keystore.certificate.chain": ("password", None),
    "ssl.keystore.key": ("password", None),
    "ssl.key.password": ("password", None),
    "ssl.truststore.type": ("string", None),
    "ssl.truststore.location": ("string", None),
    "ssl.truststore.password": ("password", None),
    "ssl.truststore.certificates": ("password", None),
    "metrics.sample.window.ms": ("long", 30000),
    "metrics.num.samples": ("int", 2),
    "metrics.recording.level": ("string", "INFO"),
    "metric.reporters": ("list", []),
    "enable.metrics.push": ("bool", True),
}

PRODUCER_CONFIGS: dict[str, tuple[str, Any]] = {
    **COMMON_CONFIGS,
    "receive.buffer.bytes": ("int", 32768),
    "acks": ("acks", "all"),
    "linger.ms": ("long", 5),
    "batch.size": ("int", 16384),
    "buffer.memory": ("long", 33554432),
    "compression.type": ("string", "none"),
    "compression.gzip.level": ("int", -1),
    "compression.lz4.level": ("int", 9),
    "compression.zstd.level": ("int", 3),
    "max.request.size": ("int", 1048576),
    "max.block.ms": ("long", 60000),
    "delivery.timeout.ms": ("int", 120000),
    "enable.idempotence": ("bool", True),
    "max.in.flight.requests.per.connection": ("int", 5),
    "transactional.id": ("string", None),
    "transaction.timeout.ms": ("int", 60000),
    "partitioner.class": ("class", None),
    "partitioner.ignore.keys": ("bool", False),
    "partitioner.adaptive.partitioning.enable": ("bool", True),
    "partitioner.availability.timeout.ms": ("long", 0),
    "metadata.max.idle.ms": ("long", 300000),
    "key.serializer": ("class", None),
    "value.serializer": ("class", None),
}

CONSUMER_CONFIGS: dict[str, tuple[str, Any]] = {
    **COMMON_CONFIGS,
    "group.id": ("string", None),
    "group.instance.id": ("string", None),
    "group.protocol": ("string", "classic"),
    "group.remote.assignor": ("string", None),
    "session.timeout.ms": ("int", 45000),
    "heartbeat.interval.ms": ("int", 3000),
    "max.poll.interval.ms": ("int", 300000),
    "max.poll.records": ("int", 500),
    "partition.assignment.strategy": ("list", ["range", "cooperative-sticky"]),
    "enable.auto.commit": ("bool", True),
    "auto.commit.interval.ms": ("int", 5000),
    "auto.offset.reset": ("string", "latest"),
    "fetch.min.bytes": ("int", 1),
    "fetch.max.bytes": ("int", 52428800),
    "fetch.max.wait.ms": ("int", 500),
    "max.partition.fetch.bytes": ("int", 1048576),
    "isolation.level": ("string", "read_uncommitted"),
    "check.crcs": ("bool", True),
    "client.rack": ("string", ""),
    "exclude.internal.topics": ("bool", True),
    "allow.auto.create.topics": ("bool", True),
    "default.api.timeout.ms": ("int", 60000),
    "key.deserializer": ("class", None),
    "value.deserializer": ("class", None),
}

ADMIN_CONFIGS: dict[str, tuple[str, Any]] = {
    **COMMON_CONFIGS,
    "connections.max.idle.ms": ("long", 300000),
    "send.buffer.bytes": ("int", 131072),
    "receive.buffer.bytes": ("int", 65536),
    "default.api.timeout.ms": ("int", 60000),
}

_CHOICES: dict[str, tuple[str, ...]] = {
    "compression.type": ("none", "gzip", "snappy", "lz4", "zstd"),
    "auto.offset.reset": ("latest", "earliest", "none"),
    "isolation.level": ("read_uncommitted", "read_committed"),
    "security.protocol": ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
}


class ClientConfig(Mapping[str, Any]):
    """Typed, defaulted view of a client's configs.

    `ClientConfig(defs, configs, **overrides)`: `configs` is a mapping with Kafka keys; keyword
    overrides use underscores for dots (`linger_ms=0` == `{"linger.ms": 0}`). `cfg["linger.ms"]`
    returns the parsed value (or the default); `originals` keeps everything given, including keys
    this client does not know (those are ignored with a debug log).
    """

    KIND = "client"

    def __init__(
        self,
        defs: Mapping[str, tuple[str, Any]],
        configs: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> None:
        merged: dict[str, Any] = dict(configs or {})
        for k, v in overrides.items():
            merged[k.replace("_", ".")] = v
        self.originals: dict[str, Any] = merged
        self._defs = defs
        values: dict[str, Any] = {}
        for key, (typ, default) in defs.items():
            values[key] = _PARSERS[typ](default) if default is not None else None
        for key, raw in merged.items():
            if key not in defs:
                log.debug("Ignoring unknown %s config %s", self.KIND, key)
                continue
            typ = defs[key][0]
            try:
                value = _PARSERS[typ](raw) if raw is not None else None
            except (TypeError, ValueError) as e:
                raise ValueError(f"Invalid value {raw} for configuration {key}: {e}") from None
            choices = _CHOICES.get(key)
            if choices is not None and value is not None:
                value = value.lower() if key != "security.protocol" else value.upper()
                if value not in choices:
                    raise ValueError(
                        f"Invalid value {raw} for configuration {key}: String must be one of: "
                        + ", ".join(choices)
                    )
            values[key] = value
        self._values = values

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def is_set(self, key: str) -> bool:
        """True when the user gave the key explicitly (Kafka uses this to resolve idempotence)."""
        return key in self.originals

    def bootstrap_addresses(self) -> list[tuple[str, int]]:
        return [parse_host_port(s) for s in self._values["bootstrap.servers"]]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._values!r})"


def parse_host_port(server: str) -> tuple[str, int]:
    """Parse `host:port`, `[v6]:port` or `PLAINTEXT://host:port` as Kafka's ClientUtils does."""
    s = server.strip()
    if "://" in s:
        s = s.split("://", 1)[1]
    if s.startswith("["):
        host, _, rest = s[1:].partition("]")
        port = rest.lstrip(":")
    else:
        host, sep, port = s.rpartition(":")
        if not sep:
            raise ValueError(f"Invalid url in bootstrap.servers: {server}")
    if not host or not port.isdigit():
        raise ValueError(f"Invalid url in bootstrap.servers: {server}")
    return host, int(port)


class ProducerConfig(ClientConfig):
    KIND = "producer"

    def __init__(self, configs: Mapping[str, Any] | None = None, **overrides: Any) -> None:
        super().__init__(PRODUCER_CONFIGS, configs, **overrides)
        v = self._values
        # Kafka: idempotence defaults to on, but is silently dropped when the user set conflicting
        # configs without asking for idempotence; asking for both is an error.
        conflicts = []
        if v["acks"] != -1:
            conflicts.append("acks must be set to 'all'")
        if v["max.in.flight.requests.per.connection"] > 5:
            conflicts.append("max.in.flight.requests.per.connection must be <= 5")
        if v["retries"] == 0:
            conflicts.append("retries must be greater than 0")
        if conflicts and v["enable.idempotence"]:
            if self.is_set("enable.idempotence"):
                raise ValueError(
                    "Invalid configuration for idempotent producer: " + "; ".join(conflicts)
                )
            v["enable.idempotence"] = False
        if v["transactional.id"] and not v["enable.idempotence"]:
            raise ValueError("Cannot set a transactional.id without also enabling idempotence.")


class ConsumerConfig(ClientConfig):
    KIND = "consumer"

    def __init__(self, configs: Mapping[str, Any] | None = None, **overrides: Any) -> None:
        super().__init__(CONSUMER_CONFIGS, configs, **overrides)
        # Kafka: without a group.id auto-commit cannot be on.
        if self._values["group.id"] is None and not self.is_set("enable.auto.commit"):
            self._values["enable.auto.commit"] = False


class AdminClientConfig(ClientConfig):
    KIND = "admin"

    def __init__(self, configs: Mapping[str, Any] | None = None, **overrides: Any) -> None:
        super().__init__(ADMIN_CONFIGS, configs, **overrides)
