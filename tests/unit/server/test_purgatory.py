"""DelayedOperationPurgatory and SystemTimer under MockTime: completion, expiry, watch keys."""

from __future__ import annotations

import threading

import pytest

from kafkapy.common.time import MockTime
from kafkapy.server.purgatory import DelayedOperation, DelayedOperationPurgatory
from kafkapy.server.purgatory.timer import SystemTimer, TimerTask


class MockDelayedOperation(DelayedOperation):
    """Completes when `ready` is set; records every callback."""

    def __init__(self, delay_ms: int, ready: bool = False) -> None:
        super().__init__(delay_ms)
        self.ready = ready
        self.completions = 0
        self.expirations = 0
        self.try_calls = 0

    def try_complete(self) -> bool:
        self.try_calls += 1
        if self.ready:
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expirations += 1


@pytest.fixture
def time() -> MockTime:
    return MockTime()


@pytest.fixture
def purgatory(time: MockTime):
    p: DelayedOperationPurgatory[MockDelayedOperation] = DelayedOperationPurgatory(
        "mock", time, purge_interval=5, reaper_enabled=False
    )
    yield p
    p.shutdown()


def test_completes_immediately_when_ready(purgatory) -> None:
    op = MockDelayedOperation(1000, ready=True)
    assert purgatory.try_complete_else_watch(op, ["a", "b"]) is True
    assert op.is_completed and op.completions == 1 and op.expirations == 0
    assert purgatory.watched == 0
    assert purgatory.num_delayed == 0


def test_complete_before_expiry(purgatory, time: MockTime) -> None:
    op1 = MockDelayedOperation(100_000)
    op2 = MockDelayedOperation(100_000)
    assert purgatory.try_complete_else_watch(op1, ["key1"]) is False
    assert purgatory.try_complete_else_watch(op2, ["key2"]) is False
    assert purgatory.watched == 2
    assert purgatory.num_delayed == 2
    assert purgatory.check_and_complete("key1") == 0
    op1.ready = True
    assert purgatory.check_and_complete("key1") == 1
    assert op1.completions == 1 and not op2.is_completed
    assert purgatory.num_delayed == 1
    assert purgatory.watched == 1
    assert purgatory.watch_keys() == ["key2"]
    # Expiry of the completed operation never fires.
    time.advance(200_000)
    purgatory.advance_clock(0)
    assert op1.expirations == 0 and op1.completions == 1
    assert op2.expirations == 1 and op2.completions == 1


def test_expiry_fires_exactly_once_with_mock_time(purgatory, time: MockTime) -> None:
    op = MockDelayedOperation(500)
    assert purgatory.try_complete_else_watch(op, ["k"]) is False
    time.advance(499)
    assert purgatory.advance_clock(0) is False
    assert not op.is_completed
    time.advance(1)
    assert purgatory.advance_clock(0) is True
    assert op.completions == 1 and op.expirations == 1
    assert purgatory.num_delayed == 0
    time.advance(10_000)
    assert purgatory.advance_clock(0) is False
    op.ready = True
    assert purgatory.check_and_complete("k") == 0
    assert op.completions == 1 and op.expirations == 1
    assert purgatory.watched == 0


def test_expirations_fire_in_deadline_order(purgatory, time: MockTime) -> None:
    order: list[int] = []

    class Op(MockDelayedOperation):
        def on_expiration(self) -> None:
            order.append(self.delay_ms)

    for delay in (300, 100, 200, 400):
        purgatory.try_complete_else_watch(Op(delay), [f"k{delay}"])
    time.advance(250)
    purgatory.advance_clock(0)
    assert order == [100, 200]
    time.advance(1000)
    purgatory.advance_clock(0)
    assert order == [100, 200, 300, 400]


def test_operation_watched_under_several_keys_completes_once(purgatory) -> None:
    op = MockDelayedOperation(100_000)
    purgatory.try_complete_else_watch(op, ["x", "y", "z"])
    assert purgatory.watched == 3
    op.ready = True
    assert purgatory.check_and_complete("y") == 1
    assert purgatory.check_and_complete("x") == 0
    assert purgatory.check_and_complete("z") == 0
    assert op.completions == 1
    assert purgatory.watched == 0


def test_check_and_complete_unknown_key(purgatory) -> None:
    assert purgatory.check_and_complete(("topic", 0)) == 0


def test_empty_watch_keys_rejected(purgatory) -> None:
    with pytest.raises(ValueError):
        purgatory.try_complete_else_watch(MockDelayedOperation(10), [])


def test_concurrent_force_complete_runs_on_complete_once() -> None:
    for _ in range(20):
        op = MockDelayedOperation(1000)
        barrier = threading.Barrier(8)
        wins: list[bool] = []

        def racer(op=op, barrier=barrier, wins=wins) -> None:
            barrier.wait()
            wins.append(op.force_complete())

        threads = [threading.Thread(target=racer) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        assert wins.count(True) == 1
        assert op.completions == 1


def test_force_complete_racing_expiry(purgatory, time: MockTime) -> None:
    ops = [MockDelayedOperation(100) for _ in range(50)]
    for i, op in enumerate(ops):
        purgatory.try_complete_else_watch(op, [i])
    time.advance(100)
    t = threading.Thread(target=lambda: [op.force_complete() for op in ops])
    t.start()
    purgatory.advance_clock(0)
    t.join(5)
    for op in ops:
        assert op.completions == 1
        assert op.expirations <= 1
    assert purgatory.num_delayed == 0


def test_purge_removes_completed_from_watch_lists(purgatory) -> None:
    ops = [MockDelayedOperation(100_000) for _ in range(10)]
    for op in ops:
        purgatory.try_complete_else_watch(op, ["shared", id(op)])
    assert purgatory.watched == 20
    for op in ops[:8]:
        op.force_complete()
    # Completed operations stay watched until a purge or a check of their key.
    assert purgatory.watched == 20
    assert purgatory.num_delayed == 2
    purgatory.advance_clock(0)  # 10 estimated - 2 delayed > purge_interval 5
    assert purgatory.watched == 4
    assert purgatory.check_and_complete("shared") == 0


def test_cancel_for_key(purgatory) -> None:
    op = MockDelayedOperation(1000)
    purgatory.try_complete_else_watch(op, ["g"])
    assert purgatory.cancel_for_key("g") == [op]
    assert purgatory.num_delayed == 0
    assert purgatory.watched == 0
    assert not op.is_completed


def test_completed_inside_watch_window_not_added_to_timer(purgatory) -> None:
    class CompletesOnSecondTry(MockDelayedOperation):
        def try_complete(self) -> bool:
            self.try_calls += 1
            if self.try_calls == 2:
                return self.force_complete()
            return False

    op = CompletesOnSecondTry(1000)
    assert purgatory.try_complete_else_watch(op, ["k"]) is True
    assert op.completions == 1
    assert purgatory.num_delayed == 0


def test_zero_delay_expires_on_watch(purgatory) -> None:
    op = MockDelayedOperation(0)
    assert purgatory.try_complete_else_watch(op, ["k"]) is False
    assert op.completions == 1 and op.expirations == 1


def test_reaper_thread_expires_with_system_time() -> None:
    p: DelayedOperationPurgatory[MockDelayedOperation] = DelayedOperationPurgatory("real", broker_id=7)
    try:
        op = MockDelayedOperation(20)
        done = threading.Event()
        op.on_expiration = done.set  # type: ignore[method-assign]
        p.try_complete_else_watch(op, ["k"])
        assert done.wait(5)
        assert op.completions == 1
        assert any(t.name == "ExpirationReaper-7-real" for t in threading.enumerate())
    finally:
        p.shutdown()
    assert not any(t.name == "ExpirationReaper-7-real" for t in threading.enumerate())


class _Task(TimerTask):
    def __init__(self, delay_ms: int, log: list[int]) -> None:
        super().__init__(delay_ms)
        self.log = log

    def run(self) -> None:
        self.log.append(self.delay_ms)


def test_timer_cancel_and_size(time: MockTime) -> None:
    timer = SystemTimer("t", time)
    fired: list[int] = []
    tasks = [_Task(d, fired) for d in range(1, 1001)]
    for task in tasks:
        timer.add(task)
    assert timer.size == 1000
    for task in tasks[::2]:
        task.cancel()
    assert timer.size == 500
    time.advance(1000)
    assert timer.advance_clock(0) is True
    assert fired == list(range(2, 1001, 2))
    assert timer.size == 0


def test_timer_task_error_does_not_stop_others(time: MockTime) -> None:
    timer = SystemTimer("t", time)
    fired: list[int] = []

    class Boom(TimerTask):
        def run(self) -> None:
            raise RuntimeError("boom")

    timer.add(Boom(5))
    timer.add(_Task(6, fired))
    time.advance(10)
    timer.advance_clock(0)
    assert fired == [6]
