"""Client quota entities in the metadata store, where Kafka 2.x keeps them in ZooKeeper:
`/config/users/<user>`, `/config/clients/<client-id>`, `/config/users/<user>/clients/<client-id>` and
`/config/ips/<ip>`, `<default>` naming the default entity, names URL-encoded (Kafka's Sanitizer). Each node
holds the config JSON `{"version":1,"config":{"producer_byte_rate":"1048576",...}}` (zk_data.encode_config);
other keys of a user's node (SCRAM credentials) are kept as they are.

`ClientQuotaStore(store)`: `describe(components, strict)` (DescribeClientQuotas filter semantics),
`alter(entity, ops, validate_only)` (AlterClientQuotas, Kafka's validation), `snapshot()` (every user /
client-id quota, read by ClientQuotaManager). Thread-safe as the store is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote

from kafkapy.common.errors import InvalidRequestError

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
DEFAULT = "<default>"  # ZooKeeper's name of the default entity (ConfigEntityName.Default)
PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"
CLIENT_QUOTA_KEYS = frozenset({PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE, CONTROLLER_MUTATION_RATE})
_LONG_KEYS = frozenset({PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, CONNECTION_CREATION_RATE})
# DescribeClientQuotas match types
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2

# An entity: {entity type: name, None for the default}
Entity = dict[str, "str | None"]
# (user, client-id): each a name, DEFAULT, or None when the entity has no such part
EntityKey = tuple["str | None", "str | None"]


def _sanitize(name: str | None) -> str:
    return DEFAULT if name is None else quote(name, safe="")


def _desanitize(node: str) -> str | None:
    return None if node == DEFAULT else unquote(node)


def _key_part(entity: Entity, entity_type: str) -> str | None:
    if entity_type not in entity:
        return None
    name = entity[entity_type]
    return DEFAULT if name is None else name


def _format_value(key: str, value: float) -> str:
    return str(int(value)) if key in _LONG_KEYS else repr(float(value))


class ClientQuotaStore:
    def __init__(self, store: Any) -> None:
        self._store = store

    # -- reading ----------------------------------------------------------------------------------------

    def _nodes(self) -> list[tuple[Entity, str, str]]:
        """[(entity, store entity type, store entity name)] of every quota node."""
        out: list[tuple[Entity, str, str]] = []
        for user in self._store.entity_names("users"):
            out.append(({USER: _desanitize(user)}, "users", user))
            for client in self._store.entity_names(f"users/{user}/clients"):
                out.append(({USER: _desanitize(user), CLIENT_ID: _desanitize(client)}, f"users/{user}/clients", client))
        for client in self._store.entity_names("clients"):
            out.append(({CLIENT_ID: _desanitize(client)}, "clients", client))
        for ip in self._store.entity_names("ips"):
            out.append(({IP: _desanitize(ip)}, "ips", ip))
        return out

    def _quotas(self, etype: str, ename: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for k, v in self._store.get_entity_config(etype, ename).items():
            if k in CLIENT_QUOTA_KEYS or k == CONNECTION_CREATION_RATE:
                try:
                    out[k] = float(v)
                except ValueError:
                    continue
        return out

    def entities(self) -> list[tuple[Entity, dict[str, float]]]:
        """Every entity with at least one quota."""
        out = []
        for entity, etype, ename in self._nodes():
            quotas = self._quotas(etype, ename)
            if quotas:
                out.append((entity, quotas))
        return out

    def snapshot(self) -> dict[EntityKey, dict[str, float]]:
        """The user / client-id quotas keyed (user, client-id) with DEFAULT for default parts."""
        out: dict[EntityKey, dict[str, float]] = {}
        for entity, quotas in self.entities():
            if IP in entity:
                continue
            out[(_key_part(entity, USER), _key_part(entity, CLIENT_ID))] = quotas
        return out

    def describe(self, components: Iterable[tuple[str, int, str | None]], strict: bool
                 ) -> list[tuple[Entity, dict[str, float]]]:
        """DescribeClientQuotas: each component (entity type, match type, match) must match the entity;
        strict also excludes entities with other entity types."""
        comps = list(components)
        types = [c[0] for c in comps]
        if len(set(types)) != len(types):
            raise InvalidRequestError("Duplicate entity type in the filter")
        for etype, match_type, match in comps:
            if etype not in (USER, CLIENT_ID, IP):
                raise InvalidRequestError(f"Unexpected entity type {etype}")
            if match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED):
                raise InvalidRequestError(f"Unexpected match type {match_type}")
            if match_type == MATCH_EXACT and match is None:
                raise InvalidRequestError("Exact match needs a name")
        out = []
        for entity, quotas in self.entities():
            if strict and set(entity) != set(types):
                continue
            ok = True
            for etype, match_type, match in comps:
                if etype not in entity:
                    ok = False
                elif match_type == MATCH_EXACT:
                    ok = entity[etype] == match
                elif match_type == MATCH_DEFAULT:
                    ok = entity[etype] is None
                if not ok:
                    break
            if ok:
                out.append((entity, quotas))
        return out

    # -- writing ----------------------------------------------------------------------------------------

    def alter(self, entity: Entity, ops: Iterable[tuple[str, float, bool]], validate_only: bool) -> None:
        """Set (value) or remove (remove=True) quota keys of one entity; raises InvalidRequestError."""
        etype, ename = self._path(entity)
        allowed = {CONNECTION_CREATION_RATE} if IP in entity else CLIENT_QUOTA_KEYS
        ops = list(ops)
        for key, value, remove in ops:
            if key not in allowed:
                raise InvalidRequestError(f"Invalid configuration key {key}")
            if not remove and (value <= 0 or (key in _LONG_KEYS and value != int(value))):
                raise InvalidRequestError(f"Invalid value {value} for configuration key {key}")
        if validate_only:
            return
        configs = dict(self._store.get_entity_config(etype, ename))
        for key, value, remove in ops:
            if remove:
                configs.pop(key, None)
            else:
                configs[key] = _format_value(key, value)
        if USER in entity and CLIENT_ID in entity:
            # ZooKeeper needs the parents: /config/users/<user> and its clients node.
            user_node = etype.split("/")[1]
            if not self._store.get_entity_config("users", user_node) and \
                    user_node not in self._store.entity_names("users"):
                self._store.set_entity_config("users", user_node, {})
            if "clients" not in self._store.entity_names(f"users/{user_node}"):
                self._store.set_entity_config(f"users/{user_node}", "clients", {})
        self._store.set_entity_config(etype, ename, configs)

    @staticmethod
    def _path(entity: Entity) -> tuple[str, str]:
        types = set(entity)
        if types == {USER}:
            return "users", _sanitize(entity[USER])
        if types == {CLIENT_ID}:
            return "clients", _sanitize(entity[CLIENT_ID])
        if types == {USER, CLIENT_ID}:
            return f"users/{_sanitize(entity[USER])}/clients", _sanitize(entity[CLIENT_ID])
        if types == {IP}:
            return "ips", _sanitize(entity[IP])
        raise InvalidRequestError(f"Invalid quota entity {entity}")
