"""`kafkapy zookeeper-security-migration --zookeeper.acl secure|unsecure --zookeeper.connect host:port[/chroot]`
(Kafka's zookeeper-security-migration.sh, kafka.admin.ZkSecurityMigrator).

Flags as Kafka's: --zookeeper.acl (required), --zookeeper.connect (default localhost:2181),
--zookeeper.session.timeout / --zookeeper.connection.timeout (ms, default 30000), --enable.path.check,
--zk-tls-config-file (refused: kafkapy has no ZooKeeper TLS). The login comes from the JAAS file named by
-Djava.security.auth.login.config in $KAFKA_OPTS. Text output is Kafka's: nothing on success; the
"Warning: The following secure root paths do not exist ..." lines when roots are missing (and
"Exit the command." with exit 1 under --enable.path.check). --output json: {"acl", "missingRootPaths",
"paths" (every node whose ACL was set), "aborted"}. Logic: kafkapy/tools/zookeeper_security_migration.py.
Thread-safety: main thread, one run.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run

USAGE = ("ZooKeeper Migration Tool Help. This tool updates the ACLs of znodes as part of the process of setting up "
         "ZooKeeper authentication.")


def build_parser() -> ToolParser:
    p = ToolParser("zookeeper-security-migration", USAGE)
    p.add_argument("--zookeeper.acl", dest="zookeeper_acl", metavar="<String>",
                   help="Indicates whether to make the Kafka znodes in ZooKeeper secure or unsecure. The options are "
                   "'secure' and 'unsecure'")
    p.add_argument("--zookeeper.connect", dest="zookeeper_connect", default="localhost:2181", metavar="<String>",
                   help="Sets the ZooKeeper connect string (ensemble). This parameter takes a comma-separated list of "
                   "host:port pairs. (default: localhost:2181)")
    p.add_argument("--zookeeper.session.timeout", dest="session_timeout", type=int, default=30000,
                   metavar="<Integer>", help="Sets the ZooKeeper session timeout. (default: 30000)")
    p.add_argument("--zookeeper.connection.timeout", dest="connection_timeout", type=int, default=30000,
                   metavar="<Integer>", help="Sets the ZooKeeper connection timeout. (default: 30000)")
    p.add_argument("--enable.path.check", dest="enable_path_check", action="store_true",
                   help="Checks if all the root paths exist in ZooKeeper before migration. If not, exit the command.")
    p.add_argument("--zk-tls-config-file", dest="zk_tls_config_file", metavar="<ZooKeeper TLS configuration>",
                   help="Identifies the file where ZooKeeper client TLS connectivity properties are defined "
                   "(not supported by kafkapy).")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.tools import zookeeper_security_migration as m

    if args.zk_tls_config_file is not None:
        raise ToolError("--zk-tls-config-file is not supported by kafkapy (no ZooKeeper TLS); use SASL through "
                        "-Djava.security.auth.login.config")
    try:
        m.check_security()  # Kafka checks the login before the --zookeeper.acl value
        if args.zookeeper_acl not in ("secure", "unsecure"):
            raise UsageError(USAGE)
        result = m.migrate(args.zookeeper_connect, args.zookeeper_acl == "secure", args.session_timeout,
                           args.connection_timeout, args.enable_path_check)
    except m.MigrationError as e:
        if e.stdout and not out.json:
            out.line(str(e))
        else:
            out.error_line(str(e))
        return 1
    if out.json:
        out.document({"acl": result.acl, "missingRootPaths": result.missing_root_paths, "paths": result.paths,
                      "aborted": result.aborted})
    else:
        out.lines(result.warning_lines())
    return 1 if result.aborted else 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
