"""`kafkapy zookeeper-shell host:port[/chroot] [cmd args...]` (Kafka's zookeeper-shell.sh, ZooKeeperMain).

With a command after the connect string it runs that one command and exits (1 if it failed); without
one it reads commands from stdin, printing zkCli's prompt `[zk: host:port(CONNECTED) N] ` before each.
Like Kafka's script it first prints `Connecting to host:port` and, once connected, the watcher's
`WatchedEvent state:SyncConnected type:None path:null` lines (scripts commonly keep the last line).
Logic and output formats: kafkapy/tools/zookeeper_shell.py. Thread-safety: main thread, one run.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run

DESCRIPTION = "ZooKeeper shell: ls, get, set, create [-e] [-s], delete, deleteall/rmr, stat, quit."
USAGE_LINE = "USAGE: zookeeper-shell zookeeper_host:port[/path] [args...]"


def build_parser() -> ToolParser:
    p = ToolParser("zookeeper-shell", DESCRIPTION)
    p.add_argument("connect", nargs="?", metavar="zookeeper_host:port[/path]",
                   help="The ZooKeeper connection string, with an optional chroot path.")
    p.add_argument("-zk-tls-config-file", dest="zk_tls_config_file", metavar="<file>",
                   help="ZooKeeper TLS configuration (not supported by kafkapy).")
    p.add_argument("command", nargs=argparse.REMAINDER, help="A zkCli command and its arguments; "
                   "without one the shell reads commands from stdin.")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.tools.zk_shell_client import ZkShellClient, ZkShellError
    from kafkapy.tools.zookeeper_shell import ZkShell, tokenize

    if not args.connect:
        raise UsageError(USAGE_LINE)
    if args.zk_tls_config_file is not None:
        raise ToolError("-zk-tls-config-file is not supported by kafkapy's zookeeper-shell")
    out.line(f"Connecting to {args.connect}")
    out.flush()
    try:
        client = ZkShellClient(args.connect, secure_acls=False)  # zkCli's create defaults to world:anyone ALL
    except ZkShellError as e:
        raise ToolError(str(e), prefixed=False) from e
    with client:
        interactive = not args.command
        if interactive:
            out.line("Welcome to ZooKeeper!")
        out.line("")
        out.line("WATCHER::")
        out.line("")
        out.line("WatchedEvent state:SyncConnected type:None path:null")
        shell = ZkShell(client, out.line, out.error_line)
        if not interactive:
            return shell.run(list(args.command))
        number = 0
        while True:
            out.write(f"[zk: {args.connect}({client.state}) {number}] ")
            out.flush()
            line = sys.stdin.readline()
            if not line:
                out.line("")
                return 0
            tokens = tokenize(line)
            if tokens and tokens[0] in ("quit", "exit"):
                return 0
            if tokens:
                shell.run(tokens)
                number += 1
            out.flush()


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
