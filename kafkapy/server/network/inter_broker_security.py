"""The client side of `inter.broker.listener.name`: how this broker connects to other brokers (replica
fetchers, the controller's channel, AlterPartition / ControlledShutdown to the controller).

The inter-broker listener's security protocol (listener.security.protocol.map) decides: PLAINTEXT needs
nothing; SSL / SASL_SSL trust `ssl.truststore.*` and present `ssl.keystore.*` (listener-prefixed first,
as the listener itself reads them); SASL_* log in with `sasl.mechanism.inter.broker.protocol` using the
username/password options of that mechanism's JAAS config on the listener (Kafka's broker JAAS:
`PlainLoginModule required username="admin" password="..." user_admin="...";`). Built once per
KafkaConfig (cached); the ClientSecurity it returns is immutable and shared by every connection.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from kafkapy.server.kafka_config import ConfigError, EndPoint, KafkaConfig
from kafkapy.server.network.listener_security import ListenerSecurity

if TYPE_CHECKING:  # the client stack loads only for a TLS / SASL inter-broker listener (start-up time)
    from kafkapy.client.client_security import ClientSecurity

_SSL_KEYS = (
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.certificates", "ssl.keystore.type",
    "ssl.keystore.location", "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.key.password",
    "ssl.enabled.protocols", "ssl.cipher.suites", "ssl.endpoint.identification.algorithm",
)
_cache: weakref.WeakKeyDictionary[KafkaConfig, ClientSecurity | None] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def inter_broker_client_security(config: KafkaConfig) -> ClientSecurity | None:
    """None when the inter-broker listener is PLAINTEXT. Raises ConfigError when it cannot log in."""
    with _lock:
        if config in _cache:
            return _cache[config]
    name = config.inter_broker_listener_name()
    protocol = config.listener_security_protocol_map().get(name, name)
    security: ClientSecurity | None = None
    if protocol != "PLAINTEXT":
        listener = ListenerSecurity(config, EndPoint(name, "", 0, protocol))
        props: dict[str, Any] = {"security.protocol": protocol}
        if listener.uses_tls:
            props.update({k: listener.get(k) for k in _SSL_KEYS if listener.get(k) is not None})
        if listener.uses_sasl:
            mechanism = str(config.get("sasl.mechanism.inter.broker.protocol") or "GSSAPI").upper()
            jaas = listener.jaas_config(mechanism)
            options = jaas.options if jaas is not None else {}
            if "username" not in options or "password" not in options:
                raise ConfigError(f"inter.broker.listener.name {name} uses SASL {mechanism}: its JAAS config "
                                  f"(listener.name.{name.lower()}.{mechanism.lower()}.sasl.jaas.config) needs the "
                                  "username and password this broker logs in with")
            props.update({"sasl.mechanism": mechanism, "sasl.username": options["username"],
                          "sasl.password": options["password"]})
        from kafkapy.client.client_security import ClientSecurity

        try:
            security = ClientSecurity(props)
        except ValueError as e:
            raise ConfigError(f"inter.broker.listener.name {name}: {e}") from None
    with _lock:
        _cache[config] = security
    return security
