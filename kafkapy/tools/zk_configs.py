"""configs --zookeeper (Kafka 2.x's ConfigCommand over ZooKeeper): entity overrides read from and written to
/config/<type>/<name> ({"version":1,"config":{...}}; the default entity is `<default>`), each change
announced with a sequential /config/changes/config_change_<seq> holding {"version":2,"entity_path":
"<type>/<name>"}, which every broker watches. Text as 2.x printed it: `Configs for topic 't' are k=v,k2=v2`
and `Completed updating config for entity: topic 't'.`. Entity types: topics, clients, users, brokers.
A user's `SCRAM-SHA-256=[iterations=N,]password=P` (or SCRAM-SHA-512) is stored as Kafka 2.x stored it: the
salted credential `salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>` (4096 iterations by default).
Nodes are created with Kafka's ACLs when the session is authenticated (/config/users creator-only).
Thread-safety: one call at a time per ZkShellClient.
"""

from __future__ import annotations

import re

from kafkapy.common import scram
from kafkapy.tools import ToolFailure
from kafkapy.tools.zk_shell_client import ZkShellClient, ZkShellError
from kafkapy.zk import zk_data
from kafkapy.zk.zk_data import decode_json, encode_json

ZK_ENTITY_TYPES = ("topics", "clients", "users", "brokers")
DEFAULT_ENTITY = zk_data.DEFAULT_BROKER_ENTITY
_TYPE_NAMES = {"users": "user-principal", "clients": "client-id", "topics": "topic"}


def entity_text(entity_type: str, name: str) -> str:
    """Kafka 2.x ConfigCommand.Entity.toString."""
    type_name = _TYPE_NAMES.get(entity_type, entity_type)
    return f"default {type_name}" if name == DEFAULT_ENTITY else f"{type_name} '{name}'"


def read_configs(zk: ZkShellClient, entity_type: str, name: str) -> dict[str, str]:
    """The entity's overrides ({} when it has none); a node this session may not read (a creator-only
    /config/users/<u> without the login) fails with ZooKeeper's NoAuth line instead of looking empty."""
    node = zk.get_or_none(zk_data.entity_config_path(entity_type, name))
    return zk_data.decode_config(decode_json(node[0])) if node is not None else {}


def scram_credential(mechanism: str, spec: str) -> str:
    """Kafka 2.x ConfigCommand.preProcessScramCredentials: `[iterations=N,]password=P` -> the salted credential
    `salt=...,stored_key=...,server_key=...,iterations=N` (ScramCredentialUtils), never the password."""
    m = re.fullmatch(r"(?:iterations=([0-9]*),)?password=(.*)", spec, re.S)
    if m is None:
        raise ToolFailure(f"Invalid credential property {mechanism}={spec}")
    iterations = int(m.group(1)) if m.group(1) else scram.MIN_ITERATIONS
    if iterations < scram.MIN_ITERATIONS:
        raise ToolFailure(f"Iterations {iterations} is less than the minimum {scram.MIN_ITERATIONS} required for "
                          f"{mechanism}")
    credential = scram.ScramCredential.from_password(scram.MECHANISMS[mechanism], m.group(2), scram.random_salt(),
                                                     iterations)
    return credential.to_config_string()


def alter(zk: ZkShellClient, entity_type: str, name: str, to_add: dict[str, str], to_delete: list[str]) -> str:
    if entity_type == "topics" and zk.exists(zk_data.topic_path(name)) is None:
        raise ToolFailure(f"Topic {name} does not exist.")
    if entity_type == "users":
        to_add = {k: scram_credential(k, v) if k in scram.MECHANISMS else v for k, v in to_add.items()}
    missing = [k for k in to_delete if k not in read_configs(zk, entity_type, name) and k not in to_add]
    if missing:
        raise ToolFailure(f"Invalid config(s): {','.join(missing)}")
    write_configs(zk, entity_type, name, to_add, to_delete)
    return f"Completed updating config for entity: {entity_text(entity_type, name)}."


def write_configs(zk: ZkShellClient, entity_type: str, name: str, to_add: dict[str, str],
                  to_delete: list[str]) -> None:
    """Apply the change to /config/<type>/<name> and announce it with a config_change_<seq> znode."""
    configs = read_configs(zk, entity_type, name)
    configs.update(to_add)
    for key in to_delete:
        configs.pop(key, None)
    data = encode_json(zk_data.encode_config(configs, sort_keys=False))
    path = zk_data.entity_config_path(entity_type, name)
    if zk.exists(path) is None:
        zk.create(path, data, make_parents=True)
    else:
        zk.set(path, data)
    change = encode_json(zk_data.encode_config_change(f"{entity_type}/{name}"))
    zk.create(zk_data.CONFIG_CHANGE_PREFIX, change, sequential=True, make_parents=True)


def describe(zk: ZkShellClient, entity_type: str, name: str | None) -> list[str]:
    if name is None:
        try:
            names = sorted(zk.children(f"{zk_data.CONFIG_PATH}/{entity_type}"))
        except ZkShellError:
            names = []
    else:
        names = [name]
    lines = []
    for n in names:
        configs = read_configs(zk, entity_type, n)
        lines.append(f"Configs for {entity_text(entity_type, n)} are "
                     + ",".join(f"{k}={v}" for k, v in configs.items()))
    return lines
