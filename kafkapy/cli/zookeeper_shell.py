"""`kafkapy zookeeper-shell host:port[/chroot] [cmd args...]` (Kafka's zookeeper-shell.sh, ZooKeeperMain).

With a command after the connect string it runs that one command and exits (1 if it failed); without
one it reads commands from stdin, printing zkCli's prompt `[zk: host:port(CONNECTED) N] ` before each.
Like Kafka's script it first prints `Connecting to host:port` and, once connected, the watcher's
`WatchedEvent state:SyncConnected type:None path:null` lines (scripts commonly keep the last line).
`--output json` (anywhere on the line; it never reaches zkCli): no banner or prompt, one object per command
`{"command": [...], "exitCode": 0, "output": [zkCli's lines], "errors": [...]}`.
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
    if out.json:
        return _execute_json(args, out)
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


def _execute_json(args: argparse.Namespace, out: Any) -> int:
    """--output json: no banner or prompt; one object per command: {"command", "exitCode", "output", "errors"}
    (the command's zkCli lines); the one-command form prints that single document."""
    from kafkapy.tools.zk_shell_client import ZkShellClient, ZkShellError
    from kafkapy.tools.zookeeper_shell import ZkShell, tokenize

    try:
        client = ZkShellClient(args.connect, secure_acls=False)
    except ZkShellError as e:
        raise ToolError(str(e), prefixed=False) from e

    def run_one(tokens: list[str]) -> int:
        lines: list[str] = []
        errors: list[str] = []
        rc = ZkShell(client, lines.append, errors.append).run(tokens)
        out.emit({"command": tokens, "exitCode": rc, "output": lines, "errors": errors})
        out.flush()
        return rc

    with client:
        if args.command:
            return run_one(list(args.command))
        for line in sys.stdin:
            tokens = tokenize(line)
            if tokens and tokens[0] in ("quit", "exit"):
                break
            if tokens:
                run_one(tokens)
        return 0


def split_output_flag(argv: list[str]) -> list[str]:
    """Take `--output text|json` out of the zkCli command (it is kafkapy's flag, never zkCli's) and put it first."""
    rest: list[str] = []
    flags: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--output" and i + 1 < len(argv) and argv[i + 1] in ("text", "json"):
            flags, i = ["--output", argv[i + 1]], i + 2
            continue
        if arg in ("--output=text", "--output=json"):
            flags = [arg]
        else:
            rest.append(arg)
        i += 1
    return flags + rest


def main(argv: list[str]) -> int:
    return run(build_parser(), split_output_flag(argv), execute)
