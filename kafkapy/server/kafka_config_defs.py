"""Kafka's broker config keys: names verbatim, types, defaults and validators (the ConfigDef table).

Data only, read by KafkaConfig (parsing and effective values) and by DescribeConfigs (types, defaults,
synonyms). Immutable after import; thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkapy.common.config_types import ConfigType

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1


class ConfigError(ValueError):
    """Invalid broker configuration; the message is one line and names the key."""


BOOL, STR, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = (
    ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.SHORT, ConfigType.LONG,
    ConfigType.DOUBLE, ConfigType.LIST, ConfigType.CLASS, ConfigType.PASSWORD,
)  # fmt: skip

Validator = Callable[[str, Any], None]


def at_least(lo: float) -> Validator:
    def check(name: str, v: Any) -> None:
        if v is not None and v < lo:
            raise ConfigError(f"Invalid value {v} for configuration {name}: Value must be at least {lo}")

    return check


def between(lo: float, hi: float) -> Validator:
    def check(name: str, v: Any) -> None:
        if v is not None and v < lo:
            raise ConfigError(f"Invalid value {v} for configuration {name}: Value must be at least {lo}")
        if v is not None and v > hi:
            raise ConfigError(f"Invalid value {v} for configuration {name}: Value must be no more than {hi}")

    return check


def one_of(*allowed: str) -> Validator:
    def check(name: str, v: Any) -> None:
        for item in v if isinstance(v, list) else [v]:
            if item is not None and item not in allowed:
                raise ConfigError(
                    f"Invalid value {item} for configuration {name}: String must be one of: {', '.join(allowed)}"
                )

    return check


@dataclass(frozen=True)
class ConfigKey:
    name: str
    type: ConfigType
    default: str | None  # Kafka's string form; None = null
    validator: Validator | None = None


_COMPRESSION = one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
DEFAULT_SECURITY_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"

# (name, type, default, validator). Defaults are Kafka's (3.x/4.x broker), except broker.id/node.id
# which resolve to 0 when neither is set (see KafkaConfig.broker_id).
_DEFS: list[tuple[str, ConfigType, str | None, Validator | None]] = [
    # ZooKeeper / metadata
    ("zookeeper.connect", STR, None, None),
    ("zookeeper.session.timeout.ms", INT, "18000", None),
    ("zookeeper.connection.timeout.ms", INT, None, None),
    ("zookeeper.max.in.flight.requests", INT, "10", at_least(1)),
    ("zookeeper.set.acl", BOOL, "false", None),
    ("process.roles", LIST, "", None),
    ("controller.listener.names", STR, None, None),
    ("controller.quorum.voters", LIST, "", None),
    ("broker.id", INT, "-1", None),
    ("node.id", INT, "-1", None),
    ("broker.id.generation.enable", BOOL, "true", None),
    ("reserved.broker.max.id", INT, "1000", at_least(0)),
    ("broker.rack", STR, None, None),
    ("controlled.shutdown.enable", BOOL, "true", None),
    ("controlled.shutdown.max.retries", INT, "3", None),
    ("controlled.shutdown.retry.backoff.ms", LONG, "5000", None),
    ("controller.socket.timeout.ms", INT, "30000", None),
    # threads and request handling
    ("num.network.threads", INT, "3", at_least(1)),
    ("num.io.threads", INT, "8", at_least(1)),
    ("background.threads", INT, "10", at_least(1)),
    ("queued.max.requests", INT, "500", at_least(1)),
    ("queued.max.request.bytes", LONG, "-1", None),
    ("request.timeout.ms", INT, "30000", None),
    ("message.max.bytes", INT, "1048588", at_least(0)),
    ("fetch.max.bytes", INT, "57671680", at_least(1024)),
    ("max.incremental.fetch.session.cache.slots", INT, "1000", at_least(0)),
    # sockets and listeners
    ("listeners", STR, "PLAINTEXT://:9092", None),
    ("advertised.listeners", STR, None, None),
    ("listener.security.protocol.map", STR, DEFAULT_SECURITY_PROTOCOL_MAP, None),
    ("inter.broker.listener.name", STR, None, None),
    ("security.inter.broker.protocol", STR, "PLAINTEXT", None),
    ("socket.send.buffer.bytes", INT, "102400", None),
    ("socket.receive.buffer.bytes", INT, "102400", None),
    ("socket.connection.setup.timeout.ms", LONG, "10000", None),
    ("socket.connection.setup.timeout.max.ms", LONG, "30000", None),
    ("socket.request.max.bytes", INT, "104857600", at_least(1)),
    ("socket.listen.backlog.size", INT, "50", at_least(1)),
    ("max.connections", INT, str(INT_MAX), at_least(0)),
    ("max.connections.per.ip", INT, str(INT_MAX), at_least(0)),
    ("max.connections.per.ip.overrides", STR, "", None),
    ("connections.max.idle.ms", LONG, "600000", None),
    ("connection.failed.authentication.delay.ms", INT, "100", at_least(0)),
    # log
    ("log.dir", STR, "/tmp/kafka-logs", None),
    ("log.dirs", STR, None, None),
    ("num.partitions", INT, "1", at_least(1)),
    ("log.segment.bytes", INT, "1073741824", at_least(14)),  # Kafka 3.9's floor (RECORD_OVERHEAD_V0), as storage/
    ("log.roll.ms", LONG, None, None),
    ("log.roll.hours", INT, "168", at_least(1)),
    ("log.roll.jitter.ms", LONG, None, None),
    ("log.roll.jitter.hours", INT, "0", at_least(0)),
    ("log.retention.ms", LONG, None, None),
    ("log.retention.minutes", INT, None, None),
    ("log.retention.hours", INT, "168", None),
    ("log.retention.bytes", LONG, "-1", None),
    ("log.retention.check.interval.ms", LONG, "300000", at_least(1)),
    ("log.cleanup.policy", LIST, "delete", one_of("compact", "delete")),
    ("log.cleaner.enable", BOOL, "true", None),
    ("log.cleaner.threads", INT, "1", at_least(0)),
    ("log.cleaner.dedupe.buffer.size", LONG, "134217728", None),
    ("log.cleaner.io.buffer.size", INT, "524288", at_least(0)),
    ("log.cleaner.io.buffer.load.factor", DOUBLE, "0.9", None),
    ("log.cleaner.io.max.bytes.per.second", DOUBLE, "1.7976931348623157E308", None),
    ("log.cleaner.backoff.ms", LONG, "15000", at_least(0)),
    ("log.cleaner.min.cleanable.ratio", DOUBLE, "0.5", between(0, 1)),
    ("log.cleaner.delete.retention.ms", LONG, "86400000", at_least(0)),
    ("log.cleaner.min.compaction.lag.ms", LONG, "0", at_least(0)),
    ("log.cleaner.max.compaction.lag.ms", LONG, str(LONG_MAX), at_least(1)),
    ("log.index.size.max.bytes", INT, "10485760", at_least(4)),
    ("log.index.interval.bytes", INT, "4096", at_least(0)),
    ("log.flush.interval.messages", LONG, str(LONG_MAX), at_least(1)),
    ("log.flush.interval.ms", LONG, None, None),
    ("log.flush.scheduler.interval.ms", LONG, str(LONG_MAX), None),
    ("log.flush.offset.checkpoint.interval.ms", INT, "60000", at_least(0)),
    ("log.flush.start.offset.checkpoint.interval.ms", INT, "60000", at_least(0)),
    ("log.segment.delete.delay.ms", LONG, "60000", at_least(0)),
    ("log.preallocate", BOOL, "false", None),
    ("log.message.format.version", STR, "3.0-IV1", None),
    ("log.message.timestamp.type", STR, "CreateTime", one_of("CreateTime", "LogAppendTime")),
    ("log.message.timestamp.difference.max.ms", LONG, str(LONG_MAX), at_least(0)),
    ("log.message.timestamp.before.max.ms", LONG, str(LONG_MAX), at_least(0)),
    ("log.message.timestamp.after.max.ms", LONG, str(LONG_MAX), at_least(0)),
    ("log.message.downconversion.enable", BOOL, "true", None),
    ("num.recovery.threads.per.data.dir", INT, "1", at_least(1)),
    ("auto.create.topics.enable", BOOL, "true", None),
    ("delete.topic.enable", BOOL, "true", None),
    ("min.insync.replicas", INT, "1", at_least(1)),
    ("compression.type", STR, "producer", _COMPRESSION),
    ("compression.gzip.level", INT, "-1", lambda n, v: None if v == -1 or 1 <= v <= 9 else between(1, 9)(n, v)),
    ("compression.lz4.level", INT, "9", between(1, 17)),
    ("compression.zstd.level", INT, "3", between(-131072, 22)),
    ("log.local.retention.ms", LONG, "-2", at_least(-2)),
    ("log.local.retention.bytes", LONG, "-2", at_least(-2)),
    ("create.topic.policy.class.name", CLASS, None, None),
    ("alter.config.policy.class.name", CLASS, None, None),
    # replication
    ("default.replication.factor", INT, "1", None),
    ("replica.lag.time.max.ms", LONG, "30000", None),
    ("replica.socket.timeout.ms", INT, "30000", None),
    ("replica.socket.receive.buffer.bytes", INT, "65536", None),
    ("replica.fetch.max.bytes", INT, "1048576", at_least(0)),
    ("replica.fetch.wait.max.ms", INT, "500", None),
    ("replica.fetch.min.bytes", INT, "1", None),
    ("replica.fetch.backoff.ms", INT, "1000", at_least(0)),
    ("replica.fetch.response.max.bytes", INT, "10485760", at_least(0)),
    ("replica.high.watermark.checkpoint.interval.ms", LONG, "5000", None),
    ("replica.selector.class", CLASS, None, None),
    ("num.replica.fetchers", INT, "1", None),
    # the sampled rate of the replication throttles (the rates are dynamic broker configs only)
    ("replication.quota.window.num", INT, "11", at_least(1)),
    ("replication.quota.window.size.seconds", INT, "1", at_least(1)),
    ("num.replica.alter.log.dirs.threads", INT, None, None),
    ("fetch.purgatory.purge.interval.requests", INT, "1000", None),
    ("producer.purgatory.purge.interval.requests", INT, "1000", None),
    ("delete.records.purgatory.purge.interval.requests", INT, "1", None),
    ("auto.leader.rebalance.enable", BOOL, "true", None),
    ("leader.imbalance.per.broker.percentage", INT, "10", None),
    ("leader.imbalance.check.interval.seconds", LONG, "300", at_least(1)),
    ("unclean.leader.election.enable", BOOL, "false", None),
    # group coordinator and offsets
    ("group.min.session.timeout.ms", INT, "6000", None),
    ("group.max.session.timeout.ms", INT, "1800000", None),
    ("group.initial.rebalance.delay.ms", INT, "3000", None),
    ("group.max.size", INT, str(INT_MAX), at_least(1)),
    ("offset.metadata.max.bytes", INT, "4096", None),
    ("offsets.load.buffer.size", INT, "5242880", at_least(1)),
    ("offsets.topic.replication.factor", SHORT, "3", at_least(1)),
    ("offsets.topic.num.partitions", INT, "50", at_least(1)),
    ("offsets.topic.segment.bytes", INT, "104857600", at_least(1)),
    ("offsets.topic.compression.codec", INT, "0", None),
    ("offsets.retention.minutes", INT, "10080", at_least(1)),
    ("offsets.retention.check.interval.ms", LONG, "600000", at_least(1)),
    ("offsets.commit.timeout.ms", INT, "5000", at_least(1)),
    ("offsets.commit.required.acks", SHORT, "-1", None),
    # transactions and idempotence
    ("transactional.id.expiration.ms", INT, "604800000", at_least(1)),
    ("transaction.max.timeout.ms", INT, "900000", at_least(1)),
    ("transaction.state.log.load.buffer.size", INT, "5242880", at_least(1)),
    ("transaction.state.log.replication.factor", SHORT, "3", at_least(1)),
    ("transaction.state.log.num.partitions", INT, "50", at_least(1)),
    ("transaction.state.log.segment.bytes", INT, "104857600", at_least(1)),
    ("transaction.state.log.min.isr", INT, "2", at_least(1)),
    ("transaction.abort.timed.out.transaction.cleanup.interval.ms", INT, "10000", at_least(1)),
    ("transaction.remove.expired.transaction.cleanup.interval.ms", INT, "3600000", at_least(1)),
    # KIP-890: a transactional batch belongs to an ongoing transaction (server/transaction_verification.py)
    ("transaction.partition.verification.enable", BOOL, "true", None),
    ("producer.id.expiration.ms", INT, "86400000", at_least(1)),
    ("producer.id.expiration.check.interval.ms", INT, "600000", at_least(1)),
    # quotas, metrics, security (accepted, not all enforced)
    ("quota.window.num", INT, "11", at_least(1)),
    ("quota.window.size.seconds", INT, "1", at_least(1)),
    ("metric.reporters", LIST, "", None),
    ("metrics.num.samples", INT, "2", at_least(1)),
    ("metrics.sample.window.ms", LONG, "30000", at_least(1)),
    ("metrics.recording.level", STR, "INFO", None),
    # kafkapy: the broker's Prometheus endpoint (http://host:port serving /metrics); empty = off.
    ("prometheus.listener", STR, "", None),
    ("authorizer.class.name", STR, "", None),
    ("super.users", STR, "", None),
    ("allow.everyone.if.no.acl.found", BOOL, "false", None),
    ("sasl.enabled.mechanisms", LIST, "GSSAPI", None),
    ("sasl.mechanism.inter.broker.protocol", STR, "GSSAPI", None),
    ("sasl.jaas.config", PASSWORD, None, None),
    ("sasl.server.max.receive.size", INT, "524288", at_least(1)),
    # OAUTHBEARER (server/security/oauthbearer_callback_handlers.py); usually listener.name.<l>.oauthbearer.-prefixed
    ("sasl.server.callback.handler.class", CLASS, None, None),
    ("sasl.oauthbearer.jwks.endpoint.url", STR, None, None),
    ("sasl.oauthbearer.jwks.endpoint.refresh.ms", LONG, "3600000", at_least(0)),
    ("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", LONG, "100", at_least(0)),
    ("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", LONG, "10000", at_least(0)),
    ("sasl.oauthbearer.expected.audience", LIST, "", None),
    ("sasl.oauthbearer.expected.issuer", STR, None, None),
    ("sasl.oauthbearer.scope.claim.name", STR, "scope", None),
    ("sasl.oauthbearer.sub.claim.name", STR, "sub", None),
    ("sasl.oauthbearer.clock.skew.seconds", INT, "30", None),
    # delegation tokens (server/security/delegation_token_manager.py): enabled by the secret key
    ("delegation.token.secret.key", PASSWORD, None, None),
    ("delegation.token.master.key", PASSWORD, None, None),  # deprecated name of the secret key
    ("delegation.token.max.lifetime.ms", LONG, "604800000", at_least(1)),
    ("delegation.token.expiry.time.ms", LONG, "86400000", at_least(1)),
    ("delegation.token.expiry.check.interval.ms", LONG, "3600000", at_least(1)),
    ("connections.max.reauth.ms", LONG, "0", at_least(0)),
    ("connection.failed.authentication.delay.ms", INT, "100", at_least(0)),
    # TLS: PEM stores only (ssl.keystore.type / ssl.truststore.type default to PEM here, JKS in Kafka)
    ("ssl.protocol", STR, "TLSv1.3", None),
    ("ssl.enabled.protocols", LIST, "TLSv1.2,TLSv1.3", one_of("TLSv1.2", "TLSv1.3", "TLSv1.1", "TLSv1")),
    ("ssl.cipher.suites", LIST, "", None),
    ("ssl.client.auth", STR, "none", one_of("required", "requested", "none")),
    ("ssl.principal.mapping.rules", STR, "DEFAULT", None),
    ("ssl.endpoint.identification.algorithm", STR, "https", None),
    ("ssl.keystore.type", STR, None, None),
    ("ssl.keystore.location", STR, None, None),
    ("ssl.keystore.password", PASSWORD, None, None),
    ("ssl.keystore.certificate.chain", PASSWORD, None, None),
    ("ssl.keystore.key", PASSWORD, None, None),
    ("ssl.key.password", PASSWORD, None, None),
    ("ssl.truststore.type", STR, None, None),
    ("ssl.truststore.location", STR, None, None),
    ("ssl.truststore.password", PASSWORD, None, None),
    ("ssl.truststore.certificates", PASSWORD, None, None),
    ("password.encoder.secret", PASSWORD, None, None),
]

CONFIG_DEFS: dict[str, ConfigKey] = {name: ConfigKey(name, t, d, v) for name, t, d, v in _DEFS}

# Keys whose effective value may come from another key (first set wins), as DescribeConfigs lists them.
SYNONYMS: dict[str, list[str]] = {
    "log.roll.ms": ["log.roll.ms", "log.roll.hours"],
    "log.roll.jitter.ms": ["log.roll.jitter.ms", "log.roll.jitter.hours"],
    "log.flush.interval.ms": ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"],
    "log.retention.ms": ["log.retention.ms", "log.retention.minutes", "log.retention.hours"],
}

# Used when the broker starts with no properties file: zero-setup single broker on loopback.
EMBEDDED_DEFAULTS: dict[str, str] = {
    "listeners": "PLAINTEXT://127.0.0.1:9092",
    "log.dirs": "./kafkapy-data",
    "node.id": "0",
}
