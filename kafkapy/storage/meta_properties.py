"""`meta.properties` of a log directory, and the `.kafka_cleanshutdown` marker.

Byte format (record-format.md section 10): a Java properties file as Kafka's PropertiesUtils writes it
(`Properties.store` with an empty comment: a "#" line, a "#<date>" line, then `key=value` lines).
Version 1 (KRaft) holds `node.id`, `version`, `cluster.id` and `directory.id`; version 0 (ZooKeeper mode)
holds `broker.id` instead of `node.id`. `directory.id` is a Kafka Uuid string (22 chars, URL-safe base64).
`.kafka_cleanshutdown` holds Kafka's JSON `{"version":"0","broker_epoch":"<epoch>"}`.
Functions only; callers serialise access per directory.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass

from kafkapy.common.atomic_file import atomic_write
from kafkapy.storage.checkpoint_file import uuid_from_kafka_string, uuid_to_kafka_string
from kafkapy.storage.errors import KafkaStorageError

__all__ = [
    "MetaProperties",
    "META_PROPERTIES_FILE",
    "CLEAN_SHUTDOWN_FILE",
    "read_meta_properties",
    "write_meta_properties",
    "generate_directory_id",
    "read_java_properties",
    "write_clean_shutdown_file",
    "read_clean_shutdown_file",
]

META_PROPERTIES_FILE = "meta.properties"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"


def generate_directory_id() -> str:
    """A random Kafka Uuid string: never reserved (first 100 ids) and never starting with '-'."""
    for _ in range(100):
        value = uuid.uuid4()
        text = uuid_to_kafka_string(value)
        if not text.startswith("-") and value.int >= 100:
            return text
    raise RuntimeError("could not generate a directory id")  # pragma: no cover


@dataclass(frozen=True)
class MetaProperties:
    version: int
    cluster_id: str | None
    node_id: int | None
    directory_id: str | None = None

    def to_properties(self) -> dict[str, str]:
        """Key order as Kafka's files usually show it."""
        props: dict[str, str] = {}
        if self.node_id is not None:
            props["node.id" if self.version == 1 else "broker.id"] = str(self.node_id)
        if self.directory_id is not None:
            props["directory.id"] = self.directory_id
        props["version"] = str(self.version)
        if self.cluster_id is not None:
            props["cluster.id"] = self.cluster_id
        return props

    @classmethod
    def from_properties(cls, props: dict[str, str], path: str = "meta.properties") -> MetaProperties:
        try:
            version = int(props.get("version", ""))
        except ValueError:
            raise KafkaStorageError(f"Failed to load {path}: missing or invalid version") from None
        if version not in (0, 1):
            raise KafkaStorageError(f"Failed to load {path}: unknown version {version}")
        id_key = "node.id" if version == 1 else "broker.id"
        node_id = props.get(id_key)
        cluster_id = props.get("cluster.id")
        if version == 1 and (node_id is None or cluster_id is None):
            raise KafkaStorageError(f"Failed to load {path}: version 1 needs {id_key} and cluster.id")
        directory_id = props.get("directory.id")
        if directory_id is not None:
            try:
                uuid_from_kafka_string(directory_id)
            except ValueError:
                raise KafkaStorageError(f"Failed to load {path}: invalid directory.id {directory_id}") from None
        return cls(version, cluster_id, int(node_id) if node_id is not None else None, directory_id)


def read_java_properties(text: str) -> dict[str, str]:
    """Parse the subset of the Java properties format Kafka's files use (comments, key=value / key:value)."""
    props: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = len(line)
        for i, ch in enumerate(line):
            if ch in "=:" and (i == 0 or line[i - 1] != "\\"):
                cut = i
                break
        key = line[:cut].strip().replace("\\:", ":").replace("\\=", "=")
        props[key] = line[cut + 1:].strip() if cut < len(line) else ""
    return props


def _java_date(now: float | None = None) -> str:
    # java.util.Date.toString(): "Thu Mar 13 10:15:30 UTC 2025"
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(now))


def read_meta_properties(log_dir: str) -> MetaProperties | None:
    path = os.path.join(log_dir, META_PROPERTIES_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    return MetaProperties.from_properties(read_java_properties(text), path)


def write_meta_properties(log_dir: str, meta: MetaProperties) -> None:
    lines = ["#", "#" + _java_date()] + [f"{k}={v}" for k, v in meta.to_properties().items()]
    atomic_write(os.path.join(log_dir, META_PROPERTIES_FILE), ("\n".join(lines) + "\n").encode("utf-8"))


def write_clean_shutdown_file(log_dir: str, broker_epoch: int = -1) -> None:
    payload = json.dumps({"version": "0", "broker_epoch": str(broker_epoch)}, separators=(",", ":"))
    atomic_write(os.path.join(log_dir, CLEAN_SHUTDOWN_FILE), payload.encode("utf-8"))


def read_clean_shutdown_file(log_dir: str) -> int | None:
    """The broker epoch stored in the marker (-1 if none); None if the marker is absent or unreadable."""
    try:
        with open(os.path.join(log_dir, CLEAN_SHUTDOWN_FILE), encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    try:
        return int(json.loads(text).get("broker_epoch", "-1"))
    except (ValueError, AttributeError):
        return -1 if not text.strip() else None
