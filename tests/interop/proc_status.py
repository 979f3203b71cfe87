"""Reading a subprocess broker's memory figures from /proc/<pid>/status (Linux), for the memory-bound tests.

Lines there read `VmRSS:\t  123456 kB`; `status_kb(pid, "VmHWM")` returns the number in kB.
Stateless; safe from any thread.
"""

from __future__ import annotations


def status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)
