"""ListenerSecurity: what one listener's security protocol needs, resolved once from the broker config.

Kafka's listener-prefixed keys win over the plain ones: `listener.name.<listener>.<key>` (listener
lower-cased) then `<key>`; SASL JAAS configs are per mechanism too
(`listener.name.<listener>.<mechanism>.sasl.jaas.config`). PLAINTEXT and SASL_PLAINTEXT have no TLS
context; SSL and SASL_SSL build one (common/ssl_config.py); SSL listeners take the principal from
the client certificate (ssl.principal.mapping.rules); SASL listeners from the SASL exchange.
OAUTHBEARER needs its JAAS entry and gets its token validator here (server/security/
oauthbearer_callback_handlers.py: Kafka's unsecured one, or the JWS-verifying one when
`sasl.server.callback.handler.class` names Kafka's OAuthBearerValidatorCallbackHandler).
Immutable after construction: shared by the listener's Processors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafkapy.common.jaas_config import JaasConfig, JaasConfigError, parse_jaas_config
from kafkapy.server.kafka_config import ConfigError, EndPoint, KafkaConfig

# ssl, the TLS context builder, the principal mapper and the OAUTHBEARER validators are imported where a
# listener needs them (start-up time: a PLAINTEXT-only broker never loads them).
if TYPE_CHECKING:
    import ssl

    from kafkapy.server.network.ssl_principal_mapper import SslPrincipalMapper
    from kafkapy.server.security.oauthbearer_token import OAuthBearerValidator

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


def listener_prefix(listener_name: str) -> str:
    return f"listener.name.{listener_name.lower()}."


class ListenerSecurity:
    def __init__(self, config: KafkaConfig, endpoint: EndPoint) -> None:
        self.listener_name = endpoint.listener_name
        self.security_protocol = endpoint.security_protocol
        if self.security_protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(f"Invalid value {config.get('listeners')} for configuration listeners: "
                              f"security protocol {self.security_protocol} is not supported")
        self._config = config
        self._prefix = listener_prefix(self.listener_name)
        self.uses_tls = self.security_protocol in ("SSL", "SASL_SSL")
        self.uses_sasl = self.security_protocol.startswith("SASL_")
        self.ssl_context: ssl.SSLContext | None = None
        self.principal_mapper: SslPrincipalMapper | None = None
        if self.uses_tls:
            from kafkapy.common.ssl_config import SslConfigError, build_ssl_context
            from kafkapy.server.network.ssl_principal_mapper import SslPrincipalMapper

            # Kafka: SASL_SSL listeners never ask for a client certificate unless configured per listener.
            client_auth = None if self.security_protocol == "SSL" or self.is_prefixed("ssl.client.auth") else "none"
            try:
                self.ssl_context = build_ssl_context(self.get, server_side=True, client_auth=client_auth)
            except SslConfigError as e:
                raise ConfigError(f"Listener {self.listener_name}: {e}") from None
            try:
                self.principal_mapper = SslPrincipalMapper(self.get("ssl.principal.mapping.rules"))
            except ValueError as e:
                raise ConfigError(f"Invalid value for configuration ssl.principal.mapping.rules: {e}") from None
        self.enabled_mechanisms: list[str] = []
        self.plain_users: dict[str, str] = {}
        self.oauthbearer_validator: OAuthBearerValidator | None = None
        self.sasl_max_receive_size = int(self.get("sasl.server.max.receive.size") or 524288)
        self.reauth_ms = int(self.get("connections.max.reauth.ms") or 0)
        self.failed_auth_delay_ms = int(self.get("connection.failed.authentication.delay.ms") or 0)
        if self.uses_sasl:
            self._configure_sasl()

    def _configure_sasl(self) -> None:
        raw = self.get("sasl.enabled.mechanisms")
        names = raw if isinstance(raw, list) else [m.strip() for m in str(raw or "").split(",") if m.strip()]
        unsupported = [m for m in names if m.upper() not in SASL_MECHANISMS]
        if unsupported or not names:
            raise ConfigError(f"Invalid value {','.join(names)} for configuration sasl.enabled.mechanisms "
                              f"(listener {self.listener_name}): kafkapy supports {', '.join(SASL_MECHANISMS)}")
        self.enabled_mechanisms = [m.upper() for m in names]
        for mechanism in self.enabled_mechanisms:
            key = f"{self._prefix}{mechanism.lower()}.sasl.server.callback.handler.class"
            if mechanism != "OAUTHBEARER" and self._config.is_set(key):
                # Kafka would load that class instead of its own handler; running ours would ignore it.
                raise ConfigError(f"Invalid value {self._config.get(key)} for configuration {key}: kafkapy cannot "
                                  f"load a custom server callback handler for {mechanism}")
        if "PLAIN" in self.enabled_mechanisms:
            jaas = self.jaas_config("PLAIN")
            if jaas is None:
                raise ConfigError(f"Listener {self.listener_name}: PLAIN needs "
                                  f"{self._prefix}plain.sasl.jaas.config with user_<name>=\"<password>\" entries")
            self.plain_users = {k[5:]: v for k, v in jaas.options.items() if k.startswith("user_")}
        if "OAUTHBEARER" in self.enabled_mechanisms:
            self._configure_oauthbearer()

    def _configure_oauthbearer(self) -> None:
        from kafkapy.server.security.oauthbearer_callback_handlers import (
            OAuthBearerConfigError,
            build_oauthbearer_validator,
        )

        jaas = self.jaas_config("OAUTHBEARER")
        if jaas is None:  # Kafka's JaasContext.loadServerContext refuses the same way
            raise ConfigError(f"Listener {self.listener_name}: OAUTHBEARER is enabled but has no JAAS entry: set "
                              f"{self._prefix}oauthbearer.sasl.jaas.config (e.g. 'org.apache.kafka.common."
                              "security.oauthbearer.OAuthBearerLoginModule required;')")
        try:
            self.oauthbearer_validator = build_oauthbearer_validator(self.mechanism_lookup("OAUTHBEARER"),
                                                                     jaas.options)
        except OAuthBearerConfigError as e:
            raise ConfigError(f"Listener {self.listener_name}: {e}") from None

    def mechanism_lookup(self, mechanism: str) -> Callable[[str], tuple[Any, str]]:
        """(value, key found under) of a SASL mechanism's setting, as Kafka's ConfigurationUtils resolves it:
        listener.name.<l>.<mechanism>.<key>, listener.name.<l>.<key>, <key> (then the key's default)."""
        mech = mechanism.lower()

        def lookup(key: str) -> tuple[Any, str]:
            for name in (f"{self._prefix}{mech}.{key}", self._prefix + key, key):
                if self._config.is_set(name):
                    return self._config.get(name), name
            return self._config.get(key), f"{self._prefix}{mech}.{key}"

        return lookup

    def jaas_config(self, mechanism: str) -> JaasConfig | None:
        """The JAAS config of a mechanism: listener.name.<l>.<mechanism>.sasl.jaas.config, else sasl.jaas.config."""
        key = f"{self._prefix}{mechanism.lower()}.sasl.jaas.config"
        text = self._config.get(key) if self._config.is_set(key) else self._config.get("sasl.jaas.config")
        if not text:
            return None
        try:
            return parse_jaas_config(str(text))
        except JaasConfigError as e:
            raise ConfigError(f"Invalid value for configuration {key}: {e}") from None

    def is_prefixed(self, key: str) -> bool:
        return self._config.is_set(self._prefix + key)

    def get(self, key: str) -> Any:
        """The listener's value of `key`: listener-prefixed first, then the broker-wide key."""
        prefixed = self._prefix + key
        if self._config.is_set(prefixed):
            return self._config.get(prefixed)
        return self._config.get(key)
