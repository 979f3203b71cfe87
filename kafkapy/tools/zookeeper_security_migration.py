"""zookeeper-security-migration (Kafka's ZkSecurityMigrator): set Kafka's ACLs on an existing ZooKeeper tree
(`--zookeeper.acl secure`) or open it again (`unsecure`).

What it touches, in Kafka's order: the root of the connect string's chroot ("/" there), then every one of
Kafka's secure root paths (zk_data.SECURE_ROOT_PATHS: /admin, /brokers, /cluster, /config, /controller
(only when present), /controller_epoch, /isr_change_notification, /latest_producer_id_block,
/log_dir_event_notification, /delegation_token, /kafka-acl-extended, /migration, /feature and the ACL stores'
paths), each created when missing, and everything below them. Each node gets
zk_data.default_acls(secure, path): secure = the authenticated session's ALL + world READ (creator-only under
/config/users, /config/brokers, /delegation_token/tokens); unsecure = world ALL. A node deleted meanwhile
is skipped, as Kafka's tool does.
Preconditions, as Kafka's: a JAAS file named by -Djava.security.auth.login.config ($KAFKA_OPTS) whose
`Client` section authenticates; otherwise one ERROR line and exit 1.
Thread-safety: one run per call.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kafkapy.tools import ToolFailure
from kafkapy.tools.zk_shell_client import ZkShellClient, ZkShellError, tool_auth
from kafkapy.zk import zk_data
from kafkapy.zk.kafka_zk_client import KafkaZkClient, ZkError, ZkNoNodeError
from kafkapy.zk.zk_client_config import (
    JAVA_LOGIN_CONFIG_PARAM,
    ZkSecurityConfigError,
    system_properties,
    zk_client_auth,
)

log = logging.getLogger("kafka.admin.ZkSecurityMigrator")
MAX_NODES = 1_000_000  # a bound on the walk; Kafka clusters hold far fewer znodes


class MigrationError(ToolFailure):
    """The tool cannot run; str() is Kafka's line (already prefixed with `ERROR: ` where Kafka prints it)."""

    def __init__(self, message: str, stdout: bool = False) -> None:
        super().__init__(message)
        self.stdout = stdout  # Kafka prints the "Security isn't enabled" line on stdout, the other on stderr


@dataclass
class MigrationResult:
    acl: str  # "secure" or "unsecure"
    missing_root_paths: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # every node whose ACL was set, in walk order
    aborted: bool = False  # --enable.path.check found a missing root

    def warning_lines(self) -> list[str]:
        if not self.missing_root_paths:
            return []
        lines = ["Warning: The following secure root paths do not exist in ZooKeeper: "
                 + ",".join(self.missing_root_paths),
                 "That might be due to an incorrect chroot is specified when executing the command."]
        if self.aborted:
            lines.append("Exit the command.")
        return lines


def check_security() -> None:
    """Kafka's preconditions: a JAAS file is named and its ZooKeeper login section is found."""
    props = system_properties()
    jaas_file = props.get(JAVA_LOGIN_CONFIG_PARAM)
    if not jaas_file:
        raise MigrationError(
            "ERROR: No JAAS configuration file has been specified and no TLS client certificate has been specified. "
            f"Please make sure that you set the system property {JAVA_LOGIN_CONFIG_PARAM} or provide a ZooKeeper "
            "client TLS configuration via --zk-tls-config-file <filename> identifying at least "
            "zookeeper.ssl.client.enable, zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location")
    try:
        auth = zk_client_auth(props)
    except ZkSecurityConfigError as e:
        raise MigrationError(f"ERROR: {e}") from None
    if auth.sasl_mechanism is None:
        raise MigrationError(f"ERROR: Security isn't enabled, most likely the file isn't set properly: {jaas_file}",
                             stdout=True)


def migrate(connect: str, secure: bool, session_timeout_ms: int = 30000, connection_timeout_ms: int = 30000,
            enable_path_check: bool = False) -> MigrationResult:
    check_security()
    result = MigrationResult("secure" if secure else "unsecure")
    client = ZkShellClient(connect, timeout_s=connection_timeout_ms / 1000, session_timeout_s=session_timeout_ms / 1000,
                           auth=tool_auth(), secure_acls=secure)
    try:
        zk = client.zk
        _set_acl(zk, "/", secure, result)
        result.missing_root_paths = [p for p in zk_data.SECURE_ROOT_PATHS if zk.exists(p) is None]
        if result.missing_root_paths and enable_path_check:
            result.aborted = True
            return result
        for root in zk_data.SECURE_ROOT_PATHS:
            if root == zk_data.CONTROLLER_PATH and zk.exists(root) is None:
                continue  # an ephemeral node: never created by this tool
            zk.ensure_path(root)
            _set_acls_recursively(zk, root, secure, result)
    except ZkError as e:
        raise ZkShellError(str(e)) from None
    finally:
        client.close()
    return result


def _set_acl(zk: KafkaZkClient, path: str, secure: bool, result: MigrationResult) -> bool:
    log.info("Setting ACL for path %s", path)
    try:
        zk.set_acls(path, zk_data.default_acls(secure, path))
    except ZkNoNodeError:
        log.warning("Znode is gone, it could be have been legitimately deleted: %s", path)
        return False
    result.paths.append(path)
    return True


def _set_acls_recursively(zk: KafkaZkClient, root: str, secure: bool, result: MigrationResult) -> None:
    pending = [root]
    while pending and len(result.paths) < MAX_NODES:
        path = pending.pop()
        if not _set_acl(zk, path, secure, result):
            continue
        try:
            children = sorted(zk.children(path), reverse=True)
        except ZkNoNodeError:
            log.warning("Node is gone, it could be have been legitimately deleted: %s", path)
            continue
        pending.extend(f"{path}/{child}" for child in children)
