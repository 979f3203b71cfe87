"""KIP-497 on the partition leader (Kafka's Partition pending ISR states), over a real Log with MockTime: an
ISR change stays in flight until the controller answers it; meanwhile the maximal ISR holds the HW and
decides acks=all; a lost answer is retried, never turned into a fall-back to the old ISR; a LeaderAndIsr
with a newer partition epoch supersedes the proposal. Includes the issue-20 case 1 sequence at this level."""

from __future__ import annotations

import logging
import os
import uuid
from concurrent.futures import Future

import pytest

from kafkapy.cluster.leader_and_isr import LeaderAndIsr, LeaderAndIsrPartitionState
from kafkapy.cluster.partition import Partition
from kafkapy.common.errors import (
    FencedLeaderEpochError,
    InvalidUpdateVersionError,
    NotControllerError,
    OperationNotAttemptedError,
)
from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.storage.log import Log
from kafkapy.storage.log_config import LogConfig

TP = TopicPartition("t", 0)
TID = uuid.UUID("1f0e0d0c-0b0a-4908-8706-050403020100")
L, R, C = 0, 1, 2  # leader, the follower that rejoins, the controller (also a follower)
LAG_MS = 10_000


def batch(value: bytes) -> bytes:
    builder = MemoryRecordsBuilder()
    builder.append(1_700_000_000_000, None, value)
    return builder.build()


def leader_state(isr, partition_epoch, leader_epoch=3) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState("t", 0, TID, 1, L, leader_epoch, tuple(isr), partition_epoch, (L, R, C))


class Controller:
    """The AlterIsrManager side: records every submission; the test decides each answer."""

    def __init__(self) -> None:
        self.sent: list[tuple[LeaderAndIsr, Future]] = []

    def submit(self, tp: TopicPartition, proposed: LeaderAndIsr, controller_epoch: int) -> Future:
        fut: Future = Future()
        self.sent.append((proposed, fut))
        return fut


@pytest.fixture
def env(tmp_path):
    time = MockTime()
    logs: list[Log] = []

    def provider(tp: TopicPartition, topic_id):
        log = Log.open(os.path.join(str(tmp_path), str(tp)), LogConfig.from_props({"min.insync.replicas": "2"}, {}),
                       time, topic_id=topic_id)
        logs.append(log)
        return log

    controller = Controller()
    p = Partition(TP, TID, provider, L, time, replica_lag_time_max_ms=LAG_MS, alter_isr_manager=controller)
    yield time, p, controller
    for log in logs:
        log.close()


def leader_with_r_rejoining(time: MockTime, p: Partition, controller: Controller) -> LeaderAndIsr:
    """ISR [L, C] at partition epoch 7, R catches up to the HW: the leader proposes ISR + R."""
    p.make_leader(leader_state((L, C), 7))
    for v in (b"a", b"b"):
        p.append_records_to_leader(batch(v), -1)
    p.update_follower_fetch_state(C, 2)
    assert p.high_watermark == 2
    p.update_follower_fetch_state(R, 2)
    [(proposed, _)] = controller.sent
    assert proposed == LeaderAndIsr(L, 3, (L, C, R), partition_epoch=7)
    assert p.isr_change_pending and p.isr == (L, C) and p.maximal_isr == (L, C, R)
    return proposed


def test_lost_answer_keeps_maximal_isr_and_no_acknowledgement_without_r(env) -> None:
    """Issue 20 case 1: the controller commits ISR [L, C, R] but its answer never arrives; R is cut off
    again. The leader must keep waiting for R (HW and acks=all), never fall back to [L, C] on its own."""
    time, p, controller = env
    leader_with_r_rejoining(time, p, controller)
    controller.sent[0][1].set_exception(TimeoutError("answer lost"))  # a delivery that gave up
    assert p.isr_change_pending and p.maximal_isr == (L, C, R) and p.isr == (L, C)

    # Produce with acks=all while R is cut off: C keeps up, R does not.
    info = p.append_records_to_leader(batch(b"c"), -1)  # min.isr checks the committed ISR [L, C]: accepted
    p.update_follower_fetch_state(C, 3)
    assert p.high_watermark == 2  # R (in the maximal ISR) holds it
    assert p.check_enough_replicas_reach_offset(info.last_offset + 1) == (False, None)
    # However long R stays away, the leader does not shrink on its own: the proposal is still in flight.
    for _ in range(5):
        time.advance(LAG_MS)
        p.update_follower_fetch_state(C, 3)
        assert p.maybe_shrink_isr() is False
    assert p.high_watermark == 2 and p.maximal_isr == (L, C, R)
    # The failed delivery is resent (the same proposal) at the next ISR check, not a new one.
    assert [s[0] for s in controller.sent[1:]] == [LeaderAndIsr(L, 3, (L, C, R), partition_epoch=7)]
    # The controller answers the retry with its current state (it had committed it): adopted.
    controller.sent[-1][1].set_result(LeaderAndIsr(L, 3, (L, C, R), partition_epoch=8))
    assert p.isr == (L, C, R) and p.partition_epoch == 8 and not p.isr_change_pending
    assert p.high_watermark == 2  # still R's log end: nothing R lacks is committed
    p.update_follower_fetch_state(R, 3)
    assert p.high_watermark == 3 and p.check_enough_replicas_reach_offset(3) == (True, None)


def test_superseded_by_newer_leader_and_isr(env) -> None:
    time, p, controller = env
    leader_with_r_rejoining(time, p, controller)
    fut = controller.sent[0][1]
    # The controller's own change (say, C failed) reaches the leader first, at a newer partition epoch.
    p.make_leader(leader_state((L, R), 9))
    assert p.isr == (L, R) and not p.isr_change_pending and p.partition_epoch == 9
    fut.set_result(LeaderAndIsr(L, 3, (L, C, R), partition_epoch=8))  # the late answer is ignored
    assert p.isr == (L, R) and p.partition_epoch == 9
    # A LeaderAndIsr older than the state the leader already has is ignored.
    p2_epoch_before = p.partition_epoch
    assert p.make_leader(leader_state((L,), 8)) is False
    assert p.isr == (L, R) and p.partition_epoch == p2_epoch_before


def test_answer_that_leaves_the_proposal_in_flight(env) -> None:
    """FENCED_LEADER_EPOCH / INVALID_UPDATE_VERSION: the controller may have applied an earlier copy, so only
    a newer LeaderAndIsr ends the proposal; no retry, no new proposal, the maximal ISR holds."""
    time, p, controller = env
    leader_with_r_rejoining(time, p, controller)
    controller.sent[0][1].set_result({TP: InvalidUpdateVersionError("stale partition epoch")})
    time.advance(LAG_MS * 3)
    assert p.maybe_shrink_isr() is False
    p.update_follower_fetch_state(R, 2)
    assert len(controller.sent) == 1 and p.maximal_isr == (L, C, R)
    p.make_leader(leader_state((L, C, R), 8))
    assert p.isr == (L, C, R) and not p.isr_change_pending


def test_fenced_leader_epoch_waits_for_metadata(env) -> None:
    time, p, controller = env
    leader_with_r_rejoining(time, p, controller)
    controller.sent[0][1].set_result(FencedLeaderEpochError("fenced"))
    p.update_follower_fetch_state(R, 2)
    assert p.isr_change_pending and len(controller.sent) == 1


def test_not_attempted_restores_the_committed_state(env) -> None:
    time, p, controller = env
    leader_with_r_rejoining(time, p, controller)
    controller.sent[0][1].set_result(OperationNotAttemptedError("one already in flight"))
    assert not p.isr_change_pending and p.maximal_isr == (L, C) and p.isr == (L, C)
    p.update_follower_fetch_state(R, 2)  # proposed again
    assert controller.sent[-1][0] == LeaderAndIsr(L, 3, (L, C, R), partition_epoch=7) and len(controller.sent) == 2


def test_other_error_is_retried(env) -> None:
    time, p, controller = env
    leader_with_r_rejoining(time, p, controller)
    controller.sent[0][1].set_result({TP: NotControllerError("moved")})
    assert p.isr_change_pending
    p.update_follower_fetch_state(R, 2)
    assert len(controller.sent) == 2 and controller.sent[1][0] == controller.sent[0][0]
    controller.sent[1][1].set_result(LeaderAndIsr(L, 3, (L, C, R), partition_epoch=8))
    assert p.isr == (L, C, R) and not p.isr_change_pending


def test_a_failing_proposal_logs_once_however_many_follower_fetches_resend_it(env, caplog) -> None:
    """Each follower fetch resends a proposal the controller failed; the failure is logged once per proposal
    (WARNING), the resends and their failures at DEBUG; a new proposal is logged again."""
    time, p, controller = env
    leader_with_r_rejoining(time, p, controller)
    caplog.set_level(logging.INFO, logger="kafka.cluster.Partition")
    controller.sent[0][1].set_result({TP: NotControllerError("moved")})
    for n in range(1, 11):
        p.update_follower_fetch_state(R, 2)
        controller.sent[n][1].set_result({TP: NotControllerError("moved")})
    assert len(controller.sent) == 11 and {s[0] for s in controller.sent} == {controller.sent[0][0]}
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "AlterPartition of t-0 to ISR [0, 2, 1] failed (NotControllerError('moved')); "
                          "it will be sent again")]
    # A LeaderAndIsr resets the proposal; the next one's failure is a new line.
    caplog.clear()
    p.make_leader(leader_state((L, C), 8))
    p.update_follower_fetch_state(R, 2)
    controller.sent[-1][1].set_result({TP: NotControllerError("moved")})
    p.update_follower_fetch_state(R, 2)
    controller.sent[-1][1].set_result({TP: NotControllerError("moved")})
    assert [r.levelno for r in caplog.records if r.levelno >= logging.INFO] == [logging.WARNING]


def test_pending_shrink_keeps_waiting_for_the_leaving_replica(env) -> None:
    time, p, controller = env
    p.make_leader(leader_state((L, R, C), 7))
    p.append_records_to_leader(batch(b"a"), -1)
    p.update_follower_fetch_state(R, 1)
    p.update_follower_fetch_state(C, 1)
    assert p.high_watermark == 1
    info = p.append_records_to_leader(batch(b"b"), -1)
    time.advance(LAG_MS + 1)
    p.update_follower_fetch_state(C, 2)
    assert p.maybe_shrink_isr() is True
    [(proposed, fut)] = controller.sent
    assert proposed.isr == (L, C) and p.maximal_isr == (L, R, C) and p.isr == (L, R, C)
    # Until the controller confirms, R still counts: the HW does not pass it.
    assert p.high_watermark == 1 and p.check_enough_replicas_reach_offset(info.last_offset + 1) == (False, None)
    fut.set_result(LeaderAndIsr(L, 3, (L, C), partition_epoch=8))
    assert p.isr == (L, C) and p.high_watermark == 2
    assert p.check_enough_replicas_reach_offset(2) == (True, None)
