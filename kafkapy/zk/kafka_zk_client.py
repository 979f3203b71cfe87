"""KafkaZkClient: the one connection to ZooKeeper that the controller's store, the broker and the ZooKeeper-era
tools (zookeeper-shell, `--zookeeper` flags, zookeeper-security-migration) share; the only module of kafkapy
that imports kazoo.

It owns:
- the session: `connect` is `h1:2181,h2:2181[/chroot]`; the chroot is created on first use (with Kafka's
  ACLs when secure); start-up waits at most connection_timeout_ms and fails with Kafka's one line;
- authentication: SASL (DIGEST-MD5 through pure-sasl, from the JAAS `Client` section, see zk_client_config)
  and ZooKeeper digest auth (`addauth digest user:password`) are sent when the session opens;
- ACLs: every node it creates, parents included, gets zk_data.default_acls(secure_acls, path), as Kafka's
  KafkaZkClient does (creator ALL + world READ when secure; the sensitive roots creator-only);
- the raw operations (get, children, exists, create, set, delete, multi, ACLs, watches) with kazoo's
  exceptions turned into this module's ZkError classes, so no caller sees kazoo.
Bytes are passed through unchanged (zk_data encodes Kafka's JSON). Watch callbacks and state listeners run on
kazoo's event thread and must only enqueue.
Thread-safety: kazoo's client is thread-safe; this wrapper keeps no mutable state besides the client.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import (
    AuthFailedError,
    BadVersionError,
    KazooException,
    NoAuthError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch
from kazoo.retry import KazooRetry
from kazoo.security import ACL, Id

from kafkapy.zk.zk_client_config import ZkClientAuth
from kafkapy.zk.zk_data import ZkAcl, default_acls

log = logging.getLogger("kafka.zookeeper.ZooKeeperClient")
# kazoo logs retried connection drops as warnings; without a handler Python prints them on stderr, which would
# add "Connection dropped: ..." to a tool's output (zkCli's own reconnects are silent too).
logging.getLogger("kazoo").addHandler(logging.NullHandler())


class ZkError(Exception):
    """A ZooKeeper operation failed (KeeperException)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class ZkNoNodeError(ZkError):
    pass


class ZkNodeExistsError(ZkError):
    pass


class ZkBadVersionError(ZkError):
    pass


class ZkNotEmptyError(ZkError):
    pass


class ZkNoChildrenForEphemeralsError(ZkError):
    pass


class ZkNoAuthError(ZkError):
    """KeeperErrorCode = NoAuth: the node's ACL does not grant this session the operation."""


class ZkAuthFailedError(ZkError):
    """KeeperErrorCode = AuthFailed: the server refused this session's credentials."""


class ZkSessionExpiredError(ZkError):
    pass


class ZkConnectionTimeoutError(ZkError):
    """Kafka's ZooKeeperClientTimeoutException."""


_ERRORS: tuple[tuple[type[Exception], type[ZkError], str], ...] = (
    (NoNodeError, ZkNoNodeError, "NoNode"),
    (NodeExistsError, ZkNodeExistsError, "NodeExists"),
    (BadVersionError, ZkBadVersionError, "BadVersion"),
    (NotEmptyError, ZkNotEmptyError, "Directory not empty"),
    (NoChildrenForEphemeralsError, ZkNoChildrenForEphemeralsError, "NoChildrenForEphemerals"),
    (NoAuthError, ZkNoAuthError, "NoAuth"),
    (AuthFailedError, ZkAuthFailedError, "AuthFailed"),
    (SessionExpiredError, ZkSessionExpiredError, "Session expired"),
)


def _error(e: Exception, path: str) -> ZkError:
    """ZooKeeper's KeeperException text: `KeeperErrorCode = NoNode for /p`."""
    for kazoo_type, ours, code in _ERRORS:
        if isinstance(e, kazoo_type):
            return ours(f"KeeperErrorCode = {code} for {path}", path)
    return ZkError(f"{path}: {type(e).__name__}: {e}", path)


@dataclass(frozen=True, slots=True)
class ZkStat:
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


def _stat(s: Any) -> ZkStat:
    return ZkStat(s.czxid, s.mzxid, s.ctime, s.mtime, s.version, s.cversion, s.aversion,
                  s.ephemeralOwner, s.dataLength, s.numChildren, s.pzxid)


# -- multi-op transactions ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ZkCreate:
    path: str
    data: bytes
    ephemeral: bool = False


@dataclass(frozen=True, slots=True)
class ZkSetData:
    path: str
    data: bytes
    version: int = -1


@dataclass(frozen=True, slots=True)
class ZkDelete:
    path: str
    version: int = -1


@dataclass(frozen=True, slots=True)
class ZkCheck:
    path: str
    version: int


ZkOp = ZkCreate | ZkSetData | ZkDelete | ZkCheck


def _kazoo_acls(acls: Sequence[ZkAcl]) -> list[ACL]:
    return [ACL(a.perms, Id(a.scheme, a.id)) for a in acls]


class KafkaZkClient:
    """Connected on construction; close() ends the session (its ephemeral nodes go with it).

    secure_acls: Kafka's zookeeper.set.acl (the ACLs of every created node). retry: retry each operation
    through connection losses until session_timeout_ms (the broker's store); tools fail at once instead.
    """

    def __init__(self, connect: str, *, session_timeout_ms: int = 30000, connection_timeout_ms: int | None = None,
                 secure_acls: bool = False, auth: ZkClientAuth | None = None, retry: bool = False,
                 create_chroot: bool = True) -> None:
        self.connect = connect
        hosts, slash, chroot = connect.partition("/")
        self.chroot = f"/{chroot}".rstrip("/") if slash else ""
        self.secure_acls = secure_acls
        self.auth = auth or ZkClientAuth()
        self.session_timeout_ms = session_timeout_ms
        self.connection_timeout_ms = connection_timeout_ms or session_timeout_ms
        self._hosts = hosts
        self._retry = retry
        if create_chroot and self.chroot:
            self._ensure_chroot()
        self._zk = self._open(hosts + self.chroot)

    # -- connection -----------------------------------------------------------------------------------------

    def _open(self, hosts: str) -> KazooClient:
        kwargs: dict[str, Any] = {}
        if self.auth.sasl_mechanism is not None:
            kwargs["sasl_options"] = {"mechanism": self.auth.sasl_mechanism, "username": self.auth.sasl_username,
                                      "password": self.auth.sasl_password}
        if self.auth.digest:
            kwargs["auth_data"] = [("digest", credential) for credential in self.auth.digest]
        if self._retry:
            kwargs["command_retry"] = KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0,
                                                 deadline=self.session_timeout_ms / 1000.0, ignore_expire=False)
            kwargs["connection_retry"] = KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0)
        client = KazooClient(hosts=hosts, timeout=self.session_timeout_ms / 1000.0, **kwargs)
        try:
            client.start(timeout=self.connection_timeout_ms / 1000.0)
        except KazooTimeoutError:
            client.stop()
            client.close()
            raise ZkConnectionTimeoutError(
                f"Timed out waiting for connection to ZooKeeper {self.connect} after "
                f"{self.connection_timeout_ms} ms (zookeeper.connection.timeout.ms) while in state: CONNECTING"
            ) from None
        except (AuthFailedError, KazooException) as e:
            client.stop()
            client.close()
            raise ZkAuthFailedError(f"ZooKeeper authentication failed at {self.connect}: {e or type(e).__name__}"
                                    ) from None
        return client

    def _ensure_chroot(self) -> None:
        root = KafkaZkClient(self._hosts, session_timeout_ms=self.session_timeout_ms,
                             connection_timeout_ms=self.connection_timeout_ms, secure_acls=self.secure_acls,
                             auth=self.auth, create_chroot=False)
        try:
            if root.exists(self.chroot) is None:
                log.info("Creating chroot path %s", self.chroot)
                root.ensure_path(self.chroot)
        finally:
            root.close()

    def add_auth(self, scheme: str, credential: str) -> None:
        """Add credentials to the open session (zkCli's `addauth digest user:password`)."""
        self._call(self._zk.add_auth, "/", scheme, credential)

    def add_state_listener(self, listener: Callable[[str], None]) -> None:
        """listener(state) with state "CONNECTED", "SUSPENDED" or "LOST" (session expired), on kazoo's thread."""
        self._zk.add_listener(lambda state: listener(str(state)))

    @property
    def session_id(self) -> int:
        client_id = self._zk.client_id
        return int(client_id[0]) if client_id else 0

    @property
    def connected(self) -> bool:
        return bool(self._zk.connected)

    def close(self) -> None:
        try:
            self._zk.stop()
            self._zk.close()
        except KazooException:
            pass

    def __enter__(self) -> KafkaZkClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Kafka's ZooKeeperClientMetrics ZooKeeperRequestLatencyMs: called with each request's ms when set (the broker).
    latency_recorder: Callable[[float], None] | None = None

    def _call(self, fn: Callable[..., Any], path: str, *args: Any, **kwargs: Any) -> Any:
        start = time.monotonic_ns()
        try:
            if self._retry:
                return self._zk.retry(fn, *args, **kwargs)
            return fn(*args, **kwargs)
        except KazooException as e:
            raise _error(e, path) from None
        finally:
            if self.latency_recorder is not None:
                self.latency_recorder((time.monotonic_ns() - start) / 1e6)

    def acls_for(self, path: str) -> list[ACL]:
        return _kazoo_acls(default_acls(self.secure_acls, path))

    # -- reads ----------------------------------------------------------------------------------------------

    def get(self, path: str) -> tuple[bytes | None, ZkStat]:
        """Raises ZkNoNodeError when the node is absent; data None is a node created with null data."""
        data, stat = self._call(self._zk.get, path, path)
        return data, _stat(stat)

    def get_or_none(self, path: str) -> tuple[bytes | None, ZkStat] | None:
        try:
            return self.get(path)
        except ZkNoNodeError:
            return None

    def exists(self, path: str) -> ZkStat | None:
        stat = self._call(self._zk.exists, path, path)
        return None if stat is None else _stat(stat)

    def children(self, path: str) -> list[str]:
        """Raises ZkNoNodeError when the node is absent."""
        return list(self._call(self._zk.get_children, path, path))

    def get_acls(self, path: str) -> tuple[list[ZkAcl], ZkStat]:
        acls, stat = self._call(self._zk.get_acls, path, path)
        return [ZkAcl(int(a.perms), str(a.id.scheme), str(a.id.id)) for a in acls], _stat(stat)

    # -- writes ---------------------------------------------------------------------------------------------

    def ensure_path(self, path: str) -> None:
        """Create path and its missing parents, each with its own default ACLs (Kafka's createRecursive)."""
        if path in ("", "/") or self.exists(path) is not None:
            return
        parent = path.rsplit("/", 1)[0]
        if parent:
            self.ensure_path(parent)
        try:
            self._call(self._zk.create, path, path, b"", acl=self.acls_for(path))
        except ZkNodeExistsError:
            pass

    def create(self, path: str, data: bytes | None = b"", *, ephemeral: bool = False, sequential: bool = False,
               make_parents: bool = False) -> tuple[str, ZkStat]:
        """-> (the created path, which carries the sequence number when sequential; its Stat)."""
        if make_parents:
            self.ensure_path(path.rsplit("/", 1)[0])
        created, stat = self._call(self._zk.create, path, path, data, acl=self.acls_for(path), ephemeral=ephemeral,
                                   sequence=sequential, include_data=True)
        return str(created), _stat(stat)

    def set(self, path: str, data: bytes, version: int = -1) -> ZkStat:
        return _stat(self._call(self._zk.set, path, path, data, version))

    def delete(self, path: str, version: int = -1, recursive: bool = False) -> None:
        self._call(self._zk.delete, path, path, version, recursive=recursive)

    def set_acls(self, path: str, acls: Sequence[ZkAcl], version: int = -1) -> ZkStat:
        return _stat(self._call(self._zk.set_acls, path, path, _kazoo_acls(acls), version))

    def _transaction(self, ops: Sequence[ZkOp]) -> Any:
        tx = self._zk.transaction()
        for op in ops:
            if isinstance(op, ZkCreate):
                tx.create(op.path, op.data, acl=self.acls_for(op.path), ephemeral=op.ephemeral)
            elif isinstance(op, ZkSetData):
                tx.set_data(op.path, op.data, op.version)
            elif isinstance(op, ZkDelete):
                tx.delete(op.path, op.version)
            else:
                tx.check(op.path, op.version)
        return tx

    def multi(self, ops: Sequence[ZkOp]) -> list[Any]:
        """Apply every op or none (a ZooKeeper multi). Raises the ZkError of the first failed op; returns each
        op's result (the created path, a Stat for set, True for delete and check)."""
        if not ops:
            return []
        results = self._call(self._transaction(ops).commit, ops[0].path)
        for op, result in zip(ops, results, strict=False):
            if isinstance(result, Exception) and not isinstance(result, RolledBackError):
                raise _error(result, op.path)
        if any(isinstance(r, Exception) for r in results):
            raise ZkError(f"transaction rolled back: {results}", ops[0].path)
        return [_stat(r) if isinstance(op, ZkSetData) else r for op, r in zip(ops, results, strict=True)]

    def get_many(self, paths: Sequence[str]) -> list[tuple[bytes | None, ZkStat] | None]:
        """Each path's node (None when absent), the requests pipelined on the session as Kafka's
        KafkaZkClient.retryRequestsUntilConnected sends them: one round trip's wait for all, not one each.
        A request lost to a connection loss is redone on its own (through the retry policy)."""
        pending = [(path, self._zk.get_async(path)) for path in paths]
        out: list[tuple[bytes | None, ZkStat] | None] = []
        for path, result in pending:
            try:
                data, stat = result.get()
            except NoNodeError:
                out.append(None)
                continue
            except KazooException:
                out.append(self.get_or_none(path))
                continue
            out.append((data, _stat(stat)))
        return out

    def multi_many(self, transactions: Sequence[Sequence[ZkOp]]) -> list[list[Any] | ZkError]:
        """Many independent transactions (as `multi`), pipelined: ZooKeeper commits them in order and groups
        their log writes. Each gives its results or its ZkError; a transaction lost to a connection loss is
        redone on its own."""
        pending = []
        for ops in transactions:
            pending.append((ops, self._transaction(ops).commit_async()))
        out: list[list[Any] | ZkError] = []
        for ops, result in pending:
            try:
                results = result.get()
            except KazooException:
                try:
                    out.append(self.multi(ops))
                except ZkError as e:
                    out.append(e)
                continue
            failed = [(op, r) for op, r in zip(ops, results, strict=False)
                      if isinstance(r, Exception) and not isinstance(r, RolledBackError)]
            if failed:
                out.append(_error(failed[0][1], failed[0][0].path))
            elif any(isinstance(r, Exception) for r in results):
                out.append(ZkError(f"transaction rolled back: {results}", ops[0].path))
            else:
                out.append([_stat(r) if isinstance(op, ZkSetData) else r for op, r in zip(ops, results, strict=True)])
        return out

    # -- watches --------------------------------------------------------------------------------------------

    def watch_children(self, path: str, callback: Callable[[], None]) -> None:
        """callback() now and whenever path's children change (path is created first if absent)."""
        self.ensure_path(path)

        def on_children(_children: list[str]) -> None:
            callback()

        ChildrenWatch(self._zk, path, on_children)

    def watch_data(self, path: str, callback: Callable[[], None]) -> None:
        """callback() now and whenever the node at path is created, changed or deleted."""

        def on_data(_data: Any, _stat: Any) -> None:
            callback()

        DataWatch(self._zk, path, on_data)
