"""`kafkapy spark-submit`: run the spark-submit that ships inside the installed pyspark.

No SPARK_HOME or activated virtualenv is needed: the script is found next to the pyspark package
(`pyspark/bin/spark-submit`), and the child gets
- PYSPARK_PYTHON / PYSPARK_DRIVER_PYTHON = this interpreter (so executors import this kafkapy);
- SPARK_LOCAL_IP=127.0.0.1 unless set; SPARK_HOME = the pyspark package unless set;
- PYTHONPATH with the directory holding kafkapy first (an editable checkout becomes visible to Spark's
  Python workers, and PySpark's discovery finds the `pyspark_kafkapy` module there);
- `--master local[*]` unless a `--master` is given (any master passes through: spark://host:port, ...);
- a Python pipeline runs through spark/pipeline_runner.py, which installs kafkapy's hooks first
  (format("kafka") is kafkapy's source, Spark's Kafka save modes: spark/kafka_format.py), so a pipeline
  written for Spark's Kafka connector runs unedited; `--name` defaults to the pipeline's file name, as
  spark-submit's own default would be; spark.sql.python.filterPushdown.enabled=true unless given
  (kafkapy-log-segments pushes filters down);
- quiet logs (log4j2 root level WARN, no console progress bar) through a SPARK_CONF_DIR holding a
  log4j2.properties, unless `--verbose` is given or SPARK_CONF_DIR is already set.
Every other argument (`--conf k=v`, `--py-files`, `--driver-memory`, the pipeline and its arguments)
goes to spark-submit unchanged. Without pyspark or without Java it says so in one line (exit 1).

Thread-safety: one call per process, main thread.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkapy.spark.registration import PUSHDOWN_CONF

INSTALL_HINT = "pyspark is not installed; install kafkapy's Spark extra: pip install 'kafkapy[spark]'"
JAVA_HINT = (
    "Spark needs Java (17 or 21) on PATH or in JAVA_HOME; on Debian/Ubuntu: "
    "apt-get install openjdk-17-jre-headless"
)
DEFAULT_MASTER = "local[*]"
QUIET_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.nativeloader.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativeloader.level = error
logger.sparkconf.name = org.apache.spark.SparkConf
logger.sparkconf.level = error
"""


class SubmitError(Exception):
    """A missing prerequisite: one line for stderr."""


@dataclass(frozen=True)
class SubmitCommand:
    argv: list[str]
    env: dict[str, str]
    quiet: bool


def pyspark_home() -> Path:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise SubmitError(INSTALL_HINT)
    return Path(next(iter(spec.submodule_search_locations)))


def java_available(env: dict[str, str]) -> bool:
    java_home = env.get("JAVA_HOME")
    if java_home and os.access(os.path.join(java_home, "bin", "java"), os.X_OK):
        return True
    return shutil.which("java", path=env.get("PATH")) is not None


def kafkapy_root() -> str:
    """The directory holding the kafkapy package (site-packages, or the checkout of an editable install)."""
    import kafkapy

    return str(Path(kafkapy.__file__).resolve().parent.parent)


def _has_flag(args: Sequence[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in args)


# spark-submit options that take no value (every other `--option` takes the next argument).
_FLAGS = frozenset({"--verbose", "-v", "--supervise", "--help", "-h", "--version", "--kill", "--status"})


def _primary_index(args: Sequence[str]) -> int | None:
    """The position of spark-submit's primary resource (its first non-option argument)."""
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-"):
            return i
        i += 1 if a in _FLAGS or "=" in a else 2
    return None


def with_pipeline_runner(args: Sequence[str]) -> list[str]:
    """`args` with a .py primary resource run through kafkapy's pipeline runner."""
    out = list(args)
    i = _primary_index(out)
    if i is None or not out[i].endswith(".py"):
        return out
    runner = str(Path(__file__).resolve().parent / "pipeline_runner.py")
    pipeline = out[i]
    out[i:i + 1] = [runner, pipeline]
    if not _has_flag(out[:i], "--name") and not any("spark.app.name=" in a for a in out[:i]):
        out[i:i] = ["--name", Path(pipeline).name]
        i += 2
    if not any(a.startswith(PUSHDOWN_CONF + "=") for a in out[:i]):
        out[i:i] = ["--conf", f"{PUSHDOWN_CONF}=true"]  # the log-segments source's filter push-down
    return out


def build_command(args: Sequence[str], environ: dict[str, str] | None = None) -> SubmitCommand:
    """The spark-submit argv and environment for `kafkapy spark-submit ARGS`."""
    env = dict(os.environ if environ is None else environ)
    home = pyspark_home()
    if not java_available(env):
        raise SubmitError(JAVA_HINT)
    script = home / "bin" / "spark-submit"
    argv = [str(script)]
    if not _has_flag(args, "--master"):
        argv += ["--master", DEFAULT_MASTER]
    argv += with_pipeline_runner(args)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.setdefault("SPARK_HOME", str(home))
    root = kafkapy_root()
    path = env.get("PYTHONPATH", "")
    if root not in path.split(os.pathsep):
        env["PYTHONPATH"] = root + (os.pathsep + path if path else "")
    quiet = "--verbose" not in args and "SPARK_CONF_DIR" not in env
    return SubmitCommand(argv, env, quiet)


def run_submit(args: Sequence[str]) -> int:
    """Run spark-submit; its exit code (130 on Ctrl-C). Raises SubmitError for a missing prerequisite."""
    cmd = build_command(args)
    with tempfile.TemporaryDirectory(prefix="kafkapy-spark-conf-") as conf_dir:
        if cmd.quiet:
            Path(conf_dir, "log4j2.properties").write_text(QUIET_LOG4J2)
            Path(conf_dir, "spark-defaults.conf").write_text("spark.ui.showConsoleProgress false\n")
            cmd.env["SPARK_CONF_DIR"] = conf_dir
        proc = subprocess.Popen(cmd.argv, env=cmd.env)
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            return 130
