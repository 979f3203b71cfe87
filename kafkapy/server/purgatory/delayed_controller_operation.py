"""DelayedControllerOperation: an admin request waiting for the controller, without holding a handler thread.

Kafka parks CreateTopics/DeleteTopics/CreatePartitions in its "topic" purgatory (DelayedCreatePartitions,
DelayedDeleteTopics) until the controller has acted or the request's timeout passes. Here the controller's
answers are concurrent.futures.Futures: the operation completes when every one of them is done (each
future's done-callback re-checks it) or when its timer expires; `finish` then builds and sends the
response. On expiry the unfinished futures make `finish` answer REQUEST_TIMED_OUT (see
`controller_result`). No byte format.

Thread-safety: `finish` runs once, on whichever thread completes the operation (the controller's event
thread or the purgatory's reaper); it must not wait on the controller.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable, Iterable
from typing import Any

from kafkapy.common.errors import KafkaError, RequestTimedOutError, UnknownServerError
from kafkapy.server.purgatory.delayed_operation import DelayedOperation
from kafkapy.server.purgatory.delayed_operation_purgatory import DelayedOperationPurgatory

log = logging.getLogger("kafka.server.KafkaApis")


class DelayedControllerOperation(DelayedOperation):
    def __init__(self, delay_ms: int, futures: list[concurrent.futures.Future], finish: Callable[[], None]) -> None:
        super().__init__(delay_ms)
        self.futures = futures
        self._finish = finish

    def try_complete(self) -> bool:
        if all(f.done() for f in self.futures):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self._finish()


def complete_when_done(purgatory: DelayedOperationPurgatory, futures: Iterable[concurrent.futures.Future],
                       timeout_ms: int, finish: Callable[[], None]) -> None:
    """Run `finish` once every future is done, or after timeout_ms; never blocks the calling thread."""
    pending = [f for f in futures if f is not None]
    op = DelayedControllerOperation(timeout_ms, pending, finish)
    key = ("controller-op", id(op))
    if purgatory.try_complete_else_watch(op, [key]):
        return
    for f in pending:
        # Runs at once if the future finished meanwhile, so no completion can be missed.
        f.add_done_callback(lambda _f: purgatory.check_and_complete(key))


def controller_result(future: concurrent.futures.Future, what: str) -> Any:
    """A finished controller answer (KafkaErrors propagate); an unfinished one means the request timed out."""
    if not future.done():
        raise RequestTimedOutError(f"Timed out waiting for the controller to {what}.")
    try:
        return future.result(timeout=0)
    except KafkaError:
        raise
    except Exception as e:  # the controller failed unexpectedly: never leak a traceback to the client
        log.error("Controller failed to %s: %s", what, e)
        raise UnknownServerError(str(e)) from None
