"""What the memory-bound interop tests measure on a subprocess broker under attack: its memory figures from
/proc/<pid>/status (Linux; lines read `VmRSS:\t  123456 kB`) and a well-behaved bystander producer's
per-message latency (each message sent and flushed alone, every delivery checked).
Stateless; safe from any thread.
"""

from __future__ import annotations

import time
from typing import Any


def status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def produce_latencies_ms(producer: Any, topic: str, count: int, deadline: float) -> list[float]:
    """Up to `count` produce+flush round trips (ms), stopping at `deadline` (time.monotonic()); all delivered."""
    out: list[float] = []
    errors: list[Any] = []
    for i in range(count):
        if time.monotonic() > deadline:
            break
        start = time.perf_counter()
        producer.produce(topic, value=b"bystander-%06d" % i, on_delivery=lambda err, _m: errors.append(err))
        producer.flush(10)
        out.append((time.perf_counter() - start) * 1000)
    assert errors == [None] * len(out), errors
    return out
