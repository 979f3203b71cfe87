"""ControllerConfig: the broker properties the controller reads, parsed once (as the coordinators' GroupConfig).

Keys are Kafka's (num.partitions, default.replication.factor, delete.topic.enable,
unclean.leader.election.enable, auto.leader.rebalance.enable, leader.imbalance.check.interval.seconds,
leader.imbalance.per.broker.percentage) with Kafka's defaults. The source is a ConfigProperties: a dict or a
KafkaConfig (anything with .get(name, default)); values may be strings or already typed.
Reads and writes no bytes. Thread-safety: immutable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class ConfigProperties(Protocol):
    """Broker properties by Kafka name: a KafkaConfig, or a plain dict (tests)."""

    def get(self, name: str, default: Any, /) -> Any: ...


def as_bool(value: Any) -> bool:
    """A config value as Kafka's boolean parser reads it ("true" in any case is true)."""
    return value if isinstance(value, bool) else str(value).strip().lower() == "true"


@dataclass(frozen=True, slots=True)
class ControllerConfig:
    num_partitions: int = 1
    default_replication_factor: int = 1
    delete_topic_enable: bool = True
    unclean_leader_election_enable: bool = False
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_seconds: int = 300
    leader_imbalance_per_broker_percentage: int = 10

    @classmethod
    def from_config(cls, config: ControllerConfig | ConfigProperties | None) -> ControllerConfig:
        if config is None:
            return cls()
        if isinstance(config, ControllerConfig):
            return config
        d = cls()

        def get(name: str, default: Any) -> Any:
            value = config.get(name, default)
            return default if value is None else value

        return cls(
            num_partitions=int(get("num.partitions", d.num_partitions)),
            default_replication_factor=int(get("default.replication.factor", d.default_replication_factor)),
            delete_topic_enable=as_bool(get("delete.topic.enable", d.delete_topic_enable)),
            unclean_leader_election_enable=as_bool(get("unclean.leader.election.enable",
                                                       d.unclean_leader_election_enable)),
            auto_leader_rebalance_enable=as_bool(get("auto.leader.rebalance.enable", d.auto_leader_rebalance_enable)),
            leader_imbalance_check_interval_seconds=int(get("leader.imbalance.check.interval.seconds",
                                                            d.leader_imbalance_check_interval_seconds)),
            leader_imbalance_per_broker_percentage=int(get("leader.imbalance.per.broker.percentage",
                                                           d.leader_imbalance_per_broker_percentage)),
        )
