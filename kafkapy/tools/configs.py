"""kafka-configs logic (ConfigCommand, Kafka 4.x): describe and alter dynamic configs of topics, brokers
(one or the cluster default), broker loggers, groups and client-metrics resources, and the quotas /
SCRAM credentials of users, clients and IPs.

Entities are `(type, name)` pairs with Kafka's type names (topics, brokers, broker-loggers, groups,
client-metrics, users, clients, ips); the name "" is the default entity (--entity-default,
--broker-defaults). Describe returns, in Kafka's order, `Notice` lines ("The topic 'x' doesn't exist
and doesn't have dynamic config."), `ResourceConfigs` (a header such as "Dynamic configs for topic X
are:" and the entries sorted by name, each with its synonyms), `QuotaConfigs` and `ScramConfigs`.
Alter returns Kafka's completion line. Parsing of --add-config follows ConfigCommand: commas inside
[...] belong to the value, every '[' and ']' is then dropped, keys must match [$a-zA-Z0-9._-]*.

Errors: `ConfigArgumentError` (Kafka prints the bare message: IllegalArgumentException,
InvalidConfigurationException) and `ConfigCommandError` (anything else).
Thread-safety: one call at a time per AdminClient.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from kafkapy.tools import ToolFailure
from kafkapy.tools.tool_support import java_hash_order, java_string_hash

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

TOPICS, BROKERS, BROKER_LOGGERS, GROUPS, CLIENT_METRICS = "topics", "brokers", "broker-loggers", "groups", "client-metrics"
USERS, CLIENTS, IPS = "users", "clients", "ips"
ENTITY_TYPES = (BROKER_LOGGERS, TOPICS, CLIENTS, USERS, BROKERS, IPS, CLIENT_METRICS, GROUPS)
DEFAULT_ENTITY = ""
SCRAM_PREFIX = "SCRAM-"
QUOTA_KEYS = frozenset({"producer_byte_rate", "consumer_byte_rate", "request_percentage",
                        "controller_mutation_rate"})
IP_QUOTA_KEYS = frozenset({"connection_creation_rate"})

_COMMA = re.compile(r",(?=[^\]]*(?:\[|$))")
_EQUALS = re.compile(r"\s*=\s*(?=[^\]]*(?:\[|$))")
_VALID_KEY = re.compile(r"[$a-zA-Z0-9._-]*")


class ConfigArgumentError(ToolFailure):
    """Kafka's IllegalArgumentException / InvalidConfigurationException: the bare message."""


class ConfigCommandError(ToolFailure):
    """Any other failure ("Error while executing config command with args ...")."""


@dataclass
class Notice:
    text: str


@dataclass
class ConfigLine:
    name: str
    value: str | None
    sensitive: bool
    synonyms: list[tuple[str, str, str | None]] = field(default_factory=list)  # (source, name, value)
    source: str = "UNKNOWN"
    read_only: bool = False


@dataclass
class ResourceConfigs:
    entity_type: str
    entity_name: str
    header: str
    entries: list[ConfigLine]


@dataclass
class QuotaConfigs:
    entity: str  # "user-principal 'alice', client-id 'c1'" / "the default client-id"
    entries: list[tuple[str, float]]


@dataclass
class ScramConfigs:
    user: str
    credentials: list[tuple[str, int]] | None  # (mechanism, iterations); None with error
    error: str | None = None


# --- parsing ----------------------------------------------------------------------------------------


def validate_keys(keys: Any) -> None:
    for key in keys:
        if not _VALID_KEY.fullmatch(key):
            raise ConfigArgumentError(f"Invalid character found for config key: {key}")


def parse_add_config(spec: str) -> dict[str, str]:
    """`k1=v1,k2=[v1,v2],k3=` -> {"k1": "v1", "k2": "v1,v2", "k3": ""} (ConfigCommand.parseConfigsToBeAdded)."""
    parts = _COMMA.split(spec)
    while parts and parts[-1] == "":  # Java's split drops trailing empty strings
        parts.pop()
    out: dict[str, str] = {}
    for part in parts:
        kv = _EQUALS.split(part)
        if len(kv) != 2:
            raise ConfigArgumentError(
                'Invalid entity config: all configs to be added must be in the format "key=val" or  '
                '"key=[val1,val2]" to group values which contain commas.')
        out[kv[0].strip()] = re.sub(r"\[?\]?", "", kv[1]).strip()
    return out


def parse_delete_config(values: list[str] | None) -> list[str]:
    """`--delete-config k1,k2` (repeatable; joptsimple splits values on ',')."""
    return [k.strip() for v in values or [] for k in v.split(",")]


def java_double(v: float) -> str:
    """Double.toString: plain between 1e-3 and 1e7, else computerized scientific (`1.0E7`)."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if str(v).startswith("-") else "0.0"
    if 1e-3 <= abs(v) < 1e7:
        text = repr(v)
        return text if "e" not in text else format(Decimal(text), "f")
    sign, digits, exp = Decimal(repr(v)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    e = cast(int, exp) + len(digits) - 1
    mant = ds[0] + "." + (ds[1:] or "0")
    return ("-" if sign else "") + f"{mant}E{e}"


# --- describe ---------------------------------------------------------------------------------------

_RESOURCE_TYPES = {TOPICS: 2, GROUPS: 3, BROKERS: 4, BROKER_LOGGERS: 8, CLIENT_METRICS: 16}
_DYNAMIC_SOURCE = {TOPICS: "DYNAMIC_TOPIC_CONFIG", GROUPS: "DYNAMIC_GROUP_CONFIG",
                   CLIENT_METRICS: "DYNAMIC_CLIENT_METRICS_CONFIG"}


def _singular(entity_type: str) -> str:
    return entity_type[:-1]


def _validate_broker_id(name: str, entity_type: str) -> None:
    try:
        int(name)
    except ValueError as e:
        raise ConfigArgumentError(
            f"The entity name for {entity_type} must be a valid integer broker id, found: {name}") from e


def get_resource_config(
    admin: AdminClient, entity_type: str, entity_name: str, include_synonyms: bool, describe_all: bool
) -> list[ConfigLine]:
    from kafkapy.client.admin import ConfigResource, ConfigResourceType

    if entity_type == BROKERS:
        if entity_name == DEFAULT_ENTITY:
            dynamic = "DYNAMIC_DEFAULT_BROKER_CONFIG"
        else:
            _validate_broker_id(entity_name, entity_type)
            dynamic = "DYNAMIC_BROKER_CONFIG"
    elif entity_type == BROKER_LOGGERS:
        if entity_name:
            _validate_broker_id(entity_name, entity_type)
        dynamic = None
    elif entity_type in _DYNAMIC_SOURCE:
        dynamic = _DYNAMIC_SOURCE[entity_type]
    else:
        raise ConfigArgumentError(f"Invalid entity type: {entity_type}")
    wanted = None if describe_all else dynamic
    resource = ConfigResource(ConfigResourceType(_RESOURCE_TYPES[entity_type]), entity_name)
    config = admin.describe_configs([resource], include_synonyms=include_synonyms)[resource]
    lines = [
        ConfigLine(e.name, e.value, bool(e.is_sensitive),
                   [(s.source.name, s.name, s.value) for s in e.synonyms], e.source.name, bool(e.is_read_only))
        for e in config.entries.values()
        if wanted is None or e.source.name == wanted
    ]
    return sorted(lines, key=lambda c: c.name)


def _topic_names(admin: AdminClient) -> list[str]:
    # ListTopicsResult.names(): the key set of the HashMap the admin client fills in response order.
    return java_hash_order(list(admin.list_topics(include_internal=True)), java_string_hash)


def _group_names(admin: AdminClient) -> list[str] | None:
    from kafkapy.common.errors import UnsupportedVersionError

    try:
        return [g.group_id for g in admin.list_consumer_groups()]
    except UnsupportedVersionError:
        return None


def describe(admin: AdminClient, entity_types: list[str], entity_names: list[str], describe_all: bool = False) -> list[Any]:
    entity_type = entity_types[0]
    if entity_type in (TOPICS, BROKERS, BROKER_LOGGERS, CLIENT_METRICS, GROUPS):
        return _describe_resource(admin, entity_type, entity_names[0] if entity_names else None, describe_all)
    if entity_type in (USERS, CLIENTS):
        results: list[Any] = list(describe_quotas(admin, entity_types, entity_names))
        if CLIENTS not in entity_types and DEFAULT_ENTITY not in entity_names:
            results.extend(describe_scram(admin, entity_names))
        return results
    if entity_type == IPS:
        return list(describe_quotas(admin, entity_types, entity_names))
    raise ConfigArgumentError(f"Invalid entity type: {entity_type}")


def _describe_resource(admin: AdminClient, entity_type: str, name: str | None, describe_all: bool) -> list[Any]:
    if not describe_all and name is not None:
        missing = Notice(f"The {_singular(entity_type)} '{name}' doesn't exist and doesn't have dynamic config.")
        if entity_type == TOPICS:
            if name not in admin.list_topics(include_internal=True):
                return [missing]
        elif entity_type in (BROKERS, BROKER_LOGGERS):
            ids = {str(n.node_id) for n in admin.describe_cluster().nodes}
            if name not in ids and name != DEFAULT_ENTITY:
                return [missing]
        elif entity_type == GROUPS:
            groups = _group_names(admin)
            if groups is not None and name not in groups:
                return [missing]
    if name is not None:
        entities = [name]
    elif entity_type == TOPICS:
        entities = _topic_names(admin)
    elif entity_type in (BROKERS, BROKER_LOGGERS):
        entities = [str(n.node_id) for n in admin.describe_cluster().nodes] + [DEFAULT_ENTITY]
    elif entity_type == GROUPS:
        entities = java_hash_order(_group_names(admin) or [], java_string_hash, sizing="collection")
    else:
        raise ConfigArgumentError(f"Invalid entity type: {entity_type}")
    results: list[Any] = []
    for entity in entities:
        if entity == DEFAULT_ENTITY:
            header = f"Default configs for {entity_type} in the cluster are:"
        else:
            header = f"{'All' if describe_all else 'Dynamic'} configs for {_singular(entity_type)} {entity} are:"
        results.append(ResourceConfigs(entity_type, entity, header,
                                       get_resource_config(admin, entity_type, entity, True, describe_all)))
    return results


_QUOTA_TYPES = {USERS: "user", CLIENTS: "client-id", IPS: "ip"}


def _quota_components(entity_types: list[str], entity_names: list[str]) -> list[Any]:
    from kafkapy.client.admin import ClientQuotaFilterComponent as Component

    if len(entity_names) > len(entity_types):
        raise ConfigArgumentError("More entity names specified than entity types")
    comps = []
    for i, etype in enumerate(entity_types):
        qtype = _QUOTA_TYPES.get(etype)
        if qtype is None:
            raise ConfigArgumentError(f"Unexpected entity type {etype}")
        if i >= len(entity_names):
            comps.append(Component.of_entity_type(qtype))
        elif entity_names[i] == DEFAULT_ENTITY:
            comps.append(Component.of_default_entity(qtype))
        else:
            comps.append(Component.of_entity(qtype, entity_names[i]))
    return comps


def _entity_hash(entity: dict[str, str | None]) -> int:
    # ClientQuotaEntity.hashCode() is its map's: the sum of key.hashCode() ^ value.hashCode().
    total = 0
    for k, v in entity.items():
        total += java_string_hash(k) ^ (java_string_hash(v) if v is not None else 0)
    return total


def describe_quotas(admin: AdminClient, entity_types: list[str], entity_names: list[str]) -> list[QuotaConfigs]:
    found = admin.describe_client_quotas(_quota_components(entity_types, entity_names), strict=True)
    items = [(entity.as_dict(), values) for entity, values in found.items()]
    out = []
    for entity, values in java_hash_order(items, lambda item: _entity_hash(item[0])):
        words = []
        for qtype, label in (("user", "user-principal"), ("client-id", "client-id"), ("ip", "ip")):
            if qtype in entity:
                name = entity[qtype]
                words.append(f"the default {label}" if not name else f"{label} '{name}'")
        entries = [(k, values[k]) for k in java_hash_order(list(values), java_string_hash)]
        out.append(QuotaConfigs(", ".join(words), entries))
    return out


def describe_scram(admin: AdminClient, users: list[str]) -> list[ScramConfigs]:
    from kafkapy.tools.tool_support import error_message

    out = []
    for user, found in admin.describe_user_scram_credentials(users, raise_errors=False).items():
        if isinstance(found, Exception):
            out.append(ScramConfigs(user, None, f"{type(found).__name__}: {error_message(found)}"))
        else:
            out.append(ScramConfigs(user, [(i.mechanism.mechanism_name, i.iterations) for i in found.credential_infos]))
    return out


# --- alter ------------------------------------------------------------------------------------------


def alter(
    admin: AdminClient, entity_types: list[str], entity_names: list[str], to_add: dict[str, str], to_delete: list[str]
) -> str:
    """Apply the change; returns Kafka's completion line."""
    from kafkapy.client.admin import AlterConfigOp, AlterConfigOpType, ConfigResource, ConfigResourceType
    from kafkapy.common.errors import UnsupportedVersionError

    if len(entity_types) != len(entity_names):
        raise ConfigArgumentError("An entity name must be specified for every entity type")
    entity_type, entity_name = entity_types[0], entity_names[0]
    validate_keys(to_add)
    if entity_type in (TOPICS, BROKERS, GROUPS, CLIENT_METRICS, BROKER_LOGGERS):
        if entity_type in (BROKERS, BROKER_LOGGERS) and entity_name:
            _validate_broker_id(entity_name, entity_type)
        valid = {c.name for c in get_resource_config(admin, entity_type, entity_name,
                                                     False, entity_type == BROKER_LOGGERS)}
        if entity_type == BROKER_LOGGERS:
            invalid = [c for c in to_delete if c not in valid] + [c for c in to_add if c not in valid]
            if invalid:
                raise ConfigArgumentError("Invalid broker logger(s): " + ",".join(invalid))
        else:
            invalid = [c for c in to_delete if c not in valid]
            if invalid:
                raise ConfigArgumentError("Invalid config(s): " + ",".join(invalid))
        resource = ConfigResource(ConfigResourceType(_RESOURCE_TYPES[entity_type]), entity_name)
        ops = [AlterConfigOp(k, "", AlterConfigOpType.DELETE) for k in to_delete]
        ops += [AlterConfigOp(k, v, AlterConfigOpType.SET) for k, v in to_add.items()]
        try:
            admin.incremental_alter_configs({resource: ops}, timeout_ms=30000)
        except UnsupportedVersionError as e:
            raise ConfigArgumentError(
                "The INCREMENTAL_ALTER_CONFIGS API is not supported by the cluster. The API is supported starting "
                "from version 2.3.0. You may want to use an older version of this tool to interact with your "
                "cluster, or upgrade your brokers to version 2.3.0 or newer to avoid this error.") from e
    elif entity_type in (USERS, CLIENTS):
        _alter_users_clients(admin, entity_types, entity_names, to_add, to_delete)
    elif entity_type == IPS:
        unknown = sorted((set(to_add) | set(to_delete)) - IP_QUOTA_KEYS)
        if unknown:
            raise ConfigArgumentError("Only connection quota configs can be added for 'ips' using --bootstrap-server."
                                      " Unexpected config names: " + ", ".join(unknown))
        _alter_quotas(admin, entity_types, entity_names, to_add, to_delete)
    else:
        raise ConfigArgumentError(f"Unsupported entity type: {entity_type}")
    if entity_name:
        return f"Completed updating config for {_singular(entity_type)} {entity_name}."
    return f"Completed updating default config for {entity_type} in the cluster."


def _alter_users_clients(admin: AdminClient, types: list[str], names: list[str], to_add: dict[str, str],
                         to_delete: list[str]) -> None:
    scram_add = {k: v for k, v in to_add.items() if k.startswith(SCRAM_PREFIX)}
    scram_del = [k for k in to_delete if k.startswith(SCRAM_PREFIX)]
    unknown_add = sorted(k for k in to_add if k not in QUOTA_KEYS and k not in scram_add)
    unknown_del = sorted(k for k in to_delete if k not in QUOTA_KEYS and k not in scram_del)
    quota = any(k in QUOTA_KEYS for k in to_add) or any(k in QUOTA_KEYS for k in to_delete)
    if types[0] == CLIENTS or len(types) == 2:
        if unknown_add or scram_add:
            raise ConfigArgumentError("Only quota configs can be added for 'clients' using --bootstrap-server. "
                                      "Unexpected config names: " + ",".join(unknown_add + sorted(scram_add)))
        if unknown_del or scram_del:
            raise ConfigArgumentError("Only quota configs can be deleted for 'clients' using --bootstrap-server. "
                                      "Unexpected config names: " + ",".join(unknown_del + scram_del))
    else:
        if unknown_add:
            raise ConfigArgumentError("Only quota and SCRAM credential configs can be added for 'users' using "
                                      "--bootstrap-server. Unexpected config names: " + ",".join(unknown_add))
        if unknown_del:
            raise ConfigArgumentError("Only quota and SCRAM credential configs can be deleted for 'users' using "
                                      "--bootstrap-server. Unexpected config names: " + ",".join(unknown_del))
        if scram_add or scram_del:
            if DEFAULT_ENTITY in names:
                raise ConfigArgumentError("The use of --entity-default or --user-defaults is not allowed with User "
                                          "SCRAM Credentials using --bootstrap-server.")
            if quota:
                raise ConfigArgumentError("Cannot alter both quota and SCRAM credential configs simultaneously for "
                                          "'users' using --bootstrap-server.")
    if quota:
        _alter_quotas(admin, types, names, to_add, to_delete)
    else:
        _alter_scram(admin, names[0], scram_add, scram_del)


def _alter_quotas(admin: AdminClient, types: list[str], names: list[str], to_add: dict[str, str],
                  to_delete: list[str]) -> None:
    from kafkapy.client.admin import ClientQuotaAlteration, ClientQuotaEntity

    current = admin.describe_client_quotas(_quota_components(types, names), strict=True)
    old: dict[str, Any] = next(iter(current.values()), {})
    invalid = [k for k in to_delete if k not in old]
    if invalid:
        raise ConfigArgumentError("Invalid config(s): " + ",".join(invalid))
    ops: dict[str, float | None] = {}
    for k, v in to_add.items():
        try:
            ops[k] = float(v)
        except ValueError as e:
            raise ConfigArgumentError(f"Cannot parse quota configuration value for {k}: {v}") from e
    ops.update(dict.fromkeys(to_delete))
    entity = {_QUOTA_TYPES[t]: (n or None) for t, n in zip(types, names, strict=True)}
    admin.alter_client_quotas([ClientQuotaAlteration(ClientQuotaEntity.of(entity), ops)])


def _alter_scram(admin: AdminClient, user: str, to_add: dict[str, str], to_delete: list[str]) -> None:
    from kafkapy.client.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    upserts = []
    for mech, spec in to_add.items():
        mechanism = ScramMechanism.from_mechanism_name(mech)
        if mechanism == ScramMechanism.UNKNOWN:
            raise ConfigArgumentError(f"Invalid credential property {mech}={spec}")
        m = re.fullmatch(r"(?:iterations=(-?[0-9]*),)?password=(.*)", spec, re.S)
        if not m:
            raise ConfigArgumentError(f"Invalid credential property {mech}={spec}")
        iterations = int(m.group(1)) if m.group(1) not in (None, "", "-1") else 4096
        if iterations < mechanism.min_iterations:
            raise ConfigArgumentError(
                f"Iterations {iterations} is less than the minimum {mechanism.min_iterations} required for {mech}")
        upserts.append(UserScramCredentialUpsertion(user, ScramCredentialInfo(mechanism, iterations),
                                                    m.group(2).encode("utf-8")))
    deletions = [UserScramCredentialDeletion(user, ScramMechanism.from_mechanism_name(m)) for m in to_delete]
    alterations: list[UserScramCredentialDeletion | UserScramCredentialUpsertion] = [*deletions, *upserts]
    admin.alter_user_scram_credentials(alterations)
