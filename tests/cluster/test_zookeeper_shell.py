"""zookeeper-shell against the cluster fixture's real ZooKeeper: one-shot commands (zkCli's output), a
chroot, errors with exit 1, and the interactive mode reading commands from stdin."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

WATCHER_LINES = ["", "WATCHER::", "", "WatchedEvent state:SyncConnected type:None path:null"]


def shell(connect: str, *command: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "zookeeper-shell", connect, *command],
                          input=stdin, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def chroot(zookeeper) -> str:
    root = f"/zkshell-{uuid.uuid4().hex[:8]}"
    assert shell(zookeeper.connect, "create", root).returncode == 0
    return zookeeper.connect + root


def output(result: subprocess.CompletedProcess[str], connect: str) -> list[str]:
    lines = result.stdout.splitlines()
    assert lines[:5] == [f"Connecting to {connect}", *WATCHER_LINES], result.stdout
    return lines[5:]


def test_one_shot_commands(chroot: str) -> None:
    r = shell(chroot, "create", "/brokers", '{"version":1}')
    assert (r.returncode, output(r, chroot)) == (0, ["Created /brokers"])
    r = shell(chroot, "create", "-s", "/brokers/seq-", "x")
    assert output(r, chroot) == ["Created /brokers/seq-0000000000"]
    assert output(shell(chroot, "get", "/brokers"), chroot) == ['{"version":1}']
    assert shell(chroot, "set", "/brokers", "v2").returncode == 0
    r = shell(chroot, "get", "-s", "/brokers")
    lines = output(r, chroot)
    assert lines[0] == "v2"
    stat = dict(line.split(" = ", 1) for line in lines[1:])
    assert list(stat) == ["cZxid", "ctime", "mZxid", "mtime", "pZxid", "cversion", "dataVersion",
                          "aclVersion", "ephemeralOwner", "dataLength", "numChildren"]
    assert (stat["dataVersion"], stat["dataLength"], stat["numChildren"], stat["ephemeralOwner"]) == \
        ("1", "2", "1", "0x0")
    assert stat["cZxid"].startswith("0x")
    assert output(shell(chroot, "create", "/brokers/a"), chroot) == ["Created /brokers/a"]
    assert output(shell(chroot, "get", "/brokers/a"), chroot) == ["null"]
    assert output(shell(chroot, "ls", "/brokers"), chroot) == ["[a, seq-0000000000]"]
    assert output(shell(chroot, "ls", "-R", "/brokers"), chroot) == \
        ["/brokers", "/brokers/a", "/brokers/seq-0000000000"]
    assert shell(chroot, "delete", "/brokers/a").returncode == 0
    stat_lines = output(shell(chroot, "stat", "/brokers"), chroot)
    assert "numChildren = 1" in stat_lines and "dataVersion = 1" in stat_lines


def test_errors_are_zkcli_lines(chroot: str) -> None:
    r = shell(chroot, "get", "/missing")
    assert (r.returncode, r.stderr.strip()) == (1, "Node does not exist: /missing")
    shell(chroot, "create", "/full")
    shell(chroot, "create", "/full/child")
    r = shell(chroot, "delete", "/full")
    assert (r.returncode, r.stderr.strip()) == (1, "Node not empty: /full")
    r = shell(chroot, "create", "/full")
    assert (r.returncode, r.stderr.strip()) == (1, "Node already exists: /full")
    r = shell(chroot, "rmr", "/full")
    assert r.returncode == 0
    assert r.stderr.strip() == "The command 'rmr' has been deprecated. Please use 'deleteall' instead."
    assert shell(chroot, "stat", "/full").returncode == 1
    r = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "zookeeper-shell"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "zookeeper_host:port" in r.stderr


def test_interactive_reads_stdin(chroot: str) -> None:
    script = 'create /i "two words"\ncreate -e /i/eph e\nget /i\nls /i\ndeleteall /i\nls /\nquit\n'
    r = shell(chroot, stdin=script)
    assert r.returncode == 0, r.stderr
    prompt = f"[zk: {chroot}(CONNECTED) "
    body = r.stdout.split("WatchedEvent state:SyncConnected type:None path:null\n", 1)[1]
    assert body.splitlines() == [
        f"{prompt}0] Created /i",
        f"{prompt}1] Created /i/eph",
        f"{prompt}2] two words",
        f"{prompt}3] [eph]",
        f"{prompt}4] {prompt}5] [brokers]",
        f"{prompt}6] ",
    ]
    # deleteall removed /i with its ephemeral child
    assert shell(chroot, "stat", "/i").returncode == 1
