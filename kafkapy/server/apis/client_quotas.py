"""DescribeClientQuotas (48) v0-1 and AlterClientQuotas (49) v0-1.

What `kafkapy configs --entity-type users|clients --describe|--alter` (and kafka-configs.sh) send: the
quotas live in the metadata store (server/quota/client_quota_store.py); an alteration is applied to this
broker's ClientQuotaManagers at once (others follow the config-change notification). Errors as Kafka:
INVALID_REQUEST for a bad filter, entity, key or value. Without ALTER_CONFIGS on the cluster every entry gets
CLUSTER_AUTHORIZATION_FAILED (Kafka's getErrorResponse), so a refused alteration never reads as done.
Thread-safety: stateless.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode, InvalidRequestError, KafkaError
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)
from kafkapy.server.apis.registry import api
from kafkapy.server.quota.client_quota_store import ClientQuotaStore, Entity

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

DResp = DescribeClientQuotasResponse
AResp = AlterClientQuotasResponse


def _store(ctx: RequestContext) -> ClientQuotaStore:
    quotas = ctx.server.quotas
    return quotas.store if quotas is not None else ClientQuotaStore(ctx.server.controller.store)


@api(ApiKey.DESCRIBE_CLIENT_QUOTAS, 0, 1)
def handle_describe_client_quotas(ctx: RequestContext, request: DescribeClientQuotasRequest
                                  ) -> DescribeClientQuotasResponse:
    ctx.require(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER)
    try:
        found = _store(ctx).describe([(c.entity_type, c.match_type, c.match) for c in request.components],
                                     request.strict)
    except KafkaError as e:
        return DResp(error_code=e.code, error_message=e.message, entries=None)
    return DResp(error_code=0, error_message=None, entries=[DResp.EntryData(
        entity=[DResp.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
        values=[DResp.ValueData(key=k, value=v) for k, v in sorted(quotas.items())]) for entity, quotas in found])


# Kafka's Errors.message() of the whole-request errors an alteration can meet.
_ERROR_MESSAGES: dict[int, str] = {ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed."}


def _alter_error(request: AlterClientQuotasRequest, version: int, code: int) -> AlterClientQuotasResponse:
    return AResp(entries=[AResp.EntryData(
        error_code=code, error_message=_ERROR_MESSAGES.get(code),
        entity=[AResp.EntityData(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity])
        for entry in request.entries])


@api(ApiKey.ALTER_CLIENT_QUOTAS, 0, 1, error_response=_alter_error)
def handle_alter_client_quotas(ctx: RequestContext, request: AlterClientQuotasRequest) -> AlterClientQuotasResponse:
    ctx.require(AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER)
    store = _store(ctx)
    results = []
    for entry in request.entries:
        entity: Entity = {e.entity_type: e.entity_name for e in entry.entity}
        error: KafkaError | None = None
        if len(entity) != len(entry.entity):
            error = InvalidRequestError("Duplicate entity type")
        else:
            try:
                store.alter(entity, [(o.key, o.value, o.remove) for o in entry.ops], request.validate_only)
            except KafkaError as e:
                error = e
        results.append(AResp.EntryData(
            error_code=error.code if error else 0, error_message=error.message if error else None,
            entity=[AResp.EntityData(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity]))
    if ctx.server.quotas is not None and not request.validate_only:
        ctx.server.quotas.reload()
    return AResp(entries=results)
