"""CreateAcls (30), DescribeAcls (29) and DeleteAcls (31), v0-3, answered by the broker's AclAuthorizer.

As KafkaApis: without an authorizer each answers SECURITY_DISABLED ("No Authorizer is configured.");
CreateAcls and DeleteAcls need ALTER on the cluster, DescribeAcls DESCRIBE on the cluster, else
CLUSTER_AUTHORIZATION_FAILED. A binding Kafka would refuse (unknown type, empty name, bad principal, a
cluster resource not named kafka-cluster) gets INVALID_REQUEST in its own result; the others are created.
Thread-safety: stateless (the authorizer serializes writes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafkapy.common.errors import ErrorCode
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
)
from kafkapy.server.apis.registry import api

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

NO_AUTHORIZER = "No Authorizer is configured."


def _code(enum: Any, value: int) -> Any:
    try:
        return enum(value)
    except ValueError:
        return enum.UNKNOWN


def _filter(f: Any) -> AclBindingFilter:
    return AclBindingFilter(_code(ResourceType, f.resource_type_filter), f.resource_name_filter,
                            _code(PatternType, f.pattern_type_filter), f.principal_filter, f.host_filter,
                            _code(AclOperation, f.operation), _code(AclPermissionType, f.permission_type))


def _bad_filter(f: AclBindingFilter) -> bool:
    return f.resource_type == ResourceType.UNKNOWN or f.pattern_type == PatternType.UNKNOWN \
        or f.operation == AclOperation.UNKNOWN or f.permission_type == AclPermissionType.UNKNOWN


@api(ApiKey.CREATE_ACLS, 0, 3)
def handle_create_acls(ctx: RequestContext, request: CreateAclsRequest) -> CreateAclsResponse:
    Resp = CreateAclsResponse
    n = len(request.creations)

    def all_fail(code: int, message: str) -> CreateAclsResponse:
        return Resp(throttle_time_ms=0, results=[Resp.AclCreationResult(error_code=code, error_message=message)
                                                 for _ in range(n)])

    authorizer = ctx.server.authorizer
    if authorizer is None:
        return all_fail(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER):
        return all_fail(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    bindings = [AclBinding(
        ResourcePattern(_code(ResourceType, c.resource_type), c.resource_name, _code(PatternType, c.resource_pattern_type)),
        AccessControlEntry(c.principal, c.host, _code(AclOperation, c.operation),
                           _code(AclPermissionType, c.permission_type))) for c in request.creations]
    errors = authorizer.create_acls(bindings)
    return Resp(throttle_time_ms=0, results=[
        Resp.AclCreationResult(error_code=ErrorCode.INVALID_REQUEST if e else 0, error_message=e) for e in errors])


@api(ApiKey.DESCRIBE_ACLS, 0, 3)
def handle_describe_acls(ctx: RequestContext, request: DescribeAclsRequest) -> DescribeAclsResponse:
    Resp = DescribeAclsResponse
    authorizer = ctx.server.authorizer
    if authorizer is None:
        return Resp(throttle_time_ms=0, error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER,
                    resources=[])
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.CLUSTER):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                    error_message="Cluster authorization failed.", resources=[])
    flt = _filter(request)
    if _bad_filter(flt):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST,
                    error_message="The filter has unknown fields", resources=[])
    by_pattern: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for b in authorizer.acls(flt):
        by_pattern.setdefault(b.pattern, []).append(b.entry)
    resources = [Resp.DescribeAclsResource(
        resource_type=p.resource_type, resource_name=p.name, pattern_type=p.pattern_type,
        acls=[Resp.AclDescription(principal=e.principal, host=e.host, operation=e.operation,
                                  permission_type=e.permission_type) for e in entries])
        for p, entries in by_pattern.items()]
    return Resp(throttle_time_ms=0, error_code=0, error_message=None, resources=resources)


@api(ApiKey.DELETE_ACLS, 0, 3)
def handle_delete_acls(ctx: RequestContext, request: DeleteAclsRequest) -> DeleteAclsResponse:
    Resp = DeleteAclsResponse
    authorizer = ctx.server.authorizer

    def all_fail(code: int, message: str) -> DeleteAclsResponse:
        return Resp(throttle_time_ms=0, filter_results=[
            Resp.DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[])
            for _ in request.filters])

    if authorizer is None:
        return all_fail(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER):
        return all_fail(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    filters = [_filter(f) for f in request.filters]
    valid = [f for f in filters if not _bad_filter(f)]
    removed = iter(authorizer.delete_acls(valid))
    results = []
    for f in filters:
        if _bad_filter(f):
            results.append(Resp.DeleteAclsFilterResult(error_code=ErrorCode.INVALID_REQUEST,
                                                        error_message="The filter has unknown fields", matching_acls=[]))
            continue
        results.append(Resp.DeleteAclsFilterResult(error_code=0, error_message=None, matching_acls=[
            Resp.DeleteAclsMatchingAcl(
                error_code=0, error_message=None, resource_type=b.pattern.resource_type, resource_name=b.pattern.name,
                pattern_type=b.pattern.pattern_type, principal=b.entry.principal, host=b.entry.host,
                operation=b.entry.operation, permission_type=b.entry.permission_type)
            for b in next(removed)]))
    return Resp(throttle_time_ms=0, filter_results=results)
