"""SaslHandshake (17) v0-1 and SaslAuthenticate (36) v0-2: SASL logins on SASL_PLAINTEXT / SASL_SSL listeners.

The connection's SaslSession (server/network/sasl_session.py) carries the state; the mechanism
servers are in server/security/sasl_server.py. SaslHandshake picks a mechanism of the listener's
`sasl.enabled.mechanisms` (v0: the tokens that follow are bare size-prefixed frames, answered the
same way; v1: they come in SaslAuthenticate requests). A completed exchange sets the session's
principal (`User:<name>`) and, with `connections.max.reauth.ms` (or a token lifetime), the session
lifetime (v1+ `session_lifetime_ms`); a SaslHandshake on an authenticated v1 session starts
re-authentication (same mechanism, same principal). Failures (wrong password, unknown user, token
out of order, unsupported mechanism) log one INFO line and get Kafka's error code
(SASL_AUTHENTICATION_FAILED, ILLEGAL_SASL_STATE, UNSUPPORTED_SASL_MECHANISM) as the connection's last
response, after `connection.failed.authentication.delay.ms` for failed credentials; bare-token
failures are closed without a response, as Kafka. On listeners without SASL both APIs answer
ILLEGAL_SASL_STATE. Thread-safety: one request per connection at a time (muting), no shared state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.common.errors import (
    IllegalSaslStateError,
    KafkaError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
)
from kafkapy.common.kafka_principal import KafkaPrincipal
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.header import encode_response
from kafkapy.protocol.message import Message
from kafkapy.protocol.messages import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from kafkapy.server.apis.handler_support import delegation_token_manager
from kafkapy.server.apis.registry import DEFERRED, Deferred, api
from kafkapy.server.network.sasl_session import SaslSession, SaslState, log_authentication_failure

# The SASL servers, SCRAM and the delegation token manager load with the first SaslHandshake (start-up time:
# a broker without SASL listeners never needs them).
if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext
    from kafkapy.server.security.sasl_server import SaslServer


def _final(ctx: RequestContext, body: Message | None, reason: object, delay_ms: int = 0) -> Deferred:
    """Answer with `body` (None: nothing, for bare tokens) as the connection's last response."""
    session: SaslSession = ctx.request.sasl
    session.state = SaslState.FAILED
    log_authentication_failure(ctx.client_host, ctx.request.connection_id, reason)
    header = ctx.header
    chunks = None if body is None else encode_response(header.api_key, header.api_version, header.correlation_id, body)
    ctx.channel.send_final_response(ctx.request, chunks, delay_ms)
    return DEFERRED


def _new_server(ctx: RequestContext, session: SaslSession, mechanism: str) -> SaslServer:
    from kafkapy.server.security.sasl_server import OAuthBearerSaslServer, PlainSaslServer, ScramSaslServer
    from kafkapy.server.security.scram_credentials import ScramCredentialStore

    if mechanism == "PLAIN":
        return PlainSaslServer(session.security.plain_users)
    if mechanism == "OAUTHBEARER":
        return OAuthBearerSaslServer(session.security.oauthbearer_validator, ctx.server.time.milliseconds)
    tokens = delegation_token_manager(ctx.server)
    return ScramSaslServer(mechanism, ScramCredentialStore(ctx.server.controller.store).lookup,
                           tokens.scram_credential)


@api(ApiKey.SASL_HANDSHAKE, 0, 1)
def handle_sasl_handshake(ctx: RequestContext, request: SaslHandshakeRequest) -> SaslHandshakeResponse | Deferred:
    session: SaslSession | None = ctx.request.sasl
    if session is None:
        return SaslHandshakeResponse(error_code=IllegalSaslStateError.code, mechanisms=[])
    enabled = session.security.enabled_mechanisms
    reauth = session.state is SaslState.COMPLETE
    if session.state is not SaslState.HANDSHAKE and not (reauth and ctx.api_version >= 1):
        return _final(ctx, SaslHandshakeResponse(error_code=IllegalSaslStateError.code, mechanisms=enabled),
                      f"Unexpected SaslHandshake request in state {session.state.value}")
    mechanism = request.mechanism
    if mechanism not in enabled or (reauth and mechanism != session.mechanism):
        return _final(ctx, SaslHandshakeResponse(error_code=UnsupportedSaslMechanismError.code, mechanisms=enabled),
                      f"Unsupported SASL mechanism {mechanism}")
    session.server = _new_server(ctx, session, mechanism)
    session.mechanism = mechanism
    session.raw_tokens = ctx.api_version == 0
    session.reauthenticating = reauth
    session.state = SaslState.AUTHENTICATE
    return SaslHandshakeResponse(error_code=0, mechanisms=enabled)


def _respond_token(ctx: RequestContext, token: bytes, session_lifetime_ms: int = 0
                   ) -> SaslAuthenticateResponse | Deferred:
    if ctx.request.raw_sasl_token:
        ctx.channel.send_response(ctx.request, [len(token).to_bytes(4, "big") + token])
        return DEFERRED
    return SaslAuthenticateResponse(error_code=0, auth_bytes=token, session_lifetime_ms=session_lifetime_ms)


def _evaluate(server: SaslServer, token: bytes) -> tuple[bytes, bool]:
    """The mechanism's step; whatever a client's bytes make it raise is a failed authentication (Kafka's
    SaslServerAuthenticator answers a SaslException so), never UNKNOWN_SERVER_ERROR."""
    try:
        return server.evaluate(token)
    except KafkaError:
        raise
    except Exception as e:  # noqa: BLE001 - the boundary between a client's bytes and the mechanism code
        server.failure_reason = server.failure_reason or f"{type(e).__name__}: {e}"
        raise SaslAuthenticationFailedError("Authentication failed during authentication due to invalid "
                                            f"credentials with SASL mechanism {server.mechanism}") from None


@api(ApiKey.SASL_AUTHENTICATE, 0, 2)
def handle_sasl_authenticate(ctx: RequestContext, request: SaslAuthenticateRequest) -> SaslAuthenticateResponse | Deferred:
    session: SaslSession | None = ctx.request.sasl
    if session is None or session.state is SaslState.COMPLETE:
        # What Kafka's KafkaApis answers once the network layer let the request through; the connection stays.
        return SaslAuthenticateResponse(error_code=IllegalSaslStateError.code,
                                        error_message="SaslAuthenticate request received after successful authentication")
    if session.state is not SaslState.AUTHENTICATE:
        message = f"Unexpected SaslAuthenticate request with {session.state.value} state"
        return _final(ctx, SaslAuthenticateResponse(error_code=IllegalSaslStateError.code, error_message=message),
                      message)
    server: SaslServer = session.server
    try:
        token, complete = _evaluate(server, bytes(request.auth_bytes))
        principal = KafkaPrincipal.user(server.authorization_id or "") if complete else None
        if principal is not None and session.reauthenticating and principal != session.principal:
            raise SaslAuthenticationFailedError(f"Cannot change principals during re-authentication from "
                                                f"{session.principal} to {principal}")
    except KafkaError as e:
        body = None if ctx.request.raw_sasl_token else SaslAuthenticateResponse(error_code=e.code,
                                                                                error_message=e.message or e.name)
        delay = session.security.failed_auth_delay_ms if isinstance(e, SaslAuthenticationFailedError) else 0
        return _final(ctx, body, server.failure_reason or e.message or e.name, delay)
    if principal is None:
        return _respond_token(ctx, token)
    session.principal = principal
    from kafkapy.server.security.sasl_server import ScramSaslServer  # loaded with the session's server

    session.token_authenticated = isinstance(server, ScramSaslServer) and server.token_authenticated
    session.state = SaslState.COMPLETE
    session.server = None
    lifetimes = [ms for ms in (session.security.reauth_ms, server.lifetime_ms) if ms]
    lifetime = min(lifetimes) if lifetimes else 0
    session.expiration_ms = ctx.server.time.hi_res_clock_ms() + lifetime if lifetime else None
    return _respond_token(ctx, token, lifetime if ctx.api_version >= 1 else 0)
