"""AclAuthorizer: Kafka's ACL authorization over the ACLs kept in the metadata store.

Decisions follow Kafka's AclAuthorizer: super.users are allowed everything; the ACLs that apply to a
resource are those of its literal name, of the literal wildcard '*' and of every PREFIXED pattern the
name starts with; when none apply, `allow.everyone.if.no.acl.found` decides. Otherwise a DENY entry
matching the principal (or User:*), the host (or *) and the operation (or All) refuses; then an ALLOW
entry must match, where DESCRIBE is implied by READ, WRITE, DELETE and ALTER, and DESCRIBE_CONFIGS by
ALTER_CONFIGS.

Storage: each resource's entries are one node (path_store's get_acls/set_acls) holding Kafka's JSON
`{"version":1,"acls":[{"principal":..,"permissionType":"Allow","operation":"Read","host":"*"}]}`.
An in-memory copy answers every authorize() call; it is reloaded after this broker's own writes and,
in ZooKeeper mode, whenever another broker leaves a /kafka-acl-changes notification.

Thread-safety: authorize() reads an immutable snapshot swapped in whole; writes are serialized by a lock
and by the store's conditional versions (another broker writing the same resource makes us retry).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

from kafkapy.common.acl import (
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    validate_binding,
)
from kafkapy.common.errors import (
    ClusterAuthorizationFailedError,
    DelegationTokenAuthorizationFailedError,
    GroupAuthorizationFailedError,
    KafkaError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)
from kafkapy.common.kafka_principal import KafkaPrincipal
from kafkapy.zk import zk_data

log = logging.getLogger("kafka.authorizer.logger")

# authorizer.class.name values that select this authorizer (Kafka's own class names keep configs portable).
AUTHORIZER_CLASS_NAMES = frozenset({
    "kafka.security.authorizer.AclAuthorizer",
    "kafka.security.auth.SimpleAclAuthorizer",
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafkapy.server.auth.acl_authorizer.AclAuthorizer",
})

_IMPLIED_BY = {
    AclOperation.DESCRIBE: frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                                      AclOperation.DELETE, AclOperation.ALTER, AclOperation.ALL}),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
                                              AclOperation.ALL}),
}

# (resource type, pattern type, name) -> entries of that resource.
AclIndex = dict[tuple[ResourceType, PatternType, str], tuple[AccessControlEntry, ...]]
PrefixIndex = dict[ResourceType, tuple[tuple[str, tuple[AccessControlEntry, ...]], ...]]


def entry_to_json(e: AccessControlEntry) -> dict[str, str]:
    return {"principal": e.principal, "permissionType": e.permission_type.title, "operation": e.operation.title,
            "host": e.host}


def entry_from_json(d: dict[str, Any]) -> AccessControlEntry:
    return AccessControlEntry(str(d["principal"]), str(d.get("host", WILDCARD_HOST)),
                              AclOperation.from_title(str(d["operation"])),
                              AclPermissionType.from_title(str(d["permissionType"])))


_AUTHORIZATION_ERRORS = {
    ResourceType.TOPIC: (TopicAuthorizationFailedError, "Not authorized to access topics: [{}]"),
    ResourceType.GROUP: (GroupAuthorizationFailedError, "Not authorized to access group: {}"),
    ResourceType.CLUSTER: (ClusterAuthorizationFailedError, "Cluster authorization failed."),
    ResourceType.TRANSACTIONAL_ID: (TransactionalIdAuthorizationFailedError,
                                    "Transactional Id authorization failed."),
    ResourceType.DELEGATION_TOKEN: (DelegationTokenAuthorizationFailedError,
                                    "Delegation Token authorization failed."),
}


# Kafka's AclEntry.supportedOperations: what authorized_operations bit sets are drawn from. The token operations
# belong to USER, not to the cluster (a cluster's set never carries CREATE_TOKENS / DESCRIBE_TOKENS).
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE,
                         AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DELETE, AclOperation.DESCRIBE),
    ResourceType.CLUSTER: (AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION,
                           AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}


def operations_bits(operations: Iterable[AclOperation]) -> int:
    """Kafka's Utils.to32BitField over operation codes: the authorized_operations wire value."""
    return sum(1 << int(op) for op in set(operations))


def authorization_error(resource_type: ResourceType, name: str) -> KafkaError:
    """The error Kafka answers when an operation on a resource of this type is not authorized."""
    cls, text = _AUTHORIZATION_ERRORS.get(resource_type, _AUTHORIZATION_ERRORS[ResourceType.CLUSTER])
    return cls(text.format(name))


def parse_super_users(text: str) -> frozenset[str]:
    return frozenset(u.strip() for u in text.split(";") if u.strip())


class AclAuthorizer:
    def __init__(self, store: Any, super_users: Iterable[str] = (), allow_everyone_if_no_acl_found: bool = False
                 ) -> None:
        self._store = store
        self._super_users = frozenset(super_users)
        self._allow_if_none = allow_everyone_if_no_acl_found
        self._write_lock = threading.Lock()
        # (every resource's entries, per resource type its PREFIXED (prefix, entries)): one immutable snapshot
        # swapped in whole, so a decision scans only the prefixes of its type and never sees half a reload.
        self._snapshot: tuple[AclIndex, PrefixIndex] = ({}, {})
        self.reload()
        if store.cluster_mode:  # MetadataStore's; ZooKeeper mode watches the ACL change notifications
            store.watch_path_children(zk_data.ACL_LITERAL_CHANGES_PATH, self.reload)
            store.watch_path_children(zk_data.ACL_EXTENDED_CHANGES_PATH, self.reload)

    @classmethod
    def from_config(cls, config: Any, store: Any) -> AclAuthorizer | None:
        """The authorizer `authorizer.class.name` selects, or None when it is empty (no authorization)."""
        name = (config.get_string("authorizer.class.name") or "").strip()
        if not name:
            return None
        if name not in AUTHORIZER_CLASS_NAMES:
            log.warning("authorizer.class.name %s is not known; using kafkapy's AclAuthorizer", name)
        return cls(store, parse_super_users(config.get_string("super.users") or ""),
                   config.get_bool("allow.everyone.if.no.acl.found"))

    # -- the ACL cache -------------------------------------------------------------------------------------

    def reload(self) -> None:
        index: AclIndex = {}
        for is_prefixed, type_title, name in self._store.get_acl_resources():
            stored, _ = self._store.get_acls(is_prefixed, type_title, name)
            if stored:
                key = (ResourceType.from_title(type_title),
                       PatternType.PREFIXED if is_prefixed else PatternType.LITERAL, name)
                index[key] = tuple(entry_from_json(e) for e in stored)
        prefixed: dict[ResourceType, list[tuple[str, tuple[AccessControlEntry, ...]]]] = {}
        for (rtype, ptype, name), entries in index.items():
            if ptype == PatternType.PREFIXED:
                prefixed.setdefault(rtype, []).append((name, entries))
        self._snapshot = (index, {rtype: tuple(items) for rtype, items in prefixed.items()})

    # -- decisions ------------------------------------------------------------------------------------------

    def _matching_entries(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        index, prefixes = self._snapshot
        out: list[AccessControlEntry] = []
        out.extend(index.get((resource_type, PatternType.LITERAL, name), ()))
        if name != WILDCARD_RESOURCE:
            out.extend(index.get((resource_type, PatternType.LITERAL, WILDCARD_RESOURCE), ()))
        for prefix, entries in prefixes.get(resource_type, ()):
            if name.startswith(prefix):
                out.extend(entries)
        return out

    def authorize(self, principal: KafkaPrincipal, host: str, operation: AclOperation, resource_type: ResourceType,
                  name: str, request: str = "", log_if_allowed: bool = True, log_if_denied: bool = True) -> bool:
        """Kafka's decision, audited as Kafka's AclAuthorizer logs it on kafka.authorizer.logger: a denied access the
        request asked for at INFO, a granted one at DEBUG; checks that only probe or filter (log_if_*=False, as
        Kafka's logIfAllowed/logIfDenied) are not logged."""
        allowed = self._decide(str(principal), host, operation, resource_type, name)
        level = logging.DEBUG if allowed else logging.INFO
        if (log_if_allowed if allowed else log_if_denied) and log.isEnabledFor(level):
            log.log(level,
                    "Principal = %s is %s Operation = %s from host = %s on resource = %s:LITERAL:%s for request = "
                    "%s with resourceRefCount = 1", principal, "Allowed" if allowed else "Denied", operation.title,
                    host, resource_type.title, name, request)
        return allowed

    def _decide(self, who: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        if who in self._super_users:
            return True
        entries = self._matching_entries(resource_type, name)
        if not entries:
            return self._allow_if_none
        principals = (who, WILDCARD_PRINCIPAL)
        hosts = (host, WILDCARD_HOST)
        for e in entries:
            if e.permission_type == AclPermissionType.DENY and e.principal in principals and e.host in hosts \
                    and e.operation in (operation, AclOperation.ALL):
                return False
        allowed_ops = _IMPLIED_BY.get(operation, (operation, AclOperation.ALL))
        for e in entries:
            if e.permission_type == AclPermissionType.ALLOW and e.principal in principals and e.host in hosts \
                    and e.operation in allowed_ops:
                return True
        return False

    def authorized_operations(self, principal: KafkaPrincipal, host: str, resource_type: ResourceType, name: str
                              ) -> int:
        """Kafka's AuthHelper.authorizedOperations: the bit set of the resource type's supported operations this
        principal may perform on the literal resource (not logged, as Kafka passes logIfAllowed/Denied=false)."""
        who = str(principal)
        return operations_bits(op for op in SUPPORTED_OPERATIONS.get(resource_type, ())
                               if self._decide(who, host, op, resource_type, name))

    def authorize_any(self, principal: KafkaPrincipal, host: str, operation: AclOperation,
                      resource_type: ResourceType) -> bool:
        """Kafka's authorizeByResourceType: could the principal perform operation on some resource of the type
        (used by InitProducerId's idempotent fallback and by auto topic creation checks)?"""
        who = str(principal)
        if who in self._super_users:
            return True
        names = {n for (rt, _pt, n) in self._snapshot[0] if rt == resource_type}
        return any(self._decide(who, host, operation, resource_type, n) for n in names)

    # -- ACL administration -----------------------------------------------------------------------------------

    def acls(self, flt: AclBindingFilter) -> list[AclBinding]:
        out: list[AclBinding] = []
        for (rtype, ptype, name), entries in self._snapshot[0].items():
            pattern = ResourcePattern(rtype, name, ptype)
            if not flt.matches_pattern(pattern):
                continue
            out.extend(AclBinding(pattern, e) for e in entries if flt.matches_entry(e))
        return out

    def _update(self, pattern: ResourcePattern, change: Any) -> None:
        """Rewrite one resource's entries with change(current entries) -> new entries (retried on a race)."""
        prefixed = pattern.pattern_type == PatternType.PREFIXED
        title = pattern.resource_type.title
        for _ in range(20):
            current, version = self._store.get_acls(prefixed, title, pattern.name)
            entries = [entry_from_json(e) for e in current]
            new = change(entries)
            if new == entries:
                return
            if self._store.set_acls(prefixed, title, pattern.name, [entry_to_json(e) for e in new], version):
                return
        raise RuntimeError(f"Could not update the ACLs of {pattern}: too many concurrent writers")

    def create_acls(self, bindings: list[AclBinding]) -> list[str | None]:
        """Add each binding; the error message of each one refused (None when created or already there)."""
        errors: list[str | None] = [validate_binding(b) for b in bindings]
        by_pattern: dict[ResourcePattern, list[AccessControlEntry]] = {}
        for b, err in zip(bindings, errors, strict=True):
            if err is None:
                by_pattern.setdefault(b.pattern, []).append(b.entry)
        with self._write_lock:
            for pattern, adds in by_pattern.items():
                self._update(pattern, lambda cur, adds=adds: cur + [e for e in dict.fromkeys(adds) if e not in cur])
            self.reload()
        return errors

    def delete_acls(self, filters: list[AclBindingFilter]) -> list[list[AclBinding]]:
        """Remove every binding each filter matches; per filter, the bindings it removed."""
        with self._write_lock:
            matched = [self.acls(f) for f in filters]
            doomed: dict[ResourcePattern, set[AccessControlEntry]] = {}
            for bindings in matched:
                for b in bindings:
                    doomed.setdefault(b.pattern, set()).add(b.entry)
            for pattern, entries in doomed.items():
                self._update(pattern, lambda cur, gone=entries: [e for e in cur if e not in gone])
            self.reload()
        return matched
