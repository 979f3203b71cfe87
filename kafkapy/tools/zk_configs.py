"""configs --zookeeper (Kafka 2.x's ConfigCommand over ZooKeeper): entity overrides read from and written to
/config/<type>/<name> ({"version":1,"config":{...}}; the default entity is `<default>`), each change
announced with a sequential /config/changes/config_change_<seq> holding {"version":2,"entity_path":
"<type>/<name>"}, which every broker watches. Text as 2.x printed it: `Configs for topic 't' are k=v,k2=v2`
and `Completed updating config for entity: topic 't'.`. Entity types: topics, clients, users, brokers.
Thread-safety: one call at a time per ZkShellClient.
"""

from __future__ import annotations

import json

from kafkapy.tools import ToolFailure
from kafkapy.tools.zk_shell_client import ZkShellClient, ZkShellError

ZK_ENTITY_TYPES = ("topics", "clients", "users", "brokers")
DEFAULT_ENTITY = "<default>"
CHANGE_PREFIX = "/config/changes/config_change_"
_TYPE_NAMES = {"users": "user-principal", "clients": "client-id", "topics": "topic"}


def entity_text(entity_type: str, name: str) -> str:
    """Kafka 2.x ConfigCommand.Entity.toString."""
    type_name = _TYPE_NAMES.get(entity_type, entity_type)
    return f"default {type_name}" if name == DEFAULT_ENTITY else f"{type_name} '{name}'"


def _path(entity_type: str, name: str) -> str:
    return f"/config/{entity_type}/{name}"


def read_configs(zk: ZkShellClient, entity_type: str, name: str) -> dict[str, str]:
    try:
        raw, _ = zk.get(_path(entity_type, name))
    except ZkShellError:
        return {}
    return dict((json.loads(raw) if raw else {}).get("config", {}))


def alter(zk: ZkShellClient, entity_type: str, name: str, to_add: dict[str, str], to_delete: list[str]) -> str:
    if entity_type == "topics" and zk.exists(f"/brokers/topics/{name}") is None:
        raise ToolFailure(f"Topic {name} does not exist.")
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
    data = json.dumps({"version": 1, "config": configs}, separators=(",", ":")).encode()
    path = _path(entity_type, name)
    if zk.exists(path) is None:
        zk.create(path, data, make_parents=True)
    else:
        zk.set(path, data)
    change = json.dumps({"version": 2, "entity_path": f"{entity_type}/{name}"}, separators=(",", ":")).encode()
    zk.create(CHANGE_PREFIX, change, sequential=True, make_parents=True)


def describe(zk: ZkShellClient, entity_type: str, name: str | None) -> list[str]:
    if name is None:
        try:
            names = sorted(zk.children(f"/config/{entity_type}"))
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
