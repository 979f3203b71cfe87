"""GroupDelayedOperation: a purgatory DelayedOperation that runs a group coordinator operation's logic
(coordinator/delayed_join.py, delayed_heartbeat.py: try_complete(force_complete), on_complete, on_expiration).
The coordinator layer cannot import server/, so the server wraps its logic objects in this class and hands it
to the coordinator as the operation factory (kafka_server.py).
No byte format. Thread-safety: as DelayedOperation; the logic runs under the operation's lock (the group's).
"""

from __future__ import annotations

import threading
from typing import Any

from kafkapy.server.purgatory.delayed_operation import DelayedOperation


class GroupDelayedOperation(DelayedOperation):
    def __init__(self, delay_ms: int, lock: threading.RLock, logic: Any) -> None:
        super().__init__(delay_ms, lock)
        self.logic = logic

    def try_complete(self) -> bool:
        return bool(self.logic.try_complete(self.force_complete))

    def on_complete(self) -> None:
        self.logic.on_complete()

    def on_expiration(self) -> None:
        self.logic.on_expiration()
