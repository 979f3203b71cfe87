"""ClusterMode: what a broker adds when `zookeeper.connect` is set (Kafka's ZooKeeper-mode KafkaServer parts):
the ZooKeeper store, the controller's channels to every broker (ControllerChannelManager) and this broker's
channel to the controller (ControlledShutdown, AlterPartition), the broker epoch kept current across session
expiries, and Kafka 2.x's ZkConfigManager: every broker follows /config/changes/config_change_<seq>
({"version":2,"entity_path":"topics/<t>"}) and applies the entity's new overrides to its logs.
Thread-safety: watch callbacks only enqueue; one thread applies config notifications in sequence order.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import TYPE_CHECKING, Any

from kafkapy.controller.zk_client import ZkMetadataStore
from kafkapy.server.broker_to_controller import BrokerToControllerChannel
from kafkapy.server.controller_channel_manager import ControllerChannelManager
from kafkapy.server.network.inter_broker_security import inter_broker_client_security
from kafkapy.zk import zk_data
from kafkapy.zk.zk_client_config import require_secure_connection, system_properties, zk_client_auth

if TYPE_CHECKING:
    from kafkapy.server.kafka_config import KafkaConfig

log = logging.getLogger("kafka.server.KafkaServer")


def connect_store(config: KafkaConfig) -> ZkMetadataStore:
    """Connect to `zookeeper.connect`; an unreachable ensemble fails after zookeeper.connection.timeout.ms.
    The ZooKeeper login comes from the JAAS file of -Djava.security.auth.login.config ($KAFKA_OPTS);
    zookeeper.set.acl=true without one is refused before connecting (Kafka's SecurityException)."""
    connection_timeout = config.get("zookeeper.connection.timeout.ms")
    props = system_properties()
    auth = zk_client_auth(props)
    set_acl = config.get_bool("zookeeper.set.acl")
    require_secure_connection(set_acl, auth, props)
    return ZkMetadataStore(config.get_string("zookeeper.connect") or "", config.get_int("zookeeper.session.timeout.ms"),
                           int(connection_timeout) if connection_timeout else None, secure_acls=set_acl, auth=auth)


def _sequence(name: str) -> int:
    digits = name.rsplit("_", 1)[-1]
    return int(digits) if digits.isdigit() else -1


class ClusterMode:
    def __init__(self, server: Any, store: ZkMetadataStore) -> None:
        self.server = server
        self.store = store
        config = server.config
        listener = config.inter_broker_listener_name()
        timeout_ms = config.get_int("controller.socket.timeout.ms")
        security = inter_broker_client_security(config)  # TLS / SASL of inter.broker.listener.name
        setup_ms = (config.get_int("socket.connection.setup.timeout.ms"),
                    config.get_int("socket.connection.setup.timeout.max.ms"))
        self.controller_channel = ControllerChannelManager(server.broker_id, listener, timeout_ms, security, *setup_ms)
        self.to_controller = BrokerToControllerChannel(server.broker_id, store, listener, lambda: server.broker_epoch,
                                                       timeout_ms, server.time, security, *setup_ms)
        store.add_session_listener(self._on_new_session)
        existing = store.children(zk_data.CONFIG_CHANGES_PATH)
        # Configs were read in full at start-up: only notifications after this point matter.
        self._last_config_change = max((_sequence(n) for n in existing), default=-1)
        self._config_events: queue.Queue[bool] = queue.Queue()
        self._config_thread = threading.Thread(target=self._config_loop, name="config-change-processor", daemon=True)
        self._config_thread.start()
        store.watch_path_children(zk_data.CONFIG_CHANGES_PATH, lambda: self._config_events.put(True))

    # -- session expiry ---------------------------------------------------------------------------------------

    def _on_new_session(self) -> None:
        broker = self.store.get_brokers().get(self.server.broker_id)
        if broker is not None:
            self.server.broker_epoch = broker.epoch
            if self.server.services is not None:
                self.server.services.broker_epoch = broker.epoch
            log.info("Broker %d registered again with broker epoch %d", self.server.broker_id, broker.epoch)

    # -- config change notifications ----------------------------------------------------------------------------

    def _config_loop(self) -> None:
        while True:
            if not self._config_events.get():
                return
            try:
                self._process_config_changes()
            except Exception:
                log.exception("Could not process config change notifications")

    def _process_config_changes(self) -> None:
        names = sorted(self.store.children(zk_data.CONFIG_CHANGES_PATH), key=_sequence)
        for name in names:
            seq = _sequence(name)
            if seq <= self._last_config_change:
                continue
            data = self.store.get_json(f"{zk_data.CONFIG_CHANGES_PATH}/{name}")
            self._last_config_change = seq
            if data is None:
                continue
            entity_type, entity_name = zk_data.decode_config_change(data)
            quotas = self.server.services.quotas if self.server.services is not None else None
            if entity_type in ("users", "clients") and quotas is not None:
                quotas.reload()  # client quotas (ClientQuotaManager)
            if entity_type not in ("topics", "brokers") or not entity_name:
                continue
            configs = self.store.get_entity_config(entity_type, entity_name)
            log.info("Processing override for entityPath: %s/%s with config: %s", entity_type, entity_name, configs)
            rm = self.server.replica_manager
            if rm is not None:
                rm.update_topic_config(entity_type, entity_name, configs)
            controller = self.server.controller
            if controller is not None:
                controller.config_changed(entity_type, entity_name)

    # -- shutdown -------------------------------------------------------------------------------------------------

    def controlled_shutdown(self) -> None:
        config = self.server.config
        if config.get_bool("controlled.shutdown.enable"):
            self.to_controller.controlled_shutdown(config.get_int("controlled.shutdown.max.retries"),
                                                   int(config.get("controlled.shutdown.retry.backoff.ms")))

    def shutdown(self) -> None:
        self._config_events.put(False)
        self.to_controller.shutdown()
        self.controller_channel.shutdown()
