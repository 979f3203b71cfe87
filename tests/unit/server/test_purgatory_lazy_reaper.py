"""DelayedOperationPurgatory starts its expiration reaper with the first operation that has to wait (start-up
time: a broker's purgatories that never hold an operation run no thread), and shutdown stops it."""

from __future__ import annotations

import threading

from kafkapy.server.purgatory.delayed_operation import DelayedOperation
from kafkapy.server.purgatory.delayed_operation_purgatory import DelayedOperationPurgatory


class Op(DelayedOperation):
    def __init__(self, delay_ms: int, ready: bool) -> None:
        super().__init__(delay_ms)
        self.ready = ready
        self.expired = threading.Event()

    def try_complete(self) -> bool:
        return self.force_complete() if self.ready else False

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.expired.set()


def reapers(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == name]


def test_reaper_starts_with_the_first_waiting_operation_and_stops_on_shutdown() -> None:
    name = "ExpirationReaper-9-lazy"
    p: DelayedOperationPurgatory[Op] = DelayedOperationPurgatory("lazy", broker_id=9)
    try:
        assert reapers(name) == []
        assert p.try_complete_else_watch(Op(30_000, ready=True), ["k"]) is True  # completed at once
        assert reapers(name) == []
        waiting = Op(20, ready=False)
        assert p.try_complete_else_watch(waiting, ["k"]) is False
        assert len(reapers(name)) == 1
        assert waiting.expired.wait(5)  # the reaper expired it
        assert p.try_complete_else_watch(Op(20, ready=False), ["k"]) is False
        assert len(reapers(name)) == 1  # one reaper, not one per operation
    finally:
        p.shutdown()
    assert reapers(name) == []


def test_shut_down_purgatory_starts_no_reaper() -> None:
    name = "ExpirationReaper-9-closed"
    p: DelayedOperationPurgatory[Op] = DelayedOperationPurgatory("closed", broker_id=9)
    p.shutdown()
    p.try_complete_else_watch(Op(0, ready=False), ["k"])
    assert reapers(name) == []


def test_disabled_reaper_never_starts() -> None:
    name = "ExpirationReaper-9-off"
    p: DelayedOperationPurgatory[Op] = DelayedOperationPurgatory("off", broker_id=9, reaper_enabled=False)
    try:
        assert p.try_complete_else_watch(Op(30_000, ready=False), ["k"]) is False
        assert reapers(name) == []
    finally:
        p.shutdown()
