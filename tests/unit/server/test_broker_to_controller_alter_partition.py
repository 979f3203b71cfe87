"""BrokerToControllerChannel's AlterPartition sender (Kafka's AlterPartitionManager): a proposal is sent again
until the controller answers it (a lost answer, a refused connection or a top-level error never ends it),
one proposal per partition at a time, every waiting proposal in one request, partitions left out of an
answer sent again. The exchange itself is replaced by a scripted one (no network)."""

from __future__ import annotations

import threading
from typing import Any

from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.common.errors import (
    InvalidUpdateVersionError,
    NotControllerError,
    OperationNotAttemptedError,
    StaleBrokerEpochError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.server.broker_to_controller import BrokerToControllerChannel

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
WAIT_S = 10


class ScriptedController:
    """Each exchange takes the next scripted outcome: an exception to raise, or a function of the proposals."""

    def __init__(self, outcomes: list[Any]) -> None:
        self.outcomes = outcomes
        self.requests: list[dict[TopicPartition, LeaderAndIsr]] = []
        self.done = threading.Event()

    def __call__(self, proposals: dict[TopicPartition, LeaderAndIsr]) -> Any:
        self.requests.append(dict(proposals))
        if not self.outcomes:
            self.done.set()
            raise TimeoutError("no more answers scripted")
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome(proposals)


def channel(script: ScriptedController) -> BrokerToControllerChannel:
    ch = BrokerToControllerChannel(0, store=None, listener="PLAINTEXT", broker_epoch=lambda: 5)  # type: ignore[arg-type]
    ch._send_alter_partition = script  # type: ignore[method-assign]
    return ch


def committed(proposals: dict[TopicPartition, LeaderAndIsr]) -> dict[TopicPartition, Any]:
    return {tp: p.with_partition_epoch(p.partition_epoch + 1) for tp, p in proposals.items()}


def test_sent_again_until_answered() -> None:
    script = ScriptedController([TimeoutError("answer lost"), ConnectionRefusedError(),
                                 NotControllerError("moved"), StaleBrokerEpochError("old"), committed])
    ch = channel(script)
    try:
        proposed = LeaderAndIsr(0, 3, (0, 2, 1), partition_epoch=7)
        fut = ch.alter_partition(T0, proposed)
        assert fut.result(WAIT_S) == LeaderAndIsr(0, 3, (0, 2, 1), partition_epoch=8)
        assert script.requests == [{T0: proposed}] * 5
        assert ch.pending_alter_partitions() == {}
    finally:
        ch.shutdown()


def test_one_proposal_per_partition_and_batching() -> None:
    gate, started = threading.Event(), threading.Event()

    def blocked(proposals):
        started.set()
        gate.wait(WAIT_S)
        return committed(proposals)

    script = ScriptedController([blocked, lambda ps: {T1: InvalidUpdateVersionError("stale")}, committed])
    ch = channel(script)
    try:
        a = ch.alter_partition(T0, LeaderAndIsr(0, 1, (0, 1), partition_epoch=2))
        assert started.wait(WAIT_S)
        # While T0's proposal is waiting, a second one for T0 is not attempted.
        second = ch.alter_partition(T0, LeaderAndIsr(0, 1, (0,), partition_epoch=2))
        assert isinstance(second.result(WAIT_S), OperationNotAttemptedError)
        b = ch.alter_partition(T1, LeaderAndIsr(0, 1, (0, 2), partition_epoch=4))
        gate.set()
        assert a.result(WAIT_S).partition_epoch == 3
        assert isinstance(b.result(WAIT_S), InvalidUpdateVersionError)
        # The first request held T0 only (T1 came while it was out); T1 went alone in the next.
        assert [sorted(r) for r in script.requests[:2]] == [[T0], [T1]]
    finally:
        ch.shutdown()


def test_partition_left_out_of_the_answer_is_sent_again() -> None:
    script = ScriptedController([lambda ps: {}, committed])
    ch = channel(script)
    try:
        fut = ch.alter_partition(T0, LeaderAndIsr(0, 1, (0, 1), partition_epoch=2))
        assert fut.result(WAIT_S).partition_epoch == 3
        assert len(script.requests) == 2
    finally:
        ch.shutdown()
