"""DescribeUserScramCredentials (50) v0 and AlterUserScramCredentials (51) v0.

What `kafkapy configs --entity-type users --alter --add-config 'SCRAM-SHA-256=[password=...]'`
(and Kafka's kafka-configs.sh) send: the client salts and hashes; the broker stores Kafka's
credential text under /config/users/<user> (server/security/scram_credentials.py), where SCRAM
logins read it. Per-user errors as Kafka: UNSUPPORTED_SASL_MECHANISM, UNACCEPTABLE_CREDENTIAL
(iterations outside 4096..16384, empty name), DUPLICATE_RESOURCE, RESOURCE_NOT_FOUND. Without ALTER on the
cluster every named user gets CLUSTER_AUTHORIZATION_FAILED (Kafka's getErrorResponse: users sorted, no message),
so a refused alteration never reads as done.
Thread-safety: stateless (the store is thread-safe).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
from kafkapy.server.apis.registry import api

# The credential store (SCRAM: hashlib, hmac) loads with the first request of these APIs (start-up time).
if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext
    from kafkapy.server.security.scram_credentials import ScramCredentialStore

DResp = DescribeUserScramCredentialsResponse
AResp = AlterUserScramCredentialsResponse


def _store(ctx: RequestContext) -> ScramCredentialStore:
    from kafkapy.server.security.scram_credentials import ScramCredentialStore

    return ScramCredentialStore(ctx.server.controller.store)


def _describe_error(request: DescribeUserScramCredentialsRequest, version: int, code: int
                    ) -> DescribeUserScramCredentialsResponse:
    """Kafka's getErrorResponse: the error at the top and once per named user (Kafka leaves the name unset)."""
    return DResp(error_code=code, error_message=None, results=[
        DResp.DescribeUserScramCredentialsResult(user="", error_code=code, error_message=None, credential_infos=[])
        for _ in request.users or []])


@api(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0, error_response=_describe_error)
def handle_describe_user_scram_credentials(ctx: RequestContext, request: DescribeUserScramCredentialsRequest
                                           ) -> DescribeUserScramCredentialsResponse:
    ctx.require(AclOperation.DESCRIBE, ResourceType.CLUSTER)
    users = None if request.users is None or not request.users else [u.name for u in request.users]
    results = []
    for user, error, infos in _store(ctx).describe(users):
        results.append(DResp.DescribeUserScramCredentialsResult(
            user=user, error_code=error.code if error else 0, error_message=error.message if error else None,
            credential_infos=[DResp.CredentialInfo(mechanism=m, iterations=i) for m, i in infos]))
    return DResp(error_code=0, results=results)


def _alter_error(request: AlterUserScramCredentialsRequest, version: int, code: int
                 ) -> AlterUserScramCredentialsResponse:
    users = sorted({d.name for d in request.deletions} | {u.name for u in request.upsertions})
    return AResp(results=[AResp.AlterUserScramCredentialsResult(user=u, error_code=code, error_message=None)
                          for u in users])


@api(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, 0, error_response=_alter_error)
def handle_alter_user_scram_credentials(ctx: RequestContext, request: AlterUserScramCredentialsRequest
                                        ) -> AlterUserScramCredentialsResponse:
    from kafkapy.server.security.scram_credentials import Deletion, Upsertion

    ctx.require(AclOperation.ALTER, ResourceType.CLUSTER)
    results = _store(ctx).alter(
        [Deletion(d.name, d.mechanism) for d in request.deletions],
        [Upsertion(u.name, u.mechanism, u.iterations, bytes(u.salt), bytes(u.salted_password))
         for u in request.upsertions],
    )
    return AResp(results=[AResp.AlterUserScramCredentialsResult(
        user=user, error_code=error.code if error else 0, error_message=error.message if error else None)
        for user, error in results.items()])
