"""Link faults between local processes with iptables, for tests/cluster/test_fault_injection.py.

A chain of this test's own (KAFKAPY-FAULTS-<pid>) is jumped to from OUTPUT for loopback traffic; every
rule is a TCP DROP matched by source / destination address and port (brokers on 127.0.0.11.., each
binding its outgoing connections to its own address, see source_bind/sitecustomize.py). DROP, not
REJECT: a cut link looks like a partition (retransmissions, timeouts), not a refused connection.
`close()` removes the jump and the chain; use it in a finally block (the fixture does).
Thread-safety: none; the test thread alone changes rules.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass


def iptables_usable() -> str | None:
    """None when iptables works here, else why not."""
    if shutil.which("iptables") is None:
        return "iptables is not installed (make test-deps installs it)"
    probe = subprocess.run(["iptables", "-w", "-S", "OUTPUT"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"iptables refused: {probe.stderr.strip()}"


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int | None = None  # None: the whole address


class LinkFaults:
    def __init__(self, name: str) -> None:
        self.chain = name
        self._rules: list[list[str]] = []
        self._run("-N", self.chain)
        self._run("-I", "OUTPUT", "-o", "lo", "-j", self.chain)

    @staticmethod
    def _run(*args: str) -> None:
        subprocess.run(["iptables", "-w", *args], check=True, capture_output=True)

    def drop(self, src: Endpoint, dst: Endpoint) -> list[str]:
        """Drop TCP packets from src to dst (a port on either side narrows it to that listener's traffic)."""
        spec = ["-p", "tcp", "-s", src.host, "-d", dst.host]
        if src.port is not None:
            spec += ["--sport", str(src.port)]
        if dst.port is not None:
            spec += ["--dport", str(dst.port)]
        spec += ["-j", "DROP"]
        self._run("-A", self.chain, *spec)
        self._rules.append(spec)
        return spec

    def cut(self, a: str, b: str) -> list[list[str]]:
        """No packet between addresses a and b, either way."""
        return [self.drop(Endpoint(a), Endpoint(b)), self.drop(Endpoint(b), Endpoint(a))]

    def remove(self, *specs: list[str]) -> None:
        for spec in specs:
            if spec in self._rules:
                self._rules.remove(spec)
                self._run("-D", self.chain, *spec)

    def heal(self) -> None:
        self._run("-F", self.chain)
        self._rules.clear()

    def close(self) -> None:
        for args in (("-D", "OUTPUT", "-o", "lo", "-j", self.chain), ("-F", self.chain), ("-X", self.chain)):
            subprocess.run(["iptables", "-w", *args], capture_output=True)
