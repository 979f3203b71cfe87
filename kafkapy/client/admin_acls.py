"""The ACL operations behind AdminClient's create_acls / describe_acls / delete_acls (functions over the
AdminClient's AdminCalls): CreateAcls v0-3, DescribeAcls v0-3, DeleteAcls v0-3, sent to the least loaded
broker as Java's KafkaAdminClient sends them. Bindings and filters are kafkapy.common.acl's (Kafka's
AclBinding / AclBindingFilter). A PREFIXED or MATCH pattern needs v1+ (Kafka 2.0); the negotiated version
is always at least that against any broker that has them.

Thread-safety: as AdminClient (blocking calls, safe from several threads).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafkapy.client.admin_calls import AdminCalls, error_or_none
from kafkapy.client.errors import error_from_code
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
from kafkapy.common.errors import KafkaError
from kafkapy.protocol import messages as M

DESCRIBE_ACLS = 29
CREATE_ACLS = 30
DELETE_ACLS = 31


def _binding(resource_type: int, name: str, pattern_type: int, a: Any) -> AclBinding:
    return AclBinding(ResourcePattern(ResourceType(resource_type), name, PatternType(pattern_type)),
                      AccessControlEntry(a.principal, a.host, AclOperation(a.operation),
                                         AclPermissionType(a.permission_type)))


def create_acls(calls: AdminCalls, bindings: Iterable[AclBinding], timeout_ms: float | None = None
                ) -> dict[AclBinding, KafkaError | None]:
    items = list(bindings)

    def build(version: int) -> Any:
        R = M.CreateAclsRequest
        return R(creations=[R.AclCreation(
            resource_type=b.pattern.resource_type, resource_name=b.pattern.name,
            resource_pattern_type=b.pattern.pattern_type, principal=b.entry.principal, host=b.entry.host,
            operation=b.entry.operation, permission_type=b.entry.permission_type) for b in items])

    def handle(resp: M.CreateAclsResponse) -> dict[AclBinding, KafkaError | None]:
        return {b: error_or_none(r.error_code, r.error_message) for b, r in zip(items, resp.results, strict=False)}

    return calls.call(None, build, CREATE_ACLS, timeout_ms, handle, "createAcls")


def describe_acls(calls: AdminCalls, flt: AclBindingFilter, timeout_ms: float | None = None) -> list[AclBinding]:
    def build(version: int) -> Any:
        return M.DescribeAclsRequest(
            resource_type_filter=flt.resource_type, resource_name_filter=flt.name,
            pattern_type_filter=flt.pattern_type, principal_filter=flt.principal, host_filter=flt.host,
            operation=flt.operation, permission_type=flt.permission_type)

    def handle(resp: M.DescribeAclsResponse) -> list[AclBinding]:
        if resp.error_code:
            raise error_from_code(resp.error_code, resp.error_message)
        return [_binding(r.resource_type, r.resource_name, r.pattern_type, a) for r in resp.resources for a in r.acls]

    return calls.call(None, build, DESCRIBE_ACLS, timeout_ms, handle, "describeAcls")


def delete_acls(calls: AdminCalls, filters: Iterable[AclBindingFilter], timeout_ms: float | None = None
                ) -> dict[AclBindingFilter, list[AclBinding] | KafkaError]:
    items = list(filters)

    def build(version: int) -> Any:
        R = M.DeleteAclsRequest
        return R(filters=[R.DeleteAclsFilter(
            resource_type_filter=f.resource_type, resource_name_filter=f.name, pattern_type_filter=f.pattern_type,
            principal_filter=f.principal, host_filter=f.host, operation=f.operation,
            permission_type=f.permission_type) for f in items])

    def handle(resp: M.DeleteAclsResponse) -> dict[AclBindingFilter, list[AclBinding] | KafkaError]:
        out: dict[AclBindingFilter, list[AclBinding] | KafkaError] = {}
        for f, r in zip(items, resp.filter_results, strict=False):
            if r.error_code:
                out[f] = error_from_code(r.error_code, r.error_message)
            else:
                out[f] = [_binding(m.resource_type, m.resource_name, m.pattern_type, m) for m in r.matching_acls]
        return out

    return calls.call(None, build, DELETE_ACLS, timeout_ms, handle, "deleteAcls")
