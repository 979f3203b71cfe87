"""zookeeper-server-start/stop's logic: find Debian's installed ZooKeeper and java, turn a Kafka-style
zookeeper.properties into ZooKeeper's zoo.cfg plus JVM flags, build the QuorumPeerMain command line,
and find/stop the servers kafkapy started (by PID file, checked against /proc/<pid>/cmdline).

Conversion (Kafka's config/zookeeper.properties keys are ZooKeeper's own): dataDir/dataLogDir made
absolute (the daemon does not run in the caller's directory); `admin.*` become JVM system properties
`-Dzookeeper.admin.*` (ZooKeeper reads the AdminServer switches from there); every other key is
copied verbatim. Log output goes to the console appender of Debian's log4j.properties (its
ROLLINGFILE appender writes to /var/log/zookeeper, which a user cannot write).
PID files: <run dir>/zookeeper-<clientPort>.pid holding the java process id.
Thread-safety: stateless functions.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from kafkapy.tools import ToolFailure

DEBIAN_JAR = "/usr/share/java/zookeeper.jar"
DEBIAN_CONF_DIR = "/etc/zookeeper/conf"
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
DEFAULT_CLIENT_PORT = "2181"
PID_PREFIX = "zookeeper-"
PID_SUFFIX = ".pid"
NOT_INSTALLED = ("ZooKeeper is not installed (no {jar}): install Debian's package `zookeeper` "
                 "(apt-get install zookeeper)")


class ZooKeeperNotInstalledError(ToolFailure):
    pass


@dataclass(frozen=True)
class Installation:
    java: str
    jar: str
    conf_dir: str | None


def find_installation() -> Installation:
    """$KAFKAPY_ZOOKEEPER_JAR (else Debian's jar) and java from $JAVA_HOME or PATH."""
    jar = os.environ.get("KAFKAPY_ZOOKEEPER_JAR") or DEBIAN_JAR
    if not os.path.isfile(jar):
        raise ZooKeeperNotInstalledError(NOT_INSTALLED.format(jar=jar))
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        raise ZooKeeperNotInstalledError("java is not installed (ZooKeeper needs it): install Debian's package "
                                         "`default-jre-headless`")
    conf_dir = DEBIAN_CONF_DIR if os.path.isdir(DEBIAN_CONF_DIR) else None
    return Installation(java, jar, conf_dir)


def convert(props: dict[str, str], base_dir: str) -> tuple[dict[str, str], dict[str, str]]:
    """Kafka-style properties -> (zoo.cfg entries, JVM system properties)."""
    cfg: dict[str, str] = {}
    jvm: dict[str, str] = {}
    for key, value in props.items():
        if key.startswith("admin."):
            jvm["zookeeper." + key] = value
        elif key in ("dataDir", "dataLogDir"):
            cfg[key] = os.path.normpath(os.path.join(base_dir, value))
        else:
            cfg[key] = value
    if "dataDir" not in cfg:
        raise ToolFailure("dataDir is not set in the ZooKeeper config")
    cfg.setdefault("clientPort", DEFAULT_CLIENT_PORT)
    return cfg, jvm


def render_cfg(cfg: dict[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in cfg.items())


def java_argv(inst: Installation, cfg_path: str, jvm: dict[str, str], heap: str = "-Xmx512M -Xms512M") -> list[str]:
    classpath = f"{inst.conf_dir}:{inst.jar}" if inst.conf_dir else inst.jar
    return [inst.java, *heap.split(), "-Dzookeeper.root.logger=INFO,CONSOLE", "-Dzookeeper.log.dir=.",
            *(f"-D{k}={v}" for k, v in sorted(jvm.items())), "-cp", classpath, MAIN_CLASS, cfg_path]


def pid_file(run_dir: str, client_port: str) -> str:
    return os.path.join(run_dir, f"{PID_PREFIX}{client_port}{PID_SUFFIX}")


def is_zookeeper(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return MAIN_CLASS.encode() in f.read().split(b"\0")
    except OSError:
        return False


def running(run_dir: str) -> dict[int, str]:
    """pid -> PID file of the live ZooKeeper servers kafkapy started; stale files are removed."""
    out: dict[int, str] = {}
    try:
        names = os.listdir(run_dir)
    except OSError:
        return out
    for name in sorted(names):
        if not (name.startswith(PID_PREFIX) and name.endswith(PID_SUFFIX)):
            continue
        path = os.path.join(run_dir, name)
        try:
            with open(path) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if is_zookeeper(pid):
            out[pid] = path
        else:
            try:
                os.unlink(path)
            except OSError:
                pass
    return out
