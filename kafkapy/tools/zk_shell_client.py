"""The tools' one door to ZooKeeper: a small synchronous facade over kazoo for zookeeper-shell and the
ZooKeeper-era tool flags (`topics --zookeeper`, ...).

Why a second kazoo importer: tools may not import kafkapy.controller (the broker side), yet
zookeeper-shell needs the raw znode operations (ephemeral/sequential create, stat, versions) that the
controller's ZkMetadataStore deliberately hides behind Kafka's metadata model. This module is listed
next to kafkapy.controller.zk_client in the import contract "kazoo is imported in one module only";
nothing else on the tools side touches kazoo.

Errors: kazoo's exceptions become ZkShellError with zkCli's wording ("Node does not exist: /p").
Thread-safety: one ZkShellClient per thread (kazoo's client is thread-safe; this wrapper adds no state).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    KazooException,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
)
from kazoo.handlers.threading import KazooTimeoutError

from kafkapy.tools import ToolFailure

# kazoo logs retried connection drops as warnings; without a handler Python prints them on stderr, which would
# add "Connection dropped: ..." to a tool's output (zkCli's own reconnects are silent too).
logging.getLogger("kazoo").addHandler(logging.NullHandler())


class ZkShellError(ToolFailure):
    """A ZooKeeper operation failed; str() is zkCli's one-line message."""


@dataclass(frozen=True)
class ZnodeStat:
    """ZooKeeper's Stat structure, field for field."""

    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    data_length: int
    num_children: int
    pzxid: int


def _stat(s) -> ZnodeStat:
    return ZnodeStat(s.czxid, s.mzxid, s.ctime, s.mtime, s.version, s.cversion, s.aversion,
                     s.ephemeralOwner, s.dataLength, s.numChildren, s.pzxid)


def _error(e: Exception, path: str) -> ZkShellError:
    if isinstance(e, NoNodeError):
        return ZkShellError(f"Node does not exist: {path}")
    if isinstance(e, NodeExistsError):
        return ZkShellError(f"Node already exists: {path}")
    if isinstance(e, NotEmptyError):
        return ZkShellError(f"Node not empty: {path}")
    if isinstance(e, BadVersionError):
        return ZkShellError(f"version No is not valid : {path}")
    if isinstance(e, NoChildrenForEphemeralsError):
        return ZkShellError(f"Ephemerals cannot have children: {path}")
    return ZkShellError(f"{type(e).__name__}: {e} ({path})")


class ZkShellClient:
    """Connected on construction; close() ends the session (its ephemeral znodes go with it)."""

    def __init__(self, connect: str, timeout_s: float = 30.0, session_timeout_s: float = 30.0) -> None:
        self.connect = connect
        self._zk = KazooClient(hosts=connect, timeout=session_timeout_s)
        try:
            self._zk.start(timeout=timeout_s)
        except KazooTimeoutError as e:
            self._zk.close()
            raise ZkShellError(f"Timed out waiting for connection to ZooKeeper at {connect}") from e

    @property
    def state(self) -> str:
        return "CONNECTED" if self._zk.connected else "CLOSED"

    def close(self) -> None:
        try:
            self._zk.stop()
        finally:
            self._zk.close()

    def __enter__(self) -> ZkShellClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def children(self, path: str) -> list[str]:
        try:
            return list(self._zk.get_children(path))
        except KazooException as e:
            raise _error(e, path) from e

    def get(self, path: str) -> tuple[bytes | None, ZnodeStat]:
        try:
            data, stat = self._zk.get(path)
        except KazooException as e:
            raise _error(e, path) from e
        return data, _stat(stat)

    def exists(self, path: str) -> ZnodeStat | None:
        stat = self._zk.exists(path)
        return None if stat is None else _stat(stat)

    def stat(self, path: str) -> ZnodeStat:
        stat = self.exists(path)
        if stat is None:
            raise ZkShellError(f"Node does not exist: {path}")
        return stat

    def set(self, path: str, data: bytes, version: int = -1) -> ZnodeStat:
        try:
            return _stat(self._zk.set(path, data, version=version))
        except KazooException as e:
            raise _error(e, path) from e

    def create(self, path: str, data: bytes | None = None, *, ephemeral: bool = False, sequential: bool = False,
               make_parents: bool = False) -> str:
        try:
            return str(self._zk.create(path, data, ephemeral=ephemeral, sequence=sequential,
                                       makepath=make_parents))
        except KazooException as e:
            raise _error(e, path) from e

    def delete(self, path: str, version: int = -1, recursive: bool = False) -> None:
        try:
            self._zk.delete(path, version=version, recursive=recursive)
        except KazooException as e:
            raise _error(e, path) from e

    def transaction(self, creates: list[tuple[str, bytes]], sets: list[tuple[str, bytes]]) -> None:
        """Create and set several znodes atomically (a ZooKeeper multi)."""
        tx = self._zk.transaction()
        for path, data in creates:
            tx.create(path, data)
        for path, data in sets:
            tx.set_data(path, data)
        results = tx.commit()
        for result, path in zip(results, [p for p, _ in creates] + [p for p, _ in sets], strict=False):
            if isinstance(result, Exception):
                raise _error(result, path)
