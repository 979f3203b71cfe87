"""ZkMetadataStore: the MetadataStore of cluster mode, over a real ZooKeeper ensemble through kazoo (the only
module of kafkapy that imports kazoo).

Bytes in ZooKeeper are Kafka's: each node holds compact UTF-8 JSON (zk_data.py gives the shapes; Kafka's
Jackson writes no spaces), /controller_epoch a bare integer, /admin/delete_topics/<t> no data. The broker
registration /brokers/ids/<id> and /controller are ephemeral (they end with this client's session); the
broker epoch is the czxid of the registration. Multi-op writes are ZooKeeper transactions guarded by the
expected zkVersion (the partition epoch for partition states).
`zookeeper.connect` may carry a chroot (`h1:2181,h2:2181/kafka`), created on first use as Kafka does.
Start-up waits at most `zookeeper.connection.timeout.ms` (default: the session timeout) and then fails
with one line. After a session expiry the client re-registers the broker's ephemeral node by itself and
then calls the session listeners (the controller resigns and re-runs its election); a ZooKeeper restart
within the session timeout keeps the session (ZooKeeper persists sessions) and kazoo reconnects.
Watch callbacks run on kazoo's event thread and must only enqueue (the controller's do).
Thread-safety: kazoo's client is thread-safe; this class adds one lock around the registration it replays.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import BadVersionError as KzBadVersion
from kazoo.exceptions import KazooException, NotEmptyError
from kazoo.exceptions import NodeExistsError as KzNodeExists
from kazoo.exceptions import NoNodeError as KzNoNode
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch
from kazoo.retry import KazooRetry

from kafkapy.cluster.broker import Broker
from kafkapy.controller import zk_data
from kafkapy.controller.metadata_store import (
    BadVersionError,
    MetadataStoreError,
    NodeExistsError,
    NoNodeError,
)
from kafkapy.controller.path_store import Create, Delete, Op, PathMetadataStore, SetData, Stat

log = logging.getLogger("kafka.zookeeper.ZooKeeperClient")


class ZooKeeperClientTimeoutError(MetadataStoreError):
    """Kafka's ZooKeeperClientTimeoutException."""


class BrokerIdAlreadyRegisteredError(MetadataStoreError):
    pass


def encode_json(data: Any) -> bytes:
    if data is None:
        return b""
    return json.dumps(data, separators=(",", ":")).encode("utf-8")


def decode_json(raw: bytes | None) -> Any:
    if not raw:
        return None
    return json.loads(raw.decode("utf-8"))


def _map_error(e: Exception, path: str) -> MetadataStoreError:
    if isinstance(e, KzNodeExists):
        return NodeExistsError(path)
    if isinstance(e, KzNoNode):
        return NoNodeError(path)
    if isinstance(e, KzBadVersion):
        return BadVersionError(path)
    if isinstance(e, MetadataStoreError):
        return e
    return MetadataStoreError(f"{path}: {type(e).__name__}: {e}")


class ZkMetadataStore(PathMetadataStore):
    cluster_mode = True

    def __init__(self, connect: str, session_timeout_ms: int = 18000, connection_timeout_ms: int | None = None
                 ) -> None:
        self.connect = connect
        hosts, slash, chroot = connect.partition("/")
        self.chroot = f"/{chroot}".rstrip("/") if slash else ""
        self.session_timeout_ms = session_timeout_ms
        self.connection_timeout_ms = connection_timeout_ms or session_timeout_ms
        self._hosts = hosts
        self._lock = threading.Lock()
        self._registered: tuple[Broker, int] | None = None
        self._session_listeners: list[Callable[[], None]] = []
        self._lost = False
        self._closed = False
        self._client = self._start(hosts + self.chroot)

    # -- connection ---------------------------------------------------------------------------------------

    def _start(self, hosts: str) -> KazooClient:
        timeout_s = self.connection_timeout_ms / 1000.0
        if self.chroot:
            self._ensure_chroot(timeout_s)
        retry = KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0, deadline=self.session_timeout_ms / 1000.0,
                           ignore_expire=False)
        client = KazooClient(hosts=hosts, timeout=self.session_timeout_ms / 1000.0, command_retry=retry,
                             connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0))
        try:
            client.start(timeout=timeout_s)
        except KazooTimeoutError:
            client.stop()
            client.close()
            raise ZooKeeperClientTimeoutError(
                f"Timed out waiting for connection to ZooKeeper {self.connect} after "
                f"{self.connection_timeout_ms} ms (zookeeper.connection.timeout.ms) while in state: CONNECTING"
            ) from None
        client.add_listener(self._on_state)
        for path in zk_data.PERSISTENT_PATHS:
            client.retry(client.ensure_path, path)
        log.info("Connected to ZooKeeper %s (session 0x%x)", self.connect, client.client_id[0])
        return client

    def _ensure_chroot(self, timeout_s: float) -> None:
        root = KazooClient(hosts=self._hosts, timeout=self.session_timeout_ms / 1000.0)
        try:
            root.start(timeout=timeout_s)
        except KazooTimeoutError:
            root.stop()
            root.close()
            raise ZooKeeperClientTimeoutError(
                f"Timed out waiting for connection to ZooKeeper {self.connect} after "
                f"{self.connection_timeout_ms} ms (zookeeper.connection.timeout.ms) while in state: CONNECTING"
            ) from None
        try:
            if root.exists(self.chroot) is None:
                log.info("Creating chroot path %s", self.chroot)
                root.ensure_path(self.chroot)
        finally:
            root.stop()
            root.close()

    def _on_state(self, state: str) -> None:
        # Runs on kazoo's event thread: no ZooKeeper calls here; a new session is handled on a thread.
        if self._closed:
            return
        if state == KazooState.LOST:
            self._lost = True
            log.warning("ZooKeeper session expired")
        elif state == KazooState.SUSPENDED:
            log.info("ZooKeeper connection suspended; reconnecting")
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            threading.Thread(target=self._on_new_session, name="zk-session-expiry-handler", daemon=True).start()

    def _on_new_session(self) -> None:
        with self._lock:
            registered = self._registered
        if registered is not None:
            try:
                epoch = self.register_broker(*registered)
                log.info("Re-registered broker %d after session expiry, broker epoch %d", registered[0].id, epoch)
            except MetadataStoreError:
                log.exception("Could not re-register broker %d after session expiry", registered[0].id)
        for listener in list(self._session_listeners):
            try:
                listener()
            except Exception:
                log.exception("ZooKeeper session listener failed")

    def add_session_listener(self, listener: Callable[[], None]) -> None:
        """Called (on a helper thread) after a new session replaced an expired one and the broker is
        registered again."""
        self._session_listeners.append(listener)

    @property
    def session_id(self) -> int:
        return int(self._client.client_id[0]) if self._client.client_id else 0

    def close(self) -> None:
        self._closed = True
        try:
            self._client.stop()
            self._client.close()
        except KazooException:
            pass

    # -- primitives -----------------------------------------------------------------------------------------

    def _get(self, path: str) -> tuple[Any, Stat] | None:
        try:
            raw, zstat = self._client.retry(self._client.get, path)
        except KzNoNode:
            return None
        except KazooException as e:
            raise _map_error(e, path) from None
        return decode_json(raw), Stat(zstat.version, zstat.czxid)

    def _children(self, path: str) -> list[str]:
        try:
            return sorted(self._client.retry(self._client.get_children, path))
        except KzNoNode:
            return []
        except KazooException as e:
            raise _map_error(e, path) from None

    def _expand(self, ops: list[Op]) -> list[Op]:
        """Transactions cannot delete recursively: a recursive Delete becomes the deletes of its subtree,
        deepest first."""
        out: list[Op] = []
        for op in ops:
            if isinstance(op, Delete) and op.recursive:
                out.extend(Delete(p, op.version if p == op.path else -1) for p in self._subtree(op.path))
            else:
                out.append(op)
        return out

    def _subtree(self, path: str) -> list[str]:
        """path and every node under it, children before their parent."""
        out: list[str] = []
        for child in self._children(path):
            out.extend(self._subtree(f"{path}/{child}"))
        out.append(path)
        return out

    def _ensure_parents(self, ops: list[Op]) -> None:
        for op in ops:
            if isinstance(op, Create):
                parent = op.path.rsplit("/", 1)[0]
                if parent:
                    self._client.retry(self._client.ensure_path, parent)

    def _multi(self, ops: list[Op]) -> list[Stat | None]:
        ops = self._expand(ops)
        try:
            self._ensure_parents(ops)
            if len(ops) == 1:
                return [self._one(ops[0])]
            tx = self._client.transaction()
            for op in ops:
                if isinstance(op, Create):
                    tx.create(op.path, encode_json(op.data), ephemeral=op.ephemeral)
                elif isinstance(op, SetData):
                    tx.set_data(op.path, encode_json(op.data), op.version)
                elif isinstance(op, Delete):
                    tx.delete(op.path, op.version)
                else:
                    tx.check(op.path, op.version)
            results = self._client.retry(tx.commit)
        except KazooException as e:
            raise _map_error(e, ops[0].path if ops else "/") from None
        for op, result in zip(ops, results, strict=False):
            if isinstance(result, Exception) and not type(result).__name__ == "RolledBackError":
                raise _map_error(result, op.path)
        if any(isinstance(r, Exception) for r in results):
            raise MetadataStoreError(f"transaction rolled back: {results}")
        stats: list[Stat | None] = []
        for op, result in zip(ops, results, strict=True):
            if isinstance(op, Create):
                zstat = self._client.exists(op.path)
                stats.append(Stat(zstat.version, zstat.czxid) if zstat else Stat(0, 0))
            elif isinstance(op, SetData):
                stats.append(Stat(result.version, result.czxid))
            else:
                stats.append(None)
        return stats

    def _one(self, op: Op) -> Stat | None:
        client = self._client
        if isinstance(op, Create):
            _, zstat = client.retry(client.create, op.path, encode_json(op.data), ephemeral=op.ephemeral,
                                    makepath=True, include_data=True)
            return Stat(zstat.version, zstat.czxid)
        if isinstance(op, SetData):
            zstat = client.retry(client.set, op.path, encode_json(op.data), op.version)
            return Stat(zstat.version, zstat.czxid)
        if isinstance(op, Delete):
            try:
                client.retry(client.delete, op.path, op.version, recursive=op.recursive)
            except NotEmptyError:
                raise BadVersionError(f"{op.path}: not empty") from None
            return None
        zstat = client.retry(client.exists, op.path)
        if zstat is None:
            raise NoNodeError(op.path)
        if op.version != -1 and zstat.version != op.version:
            raise BadVersionError(op.path)
        return None

    def _each(self, ops: list[Op]) -> list[Stat | None | MetadataStoreError]:
        results: list[Stat | None | MetadataStoreError] = []
        for op in ops:
            try:
                results.append(self._multi([op]))
            except MetadataStoreError as e:
                results.append(e)
        return [r[0] if isinstance(r, list) else r for r in results]

    def _watch_children(self, path: str, callback: Callable[[], None]) -> None:
        self._client.retry(self._client.ensure_path, path)

        def on_children(_children: list[str]) -> None:
            callback()

        ChildrenWatch(self._client, path, on_children)

    def watch_path_node(self, path: str, callback: Callable[[], None]) -> None:
        """Call callback whenever the node at path is created, changed or deleted (and once now)."""

        def on_data(_data: Any, _stat: Any) -> None:
            callback()

        DataWatch(self._client, path, on_data)

    # -- Kafka-specific writes ----------------------------------------------------------------------------

    def register_broker(self, broker: Broker, timestamp_ms: int) -> int:
        """Kafka's KafkaZkClient.registerBroker: the ephemeral node must not exist unless this session owns it."""
        path = zk_data.broker_path(broker.id)
        data = encode_json(zk_data.encode_broker(broker, timestamp_ms))
        client = self._client
        client.retry(client.ensure_path, zk_data.BROKER_IDS_PATH)
        try:
            _, zstat = client.create(path, data, ephemeral=True, include_data=True)
        except KzNodeExists:
            existing = client.exists(path)
            if existing is None or existing.ephemeralOwner != self.session_id:
                owner = existing.ephemeralOwner if existing is not None else 0
                raise BrokerIdAlreadyRegisteredError(
                    f"Error while creating ephemeral at {path}, node already exists and owner '{owner}' does "
                    f"not match current session '{self.session_id}' (is broker.id {broker.id} already "
                    f"registered by another broker?)") from None
            zstat = client.set(path, data)
        except KazooException as e:
            raise _map_error(e, path) from None
        with self._lock:
            self._registered = (broker, timestamp_ms)
        return int(zstat.czxid)

    def unregister_broker(self, broker_id: int) -> None:
        with self._lock:
            self._registered = None
        super().unregister_broker(broker_id)

    def _notify_config_change(self, entity_path: str) -> None:
        # Kafka 2.x: every broker's ZkConfigManager watches /config/changes for these sequential nodes.
        self._client.retry(self._client.ensure_path, zk_data.CONFIG_CHANGES_PATH)
        self._client.create(zk_data.CONFIG_CHANGE_PREFIX, encode_json(zk_data.encode_config_change(entity_path)),
                            sequence=True)

    def _notify_acl_change(self, prefixed: bool, resource_type: str, name: str) -> None:
        # Kafka's ZkAclChangeStore: literal changes carry "Type:name" as plain text, prefixed ones a JSON record.
        if prefixed:
            parent = zk_data.ACL_EXTENDED_CHANGES_PATH
            data = encode_json({"version": 1, "resourceType": resource_type, "name": name, "patternType": "PREFIXED"})
        else:
            parent, data = zk_data.ACL_LITERAL_CHANGES_PATH, f"{resource_type}:{name}".encode()
        self._client.retry(self._client.ensure_path, parent)
        self._client.create(f"{parent}/{zk_data.ACL_CHANGE_NODE}", data, sequence=True)

    def create_sequential(self, prefix: str, data: Any) -> str:
        parent = prefix.rsplit("/", 1)[0]
        self._client.retry(self._client.ensure_path, parent)
        return str(self._client.create(prefix, encode_json(data), sequence=True))

