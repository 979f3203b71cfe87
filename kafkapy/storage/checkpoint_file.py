"""Text checkpoint files in Kafka's format, written atomically, and the `partition.metadata` file.

Byte format (record-format.md section 10), UTF-8 lines ending in "\\n":
  line 1: version (0), line 2: entry count, then one entry per line, fields separated by one space:
  `topic partition offset` for recovery-point-offset-checkpoint, replication-offset-checkpoint,
  log-start-offset-checkpoint and cleaner-offset-checkpoint; `epoch startOffset` for leader-epoch-checkpoint.
  `partition.metadata`: "version: 0\\ntopic_id: <22-char URL-safe base64 uuid>\\n".
Writes go through common/atomic_file.py: `<name>.tmp`, fsync, rename over the old file, fsync the directory.
A malformed file raises KafkaStorageError (Kafka's IOException -> KAFKA_STORAGE_ERROR).
Thread-safety: each CheckpointFile serialises its own reads and writes with a lock.
"""

from __future__ import annotations

import base64
import os
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from kafkapy.common.atomic_file import atomic_write, read_whole_file
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.errors import KafkaStorageError

__all__ = [
    "CheckpointFile",
    "OffsetCheckpointFile",
    "LeaderEpochCheckpointFile",
    "PartitionMetadataFile",
    "uuid_to_kafka_string",
    "uuid_from_kafka_string",
    "RECOVERY_POINT_CHECKPOINT_FILE",
    "LOG_START_OFFSET_CHECKPOINT_FILE",
    "REPLICATION_OFFSET_CHECKPOINT_FILE",
    "CLEANER_OFFSET_CHECKPOINT_FILE",
    "LEADER_EPOCH_CHECKPOINT_FILE",
    "PARTITION_METADATA_FILE",
]

RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT_FILE = "replication-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"

T = TypeVar("T")


class CheckpointFile(Generic[T]):
    """A versioned list of entries; `format_entry`/`parse_entry` convert one entry to/from its line."""

    def __init__(self, path: str, version: int, format_entry: Callable[[T], str],
                 parse_entry: Callable[[str], T | None]) -> None:
        self.path = path
        self.version = version
        self._format = format_entry
        self._parse = parse_entry
        self._lock = threading.Lock()

    def encode(self, entries: Iterable[T]) -> bytes:
        """The file's bytes for `entries` (what write puts on disk)."""
        items = list(entries)
        lines = [str(self.version), str(len(items))] + [self._format(e) for e in items]
        return ("\n".join(lines) + "\n").encode("utf-8")

    def write(self, entries: Iterable[T], fsync: bool = True) -> None:
        data = self.encode(entries)
        with self._lock:
            atomic_write(self.path, data, fsync)

    def read(self) -> list[T]:
        """Entries in file order; [] if the file does not exist."""
        with self._lock:
            try:
                text = read_whole_file(self.path).decode("utf-8")
            except FileNotFoundError:
                return []
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()

        def malformed(why: str) -> KafkaStorageError:
            return KafkaStorageError(f"Malformed line in checkpoint file ({self.path}): {why}")

        if not lines:
            raise malformed("missing version line")
        try:
            version = int(lines[0].strip())
        except ValueError:
            raise malformed(f"'{lines[0]}'") from None
        if version != self.version:
            raise KafkaStorageError(f"Unrecognized version of the checkpoint file ({self.path}): {version}")
        if len(lines) < 2:
            raise malformed("missing entry count")
        try:
            expected = int(lines[1].strip())
        except ValueError:
            raise malformed(f"'{lines[1]}'") from None
        entries: list[T] = []
        for line in lines[2:]:
            entry = self._parse(line)
            if entry is None:
                raise malformed(f"'{line}'")
            entries.append(entry)
        if len(entries) != expected:
            raise KafkaStorageError(
                f"Expected {expected} entries in checkpoint file ({self.path}), but found only {len(entries)}"
            )
        return entries


def _format_offset(entry: tuple[TopicPartition, int]) -> str:
    tp, offset = entry
    return f"{tp.topic} {tp.partition} {offset}"


def _parse_offset(line: str) -> tuple[TopicPartition, int] | None:
    parts = line.split()
    if len(parts) != 3:
        return None
    try:
        return TopicPartition(parts[0], int(parts[1])), int(parts[2])
    except ValueError:
        return None


class OffsetCheckpointFile:
    """`topic partition offset` checkpoints (recovery point, log start offset, high watermark, cleaner)."""

    VERSION = 0

    def __init__(self, path: str) -> None:
        self._file: CheckpointFile[tuple[TopicPartition, int]] = CheckpointFile(
            path, self.VERSION, _format_offset, _parse_offset
        )

    @property
    def path(self) -> str:
        return self._file.path

    def write(self, offsets: dict[TopicPartition, int], fsync: bool = True) -> None:
        self._file.write(sorted(offsets.items()), fsync)

    def read(self) -> dict[TopicPartition, int]:
        return dict(self._file.read())


def _format_epoch(entry: tuple[int, int]) -> str:
    return f"{entry[0]} {entry[1]}"


def _parse_epoch(line: str) -> tuple[int, int] | None:
    parts = line.split()
    if len(parts) != 2:
        return None
    try:
        return int(parts[0]), int(parts[1])
    except ValueError:
        return None


class LeaderEpochCheckpointFile:
    """`leader-epoch-checkpoint`: version 0, count, then `epoch startOffset` lines."""

    VERSION = 0

    def __init__(self, path: str) -> None:
        self._file: CheckpointFile[tuple[int, int]] = CheckpointFile(path, self.VERSION, _format_epoch, _parse_epoch)

    @property
    def path(self) -> str:
        return self._file.path

    @path.setter
    def path(self, value: str) -> None:
        self._file.path = value

    def encode(self, entries: Iterable[tuple[int, int]]) -> bytes:
        return self._file.encode(entries)

    def write(self, entries: Iterable[tuple[int, int]], fsync: bool = True) -> None:
        self._file.write(entries, fsync)

    def read(self) -> list[tuple[int, int]]:
        return self._file.read()


def uuid_to_kafka_string(value: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding (22 characters)."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def uuid_from_kafka_string(text: str) -> uuid.UUID:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"Input string with prefix `{text[:8]}` is too long to be decoded as a base64 UUID")
    return uuid.UUID(bytes=raw)


class PartitionMetadataFile:
    """`partition.metadata`: the topic id of the partition directory."""

    def __init__(self, path: str) -> None:
        self.path = path

    def exists(self) -> bool:
        return os.path.exists(self.path)

    @staticmethod
    def encode(topic_id: uuid.UUID) -> bytes:
        return f"version: 0\ntopic_id: {uuid_to_kafka_string(topic_id)}\n".encode()

    def write(self, topic_id: uuid.UUID, fsync: bool = True) -> None:
        atomic_write(self.path, self.encode(topic_id), fsync)

    def read(self) -> uuid.UUID:
        try:
            lines = read_whole_file(self.path).decode("utf-8").splitlines()
        except FileNotFoundError:
            raise KafkaStorageError(f"Partition metadata file {self.path} does not exist") from None
        fields = {}
        for line in lines:
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        if fields.get("version") != "0":
            raise KafkaStorageError(f"Unrecognized version of partition metadata file ({self.path}): {fields.get('version')}")
        try:
            return uuid_from_kafka_string(fields["topic_id"])
        except (KeyError, ValueError) as exc:
            raise KafkaStorageError(f"Malformed partition metadata file {self.path}: {exc}") from None
