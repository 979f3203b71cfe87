"""ConfigChangeHandler: topic and dynamic broker config overrides, on the controller's event thread.

IncrementalAlterConfigs / AlterConfigs replace an entity's overrides in the store (/config/topics/<t>,
/config/brokers/<id|<default>>); /config/changes notifications (cluster mode) reload them. The controller
itself reads one key, unclean.leader.election.enable (topic override, then the cluster-wide dynamic default,
then the static broker config): turning it on elects the offline partitions it now may. The broker hears of
every change through the on_config_change callback (its log configs).
Reads and writes no bytes itself. Thread-safety: none; only the controller's event thread calls these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafkapy.common.errors import (
    InvalidConfigError,
    InvalidRequestError,
    KafkaError,
    UnknownTopicOrPartitionError,
)
from kafkapy.controller.controller_config import ControllerConfig, as_bool
from kafkapy.controller.controller_events import ConfigChange
from kafkapy.controller.controller_request_sender import call_safely
from kafkapy.controller.leadership import PartitionLeaderElection
from kafkapy.controller.metadata_store import MetadataStore
from kafkapy.controller.partition_state_machine import ControllerContext, PartitionState
from kafkapy.zk.zk_data import DEFAULT_BROKER_ENTITY

ConfigChangeCallback = Callable[[str, str, dict[str, str]], None]
ConfigValidator = Callable[[Mapping[str, str]], None]


def validate_topic_configs(validator: ConfigValidator, configs: Mapping[str, str]) -> None:
    """Run the broker's topic config validator; its ValueError / TypeError is Kafka's InvalidConfigException."""
    try:
        validator(configs)
    except KafkaError:
        raise
    except (ValueError, TypeError) as e:
        raise InvalidConfigError(str(e)) from None


class ConfigChangeHandler:
    def __init__(self, ctx: ControllerContext, store: MetadataStore, config: ControllerConfig,
                 elections: PartitionLeaderElection, validate_configs: ConfigValidator,
                 on_config_change: ConfigChangeCallback | None) -> None:
        self.ctx = ctx
        self.store = store
        self.config = config
        self.elections = elections
        self.validate_configs = validate_configs
        self.config_change_callback = on_config_change
        # The cluster-wide dynamic broker overrides (/config/brokers/<default>), loaded on failover.
        self.broker_defaults: dict[str, str] = {}

    def load_broker_defaults(self) -> None:
        self.broker_defaults = self.store.get_broker_config(None)

    def on_config_change(self, event: ConfigChange) -> None:
        name = event.entity_name
        if event.entity_type == "topics":
            if name not in self.ctx.assignments:
                raise UnknownTopicOrPartitionError(f"Topic {name} does not exist.")
            validate_topic_configs(self.validate_configs, event.configs)
            if event.validate_only:
                return None
            was_unclean = self.unclean_enabled(name)
            self.store.set_topic_config(name, event.configs)
            self.ctx.topic_configs[name] = dict(event.configs)
            if not was_unclean and self.unclean_enabled(name):
                self.elections.elect_offline(self.ctx.partitions_for_topic(name))
        elif event.entity_type == "brokers":
            if event.validate_only:
                return None
            self.store.set_entity_config("brokers", name, event.configs)
            if name == DEFAULT_BROKER_ENTITY:
                self.broker_defaults = dict(event.configs)
                self.elections.elect_offline(self.ctx.partitions_in_state(PartitionState.OFFLINE))
        else:
            raise InvalidRequestError(f"Unsupported config entity type {event.entity_type}")
        if self.config_change_callback is not None:
            call_safely(self.config_change_callback, event.entity_type, name, dict(event.configs))
        return None

    def on_config_notification(self, entity_type: str, name: str) -> None:
        if entity_type == "topics" and name in self.ctx.assignments:
            was_unclean = self.unclean_enabled(name)
            self.ctx.topic_configs[name] = self.store.get_topic_config(name)
            if not was_unclean and self.unclean_enabled(name):
                self.elections.elect_offline(self.ctx.partitions_for_topic(name))
        elif entity_type == "brokers" and name == DEFAULT_BROKER_ENTITY:
            self.broker_defaults = self.store.get_broker_config(None)
            self.elections.elect_offline(self.ctx.partitions_in_state(PartitionState.OFFLINE))

    def unclean_enabled(self, topic: str) -> bool:
        overrides = self.ctx.topic_configs.get(topic, {})
        key = "unclean.leader.election.enable"
        if key in overrides:
            return as_bool(overrides[key])
        if key in self.broker_defaults:
            return as_bool(self.broker_defaults[key])
        return self.config.unclean_leader_election_enable
