"""The tools' door to ZooKeeper: a small synchronous facade over kafkapy.zk.kafka_zk_client.KafkaZkClient for
zookeeper-shell and the ZooKeeper-era tool flags (`topics --zookeeper`, `configs --zookeeper`, ...), with
zkCli's wording for errors ("Node does not exist: /p").

Authentication is Kafka's: the JAAS `Client` section named by -Djava.security.auth.login.config in
$KAFKA_OPTS (zookeeper.sasl.client / zookeeper.sasl.clientconfig honoured), plus digest credentials.
Nodes created here carry Kafka's ACLs when `secure_acls` is set (the tools' callers pass it when the
session is authenticated, as Kafka's AdminZkClient does with JaasUtils.isZkSaslEnabled).
Thread-safety: one ZkShellClient per thread (the underlying client is thread-safe; this wrapper adds no state).
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkapy.tools import ToolFailure
from kafkapy.zk.kafka_zk_client import (
    KafkaZkClient,
    ZkBadVersionError,
    ZkConnectionTimeoutError,
    ZkError,
    ZkNoAuthError,
    ZkNoChildrenForEphemeralsError,
    ZkNodeExistsError,
    ZkNoNodeError,
    ZkNotEmptyError,
    ZkStat,
)
from kafkapy.zk.zk_client_config import (
    ZkClientAuth,
    ZkSecurityConfigError,
    system_properties,
    zk_client_auth,
)
from kafkapy.zk.zk_data import ZkAcl

ZnodeStat = ZkStat


class ZkShellError(ToolFailure):
    """A ZooKeeper operation failed; str() is zkCli's one-line message."""


def _error(e: ZkError, path: str) -> ZkShellError:
    if isinstance(e, ZkNoNodeError):
        return ZkShellError(f"Node does not exist: {path}")
    if isinstance(e, ZkNodeExistsError):
        return ZkShellError(f"Node already exists: {path}")
    if isinstance(e, ZkNotEmptyError):
        return ZkShellError(f"Node not empty: {path}")
    if isinstance(e, ZkBadVersionError):
        return ZkShellError(f"version No is not valid : {path}")
    if isinstance(e, ZkNoChildrenForEphemeralsError):
        return ZkShellError(f"Ephemerals cannot have children: {path}")
    if isinstance(e, ZkNoAuthError):
        return ZkShellError(f"Insufficient permission : {path}")
    return ZkShellError(str(e))


def tool_auth(digest: Sequence[str] = ()) -> ZkClientAuth:
    """The SASL login of $KAFKA_OPTS' JAAS file, plus digest `user:password` credentials."""
    try:
        auth = zk_client_auth(system_properties())
    except ZkSecurityConfigError as e:
        raise ZkShellError(str(e)) from None
    return ZkClientAuth(auth.sasl_mechanism, auth.sasl_username, auth.sasl_password, tuple(digest))


class ZkShellClient:
    """Connected on construction; close() ends the session (its ephemeral znodes go with it)."""

    def __init__(self, connect: str, timeout_s: float = 30.0, session_timeout_s: float = 30.0, *,
                 auth: ZkClientAuth | None = None, secure_acls: bool | None = None) -> None:
        self.connect = connect
        auth = auth if auth is not None else tool_auth()
        # Kafka's tools create znodes with secure ACLs whenever their session is authenticated.
        secure = auth.authenticated if secure_acls is None else secure_acls
        try:
            self._zk = KafkaZkClient(connect, session_timeout_ms=int(session_timeout_s * 1000),
                                     connection_timeout_ms=int(timeout_s * 1000), secure_acls=secure, auth=auth,
                                     create_chroot=False)
        except ZkConnectionTimeoutError as e:
            raise ZkShellError(f"Timed out waiting for connection to ZooKeeper at {connect}") from e
        except ZkError as e:
            raise ZkShellError(str(e)) from e

    @property
    def zk(self) -> KafkaZkClient:
        return self._zk

    @property
    def state(self) -> str:
        return "CONNECTED" if self._zk.connected else "CLOSED"

    def close(self) -> None:
        self._zk.close()

    def __enter__(self) -> ZkShellClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def children(self, path: str) -> list[str]:
        try:
            return self._zk.children(path)
        except ZkError as e:
            raise _error(e, path) from e

    def get(self, path: str) -> tuple[bytes | None, ZnodeStat]:
        try:
            return self._zk.get(path)
        except ZkError as e:
            raise _error(e, path) from e

    def get_or_none(self, path: str) -> tuple[bytes | None, ZnodeStat] | None:
        try:
            return self._zk.get_or_none(path)
        except ZkError as e:
            raise _error(e, path) from e

    def exists(self, path: str) -> ZnodeStat | None:
        try:
            return self._zk.exists(path)
        except ZkError as e:
            raise _error(e, path) from e

    def stat(self, path: str) -> ZnodeStat:
        stat = self.exists(path)
        if stat is None:
            raise ZkShellError(f"Node does not exist: {path}")
        return stat

    def set(self, path: str, data: bytes, version: int = -1) -> ZnodeStat:
        try:
            return self._zk.set(path, data, version)
        except ZkError as e:
            raise _error(e, path) from e

    def create(self, path: str, data: bytes | None = None, *, ephemeral: bool = False, sequential: bool = False,
               make_parents: bool = False) -> str:
        try:
            return self._zk.create(path, data, ephemeral=ephemeral, sequential=sequential,
                                   make_parents=make_parents)[0]
        except ZkError as e:
            raise _error(e, e.path or path) from e

    def delete(self, path: str, version: int = -1, recursive: bool = False) -> None:
        try:
            self._zk.delete(path, version, recursive=recursive)
        except ZkError as e:
            raise _error(e, path) from e

    def add_auth(self, scheme: str, credential: str) -> None:
        try:
            self._zk.add_auth(scheme, credential)
        except ZkError as e:
            raise ZkShellError(str(e)) from e

    def get_acls(self, path: str) -> list[ZkAcl]:
        try:
            return self._zk.get_acls(path)[0]
        except ZkError as e:
            raise _error(e, path) from e
