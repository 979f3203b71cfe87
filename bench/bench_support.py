"""Helpers the benchmark scripts share (not a benchmark): a free loopback port and stopping a subprocess.

Scripts run as `python bench/<name>.py`, so bench/ is on sys.path and they import this module by name.
Stateless; safe from any thread.
"""

from __future__ import annotations

import signal
import socket
import subprocess


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(proc: subprocess.Popen, timeout_s: float = 30.0) -> None:
    """SIGTERM (the broker's clean shutdown), then SIGKILL if it has not exited within timeout_s."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
