"""CreateDelegationToken (38) v0-3, RenewDelegationToken (39) v0-2, ExpireDelegationToken (40) v0-2,
DescribeDelegationToken (41) v0-3: Kafka's delegation tokens (server/security/delegation_token_manager.py).

As Kafka 3.9's KafkaApis answers them: every token request over PLAINTEXT, over SSL without a client
certificate (User:ANONYMOUS), or from a session that itself logged in with a delegation token gets
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED; without `delegation.token.secret.key` DELEGATION_TOKEN_AUTH_DISABLED.
Create: a token for another owner (v3 `owner_principal_*`) needs CREATE_TOKENS on that USER, else
DELEGATION_TOKEN_AUTHORIZATION_FAILED; renewers must be `User:` principals (INVALID_PRINCIPAL_TYPE).
Renew / expire: by HMAC, only the owner or a renewer (DELEGATION_TOKEN_OWNER_MISMATCH), unknown HMAC
DELEGATION_TOKEN_NOT_FOUND, an expired token DELEGATION_TOKEN_EXPIRED; failures carry expiry -1.
Describe: an empty owner list answers nothing, a null one every token; a token is listed when its owner,
requester or a renewer matches the filter and the requester is one of them, or has DESCRIBE on the
DELEGATION_TOKEN resource, or DESCRIBE_TOKENS on the owner's USER resource.
Thread-safety: stateless per request (the manager serialises mutations).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import (
    DelegationTokenAuthDisabledError,
    DelegationTokenAuthorizationFailedError,
    DelegationTokenRequestNotAllowedError,
    InvalidPrincipalTypeError,
    KafkaError,
)
from kafkapy.common.kafka_principal import ANONYMOUS, USER_TYPE, KafkaPrincipal
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    CreateDelegationTokenRequest,
    CreateDelegationTokenResponse,
    DescribeDelegationTokenRequest,
    DescribeDelegationTokenResponse,
    ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse,
    RenewDelegationTokenRequest,
    RenewDelegationTokenResponse,
)
from kafkapy.server.apis.handler_support import delegation_token_manager
from kafkapy.server.apis.registry import api

# The token manager (hashlib, hmac, SCRAM) loads with the first token request (start-up time).
if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext
    from kafkapy.server.security.delegation_token_manager import DelegationTokenManager, TokenInformation

DescribedToken = DescribeDelegationTokenResponse.DescribedDelegationToken
ExpiryResponseT = TypeVar("ExpiryResponseT", RenewDelegationTokenResponse, ExpireDelegationTokenResponse)
DescribedRenewer = DescribeDelegationTokenResponse.DescribedDelegationTokenRenewer


def allow_token_requests(ctx: RequestContext) -> bool:
    """Kafka's KafkaApis.allowTokenRequests."""
    session = ctx.request.sasl
    if session is not None and session.token_authenticated:
        return False
    protocol = ctx.request.security_protocol
    return not (protocol == "PLAINTEXT" or (protocol == "SSL" and ctx.principal == ANONYMOUS))


def _manager(ctx: RequestContext) -> DelegationTokenManager:
    manager = delegation_token_manager(ctx.server)
    if manager.enabled:
        manager.maybe_expire_tokens()
    return manager


@api(ApiKey.CREATE_DELEGATION_TOKEN, 0, 3)
def handle_create_delegation_token(ctx: RequestContext, request: CreateDelegationTokenRequest
                                   ) -> CreateDelegationTokenResponse:
    from kafkapy.server.security.delegation_token_manager import ERROR_TIMESTAMP

    requester = ctx.principal
    owner = (KafkaPrincipal(request.owner_principal_type or USER_TYPE, request.owner_principal_name)
             if request.owner_principal_name else requester)
    renewers = [KafkaPrincipal(r.principal_type, r.principal_name) for r in request.renewers]

    # The requester fields exist from v3 (an older version cannot carry a value other than their default).
    requester_type, requester_name = (requester.principal_type, requester.name) if ctx.api_version >= 3 else ("", "")

    def failed(code: int) -> CreateDelegationTokenResponse:
        return CreateDelegationTokenResponse(
            error_code=code, principal_type=owner.principal_type, principal_name=owner.name,
            token_requester_principal_type=requester_type, token_requester_principal_name=requester_name,
            issue_timestamp_ms=ERROR_TIMESTAMP, expiry_timestamp_ms=ERROR_TIMESTAMP, max_timestamp_ms=ERROR_TIMESTAMP,
            token_id="", hmac=b"")

    if not allow_token_requests(ctx):
        return failed(DelegationTokenRequestNotAllowedError.code)
    if owner != requester and not ctx.authorize(AclOperation.CREATE_TOKENS, ResourceType.USER, str(owner)):
        return failed(DelegationTokenAuthorizationFailedError.code)
    if any(r.principal_type != USER_TYPE for r in renewers):
        return failed(InvalidPrincipalTypeError.code)
    try:
        token = _manager(ctx).create(owner, requester, renewers, request.max_lifetime_ms)
    except KafkaError as e:
        return failed(e.code)
    info = token.info
    return CreateDelegationTokenResponse(
        error_code=0, principal_type=owner.principal_type, principal_name=owner.name,
        token_requester_principal_type=requester_type, token_requester_principal_name=requester_name,
        issue_timestamp_ms=info.issue_timestamp, expiry_timestamp_ms=info.expiry_timestamp,
        max_timestamp_ms=info.max_timestamp, token_id=info.token_id, hmac=token.hmac)


def _change_expiry(ctx: RequestContext, response: type[ExpiryResponseT], change: Callable[[DelegationTokenManager], int]
                   ) -> ExpiryResponseT:
    """Renew and expire answer alike: the new expiry, or the error with expiry -1."""
    from kafkapy.server.security.delegation_token_manager import ERROR_TIMESTAMP

    if not allow_token_requests(ctx):
        return response(error_code=DelegationTokenRequestNotAllowedError.code, expiry_timestamp_ms=ERROR_TIMESTAMP)
    try:
        expiry = change(_manager(ctx))
    except KafkaError as e:
        return response(error_code=e.code, expiry_timestamp_ms=ERROR_TIMESTAMP)
    return response(error_code=0, expiry_timestamp_ms=expiry)


@api(ApiKey.RENEW_DELEGATION_TOKEN, 0, 2)
def handle_renew_delegation_token(ctx: RequestContext, request: RenewDelegationTokenRequest
                                  ) -> RenewDelegationTokenResponse:
    return _change_expiry(ctx, RenewDelegationTokenResponse,
                          lambda m: m.renew(ctx.principal, bytes(request.hmac), request.renew_period_ms))


@api(ApiKey.EXPIRE_DELEGATION_TOKEN, 0, 2)
def handle_expire_delegation_token(ctx: RequestContext, request: ExpireDelegationTokenRequest
                                   ) -> ExpireDelegationTokenResponse:
    return _change_expiry(ctx, ExpireDelegationTokenResponse,
                          lambda m: m.expire(ctx.principal, bytes(request.hmac), request.expiry_time_period_ms))


@api(ApiKey.DESCRIBE_DELEGATION_TOKEN, 0, 3)
def handle_describe_delegation_token(ctx: RequestContext, request: DescribeDelegationTokenRequest
                                     ) -> DescribeDelegationTokenResponse:
    if not allow_token_requests(ctx):
        return DescribeDelegationTokenResponse(error_code=DelegationTokenRequestNotAllowedError.code, tokens=[])
    manager = _manager(ctx)
    if not manager.enabled:
        return DescribeDelegationTokenResponse(error_code=DelegationTokenAuthDisabledError.code, tokens=[])
    if request.owners is not None and not request.owners:
        return DescribeDelegationTokenResponse(error_code=0, tokens=[])
    owners = None if request.owners is None else [KafkaPrincipal(o.principal_type, o.principal_name)
                                                   for o in request.owners]
    requester = ctx.principal

    def eligible(info: TokenInformation) -> bool:
        if owners is not None and not any(info.owner_or_renewer(o) for o in owners):
            return False
        return (info.owner_or_renewer(requester)
                or ctx.authorize(AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, info.token_id)
                or ctx.authorize(AclOperation.DESCRIBE_TOKENS, ResourceType.USER, str(info.owner)))

    tokens = []
    v3 = ctx.api_version >= 3
    for token in manager.tokens(eligible):
        info = token.info
        requester_fields = ({"token_requester_principal_type": info.token_requester.principal_type,
                             "token_requester_principal_name": info.token_requester.name} if v3 else {})
        tokens.append(DescribedToken(
            principal_type=info.owner.principal_type, principal_name=info.owner.name, **requester_fields,
            issue_timestamp=info.issue_timestamp,
            expiry_timestamp=info.expiry_timestamp, max_timestamp=info.max_timestamp, token_id=info.token_id,
            hmac=token.hmac, renewers=[DescribedRenewer(principal_type=r.principal_type, principal_name=r.name)
                                       for r in info.renewers]))
    return DescribeDelegationTokenResponse(error_code=0, tokens=tokens)

