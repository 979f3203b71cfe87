"""ClientSecurity: a client's `security.protocol`, TLS context and SASL credentials, built once per client.

Keys (Kafka's): `security.protocol` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), the `ssl.*` keys of
common/ssl_config.py, `sasl.mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER: client/oauthbearer_login.py) and
`sasl.jaas.config` (`... required username="u" password="p";`; Kafka's ScramLoginModule option
`tokenauth="true"` logs in with a delegation token: username = token id, password = its HMAC). librdkafka's spellings are accepted
too, so one properties file serves kcat and the tools: `sasl.username` / `sasl.password`,
`ssl.ca.location`, `ssl.certificate.location` + `ssl.key.location`, `ssl.key.password`.
Errors are one-line ValueErrors naming the key. Immutable after construction: thread-safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kafkapy.client.config import ClientConfig
from kafkapy.common.errors import SaslAuthenticationFailedError
from kafkapy.common.jaas_config import JaasConfigError, parse_jaas_config

# ssl, the SASL clients (SCRAM: hashlib, hmac) and the OAUTHBEARER token sources are imported by the branch
# that needs them: building the security of a PLAINTEXT connection loads none of them (start-up time).
if TYPE_CHECKING:
    import ssl

    from kafkapy.client.oauthbearer_login import TokenSource
    from kafkapy.client.sasl_client import SaslClient

SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_LIBRDKAFKA_SSL = {"ssl.truststore.location": "ssl.ca.location", "ssl.keystore.location": "ssl.certificate.location"}


class ClientSecurity:
    def __init__(self, configs: Mapping[str, Any]) -> None:
        originals = _originals(configs)

        def raw(key: str) -> Any:
            value = configs.get(key)
            return originals.get(key) if value is None else value

        def get(key: str) -> Any:
            value = raw(key)
            if value is None and key in _LIBRDKAFKA_SSL:
                value = raw(_LIBRDKAFKA_SSL[key])
            return value

        self.security_protocol = str(get("security.protocol") or "PLAINTEXT").upper()
        self.ssl_context: ssl.SSLContext | None = None
        self.mechanism: str | None = None
        self._username = self._password = ""
        self._tokenauth = False
        self._oauth_token: TokenSource | None = None
        if self.security_protocol in ("SSL", "SASL_SSL"):
            import ssl

            from kafkapy.common.ssl_config import build_ssl_context

            self.ssl_context = build_ssl_context(get, server_side=False)
            key_file, cert_file = raw("ssl.key.location"), raw("ssl.certificate.location")
            if key_file and cert_file and not raw("ssl.keystore.location"):
                try:
                    self.ssl_context.load_cert_chain(str(cert_file), str(key_file), password=raw("ssl.key.password"))
                except (ssl.SSLError, OSError) as e:
                    raise ValueError(f"Invalid value for configuration ssl.key.location: {e}") from None
        if self.security_protocol.startswith("SASL_"):
            self.mechanism = str(get("sasl.mechanism") or "GSSAPI").upper()
            if self.mechanism not in SASL_MECHANISMS:
                raise ValueError(f"Invalid value {self.mechanism} for configuration sasl.mechanism: "
                                 f"supported mechanisms are {', '.join(SASL_MECHANISMS)}")
            if self.mechanism == "OAUTHBEARER":
                jaas = raw("sasl.jaas.config")
                try:
                    options = parse_jaas_config(str(jaas)).options if jaas else {}
                except JaasConfigError as e:
                    raise ValueError(f"Invalid value for configuration sasl.jaas.config: {e}") from None
                from kafkapy.client.oauthbearer_login import token_source

                self._oauth_token = token_source(raw, options)
            else:
                self._username, self._password = self._credentials(raw)
                self._tokenauth = self._token_auth(raw)

    @staticmethod
    def _token_auth(raw: Any) -> bool:
        jaas = raw("sasl.jaas.config")
        return bool(jaas) and parse_jaas_config(str(jaas)).options.get("tokenauth", "").lower() == "true"

    @staticmethod
    def _credentials(raw: Any) -> tuple[str, str]:
        jaas = raw("sasl.jaas.config")
        if jaas:
            try:
                options = parse_jaas_config(str(jaas)).options
            except JaasConfigError as e:
                raise ValueError(f"Invalid value for configuration sasl.jaas.config: {e}") from None
            if "username" in options and "password" in options:
                return options["username"], options["password"]
            raise ValueError("Invalid value for configuration sasl.jaas.config: it needs username and password")
        user, password = raw("sasl.username"), raw("sasl.password")
        if user is None or password is None:
            raise ValueError("Missing configuration sasl.jaas.config (or sasl.username and sasl.password) "
                             "for a SASL security.protocol")
        return str(user), str(password)

    def sasl_client(self) -> SaslClient:
        from kafkapy.client.sasl_client import OAuthBearerSaslClient, sasl_client

        assert self.mechanism is not None
        if self._oauth_token is not None:
            try:
                return OAuthBearerSaslClient(self._oauth_token())
            except OSError as e:
                raise SaslAuthenticationFailedError(f"Cannot read the OAUTHBEARER token: {e}") from None
        return sasl_client(self.mechanism, self._username, self._password,
                           {"tokenauth": "true"} if self._tokenauth else None)


def _originals(configs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The configs as given: a ClientConfig keeps there the keys its client does not know (a producer's
    config read for an admin connection, librdkafka spellings); a plain mapping has nothing more."""
    return configs.originals if isinstance(configs, ClientConfig) else {}


def client_security(configs: Mapping[str, Any]) -> ClientSecurity | None:
    """None for PLAINTEXT (nothing to do per connection)."""
    protocol = str(configs.get("security.protocol") or _originals(configs).get("security.protocol")
                   or "PLAINTEXT").upper()
    return None if protocol == "PLAINTEXT" else ClientSecurity(configs)
