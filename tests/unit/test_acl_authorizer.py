"""AclAuthorizer decisions and ACL filters (Kafka's AclAuthorizer rules) over a fake in-memory ACL store,
and the same bindings persisted through the embedded LocalMetadataStore in Kafka's /kafka-acl JSON."""

from __future__ import annotations

from typing import Any

import pytest

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
from kafkapy.common.kafka_principal import KafkaPrincipal
from kafkapy.server.auth.acl_authorizer import AclAuthorizer

ALICE = KafkaPrincipal.user("alice")
BOB = KafkaPrincipal.user("bob")
T, G, C = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
Op = AclOperation


class FakeAclStore:
    """The three ACL methods of PathMetadataStore, in a dict, with its conditional versions."""

    cluster_mode = False

    def __init__(self) -> None:
        self.nodes: dict[tuple[bool, str, str], tuple[list[dict[str, Any]], int]] = {}

    def get_acl_resources(self) -> list[tuple[bool, str, str]]:
        return list(self.nodes)

    def get_acls(self, prefixed: bool, rtype: str, name: str) -> tuple[list[dict[str, Any]], int]:
        acls, version = self.nodes.get((prefixed, rtype, name), ([], -1))
        return list(acls), version

    def set_acls(self, prefixed: bool, rtype: str, name: str, acls: list, expected_version: int) -> bool:
        _, version = self.nodes.get((prefixed, rtype, name), ([], -1))
        if version != expected_version:
            return False
        if acls:
            self.nodes[(prefixed, rtype, name)] = (list(acls), version + 1)
        else:
            self.nodes.pop((prefixed, rtype, name), None)
        return True


def binding(rtype: ResourceType, name: str, principal: str, op: AclOperation, perm: AclPermissionType = ALLOW,
            pattern: PatternType = PatternType.LITERAL, host: str = "*") -> AclBinding:
    return AclBinding(ResourcePattern(rtype, name, pattern), AccessControlEntry(principal, host, op, perm))


@pytest.fixture
def authz() -> AclAuthorizer:
    return AclAuthorizer(FakeAclStore(), super_users=["User:admin"])


def test_no_acl_found_follows_allow_everyone(authz: AclAuthorizer) -> None:
    assert not authz.authorize(ALICE, "127.0.0.1", Op.READ, T, "t")
    open_authz = AclAuthorizer(FakeAclStore(), allow_everyone_if_no_acl_found=True)
    assert open_authz.authorize(ALICE, "127.0.0.1", Op.READ, T, "t")
    # Once any ACL exists on the resource the fallback no longer applies, even for other principals.
    open_authz.create_acls([binding(T, "t", "User:bob", Op.READ)])
    assert not open_authz.authorize(ALICE, "127.0.0.1", Op.READ, T, "t")
    assert open_authz.authorize(BOB, "127.0.0.1", Op.READ, T, "t")


def test_super_user_and_implied_operations(authz: AclAuthorizer) -> None:
    assert authz.authorize(KafkaPrincipal.user("admin"), "h", Op.ALTER, C, "kafka-cluster")
    authz.create_acls([binding(T, "t", "User:alice", Op.WRITE), binding(T, "c", "User:alice", Op.ALTER_CONFIGS)])
    assert authz.authorize(ALICE, "h", Op.WRITE, T, "t")
    assert authz.authorize(ALICE, "h", Op.DESCRIBE, T, "t")  # implied by WRITE
    assert not authz.authorize(ALICE, "h", Op.READ, T, "t")
    assert authz.authorize(ALICE, "h", Op.DESCRIBE_CONFIGS, T, "c")  # implied by ALTER_CONFIGS
    assert not authz.authorize(ALICE, "h", Op.DESCRIBE, T, "c")


def test_deny_wins_over_allow_and_wildcards(authz: AclAuthorizer) -> None:
    authz.create_acls([binding(T, "*", "User:*", Op.ALL), binding(T, "t", "User:alice", Op.READ, DENY)])
    assert authz.authorize(BOB, "h", Op.READ, T, "t")
    assert not authz.authorize(ALICE, "h", Op.READ, T, "t")
    assert authz.authorize(ALICE, "h", Op.WRITE, T, "t")
    # DENY All covers every operation, ALLOW on another resource type does not leak.
    authz.create_acls([binding(T, "x", "User:bob", Op.ALL, DENY)])
    assert not authz.authorize(BOB, "h", Op.DESCRIBE, T, "x")
    assert not authz.authorize(BOB, "h", Op.READ, G, "t")


def test_prefixed_and_host_matching(authz: AclAuthorizer) -> None:
    authz.create_acls([binding(T, "app-", "User:alice", Op.READ, pattern=PatternType.PREFIXED, host="10.0.0.1")])
    assert authz.authorize(ALICE, "10.0.0.1", Op.READ, T, "app-orders")
    assert authz.authorize(ALICE, "10.0.0.1", Op.READ, T, "app-")
    assert not authz.authorize(ALICE, "10.0.0.2", Op.READ, T, "app-orders")
    assert not authz.authorize(ALICE, "10.0.0.1", Op.READ, T, "ap")
    assert not authz.authorize(ALICE, "10.0.0.1", Op.READ, G, "app-orders")


def test_filters_any_match_literal_and_delete(authz: AclAuthorizer) -> None:
    b1 = binding(T, "app-orders", "User:alice", Op.READ)
    b2 = binding(T, "app-", "User:bob", Op.WRITE, pattern=PatternType.PREFIXED)
    b3 = binding(T, "*", "User:carol", Op.READ)
    b4 = binding(G, "app-orders", "User:alice", Op.READ)
    assert authz.create_acls([b1, b2, b3, b4]) == [None] * 4
    assert authz.create_acls([b1]) == [None]  # already there: no duplicate
    assert len(authz.acls(AclBindingFilter())) == 4

    def names(flt: AclBindingFilter) -> set[AclBinding]:
        return set(authz.acls(flt))

    assert names(AclBindingFilter(T, "app-orders", PatternType.ANY)) == {b1}
    assert names(AclBindingFilter(T, "app-orders", PatternType.MATCH)) == {b1, b2, b3}
    assert names(AclBindingFilter(T, "app-", PatternType.LITERAL)) == set()
    assert names(AclBindingFilter(T, "app-", PatternType.PREFIXED)) == {b2}
    assert names(AclBindingFilter(ResourceType.ANY, principal="User:alice")) == {b1, b4}
    removed = authz.delete_acls([AclBindingFilter(T, "app-orders", PatternType.MATCH, operation=Op.READ)])
    assert set(removed[0]) == {b1, b3}
    assert set(authz.acls(AclBindingFilter())) == {b2, b4}


def test_invalid_bindings_are_refused(authz: AclAuthorizer) -> None:
    errors = authz.create_acls([
        binding(C, "other", "User:alice", Op.CREATE),
        binding(T, "t", "alice", Op.READ),
        binding(T, "", "User:alice", Op.READ),
        binding(T, "t", "User:alice", Op.ANY),
        binding(T, "t", "User:alice", Op.READ, pattern=PatternType.MATCH),
        binding(T, "ok", "User:alice", Op.READ),
    ])
    assert [e is None for e in errors] == [False, False, False, False, False, True]
    assert authz.acls(AclBindingFilter()) == [binding(T, "ok", "User:alice", Op.READ)]


def test_persisted_in_kafka_json_by_the_local_store(tmp_path) -> None:
    from kafkapy.controller.local_store import LocalMetadataStore

    store = LocalMetadataStore(str(tmp_path))
    authz = AclAuthorizer(store)
    authz.create_acls([binding(T, "t", "User:alice", Op.IDEMPOTENT_WRITE),
                       binding(G, "g-", "User:bob", Op.READ, DENY, PatternType.PREFIXED)])
    assert store.get_json("/kafka-acl/Topic/t") == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "IdempotentWrite", "host": "*"}]}
    assert store.get_json("/kafka-acl-extended/prefixed/Group/g-")["acls"][0]["permissionType"] == "Deny"
    store.close()
    reopened = LocalMetadataStore(str(tmp_path))
    assert AclAuthorizer(reopened).authorize(ALICE, "h", Op.IDEMPOTENT_WRITE, T, "t")
    authz2 = AclAuthorizer(reopened)
    authz2.delete_acls([AclBindingFilter(T, "t")])
    assert reopened.get_json("/kafka-acl/Topic/t") is None
    reopened.close()
