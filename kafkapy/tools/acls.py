"""kafka-acls.sh (Kafka's AclCommand) logic: which ACL bindings the flags name, and adding, removing and
listing them through the AdminClient (CreateAcls / DeleteAcls / DescribeAcls).

Resources come from --topic / --group / --cluster / --transactional-id / --delegation-token with
--resource-pattern-type (LITERAL by default for --add/--remove, ANY for --list); entries from
--allow-principal/--allow-host and --deny-principal/--deny-host (host '*' when a principal is given
without one) times the --operation list (All by default). --producer gives WRITE, DESCRIBE, CREATE on the
topics (WRITE, DESCRIBE on --transactional-id, IDEMPOTENT_WRITE on the cluster with --idempotent);
--consumer READ, DESCRIBE on the topics and READ on the groups. Text is AclCommand's:
"Adding ACLs for resource `ResourcePattern(...)`: " and "Current ACLs for resource `...`: " blocks with
one tab-indented "(principal=..., host=..., operation=..., permissionType=...)" line per entry.
Thread-safety: plain functions, one call at a time per AdminClient.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import (
    CLUSTER_NAME,
    WILDCARD_HOST,
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
from kafkapy.tools import ToolFailure

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

# AclCommand's ResourceTypeToValidOperations.
VALID_OPERATIONS: dict[ResourceType, frozenset[AclOperation]] = {
    ResourceType.TOPIC: frozenset({AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
                                   AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
                                   AclOperation.ALTER_CONFIGS, AclOperation.ALL}),
    ResourceType.GROUP: frozenset({AclOperation.READ, AclOperation.DESCRIBE, AclOperation.ALL, AclOperation.DELETE}),
    ResourceType.CLUSTER: frozenset({AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
                                     AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
                                     AclOperation.DESCRIBE, AclOperation.ALL}),
    ResourceType.TRANSACTIONAL_ID: frozenset({AclOperation.DESCRIBE, AclOperation.WRITE, AclOperation.ALL}),
    ResourceType.DELEGATION_TOKEN: frozenset({AclOperation.DESCRIBE, AclOperation.ALL}),
    ResourceType.USER: frozenset({AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS, AclOperation.ALL}),
}


@dataclass(frozen=True)
class ResourceAcls:
    """One resource and its entries, in the order printed."""

    pattern: ResourcePattern
    entries: list[AccessControlEntry]


def parse_operation(text: str) -> AclOperation:
    op = AclOperation.from_title(text.strip())
    if op in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise ToolFailure(f"Invalid operation: {text}")
    return op


def parse_pattern_type(text: str) -> PatternType:
    pt = PatternType.from_title(text.strip())
    if pt == PatternType.UNKNOWN:
        raise ToolFailure(f"Unknown resource pattern type: {text}")
    return pt


def resources(topics: Sequence[str], groups: Sequence[str], cluster: bool, transactional_ids: Sequence[str],
              tokens: Sequence[str], pattern_type: PatternType) -> list[ResourcePattern]:
    out: list[ResourcePattern] = []
    out += [ResourcePattern(ResourceType.TOPIC, t.strip(), pattern_type) for t in topics]
    if cluster:
        out.append(ResourcePattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL
                                   if pattern_type in (PatternType.LITERAL, PatternType.PREFIXED) else pattern_type))
    out += [ResourcePattern(ResourceType.GROUP, g.strip(), pattern_type) for g in groups]
    out += [ResourcePattern(ResourceType.TRANSACTIONAL_ID, t.strip(), pattern_type) for t in transactional_ids]
    out += [ResourcePattern(ResourceType.DELEGATION_TOKEN, t.strip(), pattern_type) for t in tokens]
    return list(dict.fromkeys(out))


def entries(operations: Iterable[AclOperation], allow_principals: Sequence[str], allow_hosts: Sequence[str],
            deny_principals: Sequence[str], deny_hosts: Sequence[str]) -> list[AccessControlEntry]:
    """AclCommand.getAcl: principals x operations x hosts, ALLOW then DENY."""
    ops = list(dict.fromkeys(operations))
    out: list[AccessControlEntry] = []
    for principals, hosts, perm in ((allow_principals, allow_hosts, AclPermissionType.ALLOW),
                                    (deny_principals, deny_hosts, AclPermissionType.DENY)):
        hosts = [h.strip() for h in hosts] or ([WILDCARD_HOST] if principals else [])
        for p in principals:
            p = p.strip()
            if ":" not in p:
                raise ToolFailure(f"expected a string in format principalType:principalName but got {p}")
            out += [AccessControlEntry(p, h, op, perm) for op in ops for h in hosts]
    return list(dict.fromkeys(out))


def resource_to_acls(patterns: list[ResourcePattern], cli_entries: Any, producer: bool, consumer: bool,
                     idempotent: bool, allow: tuple[Sequence[str], Sequence[str]]) -> dict[ResourcePattern, list]:
    """AclCommand.getResourceToAcls. cli_entries(ops) builds the entries of the operations given."""
    out: dict[ResourcePattern, list[AccessControlEntry]] = {}

    def add(pattern: ResourcePattern, ops: Iterable[AclOperation]) -> None:
        cur = out.setdefault(pattern, [])
        cur += [e for e in entries(ops, allow[0], allow[1], (), ()) if e not in cur]

    if not producer and not consumer:
        for pattern in patterns:
            out[pattern] = cli_entries()
    if producer:
        for p in patterns:
            if p.resource_type == ResourceType.TOPIC:
                add(p, (AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE))
            elif p.resource_type == ResourceType.TRANSACTIONAL_ID:
                add(p, (AclOperation.WRITE, AclOperation.DESCRIBE))
        if idempotent:
            add(ResourcePattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL), (AclOperation.IDEMPOTENT_WRITE,))
    if consumer:
        for p in patterns:
            if p.resource_type == ResourceType.TOPIC:
                add(p, (AclOperation.READ, AclOperation.DESCRIBE))
            elif p.resource_type == ResourceType.GROUP:
                add(p, (AclOperation.READ,))
    for pattern, acls in out.items():
        valid = VALID_OPERATIONS.get(pattern.resource_type, frozenset())
        bad = {e.operation for e in acls} - valid
        if bad:
            names = ",".join(sorted(op.name for op in valid))
            raise ToolFailure(f"ResourceType {pattern.resource_type.name} only supports operations {names}")
    return out


def add_acls(admin: AdminClient, to_add: dict[ResourcePattern, list[AccessControlEntry]]) -> None:
    bindings = [AclBinding(p, e) for p, es in to_add.items() for e in es]
    for error in admin.create_acls(bindings).values():
        if error is not None:
            raise ToolFailure(f"Error while executing ACL command: {error.message or error}") from error


def remove_acls(admin: AdminClient, pattern: ResourcePattern, acls: list[AccessControlEntry]) -> None:
    base: dict[str, Any] = dict(resource_type=pattern.resource_type, name=pattern.name, pattern_type=pattern.pattern_type)
    filters = [AclBindingFilter(**base)] if not acls else [
        AclBindingFilter(**base, principal=e.principal, host=e.host, operation=e.operation,
                         permission_type=e.permission_type) for e in acls]
    for result in admin.delete_acls(filters).values():
        if isinstance(result, KafkaError):
            raise result


def list_acls(admin: AdminClient, patterns: list[ResourcePattern], principals: Sequence[str] = ()) -> list[ResourceAcls]:
    filters = [AclBindingFilter(p.resource_type, p.name, p.pattern_type) for p in patterns] or [AclBindingFilter()]
    grouped: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for f in filters:
        for b in admin.describe_acls(f):
            cur = grouped.setdefault(b.pattern, [])
            if b.entry not in cur:
                cur.append(b.entry)
    out = [ResourceAcls(p, es) for p, es in grouped.items()]
    if principals:
        wanted = {p.strip() for p in principals}
        out = [ResourceAcls(r.pattern, [e for e in r.entries if e.principal in wanted]) for r in out]
        out = [r for r in out if r.entries]
    return out


def block(lead: str, pattern: ResourcePattern, acls: Iterable[AccessControlEntry]) -> list[str]:
    """AclCommand's println(s"$lead `$resource`: $Newline ${acls.map("\t" + _).mkString(Newline)} $Newline")."""
    body = "\n".join(f"\t{e}" for e in acls)
    return f"{lead} `{pattern}`: \n {body} \n".split("\n")


def filter_text(pattern: ResourcePattern) -> str:
    return f"ResourcePatternFilter(resourceType={pattern.resource_type.name}, name={pattern.name}, " \
           f"patternType={pattern.pattern_type.name})"


def to_json(resources: list[ResourceAcls]) -> list[dict[str, Any]]:
    return [{"resourceType": r.pattern.resource_type.name, "name": r.pattern.name,
             "patternType": r.pattern.pattern_type.name,
             "acls": [{"principal": e.principal, "host": e.host, "operation": e.operation.name,
                       "permissionType": e.permission_type.name} for e in r.entries]} for r in resources]
