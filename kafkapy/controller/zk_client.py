"""ZkMetadataStore: the MetadataStore of cluster mode, over a real ZooKeeper ensemble through
kafkapy.zk.kafka_zk_client.KafkaZkClient (which owns the connection, authentication and Kafka's ACLs).

Bytes in ZooKeeper are Kafka's: each node holds compact UTF-8 JSON (kafkapy.zk.zk_data gives the shapes),
/controller_epoch a bare integer, /admin/delete_topics/<t> no data. The broker registration /brokers/ids/<id>
and /controller are ephemeral (they end with this client's session); the broker epoch is the czxid of the
registration. Multi-op writes are ZooKeeper transactions guarded by the expected zkVersion (the partition
epoch for partition states).
`zookeeper.connect` may carry a chroot (`h1:2181,h2:2181/kafka`), created on first use as Kafka does.
Start-up waits at most `zookeeper.connection.timeout.ms` (default: the session timeout) and then fails
with one line. After a session expiry the client re-registers the broker's ephemeral node by itself and
then calls the session listeners (the controller resigns and re-runs its election); a ZooKeeper restart
within the session timeout keeps the session (ZooKeeper persists sessions) and kazoo reconnects.
Watch callbacks run on kazoo's event thread and must only enqueue (the controller's do).
Thread-safety: the ZooKeeper client is thread-safe; this class adds one lock around the registration it replays.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from kafkapy.cluster.broker import Broker
from kafkapy.controller.metadata_store import (
    BadVersionError,
    MetadataStoreError,
    NodeExistsError,
    NoNodeError,
)
from kafkapy.controller.path_store import Create, Delete, Op, PathMetadataStore, SetData, Stat, broker_json
from kafkapy.zk import zk_data
from kafkapy.zk.kafka_zk_client import (
    KafkaZkClient,
    ZkBadVersionError,
    ZkCheck,
    ZkConnectionTimeoutError,
    ZkCreate,
    ZkDelete,
    ZkError,
    ZkNodeExistsError,
    ZkNoNodeError,
    ZkNotEmptyError,
    ZkOp,
    ZkSetData,
    ZkStat,
)
from kafkapy.zk.zk_client_config import ZkClientAuth
from kafkapy.zk.zk_data import decode_json, encode_json

log = logging.getLogger("kafka.zookeeper.ZooKeeperClient")

class ZooKeeperClientTimeoutError(MetadataStoreError):
    """Kafka's ZooKeeperClientTimeoutException."""


class BrokerIdAlreadyRegisteredError(MetadataStoreError):
    pass


def _map_error(e: Exception, path: str) -> MetadataStoreError:
    if isinstance(e, ZkNodeExistsError):
        return NodeExistsError(path)
    if isinstance(e, ZkNoNodeError):
        return NoNodeError(path)
    if isinstance(e, ZkBadVersionError):
        return BadVersionError(path)
    if isinstance(e, ZkNotEmptyError):
        return BadVersionError(f"{path}: not empty")
    if isinstance(e, MetadataStoreError):
        return e
    return MetadataStoreError(str(e) or f"{path}: {type(e).__name__}")


def _short(stat: ZkStat) -> Stat:
    return Stat(stat.version, stat.czxid)


class ZkMetadataStore(PathMetadataStore):
    cluster_mode = True

    def __init__(self, connect: str, session_timeout_ms: int = 18000, connection_timeout_ms: int | None = None,
                 *, secure_acls: bool = False, auth: ZkClientAuth | None = None) -> None:
        self.connect = connect
        self.session_timeout_ms = session_timeout_ms
        self.connection_timeout_ms = connection_timeout_ms or session_timeout_ms
        self._lock = threading.Lock()
        self._registered: tuple[Broker, int] | None = None
        self._session_listeners: list[Callable[[], None]] = []
        self._lost = False
        self._closed = False
        try:
            self._client = KafkaZkClient(connect, session_timeout_ms=session_timeout_ms,
                                         connection_timeout_ms=self.connection_timeout_ms, secure_acls=secure_acls,
                                         auth=auth, retry=True)
        except ZkConnectionTimeoutError as e:
            raise ZooKeeperClientTimeoutError(str(e)) from None
        except ZkError as e:
            raise MetadataStoreError(str(e)) from None
        self.chroot = self._client.chroot
        self._client.add_state_listener(self._on_state)
        try:
            for path in zk_data.PERSISTENT_PATHS:
                self._client.ensure_path(path)
        except ZkError as e:
            self._client.close()
            raise _map_error(e, "/") from None
        log.info("Connected to ZooKeeper %s (session 0x%x)", connect, self._client.session_id)

    @property
    def zk(self) -> KafkaZkClient:
        return self._client

    # -- connection ---------------------------------------------------------------------------------------

    def _on_state(self, state: str) -> None:
        # Runs on kazoo's event thread: no ZooKeeper calls here; a new session is handled on a thread.
        if self._closed:
            return
        if state == "LOST":
            self._lost = True
            log.warning("ZooKeeper session expired")
        elif state == "SUSPENDED":
            log.info("ZooKeeper connection suspended; reconnecting")
        elif state == "CONNECTED" and self._lost:
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
        return self._client.session_id

    def close(self) -> None:
        self._closed = True
        self._client.close()

    # -- primitives -----------------------------------------------------------------------------------------

    def _get(self, path: str) -> tuple[Any, Stat] | None:
        try:
            node = self._client.get_or_none(path)
        except ZkError as e:
            raise _map_error(e, path) from None
        return None if node is None else (decode_json(node[0]), _short(node[1]))

    def _children(self, path: str) -> list[str]:
        try:
            return sorted(self._client.children(path))
        except ZkNoNodeError:
            return []
        except ZkError as e:
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

    @staticmethod
    def _zk_op(op: Op) -> ZkOp:
        if isinstance(op, Create):
            return ZkCreate(op.path, encode_json(op.data), op.ephemeral)
        if isinstance(op, SetData):
            return ZkSetData(op.path, encode_json(op.data), op.version)
        if isinstance(op, Delete):
            return ZkDelete(op.path, op.version)
        return ZkCheck(op.path, op.version)

    def _multi(self, ops: list[Op]) -> list[Stat | None]:
        ops = self._expand(ops)
        client = self._client
        try:
            for op in ops:
                if isinstance(op, Create):
                    client.ensure_path(op.path.rsplit("/", 1)[0])
            if len(ops) == 1:
                return [self._one(ops[0])]
            results = client.multi([self._zk_op(op) for op in ops])
            stats: list[Stat | None] = []
            for op, result in zip(ops, results, strict=True):
                if isinstance(op, Create):
                    zstat = client.exists(op.path)
                    stats.append(_short(zstat) if zstat else Stat(0, 0))
                elif isinstance(op, SetData):
                    stats.append(_short(result))
                else:
                    stats.append(None)
            return stats
        except ZkError as e:
            raise _map_error(e, e.path or (ops[0].path if ops else "/")) from None

    def _one(self, op: Op) -> Stat | None:
        client = self._client
        if isinstance(op, Create):
            return _short(client.create(op.path, encode_json(op.data), ephemeral=op.ephemeral)[1])
        if isinstance(op, SetData):
            return _short(client.set(op.path, encode_json(op.data), op.version))
        if isinstance(op, Delete):
            client.delete(op.path, op.version, recursive=op.recursive)
            return None
        zstat = client.exists(op.path)
        if zstat is None:
            raise NoNodeError(op.path)
        if op.version != -1 and zstat.version != op.version:
            raise BadVersionError(op.path)
        return None

    def _each(self, ops: list[Op]) -> list[Stat | None | MetadataStoreError]:
        results: list[Stat | None | MetadataStoreError] = []
        for op in ops:
            try:
                results.append(self._multi([op])[0])
            except MetadataStoreError as e:
                results.append(e)
        return results

    def _get_many(self, paths: list[str]) -> list[tuple[Any, Stat] | None]:
        try:
            nodes = self._client.get_many(paths)
        except ZkError as e:
            raise _map_error(e, e.path or (paths[0] if paths else "/")) from None
        return [None if node is None else (decode_json(node[0]), _short(node[1])) for node in nodes]

    def _multi_each(self, transactions: list[list[Op]]) -> list[list[Stat | None] | MetadataStoreError]:
        """Pipelined when no op creates a node (a Create needs its parent made and its Stat read: sequential)."""
        if len(transactions) < 2 or any(isinstance(op, Create) or (isinstance(op, Delete) and op.recursive)
                                        for ops in transactions for op in ops):
            return super()._multi_each(transactions)
        out: list[list[Stat | None] | MetadataStoreError] = []
        for ops, result in zip(transactions, self._client.multi_many([[self._zk_op(op) for op in ops]
                                                                      for ops in transactions]), strict=True):
            if isinstance(result, ZkError):
                out.append(_map_error(result, result.path or ops[0].path))
            else:
                out.append([_short(r) if isinstance(op, SetData) else None for op, r in zip(ops, result, strict=True)])
        return out

    def _watch_children(self, path: str, callback: Callable[[], None]) -> None:
        self._client.watch_children(path, callback)

    def watch_path_node(self, path: str, callback: Callable[[], None]) -> None:
        """Call callback whenever the node at path is created, changed or deleted (and once now)."""
        self._client.watch_data(path, callback)

    # -- Kafka-specific writes ----------------------------------------------------------------------------

    def register_broker(self, broker: Broker, timestamp_ms: int) -> int:
        """Kafka's KafkaZkClient.registerBroker: the ephemeral node must not exist unless this session owns it."""
        path = zk_data.broker_path(broker.id)
        data = encode_json(broker_json(broker, timestamp_ms))
        client = self._client
        try:
            client.ensure_path(zk_data.BROKER_IDS_PATH)
            try:
                zstat = client.create(path, data, ephemeral=True)[1]
            except ZkNodeExistsError:
                existing = client.exists(path)
                if existing is None or existing.ephemeral_owner != self.session_id:
                    owner = existing.ephemeral_owner if existing is not None else 0
                    raise BrokerIdAlreadyRegisteredError(
                        f"Error while creating ephemeral at {path}, node already exists and owner '{owner}' does "
                        f"not match current session '{self.session_id}' (is broker.id {broker.id} already "
                        f"registered by another broker?)") from None
                zstat = client.set(path, data)
        except ZkError as e:
            raise _map_error(e, path) from None
        with self._lock:
            self._registered = (broker, timestamp_ms)
        return int(zstat.czxid)

    def unregister_broker(self, broker_id: int) -> None:
        with self._lock:
            self._registered = None
        super().unregister_broker(broker_id)

    def _create_sequential(self, prefix: str, data: bytes) -> str:
        try:
            return self._client.create(prefix, data, sequential=True, make_parents=True)[0]
        except ZkError as e:
            raise _map_error(e, prefix) from None

    def _notify_config_change(self, entity_path: str) -> None:
        # Kafka 2.x: every broker's ZkConfigManager watches /config/changes for these sequential nodes.
        self._create_sequential(zk_data.CONFIG_CHANGE_PREFIX, encode_json(zk_data.encode_config_change(entity_path)))

    def _notify_acl_change(self, prefixed: bool, resource_type: str, name: str) -> None:
        # Kafka's ZkAclChangeStore: literal changes carry "Type:name" as plain text, prefixed ones a JSON record.
        if prefixed:
            parent = zk_data.ACL_EXTENDED_CHANGES_PATH
            data = encode_json({"version": 1, "resourceType": resource_type, "name": name, "patternType": "PREFIXED"})
        else:
            parent, data = zk_data.ACL_LITERAL_CHANGES_PATH, f"{resource_type}:{name}".encode()
        self._create_sequential(f"{parent}/{zk_data.ACL_CHANGE_NODE}", data)

    def _notify_token_change(self, token_id: str) -> None:
        # Kafka's DelegationTokenManagerZk: Java brokers sharing this ZooKeeper refresh their token cache from these.
        self._create_sequential(f"{zk_data.DELEGATION_TOKEN_AUTH_PATH}/token_changes/token_change_", token_id.encode())

    def create_sequential(self, prefix: str, data: Any) -> str:
        return self._create_sequential(prefix, encode_json(data))
