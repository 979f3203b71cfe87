"""SaslSession: one SASL connection's authentication state (Kafka's SaslServerAuthenticator states).

States: HANDSHAKE (only ApiVersions and SaslHandshake accepted), AUTHENTICATE (after a handshake:
SaslAuthenticate requests, or raw size-prefixed tokens when the handshake was v0), COMPLETE (any
request; a SaslHandshake v1+ starts re-authentication), FAILED (the connection is closing).
The Processor consults it for every frame (gating, raw-token framing, the pre-authentication
frame size cap `sasl.server.max.receive.size`, session expiry from `connections.max.reauth.ms`);
the SaslHandshake/SaslAuthenticate handlers (server/apis/sasl_authentication.py) advance it.

Thread-safety: the Processor reads it while parsing a frame; a handler writes it while serving
that connection's one request in flight; muting orders the two (a frame is parsed only after the
previous response was written), so no lock is needed.
"""

from __future__ import annotations

import enum
import logging
from typing import Any

from kafkapy.common.kafka_principal import ANONYMOUS, KafkaPrincipal

# One logger and one line format for every refused login (TLS handshake, SASL), as Kafka's Selector logs them.
auth_log = logging.getLogger("org.apache.kafka.common.network.Selector")


def log_authentication_failure(address: str, connection_id: str, reason: object) -> None:
    auth_log.info("Failed authentication with /%s (channelId=%s) (%s)", address, connection_id, reason)


API_VERSIONS = 18
SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36


class SaslState(enum.Enum):
    HANDSHAKE = "HANDSHAKE"
    AUTHENTICATE = "AUTHENTICATE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class SaslSession:
    __slots__ = ("security", "state", "mechanism", "server", "raw_tokens", "principal", "expiration_ms",
                 "reauthenticating", "token_authenticated")

    def __init__(self, security: Any) -> None:
        self.security = security  # the listener's ListenerSecurity (enabled mechanisms, JAAS, limits)
        self.state = SaslState.HANDSHAKE
        self.mechanism: str | None = None
        self.server: Any = None  # the mechanism's server exchange (server/security/sasl_server.py)
        self.raw_tokens = False  # SaslHandshake v0: tokens follow as bare size-prefixed frames
        self.principal: KafkaPrincipal = ANONYMOUS
        self.expiration_ms: int | None = None  # hi-res clock ms; None = no re-authentication required
        self.reauthenticating = False
        self.token_authenticated = False  # logged in with a delegation token (SCRAM tokenauth=true)

    @property
    def authenticated(self) -> bool:
        return self.state is SaslState.COMPLETE

    def refusal(self, api_key: int, now_ms: int) -> str | None:
        """Why a request with this api key may not be served now (None: go ahead)."""
        state = self.state
        if state is SaslState.COMPLETE:
            if self.expiration_ms is not None and now_ms >= self.expiration_ms and api_key != SASL_HANDSHAKE:
                return "the SASL session expired (connections.max.reauth.ms) without re-authentication"
            return None
        if state is SaslState.HANDSHAKE:
            if api_key in (API_VERSIONS, SASL_HANDSHAKE):
                return None
            if api_key == SASL_AUTHENTICATE:
                return None  # answered with ILLEGAL_SASL_STATE by its handler, then closed
        elif state is SaslState.AUTHENTICATE and api_key in (SASL_AUTHENTICATE, API_VERSIONS, SASL_HANDSHAKE):
            return None
        if state is SaslState.FAILED:
            return "a request arrived after failed authentication"
        return f"Unexpected Kafka request of type {api_key} during SASL handshake"
