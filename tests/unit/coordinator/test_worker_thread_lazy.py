"""The coordinators' WorkerThread (appender, loader) starts its thread with the first task, runs tasks in
order, and stops on shutdown; one never given a task runs no thread (start-up time)."""

from __future__ import annotations

import threading

from kafkapy.coordinator.group_metadata_manager import WorkerThread


def named(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == name]


def test_thread_starts_with_first_task_runs_in_order_and_stops() -> None:
    worker = WorkerThread("lazy-worker-test")
    assert named("lazy-worker-test") == []
    ran: list[int] = []
    done = threading.Event()
    for i in range(3):
        worker.submit(lambda i=i: ran.append(i))
    worker.submit(done.set)
    assert done.wait(5)
    assert ran == [0, 1, 2]
    assert len(named("lazy-worker-test")) == 1
    worker.shutdown()
    assert named("lazy-worker-test") == []


def test_unused_worker_runs_no_thread_and_a_task_after_shutdown_never_runs() -> None:
    worker = WorkerThread("idle-worker-test")
    worker.shutdown()
    ran: list[int] = []
    worker.submit(lambda: ran.append(1))
    assert named("idle-worker-test") == []
    assert ran == []
