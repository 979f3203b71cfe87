"""zookeeper-shell's command interpreter: zkCli's commands (ls, get, set, create, delete, deleteall/rmr,
stat, getAcl, addauth, help, quit) over kafkapy.tools.zk_shell_client, printed as ZooKeeper 3.x's ZooKeeperMain prints them.

Output formats (zkCli): `ls` prints the sorted children as a Java list `[a, b]`; `get` prints the data
as UTF-8 text (`null` for a znode without data); `stat` (and `-s`) prints the Stat lines
`cZxid = 0x..`, `ctime = <Java Date>`, ...; `create` prints `Created <actual path>`; `set`, `delete`,
`deleteall` print nothing; `getAcl` prints each ACL as jute's Id text and ZKUtil's
permission string (`'sasl,'kafka` then `: cdrwa`); `addauth digest user:password` adds credentials. Failures are one line such as `Node does not exist: /p` and exit code 1.
Thread-safety: one ZkShell per thread.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from kafkapy.tools.zk_shell_client import ZkShellClient, ZkShellError, ZnodeStat

# zkCli's MyCommandOptions tokenizer: bare words, or a whole "double" / 'single' quoted string.
_TOKEN = re.compile(r"""\s*([^"'\s]\S*|"[^"]*"|'[^']*')\s*""")

USAGE = {
    "ls": "ls [-s] [-w] [-R] path",
    "get": "get [-s] [-w] path",
    "set": "set [-s] [-v version] path data",
    "create": "create [-s] [-e] [-c] [-t ttl] path [data] [acl]",
    "delete": "delete [-v version] path",
    "deleteall": "deleteall path [-b batch size]",
    "rmr": "rmr path",
    "stat": "stat [-w] path",
    "getAcl": "getAcl [-s] path",
    "addauth": "addauth scheme auth",
    "quit": "quit",
}
RMR_DEPRECATED = "The command 'rmr' has been deprecated. Please use 'deleteall' instead."


def tokenize(line: str) -> list[str]:
    tokens = []
    for m in _TOKEN.finditer(line):
        tok = m.group(1)
        if len(tok) >= 2 and tok[0] == tok[-1] and tok[0] in "\"'":
            tok = tok[1:-1]
        tokens.append(tok)
    return tokens


def java_date(epoch_ms: int) -> str:
    """java.util.Date.toString() in the local time zone: `Tue Nov 24 22:40:14 UTC 2026`."""
    return time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(epoch_ms / 1000))


def stat_lines(s: ZnodeStat) -> list[str]:
    return [
        f"cZxid = {s.czxid:#x}",
        f"ctime = {java_date(s.ctime)}",
        f"mZxid = {s.mzxid:#x}",
        f"mtime = {java_date(s.mtime)}",
        f"pZxid = {s.pzxid:#x}",
        f"cversion = {s.cversion}",
        f"dataVersion = {s.version}",
        f"aclVersion = {s.aversion}",
        f"ephemeralOwner = {s.ephemeral_owner:#x}",
        f"dataLength = {s.data_length}",
        f"numChildren = {s.num_children}",
    ]


def _split_flags(args: list[str], with_value: tuple[str, ...] = ()) -> tuple[dict[str, str | bool], list[str]]:
    flags: dict[str, str | bool] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) > 1 and not rest:
            if a in with_value:
                if i + 1 >= len(args):
                    raise ZkShellError(f"Missing argument for option: {a[1:]}")
                flags[a] = args[i + 1]
                i += 2
                continue
            flags[a] = True
        else:
            rest.append(a)
        i += 1
    return flags, rest


def _version(flags: dict[str, str | bool]) -> int:
    v = flags.get("-v", "-1")
    try:
        return int(str(v))
    except ValueError:
        raise ZkShellError(f"version {v} is not a number") from None


class ZkShell:
    """Runs one tokenized command at a time; `out` and `err` receive whole lines."""

    def __init__(self, client: ZkShellClient, out: Callable[[str], None], err: Callable[[str], None]) -> None:
        self.client = client
        self.out = out
        self.err = err

    def run(self, tokens: list[str]) -> int:
        """0 when the command succeeded, 1 otherwise (the line is already printed)."""
        if not tokens:
            return 0
        cmd, args = tokens[0], tokens[1:]
        handler = getattr(self, "_cmd_" + cmd, None)
        if handler is None:
            self.help()
            return 1
        try:
            handler(args)
        except ZkShellError as e:
            self.err(str(e))
            return 1
        except _UsageError:
            self.err(USAGE[cmd])
            return 1
        return 0

    def help(self) -> None:
        self.err("ZooKeeper -server host:port -client-configuration properties-file cmd args")
        for cmd in sorted(USAGE):
            self.err("\t" + USAGE[cmd])

    @staticmethod
    def _path(rest: list[str], n: int = 1) -> list[str]:
        if len(rest) < n:
            raise _UsageError()
        path = rest[0]
        if not path.startswith("/"):
            raise ZkShellError("Path must start with / character")
        return rest

    def _cmd_ls(self, args: list[str]) -> None:
        flags, rest = _split_flags(args)
        path = self._path(rest)[0]
        if "-R" in flags:
            self._ls_recursive(path)
            return
        children = sorted(self.client.children(path))
        self.out("[" + ", ".join(children) + "]")
        if "-s" in flags:
            for line in stat_lines(self.client.stat(path)):
                self.out(line)

    def _ls_recursive(self, path: str) -> None:
        queue = [path]
        while queue:
            node = queue.pop(0)
            self.out(node)
            for child in sorted(self.client.children(node)):
                queue.append(("" if node == "/" else node) + "/" + child)

    def _cmd_get(self, args: list[str]) -> None:
        flags, rest = _split_flags(args)
        path = self._path(rest)[0]
        data, stat = self.client.get(path)
        self.out("null" if data is None else data.decode("utf-8", errors="replace"))
        if "-s" in flags:
            for line in stat_lines(stat):
                self.out(line)

    def _cmd_stat(self, args: list[str]) -> None:
        _, rest = _split_flags(args)
        for line in stat_lines(self.client.stat(self._path(rest)[0])):
            self.out(line)

    def _cmd_getAcl(self, args: list[str]) -> None:  # noqa: N802 - zkCli's command name
        flags, rest = _split_flags(args)
        path = self._path(rest)[0]
        for acl in self.client.get_acls(path):
            self.out(f"'{acl.scheme},'{acl.id}")
            self.out(": " + "".join(c for bit, c in ((4, "c"), (8, "d"), (1, "r"), (2, "w"), (16, "a"))
                                   if acl.perms & bit))
        if "-s" in flags:
            for line in stat_lines(self.client.stat(path)):
                self.out(line)

    def _cmd_addauth(self, args: list[str]) -> None:
        if len(args) < 2:
            raise _UsageError()
        self.client.add_auth(args[0], args[1])

    def _cmd_set(self, args: list[str]) -> None:
        flags, rest = _split_flags(args, ("-v",))
        path, data = self._path(rest, 2)[:2]
        stat = self.client.set(path, data.encode("utf-8"), _version(flags))
        if "-s" in flags:
            for line in stat_lines(stat):
                self.out(line)

    def _cmd_create(self, args: list[str]) -> None:
        flags, rest = _split_flags(args, ("-t",))
        path = self._path(rest)[0]
        data = rest[1].encode("utf-8") if len(rest) > 1 else None
        created = self.client.create(path, data, ephemeral="-e" in flags, sequential="-s" in flags)
        self.out(f"Created {created}")

    def _cmd_delete(self, args: list[str]) -> None:
        flags, rest = _split_flags(args, ("-v",))
        self.client.delete(self._path(rest)[0], _version(flags))

    def _cmd_deleteall(self, args: list[str]) -> None:
        _, rest = _split_flags(args, ("-b",))
        path = self._path(rest)[0]
        if path == "/":
            raise ZkShellError("Cannot delete the root node")
        self.client.delete(path, recursive=True)

    def _cmd_rmr(self, args: list[str]) -> None:
        self.err(RMR_DEPRECATED)
        self._cmd_deleteall(args)


class _UsageError(Exception):
    pass
