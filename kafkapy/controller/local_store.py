"""LocalMetadataStore: the embedded broker's metadata store, one JSON file in the first log dir.

File `<log.dir>/__kafkapy_metadata.json` (a file, so it can never be taken for a `<topic>-<partition>`
log dir, and the LogManager, which only loads such dirs, ignores it):
  {"format":1,"zxid":42,"nodes":{
  "/brokers/topics/t":{"czxid":7,"data":{...Kafka's JSON...},"version":0},
  ...}}                                  (one node per line)
Node paths and payloads are ZooKeeper's (zk_data.py). Ephemeral nodes (broker registrations, /controller)
live in memory only, as a ZooKeeper session's would, so they are gone after a restart.
Every mutation rewrites the file atomically (write `.tmp`, fsync, rename, fsync the dir) before returning;
the sorted list of persistent paths is kept across mutations and each node's line is built once, so a
mutation costs the file write, not re-sorting and re-encoding every node. The write holds one descriptor
back (common/descriptor_reserve.py) so that it still succeeds once the process has reached its limit.
The file holds SCRAM credentials and ACLs: it is written 0600 and an existing looser file is tightened on
start (common/private_file.py).
Thread-safety: one lock around the node map and the file; watch callbacks run after the lock is released.
"""

from __future__ import annotations

import bisect
import copy
import json
import os
import threading
from collections.abc import Callable
from typing import Any

from kafkapy.common.descriptor_reserve import DescriptorReserve
from kafkapy.common.private_file import tighten_private_file, write_private_file
from kafkapy.controller.metadata_store import (
    BadVersionError,
    MetadataStoreError,
    NodeExistsError,
    NoNodeError,
)
from kafkapy.controller.path_store import Check, Create, Delete, Op, PathMetadataStore, SetData, Stat

METADATA_FILE_NAME = "__kafkapy_metadata.json"
_FORMAT = 1


_IMMUTABLE_SCALARS = (str, int, float, bool, type(None))


def _copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars), ~8x cheaper than copy.deepcopy: a start-up reads
    every partition's state node. Anything else is left to copy.deepcopy."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) for v in value]
    if kind in _IMMUTABLE_SCALARS:
        return value
    return copy.deepcopy(value)


class _Node:
    """A node is never mutated (a write replaces it), so its file line is computed once."""

    __slots__ = ("data", "version", "czxid", "ephemeral", "_line")

    def __init__(self, data: Any, version: int, czxid: int, ephemeral: bool) -> None:
        self.data = data
        self.version = version
        self.czxid = czxid
        self.ephemeral = ephemeral
        self._line: str | None = None

    def line(self, path: str) -> str:
        if self._line is None:
            # Compact json.dumps stays on the C encoder (indent= would switch to the slow pure-Python one).
            value = json.dumps({"data": self.data, "version": self.version, "czxid": self.czxid}, sort_keys=True)
            self._line = f"{json.dumps(path)}:{value}"
        return self._line


class LocalMetadataStore(PathMetadataStore):
    def __init__(self, log_dir: str, file_name: str = METADATA_FILE_NAME) -> None:
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = log_dir
        self.path = os.path.join(log_dir, file_name)
        self._lock = threading.RLock()
        self._nodes: dict[str, _Node] = {}
        # The persistent (non-ephemeral) paths in file order, updated by each commit's ops (None: rebuild).
        self._sorted_paths: list[str] | None = None
        self._zxid = 0
        self._watches: dict[str, list[Callable[[], None]]] = {}
        # A broker at its descriptor limit (e.g. logs that could not all be created) must still record what the
        # controller decided (replicas offline); ZooKeeper's writes need no new descriptor, this file's do.
        self._reserve = DescriptorReserve()
        tighten_private_file(self.path)
        self._load()

    # -- persistence --------------------------------------------------------------------------------------

    def _load(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as f:
                content = json.load(f)
        except FileNotFoundError:
            return
        if content.get("format") != _FORMAT:
            raise MetadataStoreError(f"{self.path}: unsupported metadata file format {content.get('format')!r}")
        self._zxid = int(content["zxid"])
        for path, node in content["nodes"].items():
            self._nodes[path] = _Node(node["data"], int(node["version"]), int(node["czxid"]), False)

    def _persist(self, ops: list[Op] | None = None) -> None:
        nodes = self._nodes
        paths = self._sorted_paths
        if paths is None or ops is None:
            paths = sorted(path for path, n in nodes.items() if not n.ephemeral)
        else:
            for op in ops:
                _update_sorted_paths(paths, nodes, op)
        self._sorted_paths = None  # until this write succeeds
        lines = [nodes[path].line(path) for path in paths]
        body = f'{{"format":{_FORMAT},"zxid":{self._zxid},"nodes":{{\n' + ",\n".join(lines) + "\n}}\n"
        data = body.encode("utf-8")
        self._reserve.call(lambda: write_private_file(self.path, data))
        self._sorted_paths = paths

    # -- primitives ------------------------------------------------------------------------------------------

    def _get(self, path: str) -> tuple[Any, Stat] | None:
        with self._lock:
            node = self._nodes.get(path)
            if node is None:
                return None
            return _copy_json(node.data), Stat(node.version, node.czxid)

    def _children(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        with self._lock:
            names = {p[len(prefix):].split("/", 1)[0] for p in self._nodes if p.startswith(prefix)}
        return sorted(names)

    def _apply(self, nodes: dict[str, _Node], op: Op) -> Stat | None:
        """Apply op to nodes (a working copy); raises the store error the op hits."""
        if isinstance(op, Create):
            if op.path in nodes:
                raise NodeExistsError(op.path)
            self._zxid += 1
            nodes[op.path] = _Node(_copy_json(op.data), 0, self._zxid, op.ephemeral)
            return Stat(0, self._zxid)
        node = nodes.get(op.path)
        if isinstance(op, Delete) and op.recursive:
            prefix = op.path + "/"
            doomed = [p for p in nodes if p == op.path or p.startswith(prefix)]
            if not doomed:
                raise NoNodeError(op.path)
            if node is not None and op.version not in (-1, node.version):
                raise BadVersionError(op.path)
            for p in doomed:
                del nodes[p]
            return None
        if node is None:
            raise NoNodeError(op.path)
        if op.version not in (-1, node.version):
            raise BadVersionError(f"{op.path}: version {node.version}, expected {op.version}")
        if isinstance(op, SetData):
            nodes[op.path] = _Node(_copy_json(op.data), node.version + 1, node.czxid, node.ephemeral)
            return Stat(node.version + 1, node.czxid)
        if isinstance(op, Delete):
            del nodes[op.path]
        return None  # Check

    def _multi(self, ops: list[Op]) -> list[Stat | None]:
        with self._lock:
            nodes = dict(self._nodes)
            zxid = self._zxid
            try:
                results = [self._apply(nodes, op) for op in ops]
            except MetadataStoreError:
                self._zxid = zxid
                raise
            fired = self._commit(nodes, ops)
        self._fire(fired)
        return results

    def _each(self, ops: list[Op]) -> list[Stat | None | MetadataStoreError]:
        with self._lock:
            nodes = dict(self._nodes)
            results: list[Stat | None | MetadataStoreError] = []
            applied: list[Op] = []
            for op in ops:
                try:
                    results.append(self._apply(nodes, op))
                    applied.append(op)
                except MetadataStoreError as e:
                    results.append(e)
            fired = self._commit(nodes, applied) if applied else []
        self._fire(fired)
        return results

    def _commit(self, nodes: dict[str, _Node], ops: list[Op]) -> list[Callable[[], None]]:
        old = self._nodes
        self._nodes = nodes
        # Persist even ephemeral-only changes: the zxid (broker epochs) must keep growing across restarts.
        if any(not isinstance(op, Check) for op in ops):
            try:
                self._persist(ops)
            except OSError:
                self._nodes = old
                raise
        fired: list[Callable[[], None]] = []
        for op in ops:
            if isinstance(op, (Create, Delete)):
                parent = op.path.rsplit("/", 1)[0]
                fired.extend(self._watches.get(parent, ()))
        return list(dict.fromkeys(fired))

    @staticmethod
    def _fire(callbacks: list[Callable[[], None]]) -> None:
        for cb in callbacks:
            cb()

    def _watch_children(self, path: str, callback: Callable[[], None]) -> None:
        with self._lock:
            self._watches.setdefault(path, []).append(callback)

    def close(self) -> None:
        with self._lock:
            self._nodes = {p: n for p, n in self._nodes.items() if not n.ephemeral}
            self._watches.clear()
            self._reserve.close()


def _update_sorted_paths(paths: list[str], nodes: dict[str, _Node], op: Op) -> None:
    """Apply one committed op to the sorted persistent paths (nodes: the store after the commit)."""
    if isinstance(op, Check):
        return
    path = op.path
    if isinstance(op, Delete):
        if op.recursive:  # descendants sort between "path/" and "path0" ('0' follows '/')
            del paths[bisect.bisect_left(paths, path + "/"):bisect.bisect_left(paths, path + "0")]
        i = bisect.bisect_left(paths, path)
        if i < len(paths) and paths[i] == path:
            del paths[i]
        return
    node = nodes.get(path)
    if node is None or node.ephemeral:
        return
    i = bisect.bisect_left(paths, path)
    if i == len(paths) or paths[i] != path:
        paths.insert(i, path)
