"""wait_readable: block until descriptors are readable, for any descriptor number.

select.select fails for descriptors above FD_SETSIZE - 1 (1023: "filedescriptor out of range in
select()"), which a broker's inter-broker client or a tool in a process with many open files
reaches; poll(2) has no such limit. Readiness includes error and hang-up conditions, as select
reports them readable (the following recv surfaces the error or the EOF). Reads and writes no bytes.

Thread-safety: stateless; a poll object per call, so any thread may call it.
"""

from __future__ import annotations

import math
import select
from collections.abc import Iterable

_READABLE = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP | select.POLLNVAL


def wait_readable(fds: Iterable[int], timeout_s: float) -> list[int]:
    """The descriptors of `fds` that are readable (or failed) within timeout_s (<= 0: do not wait).
    Raises ValueError for a negative descriptor (a closed socket's fileno())."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, _READABLE)
    timeout_ms = math.ceil(timeout_s * 1000) if timeout_s > 0 else 0
    return [fd for fd, _events in poller.poll(timeout_ms)]
