"""ACL bindings as Kafka models them (org.apache.kafka.common.acl / resource), shared by broker and tools.

An AclBinding is a ResourcePattern (resource type, name, LITERAL or PREFIXED) plus an AccessControlEntry
(principal, host, operation, ALLOW/DENY). Filters (AclBindingFilter) match bindings as Kafka's do: None
and ANY match anything, MATCH matches every pattern that applies to a literal name (the literal name
itself, the wildcard '*', and every prefix of it). The wire codes are Kafka's (the int8 fields of
CreateAcls/DescribeAcls/DeleteAcls); the text names are those of ZooKeeper's /kafka-acl JSON and of
kafka-acls.sh's output. Immutable values: thread-safe.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any, NamedTuple


def _camel(name: str) -> str:
    return "".join(w.capitalize() for w in name.split("_"))


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7

    @property
    def title(self) -> str:
        """Kafka's CamelCase name (ZooKeeper paths and JSON): Topic, TransactionalId, ..."""
        return _camel(self.name)

    @classmethod
    def from_title(cls, text: str) -> ResourceType:
        return _parse(cls, text)


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4

    @classmethod
    def from_title(cls, text: str) -> PatternType:
        return _parse(cls, text)


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14

    @property
    def title(self) -> str:
        return _camel(self.name)

    @classmethod
    def from_title(cls, text: str) -> AclOperation:
        return _parse(cls, text)


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3

    @property
    def title(self) -> str:
        return self.name.capitalize()

    @classmethod
    def from_title(cls, text: str) -> AclPermissionType:
        return _parse(cls, text)


def _parse(enum: Any, text: str) -> Any:  # a member of `enum`
    """Case-insensitive, with or without underscores (Kafka accepts 'IdempotentWrite' and 'IDEMPOTENT_WRITE')."""
    key = text.replace("_", "").replace("-", "").upper()
    for member in enum:
        if member.name.replace("_", "") == key:
            return member
    return enum.UNKNOWN


WILDCARD_RESOURCE = "*"
WILDCARD_HOST = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"


class ResourcePattern(NamedTuple):
    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def __str__(self) -> str:
        return f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, " \
               f"patternType={self.pattern_type.name})"


class AccessControlEntry(NamedTuple):
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __str__(self) -> str:
        # kafka-acls.sh's line: "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
        return f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, " \
               f"permissionType={self.permission_type.name})"


class AclBinding(NamedTuple):
    pattern: ResourcePattern
    entry: AccessControlEntry


class AclBindingFilter(NamedTuple):
    """None fields (and ANY codes) match anything; pattern_type MATCH as Kafka's ResourcePatternFilter."""

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def matches_pattern(self, p: ResourcePattern) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != p.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type != p.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type != PatternType.MATCH:
            return self.name == p.name
        # MATCH: the patterns that apply to the literal resource `name` (itself, '*', its prefixes).
        if p.pattern_type == PatternType.LITERAL:
            return p.name in (self.name, WILDCARD_RESOURCE)
        if p.pattern_type == PatternType.PREFIXED:
            return self.name.startswith(p.name)
        return False

    def matches_entry(self, e: AccessControlEntry) -> bool:
        return ((self.principal is None or self.principal == e.principal)
                and (self.host is None or self.host == e.host)
                and (self.operation == AclOperation.ANY or self.operation == e.operation)
                and (self.permission_type == AclPermissionType.ANY or self.permission_type == e.permission_type))

    def matches(self, b: AclBinding) -> bool:
        return self.matches_pattern(b.pattern) and self.matches_entry(b.entry)


def validate_binding(b: AclBinding) -> str | None:
    """Why Kafka refuses to create this binding (InvalidRequest), or None."""
    p, e = b.pattern, b.entry
    if p.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return "Invalid resource type"
    if p.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return "Invalid resource pattern type"
    if not p.name:
        return "Resource name must not be empty"
    if e.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return "Invalid operation"
    if e.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        return "Invalid permission type"
    if ":" not in e.principal:
        return f"Could not parse principal from `{e.principal}` (no colon is present separating the " \
               "principal type from the principal name)"
    if p.resource_type == ResourceType.CLUSTER and p.name != CLUSTER_NAME:
        return "The only valid name for the CLUSTER resource is kafka-cluster"
    return None
