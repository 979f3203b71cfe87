"""`make run` (the README's first quick-start command) starts a broker that stock kcat can use.

The broker is started exactly as the README says, with ARGS only moving it to a free port and a tmp
data dir so it cannot clash with anything else on the machine; the process group is stopped by PID.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("kcat") is None or shutil.which("make") is None,
                                reason="kcat and make are installed by `make test`")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"make run exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("make run did not start listening")


def _kcat(*args: str, stdin: bytes | None = None) -> str:
    out = subprocess.run(["kcat", *args], input=stdin, capture_output=True, timeout=60, check=True)
    return out.stdout.decode()


def test_make_run_starts_a_broker_kcat_can_use(tmp_path: Path) -> None:
    port = _free_port()
    args = f"--override listeners=PLAINTEXT://127.0.0.1:{port} --override log.dirs={tmp_path}/data"
    proc = subprocess.Popen(["make", "-s", "run", f"ARGS={args}"], cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=open(tmp_path / "broker.err", "wb"), start_new_session=True)
    try:
        _wait_for_port(port, proc)
        bootstrap = f"127.0.0.1:{port}"
        lines = b"".join(b"k%d:v%d\n" % (i, i) for i in range(20))
        _kcat("-b", bootstrap, "-P", "-t", "make-run", "-K:", stdin=lines)
        listing = _kcat("-b", bootstrap, "-L")
        assert f"1 brokers:\n  broker 0 at 127.0.0.1:{port} (controller)" in listing
        assert 'topic "make-run" with 1 partitions:' in listing
        got = _kcat("-b", bootstrap, "-C", "-t", "make-run", "-o", "beginning", "-e", "-q", "-f", "%k:%s\n")
        assert got == lines.decode()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    # SIGTERM is a graceful stop: the log dir gets marked clean (make itself dies of the signal at once,
    # the broker it exec'd finishes its shutdown on its own) and the segment holds the 20 records.
    marker = tmp_path / "data" / ".kafka_cleanshutdown"
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    err = (tmp_path / "broker.err").read_text(errors="replace")
    assert marker.exists(), f"no clean shutdown within 30 s; broker stderr tail:\n{err[-3000:]}"
    assert (tmp_path / "data" / "make-run-0" / "00000000000000000000.log").stat().st_size > 0
