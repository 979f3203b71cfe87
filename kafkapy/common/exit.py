"""Exit: the process's halt procedure (Kafka's org.apache.kafka.common.utils.Exit.halt).

`halt(status)` ends the process at once, without shutdown hooks, finalizers or `atexit` handlers (os._exit),
as Kafka's Runtime.halt does for a broker that cannot go on (every log dir failed). Tests of the decision
install another procedure with `set_halt_procedure` (Kafka's Exit.setHaltProcedure) and restore it with
`reset_halt_procedure`. No byte format. Thread-safety: halt may be called from any thread; the procedure is one
module-level reference, swapped only by tests.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

HaltProcedure = Callable[[int], None]


def _default_halt(status: int) -> None:
    for stream in (sys.stdout, sys.stderr):  # what the log handlers wrote reaches the file first
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


_procedure: HaltProcedure = _default_halt


def halt(status: int) -> None:
    _procedure(status)


def set_halt_procedure(procedure: HaltProcedure) -> None:
    global _procedure
    _procedure = procedure


def reset_halt_procedure() -> None:
    set_halt_procedure(_default_halt)
